"""OpenAI Agents SDK: what the model gets from an error result, alone and with `RecoveringMCPServer`.

The SDK's own stdio client (`MCPServerStdio`, built on mcp 2.x's `mcp.Client`) spawns the
test server; tools are invoked the way the SDK's runner does, through the `FunctionTool`
that the agent builds for each MCP tool, so no LLM is needed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from agents import Agent, FunctionTool, RunContextWrapper
from agents.mcp import MCPServer, MCPServerStdio
from agents.tool_context import ToolContext

from mcp_errors._client.policy import Decision, RecoveryPolicy
from mcp_errors.integrations.openai_agents import RecoveringMCPServer
from servers.integrations_server import FAILING_CALLS, SERVER_SCRIPT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def _stdio_server() -> MCPServerStdio:
    return MCPServerStdio(params={"command": sys.executable, "args": [SERVER_SCRIPT]}, name="integrations")


async def _tools(server: MCPServer) -> dict[str, FunctionTool]:
    agent = Agent(name="support", mcp_servers=[server])
    tools = await agent.get_all_tools(RunContextWrapper(context=None))
    return {tool.name: tool for tool in tools if isinstance(tool, FunctionTool)}


async def _model_sees(tool: FunctionTool, args: dict[str, Any]) -> str:
    """The tool output the SDK hands the model for one call."""
    arguments = json.dumps(args)
    context = ToolContext(context=None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=arguments)
    output = await tool.on_invoke_tool(context, arguments)
    assert isinstance(output, dict), output
    assert output["type"] == "text", output
    text = output["text"]
    assert isinstance(text, str)
    return text


@pytest.fixture
async def plain() -> AsyncIterator[dict[str, FunctionTool]]:
    with anyio.fail_after(30):
        async with _stdio_server() as server:
            yield await _tools(server)


@pytest.fixture
async def recovering() -> AsyncIterator[tuple[RecoveringMCPServer, dict[str, FunctionTool]]]:
    policy = RecoveryPolicy(max_attempts=3, initial_wait=0.0, max_wait=0.0)
    with anyio.fail_after(30):
        async with RecoveringMCPServer(_stdio_server(), policy=policy) as server:
            yield server, await _tools(server)


async def test_alone_the_sdk_shows_the_text_block_so_the_category_and_field_errors_arrive(
    plain: dict[str, FunctionTool],
) -> None:
    for name, args, category in FAILING_CALLS:
        text = await _model_sees(plain[name], args)
        print(f"openai-agents default, {name}: {text}")
        assert text.startswith(f"[{category} error,"), text
    # The SDK drops structuredContent on errors; the text block spells out each field error.
    assert "#NNNNN" in await _model_sees(plain["cancel_order"], {"order_id": "abc"})


async def test_alone_the_sdk_leaves_a_transient_failure_to_the_model(plain: dict[str, FunctionTool]) -> None:
    text = await _model_sees(plain["flaky_quote"], {"symbol": "ACME"})
    assert text.startswith("[transient error, retryable")
    assert await _model_sees(plain["call_count"], {"tool": "flaky_quote"}) == "1"


async def test_with_recovery_every_category_and_verdict_reaches_the_model(
    recovering: tuple[RecoveringMCPServer, dict[str, FunctionTool]],
) -> None:
    _, tools = recovering
    for name, args, category in FAILING_CALLS:
        verdict = "retryable" if category == "transient" else "not retryable"
        text = await _model_sees(tools[name], args)
        assert text.startswith(f"[{category} error, {verdict}"), text


async def test_with_recovery_the_model_sees_each_bad_argument(
    recovering: tuple[RecoveringMCPServer, dict[str, FunctionTool]],
) -> None:
    server, tools = recovering
    text = await _model_sees(tools["cancel_order"], {"order_id": "abc"})
    assert "- order_id:" in text
    assert "#NNNNN" in text
    assert server.last_report is not None
    assert server.last_report.decision is Decision.FIX_INPUT


async def test_with_recovery_a_read_only_transient_failure_is_resent_before_the_model_sees_it(
    recovering: tuple[RecoveringMCPServer, dict[str, FunctionTool]],
) -> None:
    _, tools = recovering
    assert await _model_sees(tools["flaky_quote"], {"symbol": "ACME"}) == "ACME: 42.0"
    assert await _model_sees(tools["call_count"], {"tool": "flaky_quote"}) == "2"


async def test_with_recovery_an_outage_stops_at_the_policy_attempts(
    recovering: tuple[RecoveringMCPServer, dict[str, FunctionTool]],
) -> None:
    server, tools = recovering
    text = await _model_sees(tools["quote_down"], {"symbol": "ACME"})
    assert text.startswith("[transient error, retryable")
    assert server.last_report is not None
    assert server.last_report.decision is Decision.ESCALATE
    assert await _model_sees(tools["call_count"], {"tool": "quote_down"}) == str(server.policy.max_attempts)


async def test_with_recovery_other_categories_are_sent_once(
    recovering: tuple[RecoveringMCPServer, dict[str, FunctionTool]],
) -> None:
    _, tools = recovering
    for name, args, category in FAILING_CALLS:
        if category != "transient":
            await _model_sees(tools[name], args)
    assert await _model_sees(tools["call_count"], {"tool": "cancel_order"}) == "1"
    assert await _model_sees(tools["call_count"], {"tool": "refund"}) == "1"
    assert await _model_sees(tools["call_count"], {"tool": "delete_account"}) == "1"


async def test_with_recovery_an_empty_result_reaches_the_model_as_the_server_wrote_it(
    recovering: tuple[RecoveringMCPServer, dict[str, FunctionTool]],
) -> None:
    _, tools = recovering
    text = await _model_sees(tools["find_customer"], {"email": "a@b.c"})
    assert "found nothing" in text
