"""Every ```python block of README.md and docs/*.md runs, each in a fresh namespace.

A block that ends by running its server (`server.run()`, at the top or under
`if __name__ == "__main__":`) is a server file: it is saved as one and served over stdio,
as a reader would run it, and `mcp-errors check` must pass on it. A README block that
builds a server and does nothing with it must be such a file: copied into `server.py`,
anything else exits at once. A block fenced ```python subprocess runs in a fresh
interpreter: for examples that set process-wide state, such as OpenTelemetry's global
providers. A block fenced ```python tasks needs `fastmcp-tasks`, which pins an older fastmcp:
it is marked `tasks`, and in the main environment `tests/test_tasks_env.py` runs it in the
second one (`tests/tasks-env`). A block fenced ```python no-run is not run (nor listed as a
test); use it only when running is truly impossible.

Every block runs twice in the same folder, as a reader runs an example again: files it
leaves behind (a SQLite store, say) must not break the second run. Snippets run as
`__main__`, as `python example.py` would run them. A block whose first line reads
`# <module>.py -- run: uvicorn ...` is also saved as that module and served with that
command (two workers, a free port), and `mcp-errors check` must pass on it over HTTP.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_errors.check import CheckOptions, check_server
from mcp_errors.testing import reset_retry_budgets
from services import free_port, listening, require_fastmcp_tasks

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

ROOT = Path(__file__).resolve().parent.parent
_FENCE = re.compile(r"^```python(?P<flags>[^\n]*)\n(?P<code>.*?)^```\s*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    code: str
    run: bool
    subprocess: bool = False
    tasks: bool = False

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @cached_property
    def module(self) -> ast.Module:
        return ast.parse(self.code)

    @property
    def serves(self) -> bool:
        """Whether the block runs a server when run as a script: `<server>.run(...)` at its top."""
        statements = list(self.module.body)
        for node in self.module.body:
            if isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"':
                statements += node.body
        return any(_is_server_run(node) for node in statements)

    @property
    def builds_a_server(self) -> bool:
        """Whether the block makes an `MCPServer` or `FastMCP` at its top level."""
        return any(
            isinstance(node, ast.Assign | ast.AnnAssign) and _SERVER_CLASS.search(ast.unparse(node)) is not None
            for node in self.module.body
        )

    @property
    def served_by(self) -> tuple[str, list[str]] | None:
        """The module name and uvicorn command of a block that starts `# <module>.py -- run: uvicorn ...`."""
        match = _SERVED_BY.match(self.code)
        return None if match is None else (match.group("module"), shlex.split(match.group("command")))

    @property
    def drives_itself(self) -> bool:
        """Whether the block uses what it builds (runs an event loop, calls the checker, ...)."""
        return _DRIVES.search(self.code) is not None


def blocks() -> list[Block]:
    found: list[Block] = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if not path.exists():
            continue
        text = path.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            flags = match.group("flags").split()
            found.append(
                Block(path, line, match.group("code"), "no-run" not in flags, "subprocess" in flags, "tasks" in flags)
            )
    return found


_SERVED_BY = re.compile(r"# (?P<module>\w+)\.py -- run: (?P<command>uvicorn [^\n]+)\n")
_SERVER_CLASS = re.compile(r"\b(MCPServer|FastMCP)\(")
_DRIVES = re.compile(r"\b(anyio|asyncio|trio)\.run\(|\bClient\(|check_server|Agent\(")


def _is_server_run(node: ast.stmt) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    func = node.value.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "run"
        and not (isinstance(func.value, ast.Name) and func.value.id in ("anyio", "asyncio", "trio"))
    )


BLOCKS = blocks()
SERVER_FILES = [block for block in BLOCKS if block.run and block.serves]
# A block fenced ```python no-run is not a test at all (rather than a skipped one).
SNIPPETS = [block for block in BLOCKS if block.run and block not in SERVER_FILES]
APP_MODULES = [block for block in BLOCKS if block.run and block.served_by is not None]


def with_tasks_marked(blocks: list[Block]) -> list[Any]:
    """The blocks as parameters, those fenced ```python tasks marked `tasks` (they run in tests/tasks-env)."""
    return [pytest.param(block, marks=pytest.mark.tasks) if block.tasks else block for block in blocks]


def test_the_docs_have_runnable_examples() -> None:
    runnable = {block.path.name for block in BLOCKS if block.run}
    assert {"README.md", "wire-format.md"} <= runnable


def test_every_readme_server_is_a_whole_server_file() -> None:
    """A newcomer copies the README's server into `server.py`; without `run()` it exits at once."""
    loose = [
        block.name
        for block in BLOCKS
        if block.path.name == "README.md" and block.builds_a_server and not block.drives_itself and not block.serves
    ]
    assert not loose, f"end these with `if __name__ == '__main__': server.run()`: {loose}"


@pytest.mark.parametrize("block", with_tasks_marked(SERVER_FILES), ids=lambda block: block.name)
def test_docs_server_file_serves_over_stdio_and_passes_the_checker(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if block.tasks:
        require_fastmcp_tasks()
    script = tmp_path / "server.py"
    script.write_text(block.code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the server's own files land beside it, for both runs
    for _ in range(2):
        report = anyio.run(check_server, [sys.executable, str(script)], CheckOptions(call_valid=True))
        summary = report.to_json()["summary"]
        assert summary["toolsChecked"] >= 1, summary
        assert not report.failed, report.to_json()


def inherit_tls_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server a block starts over stdio gets this machine's TLS roots too.

    The SDK's `stdio_client` gives a child only HOME, PATH and a few more; a block that starts
    `uvx mcp-server-time` needs uvx to reach PyPI, which on a machine behind a TLS-inspecting
    proxy takes `SSL_CERT_FILE`. The block itself stays as a reader writes it.
    """
    import mcp.client.stdio as sdk_stdio

    tls = [name for name in ("SSL_CERT_FILE", "SSL_CERT_DIR") if name in os.environ]
    monkeypatch.setattr(sdk_stdio, "DEFAULT_INHERITED_ENV_VARS", [*sdk_stdio.DEFAULT_INHERITED_ENV_VARS, *tls])


@pytest.mark.parametrize("block", with_tasks_marked(SNIPPETS), ids=lambda block: block.name)
def test_docs_block_runs_twice(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if block.tasks:
        require_fastmcp_tasks()
    # Blocks may register exception mappings or write files: keep both local to the block.
    from mcp_errors._server import classify as _classify

    inherit_tls_settings(monkeypatch)

    monkeypatch.chdir(tmp_path)
    registry = dict(_classify._registry)
    for run in (1, 2):
        # What a new process starts with: blocks may register exception mappings and spend
        # retry budgets. Files they write stay, in the same folder, for the second run.
        monkeypatch.setattr(_classify, "_registry", dict(registry))
        reset_retry_budgets()
        if block.subprocess:
            done = subprocess.run(
                [sys.executable, "-c", block.code], capture_output=True, text=True, timeout=120, check=False
            )
            assert done.returncode == 0, f"{block.name} failed on run {run}:\n{done.stderr[-3000:]}"
            continue
        # Padding makes line numbers in a failure's traceback point into the Markdown file.
        code = compile("\n" * (block.line - 1) + block.code, str(block.path), "exec")
        exec(code, {"__name__": "__main__"})


@pytest.mark.parametrize("block", APP_MODULES, ids=lambda block: block.name)
def test_docs_app_module_serves_with_its_uvicorn_command_and_passes_the_checker(
    block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert block.served_by is not None
    module, command = block.served_by
    (tmp_path / f"{module}.py").write_text(block.code, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    port = free_port()
    # Two workers: each imports the module in its own process, as in production.
    settings = {"--port": str(port), "--workers": "2", "--host": "127.0.0.1"}
    args = command[1:]
    for option, value in settings.items():
        if option in args:
            args[args.index(option) + 1] = value
        else:
            args += [option, value]
    with listening([sys.executable, "-m", "uvicorn", *args], port) as server:
        report = anyio.run(check_server, f"http://127.0.0.1:{port}/mcp", CheckOptions(connect_timeout=60))
        assert server.poll() is None, "uvicorn exited"
    assert report.to_json()["summary"]["toolsChecked"] >= 1
    assert not report.failed, report.to_json()
