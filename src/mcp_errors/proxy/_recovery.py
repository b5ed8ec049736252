"""Recovery at the proxy, opt-in: resending safe transient failures, honouring idempotency keys.

`--retry N` resends a transient failure at most N times, only when a resend cannot apply
anything twice: the tool is annotated `readOnlyHint`, or the failure says the call was not
executed. A write whose outcome is unknown is never resent. The decisions, the waits (full
jitter, at least the upstream's `retryAfterSeconds`), the retry budget and the deadline are
`call_tool_with_recovery`'s, the same as an agent's client would apply. The deadline counts
from the first answer, so that a slow first call is never cut short by opting in.

`--idempotency-keys` honours the caller's `params._meta["mcp-errors/idempotencyKey"]` at the
proxy with the same replay as `install(..., idempotency=...)` (`_server/fastmcp.py`'s replay middleware): the key is
claimed before the upstream is called, and a repeated key gets the first answer again without
reaching the upstream. This makes the caller's resends to the proxy safe; it cannot make the
proxy's own call to the upstream exactly-once, and the answers live in the proxy's memory.
"""

from __future__ import annotations

from typing import Any

from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp_types import CallToolRequestParams, CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool

from mcp_errors._client.budget import RetryBudget
from mcp_errors._client.policy import RecoveryPolicy, call_tool_with_recovery
from mcp_errors._shared.contract import ErrorCategory
from mcp_errors._shared.error_text import read_error_text, write_error_text

__all__ = ["RetryMiddleware"]


class RetryMiddleware(Middleware):
    """Resend transient failures of read-only tools and of calls that did not run.

    Sits outside the contract middleware, so it reads failures already in the contract.

    Args:
        resends: At most this many resends per call.
        deadline: Seconds after the first answer by which the last resend must be answered.
        budget: The retry budget of the one upstream.
    """

    def __init__(self, *, resends: int, deadline: float, budget: RetryBudget | None = None) -> None:
        self.budget = budget or RetryBudget()
        self.policy = RecoveryPolicy(max_attempts=resends + 1, deadline=deadline, send_idempotency_key=False)

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        first = await call_next(context)
        if not first.is_error:
            self.budget.record_success()
            return first
        if not _is_transient(first):
            return first
        in_hand = [first]
        latest = first

        async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
            # The policy's first attempt is the answer already in hand; the others resend.
            nonlocal latest
            latest = in_hand.pop() if in_hand else await call_next(context)
            return _as_call_result(latest)

        name = context.message.name
        report = await call_tool_with_recovery(
            call,
            name,
            context.message.arguments or {},
            policy=self.policy,
            budget=self.budget,
            server="upstream",
            tools=await self._tools(context, name),
        )
        resends = len(report.attempts) - 1
        return _saying_resends(latest, resends) if resends and latest.is_error else latest

    async def _tools(self, context: MiddlewareContext[CallToolRequestParams], name: str) -> list[MCPTool]:
        fastmcp_context = context.fastmcp_context
        tool = await fastmcp_context.fastmcp.get_tool(name) if fastmcp_context is not None else None
        read_only = bool(tool is not None and tool.annotations is not None and tool.annotations.read_only_hint)
        # Only `readOnlyHint` makes a resend safe here: an upstream's `idempotentHint` is a
        # hint about a write, and a write with an unknown outcome is never resent.
        annotations = ToolAnnotations(read_only_hint=read_only)
        return [MCPTool(name=name, input_schema={"type": "object"}, annotations=annotations)]


def _saying_resends(result: ToolResult, resends: int) -> ToolResult:
    """The final failure, saying how often the proxy already resent the call (so the agent does not start again).

    In words, and as `resentByProxy` in the envelope (an extra field, as the contract allows).
    """
    structured = result.structured_content
    if not isinstance(structured, dict) or not isinstance(structured.get("description"), str):
        return result
    sentence = f" The proxy already resent this call {resends} time{'s' if resends != 1 else ''}."
    content = list(result.content)
    first = content[0] if content else None
    if isinstance(first, TextContent):
        written = read_error_text(first.text)
        if written is not None:
            text = write_error_text(written.head, written.body + sentence, error_id=written.error_id)
            content[0] = TextContent(type="text", text=text)
    return ToolResult.model_construct(
        content=content,
        structured_content={
            **structured,
            "description": structured["description"] + sentence,
            "resentByProxy": resends,
        },
        meta=result.meta,
        is_error=True,
    )


def _is_transient(result: ToolResult) -> bool:
    structured = result.structured_content
    return isinstance(structured, dict) and structured.get("errorCategory") == ErrorCategory.TRANSIENT.value


def _as_call_result(result: ToolResult) -> CallToolResult:
    return CallToolResult(
        content=result.content,
        structured_content=result.structured_content,
        is_error=result.is_error,
        _meta=result.meta,
    )
