"""The wrapped stdio child: restart backoff, its stderr, and how its exit is told."""

from __future__ import annotations

import io
import sys

import anyio
import pytest

from mcp_errors.proxy import ChildProcess, StartupError, build_proxy
from mcp_errors.proxy._child import RestartBackoff, StderrTail, find_command
from mcp_errors.proxy._server import check_upstream

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


def test_one_exit_after_a_healthy_run_restarts_at_once_and_a_crash_loop_backs_off() -> None:
    backoff = RestartBackoff(first_wait=0.5, max_wait=4, healthy_after=30)
    waits = []
    now = 100.0
    for _ in range(6):
        backoff.exited(lived=1, now=now)
        waits.append(backoff.wait_left(now))
    assert waits == [0, 0.5, 1, 2, 4, 4]
    backoff.exited(lived=60, now=now)  # ran long enough: the loop is over
    assert backoff.wait_left(now) == 0


def test_a_failed_start_counts_like_an_exit() -> None:
    backoff = RestartBackoff(first_wait=1)
    backoff.exited(lived=0, now=0)
    backoff.failed_to_start(now=0)
    assert backoff.wait_left(0) == 1
    assert backoff.wait_left(0.25) == 0.75


def test_the_stderr_tail_passes_everything_through_and_keeps_the_last_lines() -> None:
    out = io.StringIO()
    tail = StderrTail(out, keep_bytes=64)
    try:
        for number in range(20):
            tail.sink.write(f"line {number}\n")
        tail.sink.flush()
        with anyio.from_thread.start_blocking_portal() as portal:
            portal.call(_wait_for, out, "line 19")
        assert tail.last_lines(3) == ["line 17", "line 18", "line 19"]
        assert out.getvalue().startswith("line 0\nline 1\n")
    finally:
        tail.close()


async def _wait_for(out: io.StringIO, text: str) -> None:
    with anyio.fail_after(10):
        while text not in out.getvalue():
            await anyio.lowlevel.checkpoint()


def test_a_command_is_found_on_path() -> None:
    assert find_command("sh") is not None
    assert find_command("no-such-command-for-mcp-errors") is None


@pytest.mark.anyio
async def test_a_child_that_exits_at_start_is_a_startup_error_with_its_status_and_last_words() -> None:
    stderr = io.StringIO()
    code = "import sys; print('config file missing', file=sys.stderr); sys.exit(4)"
    child = ChildProcess(sys.executable, ["-c", code], stderr=stderr)
    try:
        with pytest.raises(StartupError) as raised:
            await check_upstream(build_proxy(child), child, seconds=60)
    finally:
        await child.close()
    message = str(raised.value)
    assert "exited with status 4" in message
    assert "config file missing" in message
    assert "config file missing" in stderr.getvalue()  # and it went through to our stderr
