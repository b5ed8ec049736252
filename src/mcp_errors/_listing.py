"""Reading a server's whole tool list, page by page."""

from __future__ import annotations

from typing import Final

from mcp import Client
from mcp_types import Tool

__all__ = ["list_all_tools"]

_MAX_PAGES: Final = 100
"""A server that keeps returning cursors is not allowed to hold the caller forever."""


async def list_all_tools(client: Client) -> list[Tool]:
    """Every tool of the connected server, following `nextCursor` for at most 100 pages."""
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools
