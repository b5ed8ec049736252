"""The repeat guard: the identical resend of a call that failed for good is answered without the upstream."""

from __future__ import annotations

import sys

import anyio
import pytest
from mcp import Client

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META
from mcp_errors.proxy import ChildProcess, ProxySettings
from mcp_errors.proxy._guard import REPEAT_OF_META, RepeatGuardMiddleware
from proxying import STARTUP_SECONDS, UPSTREAM, command_params, front, proxied, served

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.mark.anyio
async def test_the_guard_saves_the_upstream_a_repeated_call_and_lets_a_changed_call_through(mode: str) -> None:
    command = command_params("--repeat-guard", "60", "--", sys.executable, UPSTREAM)
    async with Client(command, mode=mode) as client:
        with anyio.fail_after(STARTUP_SECONDS):
            first = await client.call_tool("refuse", {"key": "order-abc"})
            repeated = await client.call_tool("refuse", {"key": "order-abc"})
            changed = await client.call_tool("refuse", {"key": "order-abd"})
            ran = await client.call_tool("attempts", {"key": "order-abc"})
            ran_changed = await client.call_tool("attempts", {"key": "order-abd"})
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
async def test_a_retryable_failure_is_not_guarded(mode: str) -> None:
    async with proxied(mode, ProxySettings(repeat_guard=60, breaker_failures=0)) as client:
        for _ in range(3):
            await client.call_tool("flaky_read", {"key": "t", "failures": 2})
        ran = await client.call_tool("attempts", {"key": "t"})
    assert ran.structured_content == {"result": 3}


@pytest.mark.anyio
async def test_a_success_in_between_and_the_end_of_the_window_let_the_call_through_again() -> None:
    clock = [1000.0]
    async with served(ChildProcess(sys.executable, [UPSTREAM])) as server:
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
async def test_a_successful_write_in_between_lets_the_failed_call_through_and_a_read_does_not(mode: str) -> None:
    async with proxied(mode, ProxySettings(repeat_guard=60)) as client:
        await client.call_tool("refuse", {"key": "a"})
        await client.call_tool("echo", {"text": "a read-only success changes nothing"})
        after_read = await client.call_tool("refuse", {"key": "a"})
        await client.call_tool("count_write", {"key": "fixed-it"})  # a write: what was missing may exist now
        after_write = await client.call_tool("refuse", {"key": "a"})
        ran = await client.call_tool("attempts", {"key": "a"})
    assert REPEAT_OF_META in (after_read.meta or {})
    assert REPEAT_OF_META not in (after_write.meta or {})
    assert ran.structured_content == {"result": 2}


@pytest.mark.anyio
async def test_a_call_resent_with_another_idempotency_key_is_another_call(mode: str) -> None:
    settings = ProxySettings(repeat_guard=60, idempotency_keys=True)
    async with proxied(mode, settings) as client:
        invalid = await client.call_tool("count_write", {"key": "w"}, meta={IDEMPOTENCY_KEY_META: ""})  # type: ignore[arg-type]
        corrected = await client.call_tool("count_write", {"key": "w"}, meta={IDEMPOTENCY_KEY_META: "order-1"})  # type: ignore[arg-type]
        progress = {IDEMPOTENCY_KEY_META: "", "progressToken": "p-2"}  # changes with every request
        repeated = await client.call_tool(
            "refuse",
            {"key": "r"},
            meta={IDEMPOTENCY_KEY_META: "", "progressToken": "p-1"},  # type: ignore[arg-type]
        )
        again = await client.call_tool("refuse", {"key": "r"}, meta=progress)  # type: ignore[arg-type]
        ran = await client.call_tool("attempts", {"key": "w"})
    assert read_result(invalid).code == "IDEMPOTENCY_KEY_INVALID"
    assert not corrected.is_error
    assert ran.structured_content == {"result": 1}
    assert read_result(repeated).code == "IDEMPOTENCY_KEY_INVALID"
    assert REPEAT_OF_META in (again.meta or {})  # the same call: only its progress token changed


@pytest.mark.anyio
async def test_each_front_session_is_its_own_caller() -> None:
    child = ChildProcess(sys.executable, [UPSTREAM])
    async with served(child, ProxySettings(repeat_guard=60)) as server, front(server) as one, front(server) as other:
        await one.call_tool("refuse", {"key": "shared"})
        theirs = await other.call_tool("refuse", {"key": "shared"})
        ran = await one.call_tool("attempts", {"key": "shared"})
    assert REPEAT_OF_META not in (theirs.meta or {})
    assert ran.structured_content == {"result": 2}


def test_a_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="window"):
        RepeatGuardMiddleware(0)
