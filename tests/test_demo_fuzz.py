"""Fuzz every demo tool's arguments through the real client: never a protocol error or a traceback."""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.server.mcpserver import MCPServer

from mcp_errors import is_error_envelope
from mcp_errors.demo import DeskConfig, build_server
from mcp_errors.demo._db import KNOWLEDGE_SOURCES

PARAMETERS = {
    "lookup_customer": ["email"],
    "get_order": ["order_id"],
    "process_refund": ["order_id", "amount", "reason"],
    "get_financial_records": ["customer_id"],
    "search_knowledge": ["query", "source"],
}

plausible = st.one_of(
    st.sampled_from(["#10001", "#99999", "order-abc", "#1234x", "C-1001", "C-9999", "ana.silva@example.com"]),
    st.sampled_from(KNOWLEDGE_SOURCES),
    st.emails().map(str),
    st.floats(min_value=-1000, max_value=1000),
)
anything = st.one_of(
    plausible,
    st.text(max_size=40),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(PARAMETERS)))
    arguments = {param: draw(anything) for param in PARAMETERS[name] if draw(st.booleans()) or draw(st.booleans())}
    if draw(st.integers(0, 9)) == 0:
        arguments[draw(st.text(min_size=1, max_size=8))] = draw(anything)
    return name, arguments


SERVERS: dict[str, MCPServer[Any]] = {
    "support": build_server(DeskConfig()),
    "finance": build_server(DeskConfig(role="finance")),
}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call=tool_calls(), role=st.sampled_from(sorted(SERVERS)), mode=st.sampled_from(["legacy", "auto"]))
def test_any_arguments_get_a_success_a_valid_empty_result_or_a_structured_error(
    call: tuple[str, dict[str, Any]], role: str, mode: str
) -> None:
    name, arguments = call

    async def run() -> dict[str, Any]:
        with anyio.fail_after(10):
            async with Client(SERVERS[role], mode=mode) as client:
                result = await client.call_tool(name, arguments)
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")

    result = anyio.run(run)
    structured = result.get("structuredContent")
    assert isinstance(structured, dict)
    if result.get("isError"):
        assert is_error_envelope(structured), structured
        assert structured["errorCategory"] != "business" or structured.get("code") != "INTERNAL_ERROR"
        assert result["content"][0]["text"].startswith(f"[{structured['errorCategory']} error")
    else:
        assert "refundId" in structured or structured["resultCount"] >= 0
    assert "Traceback" not in json.dumps(result)
