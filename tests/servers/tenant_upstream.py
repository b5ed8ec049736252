"""An HTTP upstream for the proxy's shared front: it tells whose headers reached it, and counts writes.

`python tests/servers/tenant_upstream.py [PORT]` serves it over streamable HTTP (stateful) on
127.0.0.1 and prints its port. Its tools act for whoever the request's headers say
(`Authorization`, `X-Api-Key`, `Cookie`, `X-Tenant`), as an API behind credentials does, so
that a test sees which caller's headers each call carried.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError
from mcp_types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, idempotent_hint=False)
SHOWN = ("authorization", "x-api-key", "cookie", "x-tenant", "user-agent", "traceparent")
"""The request headers `whoami` reports."""


def build_server() -> MCPServer[Any]:
    """The upstream server; every tool is described in its docstring."""
    server: MCPServer[Any] = MCPServer("tenant-upstream")
    writes: Counter[str] = Counter()
    notes: dict[str, list[str]] = {}

    @server.tool(annotations=READ_ONLY)
    def whoami(ctx: Context) -> dict[str, str | None]:
        """The headers of `SHOWN` this request reached the server with (`None`: not sent)."""
        headers = ctx.headers or {}
        return {name: headers.get(name) for name in SHOWN}

    @server.tool(annotations=WRITES)
    def charge(order: str, ctx: Context) -> str:
        """Charge `order` to the card of the caller's API key; refused without one (a business failure)."""
        card = (ctx.headers or {}).get("x-api-key")
        if card is None:
            raise SDKToolError("No card on file: this caller has no payment method.")
        writes[f"{order} for {card}"] += 1
        return f"{order} charged to the card of {card}"

    @server.tool(annotations=WRITES)
    async def slow_write(key: str, seconds: float) -> str:
        """Wait `seconds`, then write `key` once (counted)."""
        await anyio.sleep(seconds)
        writes[key] += 1
        return f"{key} written"

    @server.tool(annotations=READ_ONLY)
    def written() -> dict[str, int]:
        """How often each write ran, by key (`charge`'s: "<order> for <card>")."""
        return dict(writes)

    @server.tool(annotations=WRITES)
    def remember(text: str, ctx: Context) -> str:
        """Keep `text` in this MCP session's notes."""
        session = notes.setdefault((ctx.headers or {}).get("mcp-session-id", ""), [])
        session.append(text)
        return f"{len(session)} note(s)"

    @server.tool(annotations=READ_ONLY)
    def recall(ctx: Context) -> list[str]:
        """This MCP session's notes."""
        return notes.get((ctx.headers or {}).get("mcp-session-id", ""), [])

    return server


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, where `servers` is a package
    from servers.proxy_upstream import serve_http

    serve_http(int(sys.argv[1]) if sys.argv[1:] else 0, build=build_server)
