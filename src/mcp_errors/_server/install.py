"""Make a whole server speak the error contract: `install`, and `to_error_result` for the low-level server.

`install` asks which kind of server it was given once, and hands it to that kind's adapter
(`_server/mcpserver.py`, `_server/fastmcp.py`); both apply the same contract with the same
classifier (`_server/classify.py`, `_server/arguments.py`) and the same replay
(`_server/replay.py`).
"""

from __future__ import annotations

import logging
import sys
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

__all__ = ["install", "log_plainly_off_a_terminal", "to_error_result"]

_ServerT = TypeVar("_ServerT")


def install(
    server: _ServerT,
    *,
    idempotency: IdempotencyStore | str | None = None,
    tool_failure_meta: bool = False,
    empty_results: bool = True,
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
      clients accept error results;
    - a tool that returns `[]` or `None` answers the valid empty result (`empty_result`'s
      shape: a text that says the call ran and found nothing, `resultCount: 0`), not a bare
      `content: []` a model cannot tell from a swallowed failure.

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
        empty_results: Turn a tool's bare empty answer (`[]`, `None`) into the valid empty
            result (on by default; `False` sends what the framework makes of it). The first
            `install` of a server decides.

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
    log_plainly_off_a_terminal()
    if isinstance(server, MCPServer):
        install_on_mcpserver(server, tool_failure_meta=tool_failure_meta, store=store, empty_results=empty_results)
    elif is_fastmcp(server, "FastMCP"):
        from mcp_errors._server.fastmcp import install_on_fastmcp  # fastmcp is optional

        install_on_fastmcp(
            server,  # type: ignore[arg-type]  # checked by is_fastmcp
            tool_failure_meta=tool_failure_meta,
            store=store,
            empty_results=empty_results,
        )
    else:
        raise TypeError(f"install() takes an MCPServer or a fastmcp FastMCP, not {type(server).__name__}")
    return server


def log_plainly_off_a_terminal() -> None:
    """Give this project's log lines a plain, one-line-per-record handler when stderr is no
    terminal and nobody has said where they go.

    `MCPServer()` configures the root logger with rich's `RichHandler`, whose traceback is a box
    about 35 columns wide once stderr is a host's log file (80 columns, less the time, level and
    path columns): unreadable there. fastmcp configures only its own logger, so ours would reach
    Python's last-resort handler: a bare message and a traceback over many lines. In either case,
    and only while the `mcp_errors` logger has no handler of its own, it gets one on stderr: one
    line per record (time, level, logger, message, then its traceback, ` | ` for each line break).
    Under the SDK's boxing handler it also stops passing records up (they would be printed twice);
    the SDK's own records, and every log the application set up, are left as they are.
    """
    ours = logging.getLogger("mcp_errors")
    if ours.handlers or not ours.propagate:
        return  # configured already, by the application or by an earlier install
    root = logging.getLogger().handlers
    boxed = [handler for handler in root if _boxes_off_a_terminal(handler)]
    if root and not boxed:
        return  # the application's own logging
    if not root and (sys.stderr is None or sys.stderr.isatty()):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    ours.addHandler(handler)
    ours.propagate = not boxed


def _boxes_off_a_terminal(handler: logging.Handler) -> bool:
    try:
        from rich.logging import RichHandler
    except ImportError:  # pragma: no cover  # rich comes with the command line's typer
        return False
    return isinstance(handler, RichHandler) and not handler.console.is_terminal


class _OneLineFormatter(logging.Formatter):
    """A record on one line: its traceback's lines joined with ` | `, so a log file stays one line per record."""

    def format(self, record: logging.LogRecord) -> str:
        lines = (line.strip() for line in super().format(record).splitlines())
        # Python's `^^^^` markers under a traceback's code say nothing without the line above them.
        return " | ".join(line for line in lines if line.strip("^~ "))


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
        from mcp_types import CallToolResult, TextContent
        from mcp_errors import to_error_result


        def call_tool(name: str, arguments: dict) -> CallToolResult:  # inside `on_call_tool`
            try:
                text = str(100 / arguments["quantity"])
                return CallToolResult(content=[TextContent(type="text", text=text)])
            except Exception as exc:
                return to_error_result(exc, tool_name=name)


        result = call_tool("unit_price", {"quantity": 0})
        assert result.is_error and result.structured_content["errorCategory"]
        ```
    """
    error_id = new_error_id()
    details: FailureDetails
    if isinstance(exc, pydantic.ValidationError):
        details = classify_arguments(exc, error_id=error_id, tool_name=tool_name)
    else:
        details = classify_failure(exc, error_id=error_id, tool_name=tool_name)
    return error_result(details, error_id=error_id, meta=meta)
