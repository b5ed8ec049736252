"""Make a whole server speak the error contract: `install`, and `to_error_result` for the low-level server.

`install` asks which kind of server it was given once, and hands it to that kind's adapter
(`_server/mcpserver.py`, `_server/fastmcp.py`); both apply the same contract with the same
classifier (`_server/classify.py`, `_server/arguments.py`) and the same replay
(`_server/replay.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import pydantic
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from mcp_errors._server.arguments import classify_arguments
from mcp_errors._server.classify import classify_failure, new_error_id
from mcp_errors._server.mcpserver import install_on_mcpserver
from mcp_errors._server.replay import as_store
from mcp_errors._shared.envelope import FailureDetails, error_result
from mcp_errors._shared.optional_types import is_fastmcp

if TYPE_CHECKING:
    from mcp_errors.stores import IdempotencyStore

__all__ = ["install", "to_error_result"]

_ServerT = TypeVar("_ServerT")


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
    store = as_store(idempotency) if idempotency is not None else None  # a bad value fails before anything changes
    if isinstance(server, MCPServer):
        install_on_mcpserver(server, tool_failure_meta=tool_failure_meta, store=store)
    elif is_fastmcp(server, "FastMCP"):
        from mcp_errors._server.fastmcp import install_on_fastmcp  # fastmcp is optional

        install_on_fastmcp(server, tool_failure_meta=tool_failure_meta, store=store)  # type: ignore[arg-type]  # checked by is_fastmcp
    else:
        raise TypeError(f"install() takes an MCPServer or a fastmcp FastMCP, not {type(server).__name__}")
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
