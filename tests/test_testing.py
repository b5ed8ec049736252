"""`mcp_errors.testing`: zero-wait mode and scripted tools, through a real server."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from mcp_errors import Decision, ErrorCategory, RecoveryPolicy, call_tool_with_recovery, install
from mcp_errors.testing import add_flaky_tool, drop_answers, is_testing, reset_retry_budgets, set_testing


def test_set_testing_works_as_a_call_and_as_a_context_manager() -> None:
    assert not is_testing()
    with set_testing():
        assert is_testing()
        with set_testing(False):
            assert not is_testing()
        assert is_testing()
    assert not is_testing()
    set_testing(True)
    assert is_testing()
    set_testing(False)
    assert not is_testing()


@pytest.mark.anyio
async def test_zero_wait_mode_skips_long_waits_but_still_reports_them() -> None:
    server = install(MCPServer("t"))
    flaky = add_flaky_tool(server, "slow", failures=1, read_only=True, retry_after_seconds=3600)
    policy = RecoveryPolicy(deadline=7200)
    with anyio.fail_after(10), set_testing():
        async with Client(server) as client:
            report = await call_tool_with_recovery(client, "slow", {}, policy=policy)
    assert report.decision is Decision.DONE
    assert report.attempts[1].wait_before >= 3600
    assert flaky.calls == 2


@pytest.mark.anyio
@pytest.mark.parametrize("category", list(ErrorCategory))
async def test_a_flaky_tool_fails_in_its_category_then_succeeds(category: ErrorCategory) -> None:
    server = install(MCPServer("t"))
    flaky = add_flaky_tool(server, "tool", failures=1, category=category)
    async with Client(server) as client:
        first = await client.call_tool("tool", {})
        second = await client.call_tool("tool", {})
    assert first.is_error
    assert first.structured_content is not None
    assert first.structured_content["errorCategory"] == category.value
    assert not second.is_error
    assert (flaky.calls, flaky.side_effects) == (2, 1)


@pytest.mark.anyio
async def test_a_flaky_tool_with_unknown_outcome_applies_its_change_before_failing() -> None:
    server = install(MCPServer("t"))
    flaky = add_flaky_tool(server, "write", failures=1, execution_state="outcome_unknown")
    async with Client(server) as client:
        await client.call_tool("write", {})
    assert (flaky.calls, flaky.side_effects) == (1, 1)


@pytest.mark.anyio
async def test_dropped_answers_still_reach_the_server() -> None:
    server: MCPServer[Any] = MCPServer("t")
    flaky = add_flaky_tool(server, "write", failures=0)
    async with Client(server) as client:
        lossy = drop_answers(client, times=1)
        with pytest.raises(Exception, match="timed out"):
            await lossy("write", {}, None)
        assert not (await lossy("write", {}, None)).is_error
    assert flaky.calls == 2


@pytest.mark.anyio
@pytest.mark.usefixtures("zero_wait")
async def test_reset_retry_budgets_lets_calls_without_a_policy_retry_again() -> None:
    server = install(MCPServer("outage"))
    add_flaky_tool(server, "down", failures=10**9, read_only=True)
    async with Client(server) as client:
        # Calls without a policy share the default policy's budget for this server: an
        # outage drains it until only first attempts are made.
        attempts = [len((await call_tool_with_recovery(client, "down", {})).attempts) for _ in range(6)]
        reset_retry_budgets()
        after_reset = await call_tool_with_recovery(client, "down", {})
    assert attempts[0] == 3
    assert attempts[-1] == 1
    assert len(after_reset.attempts) == 3
