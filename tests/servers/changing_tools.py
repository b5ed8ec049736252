"""A server that counts its tools/list requests and changes a tool's annotations on request.

- `write` always fails with a transient error that does not say whether it ran: whether a
  resend is safe depends on what tools/list says of it;
- `declare_write_idempotent` re-registers `write` with `idempotentHint: true` and tells
  the client that the tool list changed (on a 2025-11-25 connection directly; on a
  2026-07-28 one through `subscriptions/listen`);
- `padding_<n>`: more tools, so that a listing costs what it costs on a real server.

`listings.count` is how many times a client asked for the tool list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import Tool, ToolAnnotations

from mcp_errors import TransientError, install


@dataclass
class Listings:
    count: int = 0


def _write(order_id: str = "#1") -> str:
    raise TransientError("Ledger busy", description="The ledger did not answer in time; resend after a short wait.")


def build_changing_tools_server(*, padding: int = 20) -> tuple[MCPServer[Any], Listings]:
    server = install(MCPServer("changing-tools"))
    listings = Listings()
    server.add_tool(_write, name="write")

    @server.tool()
    async def declare_write_idempotent(ctx: Context) -> str:
        server.remove_tool("write")
        server.add_tool(_write, name="write", annotations=ToolAnnotations(idempotent_hint=True))
        await ctx.notify_tools_changed()  # 2026-07-28: to subscriptions/listen streams
        await ctx.session.send_tool_list_changed()  # 2025-11-25 (a 2026-07-28 connection drops it)
        return "write is idempotent now"

    for index in range(padding):
        server.add_tool(lambda: "ok", name=f"padding_{index}", description="Does nothing.")

    list_tools = server.list_tools

    async def counting_list_tools() -> list[Tool]:
        listings.count += 1
        return await list_tools()

    server.list_tools = counting_list_tools  # type: ignore[method-assign]  # counts every listing
    return server, listings
