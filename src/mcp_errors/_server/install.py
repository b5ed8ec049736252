"""Make a whole server speak the error contract: `install` and the low-level helper."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import pydantic
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as _SDKToolError
from mcp.server.mcpserver.exceptions import UnexpectedToolError as _SDKUnexpectedToolError
from mcp.server.mcpserver.tools import Tool as RegisteredTool
from mcp_types import CallToolResult, Tool

from mcp_errors._server.classify import (
    classify_arguments,
    classify_failure,
    is_protocol_signal,
    new_error_id,
    unknown_tool,
)
from mcp_errors._shared.contract import is_error_envelope
from mcp_errors._shared.envelope import FailureDetails, WideningCache, error_result
from mcp_errors._shared.optional_types import is_fastmcp
from mcp_errors._shared.telemetry import annotate_tool_result
from mcp_errors._shared.tool_failure import with_tool_failure

if TYPE_CHECKING:
    from mcp_errors.stores import IdempotencyStore

__all__ = ["install", "to_error_result"]

_ServerT = TypeVar("_ServerT")
_INSTALLED = "_mcp_errors_installed"


def install(
    server: _ServerT,
    *,
    idempotency: IdempotencyStore | str | None = None,
    tool_failure_meta: bool = False,
) -> _ServerT:
    """Make every tool failure of `server` a structured, actionable error result.

    Works on an `mcp.server.mcpserver.MCPServer` and on a fastmcp `FastMCP` (through a
    middleware), for tools registered before or after the call; installing twice is
    harmless. After it:

    - a `ToolError` raised in a tool keeps its category, description and optional fields;
    - arguments that fail the input schema become a `validation` error whose `fieldErrors`
      name each bad argument, instead of the SDK's raw pydantic text;
    - other exceptions are classified (timeouts, HTTP statuses, ...) or, when unknown,
      reported with a fixed safe text and an `errorId` that is also in the server log;
      JSON-RPC errors raised in a tool (`MCPError`) too, except the two that ask the
      client to act (-32042, -32021);
    - every advertised outputSchema also admits the error envelope, so that strict
      clients accept error results.

    Args:
        server: The server to change in place.
        idempotency: Opt in to honour idempotency keys: a store from `mcp_errors.stores`,
            or its URL for `open_store` (`"sqlite:///keys.sqlite3"`, `"redis://..."`).
            Tools not annotated read-only then run once per key (claimed before they
            run) and replay their first result for a repeated key, and say so in
            tools/list. See `mcp_errors._server.replay`.
        tool_failure_meta: Also write the draft SEP-3313
            `_meta["io.modelcontextprotocol/toolFailure"]` on error results (off by default:
            the prefix is reserved for the spec; the mapping is in docs/wire-format.md).
            The first `install` of a server decides.

    Returns:
        The same server, for chaining.

    Raises:
        TypeError: If `server` is neither an `MCPServer` nor a `FastMCP`, or `idempotency`
            is neither a store nor a URL (nothing is changed then).
        ValueError: If `idempotency` is a URL that names no store.

    Example:
        ```python
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import BusinessRuleError, install

        server = install(MCPServer("refunds"))

        @server.tool()
        def refund(order_id: str, amount: float) -> str:
            if amount > 500:
                raise BusinessRuleError(
                    "Refund exceeds policy limit",
                    description="Refunds above 500 need a manager: escalate to a human.",
                )
            return "refunded"
        ```
    """
    if idempotency is not None:
        from mcp_errors._server.replay import as_store

        idempotency = as_store(idempotency)  # a bad value fails before anything changes
    if not getattr(server, _INSTALLED, False):
        if isinstance(server, MCPServer):
            _install_on_mcpserver(server, tool_failure_meta=tool_failure_meta)
        elif is_fastmcp(server, "FastMCP"):
            from mcp_errors._server.fastmcp import install_on_fastmcp

            install_on_fastmcp(server, tool_failure_meta=tool_failure_meta)  # type: ignore[arg-type]  # checked by is_fastmcp
        else:
            raise TypeError(f"install() takes an MCPServer or a fastmcp FastMCP, not {type(server).__name__}")
        setattr(server, _INSTALLED, True)
    if idempotency is not None:
        if isinstance(server, MCPServer):
            from mcp_errors._server.replay import enable_replay

            enable_replay(server, idempotency)
        else:
            from mcp_errors._server.fastmcp_replay import enable_replay_on_fastmcp

            enable_replay_on_fastmcp(server, idempotency)  # type: ignore[arg-type]  # checked by is_fastmcp above
    return server


def to_error_result(
    exc: BaseException, *, tool_name: str | None = None, meta: Mapping[str, Any] | None = None
) -> CallToolResult:
    """Turn an exception into the contract's error result, for a low-level `mcp.server.Server`.

    The low-level server validates nothing and converts nothing, so call this in your
    `on_call_tool` handler around the tool's work. A pydantic `ValidationError` is read
    as a failure of the *arguments* (`validation`), since that is where the low-level
    handler meets one.

    Args:
        exc: What the tool raised.
        tool_name: For the log line.
        meta: An existing `_meta` for the result, kept as it is.

    Returns:
        A `CallToolResult` with `isError: true` and the envelope.

    Example:
        ```python
        async def on_call_tool(ctx, params):
            try:
                return CallToolResult(content=[TextContent(type="text", text=run(params))])
            except Exception as exc:
                return to_error_result(exc, tool_name=params.name)
        ```
    """
    error_id = new_error_id()
    details: FailureDetails
    if isinstance(exc, pydantic.ValidationError):
        details = classify_arguments(exc, error_id=error_id, tool_name=tool_name)
    else:
        details = classify_failure(exc, error_id=error_id, tool_name=tool_name)
    return error_result(details, error_id=error_id, meta=meta)


def _install_on_mcpserver(server: MCPServer[Any], *, tool_failure_meta: bool = False) -> None:
    # MCPServer's request handler calls `self.call_tool` and `self.list_tools`, and
    # `call_tool` raises the SDK's ToolError with the original exception as `__cause__`:
    # the only point where the cause is still known. Middleware sees only converted text.
    original_call_tool = server.call_tool
    original_list_tools = server.list_tools
    widening = WideningCache()

    async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            result = await original_call_tool(name, arguments, context)
        except Exception as exc:
            if is_protocol_signal(exc):
                raise
            error_id = new_error_id()
            result = error_result(_failure_on_mcpserver(server, name, exc, error_id), error_id=error_id)
        if tool_failure_meta:
            _add_tool_failure_meta(result)
        if isinstance(result, CallToolResult):
            annotate_tool_result(name, result)
        return result

    # MCPServer's own `list_tools` builds new `Tool` objects on every listing: those are
    # widened in place, since a copy of each cost about half of the listing itself
    # (docs/performance.md). Whatever else may stand there (a wrapper installed before
    # us) may hand out objects it keeps, and gets copies.
    fresh_tools = getattr(original_list_tools, "__func__", None) is MCPServer.list_tools

    async def list_tools() -> list[Tool]:
        tools = await original_list_tools()
        if fresh_tools:
            for tool in tools:
                if tool.output_schema is not None:
                    tool.output_schema = widening.widen(tool)
            return tools
        return [
            tool if tool.output_schema is None else tool.model_copy(update={"output_schema": widening.widen(tool)})
            for tool in tools
        ]

    server.call_tool = call_tool  # type: ignore[method-assign]  # instance-level wrap, see above
    server.list_tools = list_tools  # type: ignore[method-assign]


def _add_tool_failure_meta(result: object) -> None:
    """Add SEP-3313's `_meta` object to an error result in the contract (anything else is left)."""
    if isinstance(result, CallToolResult) and result.is_error and is_error_envelope(result.structured_content):
        result.meta = with_tool_failure(result.meta, cast(Mapping[str, Any], result.structured_content))


def _failure_on_mcpserver(server: MCPServer[Any], name: str, exc: Exception, error_id: str) -> FailureDetails:
    cause = exc.__cause__
    if isinstance(exc, _SDKToolError) and not isinstance(exc, _SDKUnexpectedToolError):
        if cause is None and _find_tool(server, name) is None:
            return unknown_tool(name, error_id=error_id)
        if isinstance(cause, pydantic.ValidationError):
            # Only argument validation raises the *anticipated* ToolError from a pydantic
            # error; the same error from the tool body is a crash (UnexpectedToolError).
            tool = _find_tool(server, name)
            return classify_arguments(
                cause, error_id=error_id, tool_name=name, input_schema=tool.parameters if tool else None
            )
    if cause is not None and type(exc) in _CALL_TOOL_WRAPPERS:
        # `MCPServer.call_tool` wraps whatever the tool raised in one of these, always: what
        # the tool raised is the cause, with no need to ask where the wrapper was raised.
        return classify_failure(cause, error_id=error_id, tool_name=name)
    return classify_failure(exc, error_id=error_id, tool_name=name)


_CALL_TOOL_WRAPPERS: Final = frozenset({_SDKToolError, _SDKUnexpectedToolError})


def _find_tool(server: MCPServer[Any], name: str) -> RegisteredTool | None:
    # The private manager is the SDK's own lookup (see `MCPServer._tool_input_schema`).
    return server._tool_manager.get_tool(name)  # pyright: ignore[reportPrivateUsage]
