"""`install` on a fastmcp server, end to end through fastmcp's in-memory client."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from fastmcp import Client, FastMCP
from mcp.shared.exceptions import MCPError
from mcp_types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    URL_ELICITATION_REQUIRED,
    CallToolResult,
    ImageContent,
    TextContent,
)

from mcp_errors import BusinessRuleError, install
from servers.checks import assert_nothing_leaks, check_error, check_success
from servers.contract_fastmcp import build_fastmcp_server
from servers.contract_server import CASES, CRASH_TEXT, LEAKED_PATH, LEAKED_SECRET, Case
from servers.gateway import LEAKED_DSN, build_gateway


class Opaque:
    """A value no serialiser knows."""


@dataclass
class Out:
    value: object


def wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


async def output_schemas(client: Client[Any]) -> dict[str, dict[str, Any] | None]:
    return {tool.name: tool.output_schema for tool in await client.list_tools()}


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.tool)
async def test_every_failure_reaches_the_fastmcp_client_as_a_schema_valid_envelope(case: Case) -> None:
    async with Client(build_fastmcp_server()) as client:
        schemas = await output_schemas(client)
        result = wire(await client.call_tool_mcp(case.tool, case.arguments))
    envelope = check_error(result, schemas.get(case.tool))
    assert (envelope["errorCategory"], envelope["code"], envelope["isRetryable"]) == (
        case.category,
        case.code,
        case.retryable,
    )
    assert_nothing_leaks(result, LEAKED_SECRET, LEAKED_PATH, CRASH_TEXT)


@pytest.mark.anyio
async def test_fastmcp_client_keeps_the_envelope_when_told_not_to_raise() -> None:
    async with Client(build_fastmcp_server()) as client:
        result = await client.call_tool("refund", {"order_id": "#12345", "amount": 900}, raise_on_error=False)
    assert result.is_error
    assert result.structured_content is not None
    assert result.structured_content["errorCategory"] == "business"
    first = result.content[0]
    assert isinstance(first, TextContent)
    assert first.text.startswith("[business error, not retryable]")


@pytest.mark.anyio
async def test_fastmcp_success_and_empty_results_validate_against_the_widened_schema() -> None:
    async with Client(build_fastmcp_server()) as client:
        schemas = await output_schemas(client)
        ok = wire(await client.call_tool_mcp("get_order", {"order_id": "#12345"}))
        empty = wire(await client.call_tool_mcp("search_orders", {"customer": "ada@example.com"}))
    schema = schemas["get_order"]
    assert schema is not None
    assert schema["type"] == "object"
    assert len(schema["anyOf"]) == 2
    assert check_success(ok, schema) == {"order_id": "#12345", "status": "shipped"}
    assert check_success(empty, schemas["search_orders"]) == {"orders": [], "resultCount": 0}
    assert "ada@example.com" in empty["content"][0]["text"]


@pytest.mark.anyio
async def test_fastmcp_argument_validation_names_each_bad_argument() -> None:
    async with Client(build_fastmcp_server()) as client:
        result = wire(await client.call_tool_mcp("get_order", {"order_id": "order-abc", "quantity": 0}))
    fields = {error["field"]: error for error in result["structuredContent"]["fieldErrors"]}
    assert set(fields) == {"order_id", "quantity"}
    assert fields["order_id"]["received"] == '"order-abc"'
    assert ">= 1" in fields["quantity"]["expected"]


@pytest.mark.anyio
async def test_fastmcp_unclassified_crash_logs_the_error_id_with_the_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_errors")
    async with Client(build_fastmcp_server()) as client:
        result = wire(await client.call_tool_mcp("crash", {}))
    error_id = result["structuredContent"]["errorId"]
    (record,) = [r for r in caplog.records if r.name == "mcp_errors" and error_id in r.getMessage()]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert str(record.exc_info[1]) == CRASH_TEXT


@pytest.mark.anyio
async def test_fastmcp_meta_stamped_by_the_server_survives_on_error_results() -> None:
    async with Client(build_fastmcp_server()) as client:
        result = await client.call_tool_mcp("read_salaries", {})
    assert result.meta is not None
    assert result.meta["io.modelcontextprotocol/serverInfo"]["name"] == "contract-fastmcp"


@pytest.mark.anyio
async def test_installing_twice_on_fastmcp_adds_one_middleware(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_errors")
    server: FastMCP[Any] = install(FastMCP("twice"))
    middleware_count = len(server.middleware)
    assert install(server) is server
    assert len(server.middleware) == middleware_count

    @server.tool
    def refund() -> str:
        raise BusinessRuleError("Refund exceeds policy limit", description="Escalate to a human.")

    async with Client(server) as client:
        result = wire(await client.call_tool_mcp("refund", {}))
    check_error(result, None)
    assert len([r for r in caplog.records if r.name == "mcp_errors"]) == 1


@pytest.mark.anyio
async def test_fastmcp_own_tool_error_keeps_its_message_as_an_uncategorised_business_error() -> None:
    from fastmcp.exceptions import ToolError as FastMCPToolError

    server: FastMCP[Any] = install(FastMCP("plain"))

    @server.tool
    def lookup(order_id: str) -> str:
        raise FastMCPToolError(f"Order {order_id} is archived")

    async with Client(server) as client:
        result = wire(await client.call_tool_mcp("lookup", {"order_id": "#12345"}))
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope["code"]) == ("business", "TOOL_ERROR")
    assert "Order #12345 is archived" in envelope["description"]
    assert result["content"][0]["text"].count("Order #12345 is archived") == 1


@pytest.mark.anyio
async def test_install_keeps_the_fastmcp_clients_unwrapped_data_for_non_object_returns() -> None:
    server = install(FastMCP("numbers"))

    @server.tool
    def double(x: int) -> int:
        return 2 * x

    @server.tool
    def pair(x: int) -> list[int]:
        return [x, x]

    async with Client(server) as client:
        assert (await client.call_tool("double", {"x": 3})).data == 6
        assert (await client.call_tool("pair", {"x": 3})).data == [3, 3]


@pytest.mark.anyio
async def test_fastmcp_tool_error_raised_from_another_exception_keeps_its_message() -> None:
    from fastmcp.exceptions import ToolError as FastMCPToolError

    server = install(FastMCP("orders"))

    @server.tool
    def find(order_id: str) -> str:
        try:
            return {"A2": "shipped"}[order_id]
        except KeyError as exc:
            raise FastMCPToolError("Order A1 not found; list the orders first") from exc

    async with Client(server) as client:
        result = await client.call_tool_mcp("find", {"order_id": "A1"})
    envelope = check_error(wire(result), None)
    assert envelope["code"] == "TOOL_ERROR"
    assert "Order A1 not found" in wire(result)["content"][0]["text"]


@pytest.mark.anyio
async def test_fastmcps_own_wrapper_of_a_crash_stays_an_internal_error() -> None:
    """fastmcp raises its ToolError `from` a serialisation failure: that is a crash, not a message."""
    server = install(FastMCP("returns"))

    @server.tool
    def bad_return() -> Out:
        return Out(value=Opaque())

    async with Client(server) as client:
        result = await client.call_tool_mcp("bad_return", {})
    envelope = check_error(wire(result), None)
    assert (envelope["code"], envelope["executionState"]) == ("INTERNAL_ERROR", "outcome_unknown")
    assert "Opaque" not in wire(result)["content"][0]["text"]


@pytest.mark.anyio
async def test_fastmcp_downstream_timeout_a_gateway_tool_lets_escape_is_a_transient_result(mode: str) -> None:
    async with Client(build_gateway("fastmcp"), mode=mode) as client:
        with anyio.fail_after(10):
            result = wire(await client.call_tool_mcp("forward_slow", {}))
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope["code"]) == ("transient", "UPSTREAM_TIMEOUT")


@pytest.mark.anyio
async def test_fastmcp_jsonrpc_error_raised_in_a_tool_is_an_internal_error_without_its_text(mode: str) -> None:
    async with Client(build_gateway("fastmcp"), mode=mode) as client:
        result = wire(await client.call_tool_mcp("leak_downstream_error", {}))
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope["code"]) == ("business", "INTERNAL_ERROR")
    assert_nothing_leaks(result, LEAKED_DSN, "hunter2")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "code"),
    [("needs_sampling", MISSING_REQUIRED_CLIENT_CAPABILITY), ("needs_url_elicitation", URL_ELICITATION_REQUIRED)],
)
async def test_fastmcp_errors_that_ask_the_client_to_act_stay_the_jsonrpc_errors_it_acts_on(
    mode: str, tool: str, code: int
) -> None:
    # fastmcp alone sends -32042 as a text result ("Error calling tool"): install keeps it.
    async with Client(build_gateway("fastmcp"), mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool_mcp(tool, {})
    assert raised.value.code == code


@pytest.mark.anyio
async def test_fastmcp_tool_that_runs_out_of_its_own_time_limit_is_a_transient_tool_timeout() -> None:
    server = install(FastMCP("slow"))
    never = anyio.Event()

    @server.tool(timeout=0.05)
    async def slow_report() -> str:
        await never.wait()
        return "done"

    async with Client(server) as client:
        with anyio.fail_after(10):
            result = wire(await client.call_tool_mcp("slow_report", {}))
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope["code"], envelope["isRetryable"]) == ("transient", "TOOL_TIMEOUT", True)


def test_an_error_result_is_the_tool_result_model_construct_would_build() -> None:
    from fastmcp.tools import ToolResult

    from mcp_errors._server.classify import classify_failure
    from mcp_errors._server.fastmcp import error_tool_result

    details = classify_failure(TimeoutError("slow"), error_id="e")
    image = ImageContent(type="image", data="AA==", mime_type="image/png")
    built = error_tool_result(details, "0123456789ab", meta={"kept": True}, others=[image])
    text, structured = details.write("0123456789ab")
    expected = ToolResult.model_construct(
        content=[TextContent(type="text", text=text), image],
        structured_content=structured,
        meta={"kept": True},
        is_error=True,
    )
    assert built == expected
    assert built.model_fields_set == expected.model_fields_set
    assert built.model_dump() == expected.model_dump()
    assert built.to_mcp_result() == expected.to_mcp_result()
    copy = built.model_copy(update={"meta": None})  # what the proxy does to results
    assert copy.meta is None
    assert built.meta == {"kept": True}
