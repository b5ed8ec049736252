"""Idempotency replay on a fastmcp server: a middleware around the error contract's.

Imported only on use, like `_fastmcp`. The claim protocol itself is `_replay.Replay`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastmcp import FastMCP
from fastmcp.server.dependencies import get_access_token
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import Tool, ToolResult
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsRequest

from mcp_errors._server.fastmcp import _ErrorContractMiddleware
from mcp_errors._server.replay import Replay, advertise, covers, principal, request_key
from mcp_errors.stores import IdempotencyStore

__all__ = ["enable_replay_on_fastmcp", "replay_middleware"]


def enable_replay_on_fastmcp(server: FastMCP[Any], store: IdempotencyStore) -> None:
    """Add (or re-point) the replay middleware, just outside the error contract's.

    Outside it, so that it sees tool failures already written as contract results, whose
    `executionState` decides whether the answer is kept or the claim released.
    """
    replacement = replay_middleware(store)
    for middleware in server.middleware:
        if isinstance(middleware, _ReplayMiddleware):
            middleware.replay = replacement.replay
            return
    chain = server.middleware
    contract = next(
        (index for index, middleware in enumerate(chain) if isinstance(middleware, _ErrorContractMiddleware)),
        len(chain),
    )
    chain.insert(contract, replacement)


def replay_middleware(store: IdempotencyStore) -> _ReplayMiddleware:
    """A fastmcp middleware that honours idempotency keys with `store` (the proxy adds one)."""
    return _ReplayMiddleware(Replay[ToolResult](store, to_wire=_to_wire, from_wire=ToolResult.from_mcp_result))


class _ReplayMiddleware(Middleware):
    def __init__(self, replay: Replay[ToolResult]) -> None:
        self.replay = replay
        self._covered: dict[str, bool] = {}

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        fastmcp_context = context.fastmcp_context
        request = fastmcp_context.request_context if fastmcp_context is not None else None
        key = request_key(request.meta if request is not None else None)
        name = context.message.name
        if key is None or fastmcp_context is None or not await self._covers(fastmcp_context.fastmcp, name):
            return await call_next(context)
        return await self.replay.call(
            tool=name,
            arguments=context.message.arguments or {},
            key=key,
            principal=principal(get_access_token()),
            run=lambda: call_next(context),
        )

    async def on_list_tools(
        self,
        context: MiddlewareContext[ListToolsRequest],
        call_next: CallNext[ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        self._covered.update({tool.name: covers(tool) for tool in tools})
        return [advertise(tool) if covers(tool) else tool for tool in tools]

    async def _covers(self, server: FastMCP[Any], name: str) -> bool:
        if name not in self._covered:
            tool = await server.get_tool(name)
            self._covered[name] = tool is not None and covers(tool)
        return self._covered[name]


def _to_wire(result: ToolResult) -> CallToolResult:
    wire = result.to_mcp_result()
    if isinstance(wire, CallToolResult):
        return wire
    if isinstance(wire, tuple):
        content, structured = wire
        return CallToolResult(content=content, structured_content=structured)
    return CallToolResult(content=wire)
