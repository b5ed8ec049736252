"""The tests of tasks, run in the second environment so that `uv run pytest` runs every test.

The tests marked `tasks` need `fastmcp-tasks`, which pins an older fastmcp than this
project's lock. In the main environment `tests/conftest.py` deselects them, and this file
runs them in `tests/tasks-env` (fastmcp-tasks and the fastmcp it pins; uv builds it on first
use): one `uv run --project tests/tasks-env pytest -m tasks <files>` for the session, with
`MCP_ERRORS_REQUIRE_TASKS=1` so that a missing `fastmcp-tasks` fails rather than skips. Each
file's tests are then judged here: every one ran and passed, and they are the very tests this
session deselected; a test skipped there for a missing PostgreSQL or Redis skips its file here
(`tests/services.py`: under `CI=true` it fails instead, there as here). In the second
environment this file is the one left out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import pytest

from collection import TASK_TESTS

pytestmark = [pytest.mark.tasks_env, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
# The files that hold `tasks` tests (`test_every_task_test_is_in_a_file_this_runner_runs` keeps it whole).
FILES = (
    "tests/server/test_tasks.py",
    "tests/client/test_task_polling.py",
    "tests/test_docs.py",
    "tests/shared/test_telemetry.py",
)


@dataclass(frozen=True)
class Run:
    """What the second environment's pytest said: each test's outcome, and its last lines."""

    outcomes: dict[str, str]  # node id -> "passed", "failed", "error" or "skipped"
    messages: dict[str, str]
    summary: str


def _node_id(case: ElementTree.Element) -> str:
    path = case.get("classname", "").replace(".", "/")
    return f"{path}.py::{case.get('name')}"


def _read_junit(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    outcomes: dict[str, str] = {}
    messages: dict[str, str] = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        node_id = _node_id(case)
        outcomes[node_id] = "passed"
        for outcome in ("failure", "error", "skipped"):
            found = case.find(outcome)
            if found is not None:
                outcomes[node_id] = "failed" if outcome == "failure" else outcome
                messages[node_id] = (found.get("message") or found.text or "")[:2000]
    return outcomes, messages


@pytest.fixture(scope="module")
def second_environment(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The `tasks` tests of `FILES`, run once in `tests/tasks-env`."""
    uv = os.environ.get("UV") or shutil.which("uv")  # `uv run` names itself in $UV
    if uv is None:
        pytest.fail("uv not found: the README's `uv run pytest` needs it on PATH", pytrace=False)
    report = tmp_path_factory.mktemp("tasks-env") / "junit.xml"
    # The main environment's own venv must not leak into the other project's `uv run`.
    env = {key: value for key, value in os.environ.items() if key not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env["MCP_ERRORS_REQUIRE_TASKS"] = "1"
    command = [uv, "run", "--project", "tests/tasks-env", "pytest", "-m", "tasks", "-n", "0", "-q"]
    command += ["-p", "no:cacheprovider", f"--junitxml={report}", *FILES]
    finished = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    tail = "\n".join((finished.stdout + finished.stderr).strip().splitlines()[-30:])
    if not report.exists():
        pytest.fail(f"the second environment ran no tests (exit {finished.returncode}):\n{tail}", pytrace=False)
    outcomes, messages = _read_junit(report)
    return Run(outcomes, messages, f"exit {finished.returncode}:\n{tail}")


@pytest.mark.parametrize("file", FILES)
def test_the_task_tests_of_each_file_all_pass_in_the_second_environment(
    file: str, second_environment: Run, request: pytest.FixtureRequest
) -> None:
    ran = {node: outcome for node, outcome in second_environment.outcomes.items() if node.startswith(f"{file}::")}
    assert ran, f"no test of {file} ran in tests/tasks-env; {second_environment.summary}"
    failed = {
        node: second_environment.messages.get(node, outcome)
        for node, outcome in ran.items()
        if outcome in ("failed", "error")
    }
    assert not failed, f"{failed}\n{second_environment.summary}"
    deselected = {node for node in request.config.stash.get(TASK_TESTS, []) if node.startswith(f"{file}::")}
    if deselected:  # this session collected the file too: the very tests it left out ran there
        assert set(ran) == deselected
    # A test can skip there only for what skips it here too: a missing PostgreSQL or Redis
    # (tests/services.py), a failure instead under CI=true, which the subprocess inherits.
    skipped = sorted({second_environment.messages[node] for node, outcome in ran.items() if outcome == "skipped"})
    if skipped:
        pytest.skip(f"{len(ran) - len(skipped)} passed in tests/tasks-env; skipped there: {'; '.join(skipped)}")


def test_every_task_test_is_in_a_file_this_runner_runs(request: pytest.FixtureRequest) -> None:
    elsewhere = [node for node in request.config.stash.get(TASK_TESTS, []) if node.split("::")[0] not in FILES]
    assert not elsewhere, f"add their files to FILES in tests/test_tasks_env.py: {elsewhere}"
