"""One adapter for every client the client side accepts, and reading a server's whole tool list.

The recovery policy, the testing helpers and the framework integrations all call tools
through `adapt_client`, so that an `mcp.Client`, the SDK's `ClientSession` (what
`stdio_client` or `streamable_http_client` plus `ClientSession(...)` give), a fastmcp `Client`
and a plain call function behave the same way everywhere.

A connection's tool list is read once (`ClientAdapter.find_tool`) and kept for as long as
the connection lives, keyed on its `ClientSession`; it is read again after the server
sends `notifications/tools/list_changed` (on 2026-07-28 connections a server sends it only
to an open `client.listen(tools_list_changed=True)` stream, which delivers it here too).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

import anyio
from mcp import Client, ClientSession
from mcp_types import CallToolResult, PaginatedRequestParams, Tool, ToolListChangedNotification

from mcp_errors._shared.optional_types import is_fastmcp

__all__ = ["CallFn", "ClientAdapter", "FindToolFn", "ToolsFn", "adapt_client", "index_tools", "list_all_tools"]

logger = logging.getLogger("mcp_errors.recovery")

CallFn = Callable[[str, dict[str, Any], dict[str, Any] | None], Awaitable[CallToolResult]]
"""Any `async (name, arguments, meta) -> CallToolResult`: the one thing the policy needs."""

ToolsFn = Callable[[], Awaitable[Sequence[Tool]]]
"""`async () -> tools`: the server's whole tool list."""

FindToolFn = Callable[[str], Awaitable[Tool | None]]
"""`async (name) -> tool`: one tool from the connection's cached list, `None` when not listed."""


@dataclass(frozen=True, slots=True)
class ClientAdapter:
    """A client seen as the three things the client side needs from it."""

    call: CallFn
    """Call one tool, with the request `_meta` to send."""
    list_tools: ToolsFn | None
    """List every tool (`None` for a call function, which cannot)."""
    server_name: str
    """The name the server gave when connecting, `"default"` when unknown."""
    find_tool: FindToolFn | None = None
    """One tool from the connection's tool list, listed once per connection (`None` for a
    call function). Raises what the listing raises."""


def adapt_client(client: object, *, meta: Mapping[str, Any] | None = None) -> ClientAdapter:
    """Adapt an `mcp.Client`, an `mcp.ClientSession`, a fastmcp `Client` or a call function.

    Args:
        client: A connected `mcp.Client`, an initialised `mcp.ClientSession`, a connected
            fastmcp `Client`, or any `async (name, arguments, meta) -> CallToolResult` function.
        meta: Request `_meta` to send with every call; the caller's own `_meta` (such as
            an idempotency key) is merged over it.

    Returns:
        The adapter.

    Raises:
        TypeError: If `client` is none of the accepted kinds.
    """
    base = dict(meta) if meta else None
    if isinstance(client, Client | ClientSession):
        return _adapt_mcp(client, base)
    if is_fastmcp(client, "Client"):
        return _adapt_fastmcp(client, base)
    if callable(client):
        function = cast(CallFn, client)
        return ClientAdapter(_with_meta(function, base) if base else function, None, "default")
    raise TypeError(
        f"expected an mcp.Client, an mcp.ClientSession, a fastmcp Client or a call function, not {client!r}"
    )


_MAX_PAGES: Final = 100
"""A server that keeps returning cursors is not allowed to hold the caller forever."""


async def list_all_tools(client: Client | ClientSession) -> list[Tool]:
    """Every tool of the connected server, following `nextCursor` for at most 100 pages."""
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        if isinstance(client, ClientSession):
            page = await client.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        else:
            page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _adapt_mcp(client: Client | ClientSession, base: dict[str, Any] | None) -> ClientAdapter:
    # A `ClientSession` is what most code holds after `stdio_client(...)` + `ClientSession(...)`:
    # the session `mcp.Client` wraps, called the same way. The tool list is cached per session.
    async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        return await client.call_tool(name, arguments, meta=cast(Any, _merged(base, meta)))

    async def list_tools() -> Sequence[Tool]:
        return await list_all_tools(client)

    info = client.server_info
    name = info.name if info is not None else "default"
    session_of = (lambda: client) if isinstance(client, ClientSession) else (lambda: client.session)
    return ClientAdapter(call, list_tools, name, _finder(session_of, list_tools))


def _adapt_fastmcp(client: Any, base: dict[str, Any] | None) -> ClientAdapter:
    async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        result: CallToolResult = await client.call_tool_mcp(name, arguments, meta=_merged(base, meta))
        return result

    async def list_tools() -> Sequence[Tool]:
        # `list_tools` follows every page (`list_tools_mcp` returns only the first).
        return cast(Sequence[Tool], await client.list_tools())

    init = getattr(client, "initialize_result", None)
    server_info = getattr(init, "server_info", None)
    return ClientAdapter(
        call, list_tools, getattr(server_info, "name", None) or "default", _finder(lambda: client.session, list_tools)
    )


def index_tools(tools: Sequence[Tool]) -> Mapping[str, Tool]:
    """`tools` by name, built once per list object (callers pass the same list call after call)."""
    key = id(tools)
    hit = _indexes.get(key)
    # The list itself is kept in the entry, so its id cannot be reused while the entry lives;
    # a list grown or shrunk in place since is indexed again.
    if hit is not None and hit[0] is tools and hit[1] == len(tools):
        return hit[2]
    index = {tool.name: tool for tool in tools}
    if len(_indexes) >= _MAX_INDEXES:
        del _indexes[next(iter(_indexes))]  # the oldest: lists in use are few
    _indexes[key] = (tools, len(tools), index)
    return index


_MAX_INDEXES: Final = 64
_indexes: dict[int, tuple[Sequence[Tool], int, dict[str, Tool]]] = {}


class _Listing:
    """One connection's tools by name; `None` until listed, and again after list_changed."""

    __slots__ = ("__weakref__", "by_name", "generation", "lock")

    def __init__(self) -> None:
        self.by_name: dict[str, Tool] | None = None
        self.generation = 0
        self.lock = anyio.Lock()

    def forget(self) -> None:
        self.by_name = None
        self.generation += 1


# Keyed on the connection's `ClientSession`: `mcp.Client` is an unhashable dataclass, and a
# new connection of the same client object may reach another server (or the same one,
# changed). The entry goes with the session.
_listings: weakref.WeakKeyDictionary[object, _Listing] = weakref.WeakKeyDictionary()


def _finder(session_of: Callable[[], object], list_tools: ToolsFn) -> FindToolFn:
    async def find_tool(name: str) -> Tool | None:
        session = session_of()
        listing = _listings.get(session)
        if listing is None:
            listing = _listings[session] = _Listing()
            _watch_tool_list(session, listing)
        async with listing.lock:  # concurrent recoveries on one connection list it once
            if listing.by_name is None:
                generation = listing.generation
                tools = await list_tools()
                if generation == listing.generation:  # no list_changed while listing
                    listing.by_name = {tool.name: tool for tool in tools}
                else:
                    return next((tool for tool in tools if tool.name == name), None)
            return listing.by_name.get(name)

    return find_tool


def _watch_tool_list(session: object, listing: _Listing) -> None:
    # `ClientSession` hands every server notification to its `_message_handler` (the
    # client's own `message_handler`, wrapped): the one place to see list_changed after
    # the connection was made. Without it the list is kept for the whole connection.
    delegate = getattr(session, "_message_handler", None)
    if not callable(delegate):
        logger.debug("cannot watch %r for tools/list_changed; its tool list is kept as first read", session)
        return
    # Weak, so that the handler the session holds does not keep the listing (its key) alive.
    watched = weakref.ref(listing)

    async def handler(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            target = watched()
            if target is not None:
                target.forget()
        await delegate(message)

    session._message_handler = handler  # type: ignore[attr-defined]  # see above


def _with_meta(function: CallFn, base: dict[str, Any]) -> CallFn:
    async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        return await function(name, arguments, _merged(base, meta))

    return call


def _merged(base: dict[str, Any] | None, meta: dict[str, Any] | None) -> dict[str, Any] | None:
    if not base:
        return meta
    return {**base, **meta} if meta else dict(base)
