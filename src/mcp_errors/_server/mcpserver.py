"""The `MCPServer` adapter: the error contract and idempotency replay on the official SDK's server.

MCPServer's request handler calls `server.call_tool` and `server.list_tools`, and
`call_tool` raises the SDK's `ToolError` with the original exception as `__cause__`: the only
point where the cause is still known (server middleware and `Extension.intercept_tool_call`
see only the converted text). So the adapter wraps both methods of the instance, once:

    tools/call  ->  replay (a store is set and the call carries a key)  ->  contract  ->  MCPServer.call_tool
    tools/list  ->  MCPServer.list_tools  ->  outputSchemas widened  ->  replay advertised

Replay sits outside the contract, so that it sees failures already written as contract
results, whose `executionState` decides whether an answer is kept or the claim released.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

import pydantic
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as _SDKToolError
from mcp.server.mcpserver.exceptions import UnexpectedToolError as _SDKUnexpectedToolError
from mcp.server.mcpserver.tools import Tool as RegisteredTool
from mcp_types import CallToolResult, Tool

from mcp_errors._server.arguments import classify_arguments, unknown_tool
from mcp_errors._server.classify import classify_failure, new_error_id
from mcp_errors._server.replay import Replay, advertise, covers, principal, request_key
from mcp_errors._shared.contract import is_error_envelope, is_protocol_signal
from mcp_errors._shared.envelope import FailureDetails, WideningCache, error_result, marked_empty
from mcp_errors._shared.telemetry import annotate_tool_result
from mcp_errors._shared.tool_failure import with_tool_failure
from mcp_errors.stores import IdempotencyStore

__all__ = ["install_on_mcpserver"]

_ADAPTER: Final = "_mcp_errors_adapter"


def install_on_mcpserver(
    server: MCPServer[Any], *, tool_failure_meta: bool, store: IdempotencyStore | None, empty_results: bool = True
) -> None:
    """Apply the contract to `server` (the first time) and honour idempotency keys with `store`.

    Installing again changes nothing but the store, when one is given: the first
    installation decides `tool_failure_meta` and `empty_results`.
    """
    adapter: _MCPServerAdapter | None = getattr(server, _ADAPTER, None)
    if adapter is None:
        adapter = _MCPServerAdapter(server, tool_failure_meta=tool_failure_meta, empty_results=empty_results)
        setattr(server, _ADAPTER, adapter)
    if store is not None:
        adapter.replay = Replay[Any](store, to_wire=_as_call_tool_result, from_wire=lambda result: result)
        server.call_tool = adapter.call_tool  # type: ignore[method-assign]  # replay outside the contract


class _MCPServerAdapter:
    def __init__(self, server: MCPServer[Any], *, tool_failure_meta: bool, empty_results: bool) -> None:
        self.server = server
        self.tool_failure_meta = tool_failure_meta
        self.empty_results = empty_results
        self.replay: Replay[Any] | None = None
        self._widening = WideningCache()
        self._covered: dict[str, bool] = {}
        self._sdk_call_tool = server.call_tool
        self._sdk_list_tools = server.list_tools
        # MCPServer's own `list_tools` builds new `Tool` objects on every listing: those are
        # widened in place, since copying each costs about half of the listing itself
        # (benchmarks/listing.py). Whatever else may stand there (a wrapper installed before
        # us) may hand out objects it keeps, and gets copies.
        self._fresh_tools = getattr(server.list_tools, "__func__", None) is MCPServer.list_tools
        # Instance-level wraps, see the module docs. Without a store, `tools/call` goes straight
        # to the contract: one coroutine less per call (docs/performance.md).
        server.call_tool = self._call_in_contract  # type: ignore[method-assign]
        server.list_tools = self.list_tools  # type: ignore[method-assign]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        replay = self.replay
        key = _request_key(context) if replay is not None else None
        if replay is None or key is None or not await self._covers(name):
            return await self._call_in_contract(name, arguments, context)
        return await replay.call(
            namespace=self.server.name,
            tool=name,
            arguments=arguments,
            key=key,
            principal=principal(),
            run=lambda: self._call_in_contract(name, arguments, context),
        )

    async def list_tools(self) -> list[Tool]:
        tools = await self._sdk_list_tools()
        if self._fresh_tools:
            for tool in tools:
                if tool.output_schema is not None:
                    tool.output_schema = self._widening.widen(tool)
        else:
            tools = [
                tool
                if tool.output_schema is None
                else tool.model_copy(update={"output_schema": self._widening.widen(tool)})
                for tool in tools
            ]
        if self.replay is None:
            return tools
        self._covered.update({tool.name: covers(tool) for tool in tools})
        return [advertise(tool) if covers(tool) else tool for tool in tools]

    async def _call_in_contract(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            result = await self._sdk_call_tool(name, arguments, context)
        except Exception as exc:
            # The SDK's wrappers (what `call_tool` raises for nearly every failure) are no
            # protocol signal: only an `MCPError` the tool let through may be one.
            if type(exc) not in _CALL_TOOL_WRAPPERS and is_protocol_signal(exc):
                raise
            error_id = new_error_id()
            result = error_result(self._failure(name, exc, error_id), error_id=error_id)
        else:
            # Only an answer with no content can be a bare empty one (`marked_empty`).
            if self.empty_results and isinstance(result, CallToolResult) and not result.content and not result.is_error:
                empty = marked_empty(result.content, result.structured_content)
                if empty is not None:
                    result = empty.model_copy(update={"meta": result.meta})
        if self.tool_failure_meta:
            _add_tool_failure_meta(result)
        if isinstance(result, CallToolResult):
            annotate_tool_result(name, result)
        return result

    def _failure(self, name: str, exc: Exception, error_id: str) -> FailureDetails:
        cause = exc.__cause__
        if type(exc) is _SDKUnexpectedToolError and cause is not None:
            # A crash of the tool (anything it raised but a ToolError): the commonest wrapper,
            # looked at first; what the tool raised is the cause (see below).
            return classify_failure(cause, error_id=error_id, tool_name=name)
        if isinstance(exc, _SDKToolError) and not isinstance(exc, _SDKUnexpectedToolError):
            if cause is None and self._find_tool(name) is None:
                return unknown_tool(name, error_id=error_id)
            if isinstance(cause, pydantic.ValidationError):
                # Only argument validation raises the *anticipated* ToolError from a pydantic
                # error; the same error from the tool body is a crash (UnexpectedToolError).
                tool = self._find_tool(name)
                return classify_arguments(
                    cause, error_id=error_id, tool_name=name, input_schema=tool.parameters if tool else None
                )
        if cause is not None and type(exc) in _CALL_TOOL_WRAPPERS:
            # `MCPServer.call_tool` wraps whatever the tool raised in one of these, always: what
            # the tool raised is the cause, with no need to ask where the wrapper was raised.
            return classify_failure(cause, error_id=error_id, tool_name=name)
        return classify_failure(exc, error_id=error_id, tool_name=name)

    async def _covers(self, name: str) -> bool:
        # The public tools/list view (no reliance on the SDK's tool manager), read again only
        # for a name not seen yet, so that a tool registered later is picked up. Names the
        # server does not list get no entry: a caller cannot grow this by inventing names.
        if name not in self._covered:
            listed = {tool.name: covers(tool) for tool in await self._sdk_list_tools()}
            self._covered.update(listed)
        return self._covered.get(name, False)

    def _find_tool(self, name: str) -> RegisteredTool | None:
        # The private manager is the SDK's own lookup (see `MCPServer._tool_input_schema`).
        return self.server._tool_manager.get_tool(name)  # pyright: ignore[reportPrivateUsage]


_CALL_TOOL_WRAPPERS: Final = frozenset({_SDKToolError, _SDKUnexpectedToolError})


def _add_tool_failure_meta(result: object) -> None:
    """Add SEP-3313's `_meta` object to an error result in the contract (anything else is left)."""
    if isinstance(result, CallToolResult) and result.is_error and is_error_envelope(result.structured_content):
        result.meta = with_tool_failure(result.meta, cast(Mapping[str, Any], result.structured_content))


def _as_call_tool_result(result: Any) -> CallToolResult | None:
    # An `InputRequiredResult` (the tool asks the client for input first) is not an answer.
    return result if isinstance(result, CallToolResult) else None


def _request_key(context: Any) -> object:
    if not isinstance(context, Context):
        return None
    try:
        meta = context.request_context.meta
    except ValueError:  # a call made outside a request (e.g. server.call_tool in a test)
        return None
    return request_key(meta)
