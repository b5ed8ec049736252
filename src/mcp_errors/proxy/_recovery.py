"""Recovery at the proxy, opt-in: resending safe transient failures, honouring idempotency keys.

`--retry N` resends a transient failure at most N times, only when a resend cannot apply
anything twice: the tool is annotated `readOnlyHint`, or the failure says the call was not
executed. A write whose outcome is unknown is never resent. The decisions, the waits (full
jitter, at least the upstream's `retryAfterSeconds`), the retry budget and the deadline are
`call_tool_with_recovery`'s, the same as an agent's client would apply. The deadline counts
from the first answer, so that a slow first call is never cut short by opting in.

`--idempotency-keys` honours the caller's `params._meta["mcp-errors/idempotencyKey"]` at the
proxy: a repeated key with the same tool and arguments gets the first answer again without
reaching the upstream (the replay of `install(..., idempotency=...)`, `_replay`). This makes
the caller's resends to the proxy safe; it cannot make the proxy's own call to the upstream
exactly-once, and the answers live in the proxy's memory only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import Tool, ToolResult
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsRequest, ToolAnnotations
from mcp_types import Tool as MCPTool

from mcp_errors._budget import RetryBudget
from mcp_errors._classify import new_error_id
from mcp_errors._contract import ErrorCategory
from mcp_errors._envelope import error_result
from mcp_errors._idempotency_keys import HONOURS_IDEMPOTENCY_META, IDEMPOTENCY_KEY_META, REPLAYED_META
from mcp_errors._policy import RecoveryPolicy, call_tool_with_recovery
from mcp_errors._replay import _KEY_REUSED, IdempotencyStore, StoredResult, _fingerprint, _worth_storing

__all__ = ["KeyReplayMiddleware", "RetryMiddleware"]


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
        await call_tool_with_recovery(
            call,
            name,
            context.message.arguments or {},
            policy=self.policy,
            budget=self.budget,
            server="upstream",
            tools=await self._tools(context, name),
        )
        return latest

    async def _tools(self, context: MiddlewareContext[CallToolRequestParams], name: str) -> list[MCPTool]:
        fastmcp_context = context.fastmcp_context
        tool = await fastmcp_context.fastmcp.get_tool(name) if fastmcp_context is not None else None
        read_only = bool(tool is not None and tool.annotations is not None and tool.annotations.read_only_hint)
        # Only `readOnlyHint` makes a resend safe here: an upstream's `idempotentHint` is a
        # hint about a write, and a write with an unknown outcome is never resent.
        annotations = ToolAnnotations(read_only_hint=read_only)
        return [MCPTool(name=name, input_schema={"type": "object"}, annotations=annotations)]


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


class KeyReplayMiddleware(Middleware):
    """Answer a repeated idempotency key from the first answer (tools not annotated read-only).

    The outermost tool middleware: what it stores is the final answer, after the contract
    and the proxy's own resends.

    Args:
        store: Where first answers are kept (in memory, bounded in size and age).
    """

    def __init__(self, store: IdempotencyStore | None = None) -> None:
        self.store = store or IdempotencyStore()
        self._running: dict[str, anyio.Event] = {}
        self._writes: dict[str, bool] = {}

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        fastmcp_context = context.fastmcp_context
        request = fastmcp_context.request_context if fastmcp_context is not None else None
        meta = request.meta if request is not None else None
        key = meta.get(IDEMPOTENCY_KEY_META) if meta else None
        name = context.message.name
        if not isinstance(key, str) or not 0 < len(key) <= _MAX_KEY or not await self._writes_data(context, name):
            return await call_next(context)
        fingerprint = _fingerprint(name, dict(context.message.arguments or {}))
        while (running := self._running.get(key)) is not None:
            await running.wait()
        done = self._running[key] = anyio.Event()
        try:
            stored = await self.store.get(key)
            if stored is not None:
                if stored.fingerprint != fingerprint:
                    error_id = new_error_id()
                    return ToolResult.from_mcp_result(error_result(_KEY_REUSED, error_id=error_id))
                replayed = CallToolResult.model_validate(stored.result)
                replayed.meta = {**(replayed.meta or {}), REPLAYED_META: True}
                return ToolResult.from_mcp_result(replayed)
            result = await call_next(context)
            answer = _as_call_result(result)
            if _worth_storing(answer):
                dumped = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
                with anyio.move_on_after(_STORE_WRITE_SECONDS, shield=True):
                    await self.store.put(key, StoredResult(fingerprint=fingerprint, result=dumped))
            return result
        finally:
            del self._running[key]
            done.set()

    async def on_list_tools(
        self,
        context: MiddlewareContext[ListToolsRequest],
        call_next: CallNext[ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        self._writes.update({tool.name: _writes(tool) for tool in tools})
        return [
            tool.model_copy(update={"meta": {**(tool.meta or {}), HONOURS_IDEMPOTENCY_META: True}})
            if _writes(tool)
            else tool
            for tool in tools
        ]

    async def _writes_data(self, context: MiddlewareContext[CallToolRequestParams], name: str) -> bool:
        if name not in self._writes and context.fastmcp_context is not None:
            tool = await context.fastmcp_context.fastmcp.get_tool(name)
            self._writes[name] = tool is not None and _writes(tool)
        return self._writes.get(name, False)


_MAX_KEY = 255
_STORE_WRITE_SECONDS = 10.0


def _writes(tool: Tool) -> bool:
    return not (tool.annotations is not None and tool.annotations.read_only_hint)
