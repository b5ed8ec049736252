"""The proxy's tools/call path: one fastmcp middleware that runs the proxy's steps in their order.

Each concern is a step in its own module: the front's protocol era (`_middleware`'s
`modern_front_answer`), the restart notice (`_restarts`), the repeat guard (`_guard`,
opt-in), the circuit breaker (`_breaker`), resends (`_recovery`, opt-in) and the contract
(`_middleware`). A call runs them outermost first, as nested middlewares would, but in one
middleware: every middleware layer is one more coroutine frame that the stdio round trip
resumes several times per call, and five of them made most of what the proxy added to a
call (benchmarks/proxy.py). The idempotency replay (opt-in) stays a middleware of its own
(`_server/fastmcp.py`'s), between the guard and the breaker: with it, the steps are split
into two of these middlewares, one on each side.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp_types import CallToolRequestParams

from mcp_errors.proxy._breaker import Answer, Breaker
from mcp_errors.proxy._middleware import Contract, modern_front_answer
from mcp_errors.proxy._restarts import RestartNotice
from mcp_errors.proxy._sessions import current_front_session

if TYPE_CHECKING:
    from mcp_errors.proxy._guard import RepeatGuard  # loaded with `--repeat-guard` only

__all__ = ["ProxyCallMiddleware"]


class ProxyCallMiddleware(Middleware):
    """The proxy's steps on tools/call (and the contract's on tools/list), in one middleware.

    Outermost first: the front's protocol era (`modern_front`), the restart notice, the
    repeat guard, the circuit breaker, resends (`retry`, a `_recovery.RetryMiddleware`), the
    contract; inside the contract, what the upstream answered is noted for the breaker.
    Every step is optional, so that the idempotency replay can sit between two of these.

    Args:
        contract: The contract (innermost); `None` in the outer half around the replay.
        modern_front: Answer a 2026-07-28 front with what that revision defines for the codes
            it retired (tools/call and resources/read).
        restarts: The restart notice.
        guard: The repeat guard (`--repeat-guard`).
        breaker: The circuit breaker.
        retry: Resends of a safe transient failure (`--retry`), between the breaker and the contract.
    """

    def __init__(
        self,
        *,
        contract: Contract | None = None,
        modern_front: bool = False,
        restarts: RestartNotice | None = None,
        guard: RepeatGuard | None = None,
        breaker: Breaker | None = None,
        retry: Middleware | None = None,
    ) -> None:
        self.contract = contract
        self.modern_front = modern_front
        self.restarts = restarts
        self.guard = guard
        self.breaker = breaker
        self.retry = retry

    async def __call__(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        # fastmcp's documented middleware form, entered once per message: the base class
        # builds three wrappers per message and hook. A call's steps run right here, in this
        # one coroutine (and the attempt's, below): each coroutine more is resumed every time
        # the upstream's answer wakes the call.
        if context.method != "tools/call":
            return await self._not_a_call(context, call_next)
        try:
            name = context.message.name
            restarts, guard, breaker = self.restarts, self.guard, self.breaker
            front = current_front_session() if restarts or guard or breaker else None
            if restarts is not None and front is not None:
                restarts.begin(front)
            guarded = guard.before(context, front) if guard is not None and front is not None else None
            admitted = None
            if breaker is not None and front is not None and not isinstance(guarded, ToolResult):
                admitted = breaker.admit(name, front)
            result: ToolResult
            if isinstance(guarded, ToolResult):
                result = guarded  # the repeat of a call that failed for good: no circuit is asked
            elif isinstance(admitted, ToolResult):
                result = admitted  # a circuit is open
            else:
                answer = admitted.answer if admitted is not None else None
                try:
                    if self.retry is None:
                        result = await self._attempt(context, call_next, answer)
                    else:
                        result = await self.retry.on_call_tool(
                            context, partial(self._attempt, call_next=call_next, answer=answer)
                        )
                except BaseException:
                    if admitted is not None:
                        # Cancelled or failed inside the proxy: it tells nothing of the upstream.
                        admitted.release()
                    raise
                if breaker is not None and admitted is not None:
                    breaker.record(name, result, admitted)
                if guard is not None and guarded is not None:
                    await guard.after(context, guarded, result)
            if restarts is not None and front is not None:
                result = restarts.end(front, name, result)
            return result
        except Exception as exc:
            answer_instead = modern_front_answer(context, exc) if self.modern_front else None
            if answer_instead is None:
                raise
            return answer_instead

    async def _not_a_call(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        method = context.method
        if method == "tools/list" and self.contract is not None:
            return await self.contract.on_list_tools(context, call_next)
        if method == "resources/read" and self.modern_front:
            try:
                return await call_next(context)
            except Exception as exc:
                modern_front_answer(context, exc)  # raises what a retired code becomes; a read has no other
                raise
        return await call_next(context)

    async def _attempt(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
        answer: Answer | None,
    ) -> ToolResult:
        """One sending of the call: the upstream's answer, noted for the breaker, then the contract."""
        contract = self.contract
        try:
            answered = await call_next(context)
        except Exception as exc:
            if answer is not None:
                answer.failed(exc)
            if contract is None:
                raise
            return await contract.exception(context, exc)
        if answer is not None:
            answer.heard(answered)
        return answered if contract is None else await contract.result(context, answered)
