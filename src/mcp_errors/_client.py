"""One adapter for every client the client side accepts, and reading a server's whole tool list.

The recovery policy, the testing helpers and the framework integrations all call tools
through `adapt_client`, so that an `mcp.Client`, a fastmcp `Client` and a plain call
function behave the same way everywhere.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from mcp import Client
from mcp_types import CallToolResult, Tool

from mcp_errors._duck import is_fastmcp

__all__ = ["CallFn", "ClientAdapter", "ToolsFn", "adapt_client", "list_all_tools"]

CallFn = Callable[[str, dict[str, Any], dict[str, Any] | None], Awaitable[CallToolResult]]
"""Any `async (name, arguments, meta) -> CallToolResult`: the one thing the policy needs."""

ToolsFn = Callable[[], Awaitable[Sequence[Tool]]]
"""`async () -> tools`: the server's whole tool list."""


@dataclass(frozen=True, slots=True)
class ClientAdapter:
    """A client seen as the three things the client side needs from it."""

    call: CallFn
    """Call one tool, with the request `_meta` to send."""
    list_tools: ToolsFn | None
    """List every tool (`None` for a call function, which cannot)."""
    server_name: str
    """The name the server gave when connecting, `"default"` when unknown."""


def adapt_client(client: object, *, meta: Mapping[str, Any] | None = None) -> ClientAdapter:
    """Adapt an `mcp.Client`, a fastmcp `Client` or a call function.

    Args:
        client: A connected `mcp.Client`, a connected fastmcp `Client`, or any
            `async (name, arguments, meta) -> CallToolResult` function.
        meta: Request `_meta` to send with every call; the caller's own `_meta` (such as
            an idempotency key) is merged over it.

    Returns:
        The adapter.

    Raises:
        TypeError: If `client` is none of the accepted kinds.
    """
    base = dict(meta) if meta else None
    if isinstance(client, Client):
        return _adapt_mcp(client, base)
    if is_fastmcp(client, "Client"):
        return _adapt_fastmcp(client, base)
    if callable(client):
        function = cast(CallFn, client)
        return ClientAdapter(_with_meta(function, base) if base else function, None, "default")
    raise TypeError(f"expected an mcp.Client, a fastmcp Client or a call function, not {client!r}")


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


def _adapt_mcp(client: Client, base: dict[str, Any] | None) -> ClientAdapter:
    async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        return await client.call_tool(name, arguments, meta=cast(Any, _merged(base, meta)))

    async def list_tools() -> Sequence[Tool]:
        return await list_all_tools(client)

    info = client.server_info
    return ClientAdapter(call, list_tools, info.name if info is not None else "default")


def _adapt_fastmcp(client: Any, base: dict[str, Any] | None) -> ClientAdapter:
    async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        result: CallToolResult = await client.call_tool_mcp(name, arguments, meta=_merged(base, meta))
        return result

    async def list_tools() -> Sequence[Tool]:
        # `list_tools` follows every page (`list_tools_mcp` returns only the first).
        return cast(Sequence[Tool], await client.list_tools())

    init = getattr(client, "initialize_result", None)
    server_info = getattr(init, "server_info", None)
    return ClientAdapter(call, list_tools, getattr(server_info, "name", None) or "default")


def _with_meta(function: CallFn, base: dict[str, Any]) -> CallFn:
    async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        return await function(name, arguments, _merged(base, meta))

    return call


def _merged(base: dict[str, Any] | None, meta: dict[str, Any] | None) -> dict[str, Any] | None:
    if not base:
        return meta
    return {**base, **meta} if meta else dict(base)
