"""A low-level server whose `tools/list` never ends: every page offers a next one.

Each page lists one new tool (`tool_1`, `tool_2`, ...) that answers well, so the checker can
check what it read and must say that it stopped reading. Run as a stdio server:
`python endless_listing_server.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)


def build_server() -> Server[Any]:
    async def on_list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        page = int(params.cursor) if params is not None and params.cursor else 0
        tool = Tool(
            name=f"tool_{page + 1}",
            description="Say the time of day.",
            input_schema={"type": "object", "properties": {}},
            annotations=ToolAnnotations(read_only_hint=True),
        )
        return ListToolsResult(tools=[tool], next_cursor=str(page + 1))

    async def on_call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text="It is 12:00 in UTC.")])

    return Server("endless-listing", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    server = build_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
