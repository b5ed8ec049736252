"""`install` on MCPServer and `to_error_result` on the low-level server, end to end through `mcp.Client`."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    URL_ELICITATION_REQUIRED,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    TextContent,
    Tool,
)
from pydantic import BaseModel

from mcp_errors import ENVELOPE_SCHEMA, BusinessRuleError, install, read_result, to_error_result
from servers.checks import assert_nothing_leaks, check_error, check_success, validate
from servers.contract_server import CASES, CRASH_TEXT, LEAKED_PATH, LEAKED_SECRET, Case, build_server
from servers.gateway import LEAKED_DSN, build_gateway

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

CONTRACT_SERVER = Path(__file__).parents[1] / "servers" / "contract_server.py"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


def wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


async def output_schemas(client: Client) -> dict[str, dict[str, Any] | None]:
    return {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}


def check_case(case: Case, result: dict[str, Any], schema: Mapping[str, Any] | None) -> dict[str, Any]:
    envelope = check_error(result, schema)
    assert (envelope["errorCategory"], envelope["code"], envelope["isRetryable"]) == (
        case.category,
        case.code,
        case.retryable,
    )
    assert_nothing_leaks(result, LEAKED_SECRET, LEAKED_PATH, CRASH_TEXT)
    return envelope


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.tool)
async def test_every_failure_reaches_the_client_as_a_schema_valid_envelope(mode: str, case: Case) -> None:
    async with Client(build_server(), mode=mode) as client:
        schemas = await output_schemas(client)
        with anyio.fail_after(10):
            result = await client.call_tool(case.tool, case.arguments)
    check_case(case, wire(result), schemas.get(case.tool))


@pytest.mark.anyio
async def test_success_results_still_validate_against_the_widened_output_schema(mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        schemas = await output_schemas(client)
        result = await client.call_tool("get_order", {"order_id": "#12345", "quantity": 2})
    schema = schemas["get_order"]
    assert schema is not None
    assert schema["type"] == "object"
    assert len(schema["anyOf"]) == 2
    assert check_success(wire(result), schema) == {"order_id": "#12345", "status": "shipped"}


@pytest.mark.anyio
async def test_tools_registered_before_and_after_install_both_advertise_the_envelope(mode: str) -> None:
    # check_stock is registered before install(), refund after it.
    async with Client(build_server(), mode=mode) as client:
        schemas = await output_schemas(client)
    envelope = {"errorCategory": "business", "isRetryable": False, "description": "Escalate."}
    for name in ("check_stock", "refund", "search_orders"):
        schema = schemas[name]
        assert schema is not None
        validate(envelope, schema)


@pytest.mark.anyio
async def test_an_empty_result_is_a_success_that_says_the_query_ran(mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        schemas = await output_schemas(client)
        result = await client.call_tool("search_orders", {"customer": "ada@example.com"})
    structured = check_success(wire(result), schemas["search_orders"])
    assert structured == {"orders": [], "resultCount": 0}
    assert result.content
    first = result.content[0]
    assert isinstance(first, TextContent)
    assert "ada@example.com" in first.text


@pytest.mark.anyio
async def test_an_unclassified_crash_shows_no_exception_text_and_logs_the_same_error_id(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_errors")
    async with Client(build_server(), mode=mode) as client:
        result = await client.call_tool("crash", {})
    envelope = check_case(CASES[4], wire(result), None)
    assert envelope["executionState"] == "outcome_unknown"
    logged = [record for record in caplog.records if record.name == "mcp_errors" and record.levelno == logging.ERROR]
    assert len(logged) == 1
    assert envelope["errorId"] in logged[0].getMessage()
    assert logged[0].exc_info is not None
    assert str(logged[0].exc_info[1]) == CRASH_TEXT


@pytest.mark.anyio
async def test_classified_failures_log_their_error_id_without_a_traceback(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_errors")
    async with Client(build_server(), mode=mode) as client:
        result = await client.call_tool("refund", {"order_id": "#12345", "amount": 900})
    error_id = wire(result)["structuredContent"]["errorId"]
    (record,) = [r for r in caplog.records if r.name == "mcp_errors" and error_id in r.getMessage()]
    assert record.levelno == logging.INFO
    assert record.exc_info is None


@pytest.mark.anyio
async def test_argument_validation_names_each_bad_argument(mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        result = await client.call_tool("get_order", {"order_id": "order-abc", "quantity": 0, "colour": "x" * 500})
    envelope = wire(result)["structuredContent"]
    assert envelope["executionState"] == "not_executed"
    by_field = {error["field"]: error for error in envelope["fieldErrors"]}
    assert {"order_id", "quantity"} <= set(by_field)
    assert by_field["order_id"]["received"] == '"order-abc"'
    assert "#" in by_field["order_id"]["expected"]
    assert ">= 1" in by_field["quantity"]["expected"]
    for error in envelope["fieldErrors"]:
        assert len(error.get("received", "")) <= 80
    assert "order_id" in envelope["description"]


@pytest.mark.anyio
async def test_a_missing_argument_is_named_without_a_received_value(mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        result = await client.call_tool("refund", {"order_id": "#12345"})
    (error,) = wire(result)["structuredContent"]["fieldErrors"]
    assert error["field"] == "amount"
    assert "received" not in error


@pytest.mark.anyio
async def test_the_sdk_stamped_meta_survives_on_error_results() -> None:
    async with Client(build_server()) as client:
        result = await client.call_tool("refund", {"order_id": "#12345", "amount": 900})
    assert result.meta is not None
    assert result.meta[SERVER_INFO_META]["name"] == "contract"


@pytest.mark.anyio
async def test_every_case_round_trips_over_stdio_with_a_subprocess_server() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(CONTRACT_SERVER)])
    with anyio.fail_after(60):
        async with Client(params) as client:
            schemas = await output_schemas(client)
            for case in CASES:
                check_case(case, wire(await client.call_tool(case.tool, case.arguments)), schemas.get(case.tool))
            ok = await client.call_tool("get_order", {"order_id": "#12345"})
            check_success(wire(ok), schemas["get_order"])
            empty = await client.call_tool("search_orders", {"customer": "nobody"})
            assert check_success(wire(empty), schemas["search_orders"])["resultCount"] == 0


@pytest.mark.anyio
async def test_a_server_without_install_keeps_the_sdk_behaviour() -> None:
    # The contract's ToolError subclasses the SDK's, so an un-installed server still shows the message.
    server = MCPServer("plain")

    @server.tool()
    def refund() -> str:
        raise BusinessRuleError("Refund exceeds policy limit", description="Escalate.")

    async with Client(server, mode="legacy") as client:
        result = await client.call_tool("refund", {})
    assert result.is_error
    assert result.structured_content is None
    first = result.content[0]
    assert isinstance(first, TextContent)
    assert "Refund exceeds policy limit" in first.text


def test_install_refuses_an_object_that_is_not_a_server() -> None:
    with pytest.raises(TypeError):
        install(object())


class Weather(BaseModel):
    city: str
    celsius: float


def low_level_server() -> Server[Any]:
    """A low-level server whose handler uses `to_error_result`, as the docs show."""

    async def on_list_tools(ctx: Any, params: Any) -> ListToolsResult:
        schema = Weather.model_json_schema()
        return ListToolsResult(
            tools=[Tool(name="weather", input_schema={"type": "object"}, output_schema=schema)],
        )

    async def on_call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        try:
            city = str((params.arguments or {})["city"])
            if city == "Atlantis":
                raise ConnectionRefusedError(f"{LEAKED_PATH}: refused")
            if city == "Nowhere":
                Weather.model_validate({"city": city, "celsius": "hot"})
            weather = Weather(city=city, celsius=21.5)
            return CallToolResult(
                content=[TextContent(type="text", text=weather.model_dump_json())],
                structured_content=weather.model_dump(),
            )
        except Exception as exc:
            return to_error_result(exc, tool_name=params.name, meta={"example.com/trace": "t-1"})

    return Server("low-level", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("city", "category", "code"),
    [("Atlantis", "transient", "UPSTREAM_UNAVAILABLE"), ("Nowhere", "validation", "INVALID_ARGUMENTS")],
)
async def test_to_error_result_speaks_the_contract_inside_a_low_level_server(
    mode: str, city: str, category: str, code: str
) -> None:
    async with Client(low_level_server(), mode=mode) as client:
        result = await client.call_tool("weather", {"city": city})
        ok = await client.call_tool("weather", {"city": "Oslo"})
    data = wire(result)
    envelope = check_error(data, ENVELOPE_SCHEMA)
    assert (envelope["errorCategory"], envelope["code"]) == (category, code)
    assert_nothing_leaks(data, LEAKED_PATH)
    assert data["_meta"]["example.com/trace"] == "t-1"
    if mode == "auto":
        assert SERVER_INFO_META in data["_meta"]
    assert not ok.is_error


@pytest.mark.anyio
async def test_the_sdk_tool_error_keeps_its_message_as_an_uncategorised_business_error(mode: str) -> None:
    from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

    server = install(MCPServer("plain-errors"))

    @server.tool()
    def lookup(order_id: str) -> str:
        raise SDKToolError(f"Order {order_id} is archived; ask for the archive export")

    async with Client(server, mode=mode) as client:
        result = wire(await client.call_tool("lookup", {"order_id": "#12345"}))
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope["code"]) == ("business", "TOOL_ERROR")
    # Hosts that show only structuredContent (Pydantic AI) read the tool's message there.
    assert "Order #12345 is archived" in envelope["description"]
    assert result["content"][0]["text"].count("Order #12345 is archived") == 1


@pytest.mark.anyio
async def test_a_pydantic_error_raised_inside_the_tool_body_is_a_crash_not_bad_arguments() -> None:
    server = install(MCPServer("body-validation"))

    @server.tool()
    def parse(payload: str) -> str:
        return str(Weather.model_validate_json(payload))

    async with Client(server, mode="legacy") as client:
        result = wire(await client.call_tool("parse", {"payload": "{}"}))
    assert check_error(result, None)["code"] == "INTERNAL_ERROR"


@pytest.mark.anyio
async def test_a_tool_error_raised_from_another_exception_keeps_the_tools_message(mode: str) -> None:
    from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

    server = install(MCPServer("orders"))

    @server.tool()
    def find(order_id: str) -> str:
        try:
            return {"A2": "shipped"}[order_id]
        except KeyError as exc:
            raise SDKToolError("Order A1 not found; list the orders first") from exc

    async with Client(server, mode=mode) as client:
        with anyio.fail_after(10):
            result = wire(await client.call_tool("find", {"order_id": "A1"}))
    envelope = check_error(result, None)
    assert envelope["code"] == "TOOL_ERROR"
    assert "Order A1 not found" in result["content"][0]["text"]


@pytest.mark.anyio
async def test_failures_the_classifier_cannot_read_are_internal_errors_never_raw_text(mode: str) -> None:
    import httpx

    from mcp_errors import TransientError

    server = install(MCPServer("odd"))

    @server.tool()
    def not_a_string_message() -> str:
        raise TransientError(ValueError("db busy at /srv/app/db.sqlite"), description="Resend.")  # type: ignore[arg-type]

    @server.tool()
    def odd_retry_after(value: str) -> str:
        request = httpx.Request("GET", "https://api.example.com")
        response = httpx.Response(503, headers={"Retry-After": value.encode()}, request=request)  # type: ignore[arg-type]
        raise httpx.HTTPStatusError("unavailable", request=request, response=response)

    async with Client(server, mode=mode) as client:
        with anyio.fail_after(10):
            crashed = wire(await client.call_tool("not_a_string_message", {}))
            superscript = wire(await client.call_tool("odd_retry_after", {"value": "²"}))
            huge = wire(await client.call_tool("odd_retry_after", {"value": "9" * 400}))
    assert check_error(crashed, None)["code"] == "INTERNAL_ERROR"
    assert_nothing_leaks(crashed, "/srv/app", "db busy")
    assert check_error(superscript, None)["code"] == "UPSTREAM_UNAVAILABLE"
    assert "retryAfterSeconds" not in superscript["structuredContent"]
    assert check_error(huge, None)["retryAfterSeconds"] == 86_400


@pytest.mark.anyio
async def test_a_huge_argument_a_client_sent_is_answered_promptly() -> None:
    """The sanitiser once took seconds per call on text like `a-a-a-...`, stalling every session."""
    server = install(MCPServer("sizes"))

    @server.tool()
    def count(n: int) -> int:
        return n

    async with Client(server) as client:
        with anyio.fail_after(10):
            result = wire(await client.call_tool("count", {"n": "a-" * 20_000}))
            unknown = wire(await client.call_tool("a-" * 20_000, {}))
    assert check_error(result, None)["code"] == "INVALID_ARGUMENTS"
    assert check_error(unknown, None)["code"] == "UNKNOWN_TOOL"


@pytest.mark.anyio
async def test_a_tool_whose_concurrent_fetches_all_time_out_reports_one_transient_failure() -> None:
    server = install(MCPServer("fan-out"))

    @server.tool()
    async def fetch_both() -> str:
        async def fetch() -> None:
            raise TimeoutError

        async with anyio.create_task_group() as group:
            group.start_soon(fetch)
            group.start_soon(fetch)
        return "both"

    async with Client(server) as client:
        with anyio.fail_after(10):
            result = wire(await client.call_tool("fetch_both", {}))
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope["code"]) == ("transient", "UPSTREAM_TIMEOUT")


# Lone surrogates: `"\ud800"` is valid JSON, and a file name that is not UTF-8 becomes one in
# Python. A result that carries one cannot be encoded, and the client would get no answer.
SURROGATE_ARGUMENTS = {"order_id": "ab\ud800cd", "quantity": 1}


@pytest.mark.anyio
async def test_a_lone_surrogate_in_an_argument_is_shown_escaped_in_an_encodable_error(mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        result = wire(await client.call_tool("get_order", SURROGATE_ARGUMENTS))
    envelope = check_error(result, None)
    assert envelope["code"] == "INVALID_ARGUMENTS"
    [error] = envelope["fieldErrors"]
    assert error["received"] == '"ab\\ud800cd"'


@pytest.mark.anyio
async def test_a_lone_surrogate_in_a_server_text_reaches_a_stdio_client_in_both_modes(mode: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(CONTRACT_SERVER)])
    with anyio.fail_after(60):
        async with Client(params, mode=mode) as client:
            unreadable = wire(await client.call_tool("export_report", {}))
            ok = await client.call_tool("get_order", {"order_id": "#12345"})
    assert check_error(unreadable, None)["code"] == "EXPORT_UNREADABLE"
    assert "q3-\ufffd.csv" in unreadable["structuredContent"]["description"]
    assert not ok.is_error


@pytest.mark.anyio
async def test_a_downstream_timeout_a_gateway_tool_lets_escape_is_a_transient_result(mode: str) -> None:
    async with Client(build_gateway("mcpserver"), mode=mode) as client:
        with anyio.fail_after(10):
            result = wire(await client.call_tool("forward_slow", {}))
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope["code"]) == ("transient", "UPSTREAM_TIMEOUT")
    assert envelope["executionState"] == "outcome_unknown"


@pytest.mark.anyio
async def test_a_jsonrpc_error_raised_in_a_tool_is_an_internal_error_without_its_text(mode: str) -> None:
    async with Client(build_gateway("mcpserver"), mode=mode) as client:
        result = wire(await client.call_tool("leak_downstream_error", {}))
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope["code"]) == ("business", "INTERNAL_ERROR")
    assert_nothing_leaks(result, LEAKED_DSN, "hunter2")


@pytest.mark.anyio
async def test_a_url_elicitation_request_stays_the_jsonrpc_error_the_client_acts_on(mode: str) -> None:
    async with Client(build_gateway("mcpserver"), mode=mode) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("needs_url_elicitation", {})
    assert raised.value.code == URL_ELICITATION_REQUIRED


# --- bare empty answers become the valid empty result -----------------------------------------


def tools_that_find_nothing(server: Any) -> Any:
    """Four tools that return nothing the way authors write it: `[]` and `None`, with and without
    an annotation (MCPServer and fastmcp register them the same way)."""

    def empty_list() -> list[str]:
        return []

    def nothing() -> None:
        return None

    def bare_empty_list():  # type: ignore[no-untyped-def]  # unannotated, as written in the wild
        return []

    def bare_none():  # type: ignore[no-untyped-def]
        return None

    def one_order() -> list[str]:
        return ["#12345"]

    for function in (empty_list, nothing, bare_empty_list, bare_none, one_order):
        server.tool()(function) if isinstance(server, MCPServer) else server.tool(function)
    return server


EMPTY_TOOLS = ["empty_list", "nothing", "bare_empty_list", "bare_none"]


def connect(framework: str, mode: str, **options: Any) -> Client:
    if framework == "mcpserver":
        return Client(tools_that_find_nothing(install(MCPServer("finds-nothing"), **options)), mode=mode)
    from fastmcp import FastMCP

    server = tools_that_find_nothing(install(FastMCP("finds-nothing"), **options))
    return Client(server._mcp_server, mode=mode)  # fastmcp's low-level server


@pytest.mark.anyio
@pytest.mark.parametrize("framework", ["mcpserver", "fastmcp"])
async def test_a_tool_returning_an_empty_list_or_none_answers_the_valid_empty_result(mode: str, framework: str) -> None:
    async with connect(framework, mode) as client:
        schemas = await output_schemas(client)
        results = {name: await client.call_tool(name, {}) for name in [*EMPTY_TOOLS, "one_order"]}

    for name in EMPTY_TOOLS:
        result = results[name]
        structured = check_success(wire(result), schemas.get(name))
        assert structured["resultCount"] == 0
        assert read_result(result).kind == "empty"
        (text,) = result.content
        assert isinstance(text, TextContent)
        assert text.text.strip()  # a text-only host reads that the call ran and found nothing
    # An answer with something in it is the tool's own.
    found = results["one_order"]
    assert "resultCount" not in (found.structured_content or {})
    assert "#12345" in wire(found)["structuredContent"]["result"]


@pytest.mark.anyio
@pytest.mark.parametrize("framework", ["mcpserver", "fastmcp"])
async def test_empty_results_false_leaves_a_bare_empty_answer_as_the_framework_sends_it(
    mode: str, framework: str
) -> None:
    async with connect(framework, mode, empty_results=False) as client:
        results = [await client.call_tool(name, {}) for name in EMPTY_TOOLS]

    for result in results:
        assert result.content == []
        assert "resultCount" not in (result.structured_content or {})


# --- logs a host's log file can read -------------------------------------------------------------

CONTRACT_FASTMCP = Path(__file__).parents[1] / "servers" / "contract_fastmcp.py"


@pytest.mark.anyio
@pytest.mark.parametrize("script", [CONTRACT_SERVER, CONTRACT_FASTMCP], ids=["mcpserver", "fastmcp"])
async def test_an_unclassified_crash_is_logged_on_one_plain_line_when_stderr_is_a_file(
    script: Path, tmp_path: Path
) -> None:
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(script)])
    log = tmp_path / "server.log"
    with log.open("w") as errlog, anyio.fail_after(60):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            crashed = await client.call_tool("crash", {})
    error_id = wire(crashed)["structuredContent"]["errorId"]

    (record,) = [line for line in log.read_text().splitlines() if error_id in line]
    assert " ERROR mcp_errors: " in record
    assert "Traceback (most recent call last)" in record
    assert "RuntimeError" in record
    assert not any(border in record for border in "╭│╰")
    if script == CONTRACT_SERVER:
        # The SDK's boxing handler no longer gets our records, and nothing else of the crash is boxed.
        assert not any(border in log.read_text() for border in "╭│╰")
