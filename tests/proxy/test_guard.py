"""The repeat guard: the identical resend of a call that failed for good is answered without the upstream.

The tests in memory share one guarded proxy (`guarded`) and its upstream child: the guard keeps
each front session's failures apart, and each test counts its own keys (suffixed with its
connection mode), so no test sees another's state. The command over stdio runs once.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from fastmcp import FastMCP
from mcp import Client

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META
from mcp_errors.proxy import ProxySettings
from mcp_errors.proxy._guard import REPEAT_OF_META, RepeatGuardMiddleware
from proxying import STARTUP_SECONDS, UPSTREAM, command_params, front, served_upstream

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one guarded proxy (`guarded`)."""
    return "asyncio"


@pytest.fixture(scope="module")
async def guarded() -> AsyncIterator[FastMCP[Any]]:
    """One proxy in this process with `--repeat-guard 60`, shared by the tests in memory.

    Its breaker is off (a test sends transient failures on purpose) and idempotency keys are on
    (for the test of a key changed); a call without a key, as every other test sends, is not
    touched by them.
    """
    settings = ProxySettings(repeat_guard=60, breaker_failures=0, idempotency_keys=True)
    async with served_upstream(settings) as server:
        yield server


async def assert_the_guard_saves_a_repeated_call_and_lets_a_changed_call_through(client: Client, suffix: str) -> None:
    """Refuse `order-abc<suffix>` twice and `order-abd<suffix>` once through `client`, and check what the guard did."""
    unchanged, other = f"order-abc{suffix}", f"order-abd{suffix}"
    with anyio.fail_after(STARTUP_SECONDS):
        first = await client.call_tool("refuse", {"key": unchanged})
        repeated = await client.call_tool("refuse", {"key": unchanged})
        changed = await client.call_tool("refuse", {"key": other})
        ran = await client.call_tool("attempts", {"key": unchanged})
        ran_changed = await client.call_tool("attempts", {"key": other})
    before, again = read_result(first), read_result(repeated)
    assert before.category is ErrorCategory.VALIDATION
    assert (again.category, again.code, again.is_retryable) == (before.category, before.code, False)
    assert again.execution_state is ExecutionState.NOT_EXECUTED  # this one was not sent
    assert before.description in again.description  # the first answer, with the note before it
    assert (repeated.meta or {})[REPEAT_OF_META]["errorId"] == before.error_id
    assert again.error_id != before.error_id
    assert ran.structured_content == {"result": 1}  # the repeat never reached the upstream
    assert read_result(changed).category is ErrorCategory.VALIDATION
    assert ran_changed.structured_content == {"result": 1}


@pytest.mark.anyio
async def test_the_guard_saves_the_upstream_a_repeated_call_and_lets_a_changed_call_through(
    guarded: FastMCP[Any], mode: str
) -> None:
    async with Client(guarded._mcp_server, mode=mode) as client:  # fastmcp's low-level server
        await assert_the_guard_saves_a_repeated_call_and_lets_a_changed_call_through(client, f"-{mode}")


@pytest.mark.anyio
async def test_the_commands_repeat_guard_saves_the_upstream_a_repeated_call_and_lets_a_changed_call_through() -> None:
    # One connection mode over stdio ("legacy"): the guard is the same in both, proved in memory just above.
    command = command_params("--repeat-guard", "60", "--", sys.executable, UPSTREAM)
    async with Client(command, mode="legacy") as client:
        await assert_the_guard_saves_a_repeated_call_and_lets_a_changed_call_through(client, "")


@pytest.mark.anyio
async def test_a_retryable_failure_is_not_guarded(guarded: FastMCP[Any], mode: str) -> None:
    key = f"flaky-{mode}"
    async with Client(guarded._mcp_server, mode=mode) as client:
        for _ in range(3):
            await client.call_tool("flaky_read", {"key": key, "failures": 2})
        ran = await client.call_tool("attempts", {"key": key})
    assert ran.structured_content == {"result": 3}


@pytest.mark.anyio
async def test_a_success_in_between_and_the_end_of_the_window_let_the_call_through_again() -> None:
    clock = [1000.0]
    async with served_upstream() as server:
        server.middleware.insert(2, RepeatGuardMiddleware(60, clock=lambda: clock[0]))  # where `--repeat-guard` is
        async with front(server) as client:
            await client.call_tool("refuse", {"key": "x"})
            clock[0] += 59
            guarded = await client.call_tool("refuse", {"key": "x"})
            clock[0] += 2  # 61 s after the failure
            through = await client.call_tool("refuse", {"key": "x"})
            ran = await client.call_tool("attempts", {"key": "x"})
    assert REPEAT_OF_META in (guarded.meta or {})
    assert REPEAT_OF_META not in (through.meta or {})
    assert ran.structured_content == {"result": 2}


@pytest.mark.anyio
async def test_a_successful_write_in_between_lets_the_failed_call_through_and_a_read_does_not(
    guarded: FastMCP[Any], mode: str
) -> None:
    key = f"a-{mode}"
    async with Client(guarded._mcp_server, mode=mode) as client:
        await client.call_tool("refuse", {"key": key})
        await client.call_tool("echo", {"text": "a read-only success changes nothing"})
        after_read = await client.call_tool("refuse", {"key": key})
        await client.call_tool("count_write", {"key": f"fixed-it-{mode}"})  # a write: what was missing may exist now
        after_write = await client.call_tool("refuse", {"key": key})
        ran = await client.call_tool("attempts", {"key": key})
    assert REPEAT_OF_META in (after_read.meta or {})
    assert REPEAT_OF_META not in (after_write.meta or {})
    assert ran.structured_content == {"result": 2}


@pytest.mark.anyio
async def test_a_call_resent_with_another_idempotency_key_is_another_call(guarded: FastMCP[Any], mode: str) -> None:
    write, refused = f"w-{mode}", f"r-{mode}"
    async with Client(guarded._mcp_server, mode=mode) as client:
        invalid = await client.call_tool("count_write", {"key": write}, meta={IDEMPOTENCY_KEY_META: ""})  # type: ignore[arg-type]
        corrected = await client.call_tool(
            "count_write",
            {"key": write},
            meta={IDEMPOTENCY_KEY_META: f"order-1-{mode}"},  # type: ignore[arg-type]
        )
        progress = {IDEMPOTENCY_KEY_META: "", "progressToken": "p-2"}  # changes with every request
        repeated = await client.call_tool(
            "refuse",
            {"key": refused},
            meta={IDEMPOTENCY_KEY_META: "", "progressToken": "p-1"},  # type: ignore[arg-type]
        )
        again = await client.call_tool("refuse", {"key": refused}, meta=progress)  # type: ignore[arg-type]
        ran = await client.call_tool("attempts", {"key": write})
    assert read_result(invalid).code == "IDEMPOTENCY_KEY_INVALID"
    assert not corrected.is_error
    assert ran.structured_content == {"result": 1}
    assert read_result(repeated).code == "IDEMPOTENCY_KEY_INVALID"
    assert REPEAT_OF_META in (again.meta or {})  # the same call: only its progress token changed


@pytest.mark.anyio
async def test_each_front_session_is_its_own_caller(guarded: FastMCP[Any]) -> None:
    async with front(guarded) as one, front(guarded) as other:
        await one.call_tool("refuse", {"key": "shared-by-two-sessions"})
        theirs = await other.call_tool("refuse", {"key": "shared-by-two-sessions"})
        ran = await one.call_tool("attempts", {"key": "shared-by-two-sessions"})
    assert REPEAT_OF_META not in (theirs.meta or {})
    assert ran.structured_content == {"result": 2}


def test_a_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="window"):
        RepeatGuardMiddleware(0)
