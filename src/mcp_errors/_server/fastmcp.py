"""The fastmcp integration: a middleware that applies the contract. Imported only on use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import fastmcp.exceptions
import pydantic
from fastmcp import FastMCP
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import Tool, ToolResult
from mcp_types import CallToolRequestParams, ListToolsRequest, TextContent

from mcp_errors._server.classify import (
    classify_arguments,
    classify_failure,
    is_protocol_signal,
    new_error_id,
    unknown_tool,
)
from mcp_errors._shared.contract import is_error_envelope
from mcp_errors._shared.envelope import FailureDetails, WideningCache
from mcp_errors._shared.telemetry import annotate_tool_result
from mcp_errors._shared.tool_failure import with_tool_failure

__all__ = ["install_on_fastmcp"]


def install_on_fastmcp(server: FastMCP[Any], *, tool_failure_meta: bool = False) -> None:
    # Appended last, so it is the innermost middleware: it sees the tool's exception
    # before any user middleware (fastmcp's ErrorHandlingMiddleware turns tool errors into
    # JSON-RPC errors, which the model never sees).
    server.add_middleware(_ErrorContractMiddleware(tool_failure_meta=tool_failure_meta))


class _ErrorContractMiddleware(Middleware):
    def __init__(self, *, tool_failure_meta: bool = False) -> None:
        self._widening = WideningCache()
        self._tool_failure_meta = tool_failure_meta

    async def __call__(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        # The two methods this middleware is about are dispatched here rather than through
        # the base class's hook chain, which builds four wrappers per message
        # (docs/performance.md); overriding `__call__` is fastmcp's documented middleware
        # form and runs once per message. Every other message takes the base class's way,
        # so a hook added here for another method still runs (`on_message` and `on_request`
        # are not called for these two).
        method = context.method
        if method == "tools/call":
            return await self.on_call_tool(context, call_next)
        if method == "tools/list":
            return await self.on_list_tools(context, call_next)
        return await super().__call__(context, call_next)

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        try:
            result = await call_next(context)
        except Exception as exc:
            if is_protocol_signal(exc):
                raise
            if exc.__cause__ is not None and is_protocol_signal(exc.__cause__):
                # fastmcp wraps what a tool raised in its ToolError, and would send the
                # client a text error it cannot act on: the signal goes out as it was raised.
                raise exc.__cause__ from None
            error_id = new_error_id()
            text, structured = (await _failure(context, exc, error_id)).write(error_id)
            # `model_construct`: the envelope is JSON already, so `ToolResult.__init__`'s
            # serialisation round trip and content conversion would only repeat work.
            result = ToolResult.model_construct(
                content=[TextContent(type="text", text=text)],
                structured_content=structured,
                meta=None,
                is_error=True,
            )
        if self._tool_failure_meta and result.is_error and is_error_envelope(result.structured_content):
            result.meta = with_tool_failure(result.meta, cast(dict[str, Any], result.structured_content))
        annotate_tool_result(context.message.name, result)
        return result

    async def on_list_tools(
        self,
        context: MiddlewareContext[ListToolsRequest],
        call_next: CallNext[ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        return [
            tool.model_copy(update={"output_schema": self._widening.widen(tool)})
            if tool.output_schema is not None
            else tool
            for tool in tools
        ]


async def _failure(context: MiddlewareContext[CallToolRequestParams], exc: Exception, error_id: str) -> FailureDetails:
    name = context.message.name
    if isinstance(exc, fastmcp.exceptions.NotFoundError):
        return unknown_tool(name, error_id=error_id)
    if isinstance(exc, fastmcp.exceptions.ValidationError) and isinstance(exc.__cause__, pydantic.ValidationError):
        schema = None
        if context.fastmcp_context is not None:
            tool = await context.fastmcp_context.fastmcp.get_tool(name)
            schema = tool.parameters if tool is not None else None
        return classify_arguments(exc.__cause__, error_id=error_id, tool_name=name, input_schema=schema)
    return classify_failure(exc, error_id=error_id, tool_name=name)
