"""`mcp-errors proxy` over stdio and its child: progress, cancellation, a child that dies or hangs.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract; the shared
clients (`client`, `stdio_client`) are in `tests/proxy/conftest.py`.
"""

from __future__ import annotations

import functools
import io
import os
import signal
from pathlib import Path

import anyio
import anyio.abc
import pytest
from mcp import Client
from mcp_types import (
    CallToolResult,
)

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors.proxy._child import RestartBackoff
from proxying import proxied

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one proxy (`client`, `tests/proxy/conftest.py`)."""
    return "asyncio"


# --- the child process ----------------------------------------------------------------


@pytest.mark.anyio
async def test_progress_notifications_reach_the_caller(stdio_client: Client) -> None:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    # Over stdio, as a host runs it: the SDK's in-memory modern path does not carry progress.
    with anyio.fail_after(30):
        result = await stdio_client.call_tool("count_up", {"steps": 3}, progress_callback=on_progress)
    assert not result.is_error
    assert seen == [1, 2, 3]


@pytest.mark.anyio
async def test_a_caller_cancelling_a_call_cancels_it_upstream(stdio_client: Client, tmp_path: Path) -> None:
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    # Over stdio, as a host runs it: the SDK's in-memory modern path does not carry progress.
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(
                functools.partial(
                    stdio_client.call_tool, "hang", {"pid_file": str(tmp_path / "pid")}, progress_callback=on_progress
                )
            )
            await started.wait()
            group.cancel_scope.cancel()
        cancelled = await stdio_client.call_tool("was_cancelled", {})
    assert cancelled.structured_content == {"result": True}


@pytest.mark.anyio
async def test_the_childs_stderr_reaches_ours() -> None:
    stderr = io.StringIO()
    async with proxied("legacy", stderr=stderr) as client:
        await client.call_tool("log_to_stderr", {"text": "upstream says hello"})
        with anyio.fail_after(10):
            while "upstream says hello" not in stderr.getvalue():
                await anyio.lowlevel.checkpoint()
    assert "upstream says hello" in stderr.getvalue()


@pytest.mark.anyio
async def test_a_child_killed_mid_call_answers_transient_outcome_unknown_and_the_next_call_works(
    stdio_client: Client, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    started = anyio.Event()
    killed: list[CallToolResult] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    # Over stdio, as a host runs it: the SDK's in-memory modern path does not carry progress.
    async def hang() -> None:
        killed.append(await stdio_client.call_tool("hang", {"pid_file": str(pid_file)}, progress_callback=on_progress))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(hang)
            await started.wait()
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        after = await stdio_client.call_tool("echo", {"text": "still here"})
    outcome = read_result(killed[0])
    assert (outcome.category, outcome.is_retryable, outcome.execution_state, outcome.code) == (
        ErrorCategory.TRANSIENT,
        True,
        ExecutionState.OUTCOME_UNKNOWN,
        "UPSTREAM_EXITED",
    )
    assert (after.is_error, after.structured_content) == (False, {"result": "still here"})


@pytest.mark.anyio
async def test_a_child_that_keeps_exiting_waits_out_a_backoff_and_keeps_its_tools(mode: str) -> None:
    backoff = RestartBackoff(first_wait=60, max_wait=120, healthy_after=3600)
    async with proxied(mode, backoff=backoff) as client:
        first = await client.call_tool("crash", {})
        second = await client.call_tool("crash", {})  # started again at once: one crash is an accident
        waiting = await client.call_tool("echo", {"text": "too soon"})
        tools = await client.list_tools()
    assert read_result(first).code == read_result(second).code == "UPSTREAM_EXITED"
    outcome = read_result(waiting)
    assert (outcome.category, outcome.execution_state, outcome.code) == (
        ErrorCategory.TRANSIENT,
        ExecutionState.NOT_EXECUTED,
        "UPSTREAM_UNAVAILABLE",
    )
    assert outcome.retry_after_seconds is not None
    assert 50 < outcome.retry_after_seconds <= 60
    assert "echo" in {tool.name for tool in tools.tools}
