"""The MCPServer adapter: one wrap of `call_tool` and `list_tools` per server, replay added by a later install."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, Tool

from mcp_errors import install
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META, REPLAYED_META
from servers.checks import check_error
from servers.contract_server import Order, build_server


def wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


async def output_schemas(client: Client) -> dict[str, dict[str, Any] | None]:
    return {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}


@pytest.mark.anyio
async def test_installing_twice_widens_once_and_reports_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_errors")
    server = build_server()
    assert install(server) is server
    async with Client(server, mode="legacy") as client:
        schemas = await output_schemas(client)
        result = await client.call_tool("refund", {"order_id": "#12345", "amount": 900})
    schema = schemas["refund"]
    assert schema is not None
    assert len(schema["anyOf"]) == 2
    assert "anyOf" not in schema["anyOf"][0]
    check_error(wire(result), schema)
    assert len([r for r in caplog.records if r.name == "mcp_errors"]) == 1


@pytest.mark.anyio
async def test_tools_a_wrapper_keeps_are_advertised_widened_without_being_changed(mode: str) -> None:
    server = MCPServer("kept-tools")

    @server.tool()
    def get_order(order_id: str) -> Order:
        return Order(order_id=order_id, status="shipped")

    kept = await server.list_tools()
    before = [tool.model_copy(deep=True) for tool in kept]

    async def list_kept_tools() -> list[Tool]:
        return kept

    server.list_tools = list_kept_tools  # type: ignore[method-assign]  # a wrapper that caches its tools
    install(server)
    async with Client(server, mode=mode) as client:
        first, second = await output_schemas(client), await output_schemas(client)
    assert first == second
    assert first["get_order"] is not None
    assert first["get_order"]["anyOf"][1] == {"required": ["errorCategory"]}
    assert kept == before


@pytest.mark.anyio
async def test_a_second_install_with_a_store_adds_replay_to_a_server_installed_without_one(mode: str) -> None:
    server = install(MCPServer("late-replay"))
    runs: list[str] = []

    @server.tool()
    def create_ticket(title: str) -> str:
        runs.append(title)
        return f"ticket {len(runs)}"

    wrapped = server.call_tool
    install(server, idempotency="memory://")
    assert server.call_tool.__self__ is wrapped.__self__  # type: ignore[attr-defined]  # the same adapter, now with a store
    meta: Any = {IDEMPOTENCY_KEY_META: "op-1"}
    async with Client(server, mode=mode) as client:
        first = await client.call_tool("create_ticket", {"title": "printer"}, meta=meta)
        again = await client.call_tool("create_ticket", {"title": "printer"}, meta=meta)
    assert runs == ["printer"]
    assert (again.meta or {}).get(REPLAYED_META) is True
    assert again.content == first.content
