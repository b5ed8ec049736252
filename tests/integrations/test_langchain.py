"""LangChain tools built on `mcp.Client`: the category reaches the model, resends follow the policy.

`langchain-mcp-adapters` cannot be installed with mcp 2.x (see docs/integrations.md), so
these tests drive `mcp_errors.integrations.langchain` through LangChain's own tool-call path:
`tool.ainvoke(ToolCall)` returns the `ToolMessage` that an agent loop (LangGraph's
`ToolNode`, `create_agent`) hands the model.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

from mcp_errors._client.policy import RecoveryPolicy
from mcp_errors._shared.error_text import read_error_text
from mcp_errors.integrations.langchain import load_mcp_tools
from servers.integrations_server import FAILING_CALLS, SERVER_SCRIPT, build_server
from servers.scripted_server import build_scripted_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def policy() -> RecoveryPolicy:
    # A fresh policy per test: a policy keeps one retry budget per server, and the outage
    # tests drain it on purpose.
    return RecoveryPolicy(max_attempts=3, initial_wait=0.0, max_wait=0.0)


async def _invoke(tool: BaseTool, args: dict[str, Any]) -> ToolMessage:
    message = await tool.ainvoke({"type": "tool_call", "id": "call-1", "name": tool.name, "args": args})
    assert isinstance(message, ToolMessage)
    return message


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_category_reaches_the_model_as_an_error_message_with_its_verdict(
    mode: str, policy: RecoveryPolicy
) -> None:
    server = build_server()
    with anyio.fail_after(10):
        async with Client(server, mode=mode) as client:
            tools = {tool.name: tool for tool in await load_mcp_tools(client, policy=policy)}
            for name, args, category in FAILING_CALLS:
                message = await _invoke(tools[name], args)
                verdict = "retryable" if category == "transient" else "not retryable"
                assert message.status == "error", name
                assert isinstance(message.content, str)
                assert message.content.startswith(f"[{category} error, {verdict}"), message.content


async def test_validation_field_errors_reach_the_model_in_the_text(policy: RecoveryPolicy) -> None:
    with anyio.fail_after(10):
        async with Client(build_server()) as client:
            tools = {tool.name: tool for tool in await load_mcp_tools(client, policy=policy)}
            message = await _invoke(tools["cancel_order"], {"order_id": "abc"})
    assert isinstance(message.content, str)
    assert "- order_id:" in message.content
    assert "#NNNNN" in message.content


async def test_a_transient_failure_of_a_read_only_tool_is_resent_and_the_model_sees_only_the_answer(
    policy: RecoveryPolicy,
) -> None:
    server = build_server()
    with anyio.fail_after(10):
        async with Client(server) as client:
            tools = {tool.name: tool for tool in await load_mcp_tools(client, policy=policy)}
            message = await _invoke(tools["flaky_quote"], {"symbol": "ACME"})
    assert message.status == "success"
    assert message.content == "ACME: 42.0"
    assert server.calls["flaky_quote"] == 2  # type: ignore[attr-defined]


async def test_tools_load_from_the_sdks_client_session_and_recover_the_same_way(policy: RecoveryPolicy) -> None:
    server = build_server()
    with anyio.fail_after(10):
        async with Client(server) as client:
            tools = {tool.name: tool for tool in await load_mcp_tools(client.session, policy=policy)}
            message = await _invoke(tools["flaky_quote"], {"symbol": "ACME"})
    assert message.status == "success"
    assert server.calls["flaky_quote"] == 2  # type: ignore[attr-defined]


async def test_an_outage_is_resent_only_up_to_the_policy_attempts_then_reported_as_transient(
    policy: RecoveryPolicy,
) -> None:
    server = build_server()
    with anyio.fail_after(10):
        async with Client(server) as client:
            tools = {tool.name: tool for tool in await load_mcp_tools(client, policy=policy)}
            message = await _invoke(tools["quote_down"], {"symbol": "ACME"})
    assert message.status == "error"
    assert isinstance(message.content, str)
    assert message.content.startswith("[transient error, retryable")
    assert server.calls["quote_down"] == policy.max_attempts  # type: ignore[attr-defined]


async def test_validation_business_and_permission_errors_are_never_resent(policy: RecoveryPolicy) -> None:
    server = build_server()
    with anyio.fail_after(10):
        async with Client(server) as client:
            tools = {tool.name: tool for tool in await load_mcp_tools(client, policy=policy)}
            for name, args, category in FAILING_CALLS:
                if category != "transient":
                    await _invoke(tools[name], args)
    assert server.calls["cancel_order"] == 1  # type: ignore[attr-defined]
    assert server.calls["refund"] == 1  # type: ignore[attr-defined]  # the bad-argument call never ran
    assert server.calls["delete_account"] == 1  # type: ignore[attr-defined]


async def test_an_empty_result_is_a_success_whose_text_says_the_lookup_ran(policy: RecoveryPolicy) -> None:
    with anyio.fail_after(10):
        async with Client(build_server()) as client:
            tools = {tool.name: tool for tool in await load_mcp_tools(client, policy=policy)}
            message = await _invoke(tools["find_customer"], {"email": "a@b.c"})
    assert message.status == "success"
    assert "found nothing" in str(message.content)
    assert message.artifact == {"structured_content": {"resultCount": 0}}


async def test_a_success_that_breaks_the_tools_output_schema_reaches_the_model_as_an_error_message(
    mode: str, policy: RecoveryPolicy
) -> None:
    def answer() -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="try later")], structured_content={"status": "x"})

    schema = {"type": "object", "properties": {"hits": {"type": "array"}}, "required": ["hits"]}
    with anyio.fail_after(10):
        async with Client(build_scripted_server(answer, output_schema=schema), mode=mode) as client:
            [tool] = await load_mcp_tools(client, policy=policy)
            message = await _invoke(tool, {})
    written = read_error_text(str(message.content))
    assert message.status == "error"
    assert written is not None
    assert (written.head.category, written.head.retryable) == (None, False)


@pytest.mark.slow  # a server in a subprocess
async def test_categories_survive_a_stdio_server(policy: RecoveryPolicy) -> None:
    params = StdioServerParameters(command=sys.executable, args=[SERVER_SCRIPT])
    with anyio.fail_after(30):
        async with Client(params) as client:
            tools = {tool.name: tool for tool in await load_mcp_tools(client, policy=policy)}
            for name, args, category in FAILING_CALLS:
                message = await _invoke(tools[name], args)
                assert message.status == "error"
                assert str(message.content).startswith(f"[{category} error,"), message.content
            flaky = await _invoke(tools["flaky_quote"], {"symbol": "ACME"})
            count = await _invoke(tools["call_count"], {"tool": "flaky_quote"})
    assert flaky.status == "success"
    assert count.content == "2"
