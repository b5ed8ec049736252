"""The client adapter: every kind of client calls a tool the same way, and a tool list is read whole but bounded."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client as FastMCPClient
from fastmcp import FastMCP
from mcp import Client
from mcp.server import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent, Tool

from mcp_errors._client.adapter import adapt_client, list_all_tools


def echo_meta_server() -> MCPServer[Any]:
    server = MCPServer("echo-meta")

    @server.tool()
    def echo(word: str, ctx: Context) -> str:
        meta = ctx.request_context.meta or {}
        return f"{word} {meta.get('trace')}/{meta.get('key')}"

    return server


def echo_meta_fastmcp() -> FastMCP[Any]:
    server: FastMCP[Any] = FastMCP("echo-meta")

    @server.tool()
    def echo(word: str) -> str:
        from fastmcp.server.dependencies import get_context

        meta = get_context().request_context.meta or {}  # type: ignore[union-attr]
        return f"{word} {meta.get('trace')}/{meta.get('key')}"

    return server


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.anyio
async def test_a_client_its_session_a_fastmcp_client_and_a_call_function_make_the_same_call(mode: str) -> None:
    async with Client(echo_meta_server(), mode=mode) as mcp_client:
        adapter = adapt_client(mcp_client, meta={"trace": "t1", "key": "base"})
        via_mcp = await adapter.call("echo", {"word": "hi"}, {"key": "k1"})
        assert adapter.server_name == "echo-meta"
        assert adapter.find_tool is not None
        assert await adapter.find_tool("echo") is not None
        assert await adapter.find_tool("nope") is None

        async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
            return await mcp_client.call_tool(name, arguments, meta=meta)  # type: ignore[arg-type]

        # The SDK's `ClientSession`, what `stdio_client` + `ClientSession(...)` give.
        session = adapt_client(mcp_client.session, meta={"trace": "t1"})
        via_session = await session.call("echo", {"word": "hi"}, {"key": "k1"})
        assert session.server_name == "echo-meta"
        assert session.find_tool is not None
        assert await session.find_tool("echo") is not None
        assert await session.find_tool("nope") is None

        function = adapt_client(call, meta={"trace": "t1"})
        via_function = await function.call("echo", {"word": "hi"}, {"key": "k1"})
        assert (function.list_tools, function.find_tool, function.server_name) == (None, None, "default")
    async with FastMCPClient(echo_meta_fastmcp()) as fastmcp_client:
        via_fastmcp = await adapt_client(fastmcp_client, meta={"trace": "t1"}).call(
            "echo", {"word": "hi"}, {"key": "k1"}
        )
    # The caller's `_meta` is merged over the adapter's: its key wins, the base's trace stays.
    assert text_of(via_mcp) == text_of(via_function) == text_of(via_fastmcp) == text_of(via_session) == "hi t1/k1"


def test_anything_but_a_client_or_a_call_function_is_refused() -> None:
    with pytest.raises(TypeError, match="call function"):
        adapt_client(object())


def endless_pages_server(pages_served: list[int]) -> Server[Any]:
    async def on_list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        page = int(params.cursor) if params is not None and params.cursor else 0
        pages_served.append(page)
        tool = Tool(name=f"tool_{page}", input_schema={"type": "object"})
        return ListToolsResult(tools=[tool], next_cursor=str(page + 1))

    return Server("endless", on_list_tools=on_list_tools)


@pytest.mark.anyio
async def test_a_server_that_pages_forever_is_read_for_a_bounded_number_of_pages(mode: str) -> None:
    served: list[int] = []
    async with Client(endless_pages_server(served), mode=mode) as client:
        tools = await list_all_tools(client)
    assert [tool.name for tool in tools[:3]] == ["tool_0", "tool_1", "tool_2"]
    assert len(tools) == len(served) == 100
    served.clear()
    async with Client(endless_pages_server(served), mode=mode) as client:
        through_session = await list_all_tools(client.session)
    assert [tool.name for tool in through_session] == [tool.name for tool in tools]
