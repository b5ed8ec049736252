"""A new project adds mcp-errors the way README.md's Install says it can today: from a built wheel.

The wheel is built from this checkout (`uv build --wheel`), installed into a fresh virtual
environment in a folder of its own (`uv venv`, `uv pip install`), and used from there: the
command answers `--version`, and `mcp-errors check` passes the README's ten-line server run
with that environment's Python. Nothing of the clone is on that environment's path. uv's
cache keeps this to a few seconds.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

pytestmark = [pytest.mark.skipif(shutil.which("uv") is None, reason="needs uv on PATH"), pytest.mark.slow]


def readme_server() -> str:
    """The first ```python block under the README's "A server in ten lines"."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## A server in ten lines") :]
    match = re.search(r"^```python\n(?P<code>.*?)^```", section, re.MULTILINE | re.DOTALL)
    assert match is not None
    return match.group("code")


def run(*command: str | Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new project folder whose own virtual environment has only the wheel (and what it needs)."""
    dist = tmp_path_factory.mktemp("dist")
    built = run("uv", "build", "--wheel", "--out-dir", dist, cwd=ROOT)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = dist.glob("mcp_errors-*-py3-none-any.whl")

    folder = tmp_path_factory.mktemp("my-project")
    made = run("uv", "venv", "--quiet", "--python", sys.executable, folder / ".venv", cwd=folder)
    assert made.returncode == 0, made.stderr[-2000:]
    installed = run(
        "uv", "pip", "install", "--quiet", "--python", folder / ".venv" / "bin" / "python", wheel, cwd=folder
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    return folder


def test_the_installed_command_says_its_version(project: Path) -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]

    done = run(project / ".venv" / "bin" / "mcp-errors", "--version", cwd=project)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["mcp-errors", version]


def test_the_readme_server_passes_the_check_in_a_project_of_its_own(project: Path) -> None:
    (project / "server.py").write_text(readme_server(), encoding="utf-8")
    python = project / ".venv" / "bin" / "python"
    # The environment's Python imports the installed mcp_errors, not this checkout's.
    where = run(python, "-c", "import mcp_errors; print(mcp_errors.__file__)", cwd=project)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(project / ".venv")

    done = run(
        project / ".venv" / "bin" / "mcp-errors", "check", "--format", "json", "--", python, "server.py", cwd=project
    )

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    summary = json.loads(done.stdout)["summary"]
    assert (summary["toolsChecked"], summary["passed"]) == (1, True)


def test_without_the_proxy_extra_the_proxy_names_a_requirement_that_installs_today(project: Path) -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]

    done = run(project / ".venv" / "bin" / "mcp-errors", "proxy", "--", "any-server", cwd=project)

    assert done.returncode == 2
    (requirement,) = extras["proxy"]
    # What the message says to install is the extra's own requirement, not `mcp-errors[proxy]`,
    # which no index has yet.
    assert f'pip install "{requirement}"' in done.stderr
    assert "mcp-errors[" not in done.stderr
