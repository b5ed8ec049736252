"""`mcp_errors.testing`: zero-wait mode and scripted tools, through a real server."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from mcp_errors import Decision, ErrorCategory, RecoveryPolicy, call_tool_with_recovery, install
from mcp_errors._policy import _testing
from mcp_errors.testing import add_flaky_tool, drop_answers, set_testing


def test_set_testing_works_as_a_call_and_as_a_context_manager() -> None:
    assert not _testing["zero_wait"]
    with set_testing():
        assert _testing["zero_wait"]
        with set_testing(False):
            assert not _testing["zero_wait"]
        assert _testing["zero_wait"]
    assert not _testing["zero_wait"]
    set_testing(True)
    assert _testing["zero_wait"]
    set_testing(False)
    assert not _testing["zero_wait"]


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


def test_reset_retry_budgets_refills_the_shared_default_policy() -> None:
    from mcp_errors._policy import DEFAULT_POLICY
    from mcp_errors.testing import reset_retry_budgets

    budget = DEFAULT_POLICY.budget_for("outage")
    for _ in range(100):
        budget.record_failure()
    assert not budget.allows_retry()
    reset_retry_budgets()
    assert DEFAULT_POLICY.budget_for("outage").allows_retry()
