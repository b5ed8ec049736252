"""One table per signal: an HTTP status or JSON-RPC code reads the same on every side of the contract.

Each entry of each table goes through the real SDKs (in-memory `mcp.Client`, both
connection modes): raised in a tool of an installed `MCPServer` and of an installed fastmcp
server; answered by a server without the contract and read with `read_result`; the same
answer put through the proxy's classification chain; and the same answer judged by the
checker. Every side must give the entry's category, code and execution state.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastmcp import FastMCP
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, Tool

from mcp_errors import install, read_result
from mcp_errors._shared.contract import WRITTEN_CODES, ExecutionState
from mcp_errors._shared.failure_vocabulary import KINDS, FailureKind
from mcp_errors._shared.failure_words import judge_success
from mcp_errors._shared.signals import CONTRACT_CODES, HTTP_STATUSES, JSONRPC_CODES, SIGNAL_CODES
from mcp_errors.check._judge import judge_call
from mcp_errors.check._probes import Probe
from mcp_errors.proxy._classify import UpstreamClassifier, UpstreamFailure

Reading = tuple[str | None, str | None, str | None]
"""A failure as a side read it: its category, code and execution state."""

DOC = Path(__file__).parents[2] / "docs" / "wire-format.md"
STATUSES = sorted(HTTP_STATUSES)
CODES = sorted(JSONRPC_CODES)
UNMAPPED_STATUS = 418


def expected(kind: FailureKind) -> Reading:
    state = kind.execution_state
    return (kind.category.value, kind.code, None if state is None else state.value)


def from_envelope(result: CallToolResult) -> Reading:
    envelope = result.structured_content
    assert result.is_error
    assert envelope is not None
    return (envelope.get("errorCategory"), envelope.get("code"), envelope.get("executionState"))


def _state(state: ExecutionState | None) -> str | None:
    return None if state is None else state.value


def _status_error(status: int) -> httpx.HTTPStatusError:
    request = httpx.Request("GET", "https://api.example.com/orders")
    response = httpx.Response(status, request=request)
    return httpx.HTTPStatusError(f"HTTP {status}", request=request, response=response)


def _add_raising_tools(tool: Callable[..., Any]) -> None:
    @tool()  # type: ignore[untyped-decorator]
    def fail_with_status(status: int) -> str:
        """Calls a service that answers `status`."""
        raise _status_error(status)

    @tool()  # type: ignore[untyped-decorator]
    def fail_with_code(code: int) -> str:
        """Calls a downstream MCP server that answers JSON-RPC error `code`."""
        raise MCPError(code, "downstream: password=hunter2 at /srv/app/db.py")


def installed_mcpserver() -> MCPServer:
    server = MCPServer("signals")
    _add_raising_tools(server.tool)
    install(server)
    return server


def installed_fastmcp() -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("signals")
    _add_raising_tools(server.tool)
    install(server)
    return server


def plain_server() -> MCPServer:
    """A server without the contract: its failures are a status in words or data, or a JSON-RPC error."""
    server = MCPServer("plain")

    @server.tool()
    def say_status(status: int) -> CallToolResult:
        said = f"The orders service answered HTTP {status}."
        return CallToolResult(is_error=True, content=[TextContent(type="text", text=said)])

    @server.tool()
    def report_status(status: int) -> CallToolResult:
        return CallToolResult(
            is_error=True,
            content=[TextContent(type="text", text="The request failed.")],
            structured_content={"status": status},
        )

    @server.tool()
    def answer_code(code: int) -> str:
        raise MCPError(code, "downstream said no")

    return server


def connect(server: MCPServer | FastMCP[Any], mode: str) -> Client:
    if isinstance(server, FastMCP):
        return Client(server._mcp_server, mode=mode)  # fastmcp's low-level server
    return Client(server, mode=mode)  # the fixture's mode is one of the two


async def answer_of(client: Client, tool: str, arguments: Mapping[str, Any]) -> CallToolResult | MCPError:
    try:
        return await client.call_tool(tool, dict(arguments))
    except MCPError as exc:
        return exc


def through_the_proxy(tool: str, answer: CallToolResult | MCPError, arguments: Mapping[str, Any]) -> Reading:
    if isinstance(answer, MCPError):
        failure = UpstreamFailure(
            tool=tool,
            text=answer.error.message,
            jsonrpc_code=answer.code,
            jsonrpc_data=answer.error.data,
            arguments=arguments,
            known_tools=(tool,),
        )
    else:
        text = " ".join(block.text for block in answer.content if isinstance(block, TextContent))
        failure = UpstreamFailure(
            tool=tool, text=text, structured=answer.structured_content, arguments=arguments, known_tools=(tool,)
        )
    details = UpstreamClassifier().classify(failure, error_id="e")
    assert details is not None
    return (details.category.value, details.code, _state(details.execution_state))


def read_by_the_reader(answer: CallToolResult | MCPError) -> Reading:
    outcome = read_result(answer)
    assert outcome.kind == "error"
    assert outcome.is_retryable is (outcome.category is not None and outcome.category.is_retryable)
    return (
        None if outcome.category is None else outcome.category.value,
        outcome.code,
        _state(outcome.execution_state),
    )


SAY_STATUS = Tool(name="say_status", input_schema={"type": "object", "properties": {"status": {"type": "integer"}}})


def judged_by_the_checker(status: int, answer: CallToolResult) -> Reading | None:
    """What the checker reads in an error that names the status: `None` when it finds no category (ME025).

    The checker asks the shared reading of words whether an error gives a category, and reads a
    success that leads with a failure ("Error: HTTP 503", ME022) with it too.
    """
    verdicts = judge_call(SAY_STATUS, Probe(kind="valid", arguments={"status": status}), answer)
    if any(rule == "ME025" for rule, _ in verdicts):
        return None
    disguised = CallToolResult(content=[TextContent(type="text", text=f"Error: HTTP {status}")])
    assert any(rule == "ME022" for rule, _ in judge_call(SAY_STATUS, Probe(kind="valid", arguments={}), disguised))
    judged = judge_success(f"Error: HTTP {status}")
    assert judged is not None
    return (judged.category.value, judged.code, _state(judged.execution_state))


@pytest.mark.anyio
async def test_every_http_status_reads_the_same_on_the_server_the_reader_the_proxy_and_the_checker(mode: str) -> None:
    readings: dict[str, dict[int, Reading | None]] = {}
    for name, server in (("MCPServer", installed_mcpserver()), ("fastmcp", installed_fastmcp())):
        async with connect(server, mode) as client:
            readings[name] = {
                status: from_envelope(await client.call_tool("fail_with_status", {"status": status}))
                for status in STATUSES
            }
    readings |= {"reader": {}, "proxy (data)": {}, "proxy (words)": {}, "checker": {}}
    async with connect(plain_server(), mode) as client:
        for status in [*STATUSES, UNMAPPED_STATUS]:
            arguments = {"status": status}
            said = await answer_of(client, "say_status", arguments)
            reported = await answer_of(client, "report_status", arguments)
            assert isinstance(said, CallToolResult)
            readings["reader"][status] = read_by_the_reader(said)
            readings["proxy (words)"][status] = through_the_proxy("say_status", said, arguments)
            readings["proxy (data)"][status] = through_the_proxy("report_status", reported, arguments)
            readings["checker"][status] = judged_by_the_checker(status, said)

    want = {status: expected(HTTP_STATUSES[status]) for status in STATUSES}
    for side, read in readings.items():
        assert {status: read[status] for status in STATUSES} == want, side
    # A status no table has says nothing: no side invents a reading for it.
    assert readings["reader"][UNMAPPED_STATUS] == (None, None, None)
    assert readings["checker"][UNMAPPED_STATUS] is None
    proxy_reading = readings["proxy (data)"][UNMAPPED_STATUS]
    assert proxy_reading is not None
    assert proxy_reading[1] == "TOOL_ERROR"


@pytest.mark.anyio
async def test_every_jsonrpc_code_reads_the_same_on_the_server_the_reader_and_the_proxy(mode: str) -> None:
    readings: dict[str, dict[int, Reading]] = {}
    for name, server in (("MCPServer", installed_mcpserver()), ("fastmcp", installed_fastmcp())):
        async with connect(server, mode) as client:
            readings[name] = {
                code: from_envelope(await client.call_tool("fail_with_code", {"code": code})) for code in CODES
            }
    readings |= {"reader": {}, "proxy": {}}
    async with connect(plain_server(), mode) as client:
        for code in CODES:
            arguments = {"code": code}
            answer = await answer_of(client, "answer_code", arguments)
            assert isinstance(answer, MCPError)
            assert answer.code == code
            readings["reader"][code] = read_by_the_reader(answer)
            readings["proxy"][code] = through_the_proxy("answer_code", answer, arguments)
            # The checker reads no JSON-RPC code: any JSON-RPC error a tool answers is a defect (ME018),
            # whatever its code, since the model never sees it.
            verdicts = judge_call(SAY_STATUS, Probe(kind="valid", arguments=arguments), answer)
            assert [rule for rule, _ in verdicts] == ["ME018"]

    want = {code: expected(JSONRPC_CODES[code].kind) for code in CODES}
    for side, read in readings.items():
        assert read == want, (side, {code: read[code] for code in CODES if read[code] != want[code]})


def test_a_status_never_says_not_executed_on_its_own_and_a_transient_one_says_outcome_unknown() -> None:
    for status, kind in HTTP_STATUSES.items():
        assert kind.execution_state is not ExecutionState.NOT_EXECUTED, status
        assert kind.category is KINDS[kind.code].category, status
        if kind.category.is_retryable:
            assert kind.execution_state is ExecutionState.OUTCOME_UNKNOWN, status


def test_only_the_calls_sdk_saying_no_answer_came_counts_as_no_answer() -> None:
    assert {code for code, signal in JSONRPC_CODES.items() if not signal.answered} == {-32001, -32000}
    assert all(signal.retryable is (not signal.answered) for signal in JSONRPC_CODES.values())


def test_the_contract_codes_are_built_from_the_tables_and_the_vocabulary() -> None:
    assert SIGNAL_CODES | set(KINDS) | WRITTEN_CODES == CONTRACT_CODES
    # The codes the vocabulary writes that a hand-kept list once lacked (metrics labelled them `other`).
    assert {"UPSTREAM_BAD_GATEWAY", "NOT_AUTHENTICATED", "CONFLICT", "POLICY_REFUSED"} <= CONTRACT_CODES


def render_tables() -> dict[str, str]:
    """The signal tables as docs/wire-format.md shows them."""

    def row(signal: str, kind: FailureKind, note: str = "") -> str:
        state = "—" if kind.execution_state is None else f"`{kind.execution_state.value}`"
        return f"| {signal} | `{kind.category.value}` | `{kind.code}` | {state} |{note}"

    http = ["| HTTP status | category | code | execution state |", "|---|---|---|---|"]
    http += [row(str(status), kind) for status, kind in sorted(HTTP_STATUSES.items())]
    rpc = ["| JSON-RPC code | category | code | execution state | an answer from the peer |", "|---|---|---|---|---|"]
    rpc += [
        row(str(code), signal.kind, f" {'yes' if signal.answered else 'no'} |")
        for code, signal in sorted(JSONRPC_CODES.items())
    ]
    return {"http-statuses": "\n".join(http) + "\n", "jsonrpc-codes": "\n".join(rpc) + "\n"}


def test_the_docs_tables_are_the_signal_tables() -> None:
    text = DOC.read_text(encoding="utf-8")
    for name, table in render_tables().items():
        found = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
        assert found is not None, name
        assert found.group(1) == table, "regenerate: uv run python tests/test_signals.py"


if __name__ == "__main__":
    # Writes the tables into docs/wire-format.md.
    doc = DOC.read_text(encoding="utf-8")
    for name, table in render_tables().items():
        start, end = f"<!-- {name}:start -->\n", f"<!-- {name}:end -->"
        doc = doc[: doc.index(start) + len(start)] + table + doc[doc.index(end) :]
    DOC.write_text(doc, encoding="utf-8")
