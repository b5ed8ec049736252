"""The contract in front of a proxied server: a fastmcp middleware on the proxy's tools.

Through fastmcp's proxy, an upstream failure reaches `on_call_tool` in one of two shapes:
a *returned* `ToolResult(is_error=True)` (what most servers send), or a *raised* error whose
cause is the upstream's `MCPError` (a JSON-RPC error) or a transport failure. Both are
classified by `_rewrite` and written with `_envelope`; everything else passes unchanged,
except a success with no content at all, which gets a text saying the tool ran and found
nothing. tools/list gets outputSchemas that also admit the error envelope.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, TypeVar

import fastmcp.exceptions
import jsonschema
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import Tool, ToolResult
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    URL_ELICITATION_REQUIRED,
    CallToolRequestParams,
    ContentBlock,
    ListToolsRequest,
    TextContent,
)

from mcp_errors._classify import classify_failure, classify_known, log_fields, new_error_id, unknown_tool
from mcp_errors._contract import ErrorCategory, ExecutionState
from mcp_errors._envelope import FailureDetails, WideningCache, empty_result, is_empty_result
from mcp_errors._head import seconds_in_words
from mcp_errors._outcome import is_call_failure, read_result
from mcp_errors._telemetry import annotate_tool_result
from mcp_errors._tool_failure import with_tool_failure
from mcp_errors.proxy._child import ChildProcess, UpstreamUnavailableError
from mcp_errors.proxy._rewrite import Rewriter, UpstreamFailure

__all__ = ["ContractMiddleware"]

logger = logging.getLogger("mcp_errors.proxy")


class ContractMiddleware(Middleware):
    """Rewrite the proxied server's tool failures into the contract, and widen its schemas.

    Args:
        rewriter: The classification chain (built-in rules and the user's).
        child: The wrapped stdio server, to tell a child that died from other failures;
            `None` for an HTTP upstream.
        tool_failure_meta: Also write SEP-3313 `_meta["io.modelcontextprotocol/toolFailure"]`.
    """

    def __init__(
        self, rewriter: Rewriter, *, child: ChildProcess | None = None, tool_failure_meta: bool = False
    ) -> None:
        self.rewriter = rewriter
        self.child = child
        self.tool_failure_meta = tool_failure_meta
        self._widening = WideningCache()
        self._tools: dict[str, Tool] = {}

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        result = await self._rewrite(context, call_next)
        annotate_tool_result(context.message.name, result)
        return result

    async def _rewrite(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        try:
            result = await call_next(context)
        except Exception as exc:
            return await self._from_exception(context, exc)
        if result.is_error:
            return await self._from_error_result(context, result)
        if not result.content:
            if not is_empty_result(result):
                # Data only in structuredContent: text-only hosts get it as JSON, as the SDKs
                # write it, instead of nothing.
                text = json.dumps(result.structured_content, ensure_ascii=False)
                return ToolResult(
                    content=[TextContent(type="text", text=text)],
                    structured_content=result.structured_content,
                    meta=result.meta,
                )
            return await self._as_empty_result(context, result)
        return result

    async def on_list_tools(
        self,
        context: MiddlewareContext[ListToolsRequest],
        call_next: CallNext[ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        self._tools = {tool.name: tool for tool in tools}
        return [
            tool.model_copy(update={"output_schema": self._widening.widen(tool)})
            if tool.output_schema is not None
            else tool
            for tool in tools
        ]

    async def _from_error_result(
        self, context: MiddlewareContext[CallToolRequestParams], result: ToolResult
    ) -> ToolResult:
        name = context.message.name
        tool = await self._tool(context, name)
        failure = UpstreamFailure(
            tool=name,
            text="\n".join(block.text for block in result.content if isinstance(block, TextContent)),
            structured=result.structured_content,
            meta=result.meta,
            arguments=context.message.arguments or {},
            input_schema=tool.parameters if tool is not None else None,
            known_tools=tuple(self._tools),
        )
        error_id = new_error_id()
        details = self.rewriter.classify(failure, error_id=error_id)
        if details is None:
            # Already the contract: as it came, with the SEP-3313 object when asked for.
            if self.tool_failure_meta and result.structured_content is not None:
                result.meta = with_tool_failure(result.meta, result.structured_content)
            return result
        others = [block for block in result.content if not isinstance(block, TextContent)]
        return self._write(name, details, error_id, meta=result.meta, others=others)

    async def _from_exception(self, context: MiddlewareContext[CallToolRequestParams], exc: Exception) -> ToolResult:
        name = context.message.name
        error_id = new_error_id()
        details: FailureDetails | None
        rpc = _find(exc, MCPError)
        if rpc is not None and rpc.code in _PROTOCOL_SIGNALS:
            # Asks of the client (complete a URL elicitation, a missing capability) that a
            # client acts on only as JSON-RPC errors.
            raise rpc from None
        unavailable = _find(exc, UpstreamUnavailableError)
        if unavailable is not None:
            details = _unavailable(str(unavailable), unavailable.retry_after)
        elif isinstance(exc, fastmcp.exceptions.NotFoundError):
            details = unknown_tool(name, error_id=error_id, known=await self._tool_names(context))
        elif rpc is not None and rpc.code == CONNECTION_CLOSED and self.child is not None and not self.child.running:
            details = _died_mid_call(self.child.describe_exit())
        elif rpc is not None:
            tool = await self._tool(context, name)
            failure = UpstreamFailure(
                tool=name,
                text=rpc.error.message,
                jsonrpc_code=rpc.code,
                jsonrpc_data=rpc.error.data,
                arguments=context.message.arguments or {},
                input_schema=tool.parameters if tool is not None else None,
                known_tools=tuple(self._tools),
            )
            details = self.rewriter.classify(failure, error_id=error_id) or _UNREADABLE
        else:
            details = _from_causes(exc)
        if details is None:
            # Not the upstream's answer: a failure of the proxy itself, classified (and
            # logged with its traceback) where every exception is.
            details = classify_failure(exc, error_id=error_id, tool_name=name)
        return self._write(name, details, error_id)

    async def _as_empty_result(
        self, context: MiddlewareContext[CallToolRequestParams], result: ToolResult
    ) -> ToolResult:
        name = context.message.name
        summary = f"The tool {name!r} ran and returned nothing: an empty result, not an error."
        tool = await self._tool(context, name)
        schema = tool.output_schema if tool is not None else None
        # `resultCount: 0` tells a reader it is an empty result, not a failure; it is added
        # only where the tool's outputSchema admits it.
        structured = result.structured_content
        counted = empty_result(summary, structured).structured_content
        if (structured is not None) if schema is None else not _fits(counted, schema):
            counted = structured
        return ToolResult(
            content=[TextContent(type="text", text=summary)], structured_content=counted, meta=result.meta
        )

    def _write(
        self,
        name: str,
        details: FailureDetails,
        error_id: str,
        *,
        meta: Mapping[str, Any] | None = None,
        others: Sequence[ContentBlock] = (),
    ) -> ToolResult:
        text, structured = details.write(error_id)
        if logger.isEnabledFor(logging.INFO):
            logger.info(
                "tool %r failed: %s, errorId %s",
                name,
                f"{details.category.value} {details.code}" if details.code else details.category.value,
                error_id,
                extra=log_fields(name, error_id, details.category),
            )
        if self.tool_failure_meta:
            meta = with_tool_failure(meta, structured)
        # Built without fastmcp's conversion of arbitrary return values: these are already
        # content blocks and a JSON object (a third of the error path's cost otherwise).
        return ToolResult.model_construct(
            content=[TextContent(type="text", text=text), *others],
            structured_content=structured,
            meta=dict(meta) if meta else None,
            is_error=True,
        )

    async def _tool(self, context: MiddlewareContext[CallToolRequestParams], name: str) -> Tool | None:
        tool = self._tools.get(name)
        if tool is None and context.fastmcp_context is not None:
            tool = await context.fastmcp_context.fastmcp.get_tool(name)
        return tool

    async def _tool_names(self, context: MiddlewareContext[CallToolRequestParams]) -> list[str]:
        if not self._tools and context.fastmcp_context is not None:
            self._tools = {tool.name: tool for tool in await context.fastmcp_context.fastmcp.list_tools()}
        return list(self._tools)


def _fits(value: object, schema: Mapping[str, Any]) -> bool:
    try:
        return bool(jsonschema.Draft202012Validator(dict(schema)).is_valid(value))
    except Exception:
        return False  # an upstream's schema we cannot apply: leave its result as it is


_PROTOCOL_SIGNALS: Final = frozenset({URL_ELICITATION_REQUIRED, MISSING_REQUIRED_CLIENT_CAPABILITY})


_E = TypeVar("_E", bound=BaseException)


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it wraps, outermost first (fastmcp wraps an upstream's errors)."""
    current: BaseException | None = exc
    for _ in range(_MAX_CAUSES):
        if current is None:
            return
        yield current
        current = current.__cause__ or current.__context__


_MAX_CAUSES: Final = 16


def _find(exc: BaseException, kind: type[_E]) -> _E | None:
    return next((cause for cause in _causes(exc) if isinstance(cause, kind)), None)


def _from_causes(exc: BaseException) -> FailureDetails | None:
    """A failure to reach or hear from the upstream: as a client reads it, else by its type."""
    transport = next((cause for cause in _causes(exc) if is_call_failure(cause)), None)
    details = _from_transport(transport) if transport is not None else None
    if details is not None:
        return details
    # An HTTP upstream's own status (401, 503, ...) and the like: what `install` makes of it.
    return next((known for cause in _causes(exc) if (known := classify_known(cause)) is not None), None)


def _from_transport(exc: BaseException) -> FailureDetails | None:
    """A failure to reach an HTTP upstream, read as a client reads it (`read_result`)."""
    outcome = read_result(exc)
    if outcome.category is None:
        return None
    not_run = outcome.execution_state is ExecutionState.NOT_EXECUTED
    return FailureDetails(
        message=outcome.message,
        category=outcome.category,
        description=outcome.description,
        code=("UPSTREAM_UNAVAILABLE" if not_run else "UPSTREAM_CONNECTION_LOST")
        if outcome.category is ErrorCategory.TRANSIENT
        else None,
        execution_state=outcome.execution_state,
    )


def _unavailable(reason: str, retry_after: float | None) -> FailureDetails:
    return FailureDetails(
        message="The server is not running",
        category=ErrorCategory.TRANSIENT,
        description=f"{reason} This call was not sent to it, so nothing was applied: resend it "
        + (f"after {seconds_in_words(retry_after)}." if retry_after else "after a short wait."),
        code="UPSTREAM_UNAVAILABLE",
        retry_after_seconds=retry_after,
        execution_state=ExecutionState.NOT_EXECUTED,
    )


def _died_mid_call(how: str) -> FailureDetails:
    return FailureDetails(
        message="The server stopped during the call",
        category=ErrorCategory.TRANSIENT,
        description=f"The server {how} while this call ran; it is started again for the next call. "
        "Whether the call was applied is unknown: resend it only if it is read-only, idempotent, or carries "
        "the same idempotency key; otherwise check first whether it took effect.",
        code="UPSTREAM_EXITED",
        execution_state=ExecutionState.OUTCOME_UNKNOWN,
    )


_UNREADABLE: Final = FailureDetails(
    message="The server answered with an error",
    category=ErrorCategory.BUSINESS,
    description="The server answered with a JSON-RPC error that says nothing more. Do not resend the same call "
    "unchanged: change the request, or escalate.",
    code="TOOL_ERROR",
)
