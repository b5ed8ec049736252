"""Fixtures shared by every test module.

- `anyio_backend`: anyio runs every async test on asyncio.
- `mode`: a test that takes it runs once per connection mode of `mcp.Client` in memory,
  `"legacy"` (2025-11-25, JSON-RPC streams) and `"auto"` (the modern path); their wire
  rules differ.
- `zero_wait`: the recovery policy skips its backoff waits (`mcp_errors.testing`).
- Every test starts with full default retry budgets.
- `postgres_url`, `redis_url`: real servers started for the session (`tests/services.py`).
- Tests marked `tasks` need `fastmcp-tasks` (it pins an older fastmcp): in the main
  environment they are deselected here and `tests/test_tasks_env.py` runs them in the second
  one (`tests/tasks-env`), one subprocess for the session.
- Workers: a run of whole folders (`uv run pytest`) gets one pytest-xdist worker more than
  there are cores, up to 5, each taking whole files; a run of chosen files or tests runs in
  one process. The files that take longest run first, so that no worker is left alone at
  the end.
- Reports keep no lone surrogates (see `pytest_runtest_makereport`).
- Bytecode is kept for the run where the environment turned it off (`_keep_bytecode`).

Hypothesis runs the `test` profile: 50 examples per property, enough to exercise every
strategy on each run while the suite stays quick. A scheduled run can search deeper with
`HYPOTHESIS_PROFILE=deep uv run pytest` (1,000 examples per property).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import settings
from pluggy import Result

from collection import TASK_TESTS
from mcp_errors.testing import reset_retry_budgets, set_testing

pytest_plugins = ["services"]


def _keep_bytecode() -> None:
    """Keep compiled bytecode for this run and its subprocesses where the environment turned it off.

    With `PYTHONDONTWRITEBYTECODE` set and a fresh clone's virtual environment (uv writes no
    `.pyc`), every Python process the suite starts (each worker, each server, proxy and
    checker) compiled every module it imports from source: about twice the CPU of a start-up
    (`mcp-errors proxy`: 3.1 s instead of 1.6 s). The bytecode goes under
    `.pytest_cache/pycache` (`PYTHONPYCACHEPREFIX`), so the source tree and the environment
    stay as clean as the setting wanted; Python checks each file against its source.
    """
    if not sys.dont_write_bytecode:
        return
    prefix = sys.pycache_prefix or str(Path(__file__).resolve().parent.parent / ".pytest_cache" / "pycache")
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = prefix  # the workers and every subprocess started with this environment
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_keep_bytecode()

# No deadline: on a shared machine one example's time says more about the neighbours than
# about the code (speed is measured in benchmarks/, never in tests).
settings.register_profile("test", max_examples=50, deadline=None)
settings.register_profile("deep", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "test"))

Mode = Literal["legacy", "auto"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["legacy", "auto"])
def mode(request: pytest.FixtureRequest) -> Mode:
    """Each connection mode of the in-memory `mcp.Client`."""
    value: Mode = request.param
    return value


@pytest.fixture
def zero_wait() -> Iterator[None]:
    """No backoff waits for the duration of the test (skipped waits still count)."""
    with set_testing():
        yield


@pytest.fixture(autouse=True)
def fresh_default_retry_budgets() -> None:
    """Calls made without a policy share one process-wide budget per server; start each test full."""
    reset_retry_budgets()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Workers for `-n auto`: none when the run names files or tests, as while iterating."""
    if any(not os.path.isdir(arg.partition("::")[0]) for arg in config.args):
        return 0  # starting workers would cost more than they save
    # One more than the cores: a worker often waits (a server starting in a subprocess, a
    # fixed timeout of a third-party server), and the extra one uses the core meanwhile.
    return min(5, len(os.sched_getaffinity(0)) + 1)


# The files that take longest, most first, by path under tests/ (`--durations=0` summed by
# file; docs/performance.md, "The test suite").
# Workers take whole files in collection order: one of these started last would keep its
# worker busy long after the other ran out of files.
_LONGEST_FIRST = (
    "test_tasks_env.py",  # the task tests in the second environment, in a subprocess (mostly waiting)
    "server/test_tasks.py",  # in the second environment, where it runs here
    "proxy/test_sessions.py",
    "interop/test_interop_proxy.py",
    "interop/test_interop_rule_packs.py",
    "server/test_replicas.py",
    "proxy/test_gateway.py",
    "check/test_runner.py",
    "check/test_cli.py",
    "proxy/test_cli.py",
    "server/test_replay.py",
    "proxy/test_recovery.py",
    "interop/test_interop_inspector.py",
    "proxy/test_front.py",
    "proxy/test_idempotency.py",
    "proxy/test_breaker.py",
    "demo/test_simulator.py",
    "test_docs.py",
    "test_linear_patterns.py",
    "interop/test_interop_conformance.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: index for index, name in enumerate(_LONGEST_FIRST)}
    tests = Path(__file__).parent

    def under_tests(item: pytest.Item) -> str:
        return item.path.relative_to(tests).as_posix() if item.path.is_relative_to(tests) else item.path.name

    items.sort(key=lambda item: rank.get(under_tests(item), len(rank)))  # stable: each file keeps its order
    # The tests of tasks need `fastmcp-tasks`, which pins an older fastmcp than this project's
    # lock: where it is missing (the main environment) they are not run here but in the
    # second environment, by `tests/test_tasks_env.py`; where it is there, that runner is
    # what is left out (it would run them a second time).
    config.stash[TASK_TESTS] = [item.nodeid for item in items if item.get_closest_marker("tasks")]
    elsewhere = "tasks_env" if importlib.util.find_spec("fastmcp_tasks") else "tasks"
    moved = [item for item in items if item.get_closest_marker(elsewhere)]
    if moved:
        config.hook.pytest_deselected(items=moved)
        items[:] = [item for item in items if not item.get_closest_marker(elsewhere)]


def _encodable(text: str) -> str:
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport]]:
    """Escape lone surrogates in what a report carries, as `\\udcff`.

    Tests feed servers file names that are not UTF-8 (`os.fsdecode` makes lone surrogates
    of them), and the servers' logs, captured into the report, repeat them. pytest-xdist's
    workers send reports as UTF-8, which has no surrogates: such a report killed its worker.
    """
    outcome = yield
    report = outcome.get_result()
    report.sections = [(title, _encodable(text)) for title, text in report.sections]
    if report.longrepr is not None and not isinstance(report.longrepr, tuple):
        text = str(report.longrepr)
        if _encodable(text) != text:
            report.longrepr = _encodable(text)
