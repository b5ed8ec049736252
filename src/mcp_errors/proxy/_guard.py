"""The repeat guard (opt-in): the exact call that just failed for good is not sent again.

The most common wasted call in agent logs is the identical resend of a call that failed with
a verdict no resend can change (`validation`, `business`, `permission`: `isRetryable:
false`). With `--repeat-guard SECONDS`, such a call (the same tool, the same arguments, from
the same front session) resent within SECONDS of its failure is answered by the proxy at
once with the first answer, and a note that this exact call already failed, without reaching
the upstream. A changed call (other arguments, another tool) passes as usual, and so does
the same call once the window is over (the world may have changed: a permission granted,
a record created).

A call's identity is its tool, its arguments (compared as the idempotency keys compare them:
numbers as numbers, strings NFC) and its `_meta` keys, so that a call resent with another
idempotency key is another call; only what changes with every request (a progress token,
trace context, the protocol's own `io.modelcontextprotocol/` keys) is left out.

The guard forgets a front session's failures once that session made any other call that
succeeded and may have changed the world (a tool not annotated `readOnlyHint`): after "file
not found", a write of the file; after "no such branch", its creation. The read that failed
is then let through again, because the agent did what its answer asked for.

The answer keeps the first one's category, code, description and field errors, says
`executionState: not_executed` (this call was not sent) and carries
`_meta["mcp-errors/repeatOf"]`: `{"errorId": <the first answer's>, "secondsAgo": ...}`.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from fastmcp.server.middleware import CallNext, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp_types import CallToolRequestParams, CallToolResult

from mcp_errors._server.classify import new_error_id
from mcp_errors._server.fastmcp import error_tool_result
from mcp_errors._server.replay import fingerprint
from mcp_errors._shared.advice import seconds_in_words
from mcp_errors._shared.contract import CONTRACT_FIELDS, REPEAT_OF_META, ExecutionState, is_error_envelope
from mcp_errors._shared.envelope import CATEGORY_INFERRED, FailureDetails
from mcp_errors._shared.telemetry import annotate_tool_result, record_proxy_decision
from mcp_errors.proxy._sessions import FrontSession, ToolCallMiddleware, current_front_session, new_slot

__all__ = ["REPEAT_OF_META", "Guarded", "RepeatGuard", "RepeatGuardMiddleware"]

logger = logging.getLogger("mcp_errors.proxy")

_MAX_FAILED: Final = 256
"""Failed calls remembered per front session; the oldest are forgotten first."""


@dataclass(frozen=True)
class _Failed:
    details: FailureDetails
    error_id: str | None
    at: float


@dataclass(frozen=True)
class Guarded:
    """A call the guard let through: what to remember of it once it is answered."""

    call: tuple[str, str, str]
    failed: OrderedDict[tuple[str, str, str], _Failed]
    now: float


class RepeatGuard:
    """Answers the identical resend of a call that failed with a non-retryable verdict, within `window` seconds.

    A step of the proxy's tools/call middleware (`_calls.py`): `before` a call answers its
    repeat or lets it through, `after` remembers how it ended.

    Args:
        window: Seconds after a failure during which its identical resend is answered by the proxy.
        clock: Monotonic seconds (tests pass a fake).
    """

    def __init__(self, window: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if not window > 0:
            raise ValueError("the repeat guard's window must be > 0 seconds")
        self.window = window
        self._clock = clock
        self._slot = new_slot()

    def before(self, context: MiddlewareContext[CallToolRequestParams], front: FrontSession) -> ToolResult | Guarded:
        """The proxy's answer to a repeat of a call that failed for good, else the call let through."""
        name = context.message.name
        call = (name, fingerprint(context.message.arguments or {}), _meta_identity(_request_meta(context)))
        failed: OrderedDict[tuple[str, str, str], _Failed] = front.state.setdefault(self._slot, OrderedDict())
        now = self._clock()
        first = failed.get(call)
        if first is not None and now - first.at <= self.window:
            return self._repeat(name, first, now - first.at)
        return Guarded(call, failed, now)

    async def after(
        self, context: MiddlewareContext[CallToolRequestParams], guarded: Guarded, result: ToolResult
    ) -> None:
        """Remember `result` if it failed for good; forget the session's failures after a write that worked."""
        call, failed, now = guarded.call, guarded.failed, guarded.now
        details = _final_failure(result)
        if details is None:
            failed.pop(call, None)
            if failed and not result.is_error and not await _is_read_only(context, call[0]):
                # It may have changed what the remembered failures were about: each is worth a try.
                failed.clear()
            return
        failed[call] = _Failed(details, _error_id(result), self._clock())
        failed.move_to_end(call)
        while len(failed) > _MAX_FAILED or (failed and now - next(iter(failed.values())).at > self.window):
            failed.popitem(last=False)

    def _repeat(self, name: str, first: _Failed, ago: float) -> ToolResult:
        details = first.details
        when = "less than a second ago" if ago < 1 else f"{seconds_in_words(round(ago))} ago"
        note = (
            f"This exact call (the same tool with the same arguments) already failed {when} with this answer, so it "
            "was not sent again: change what the answer asks for before calling again."
        )
        repeat = FailureDetails(
            message="",  # the note says it
            category=details.category,
            description=f"{note} {details.description}",
            code=details.code,
            field_errors=details.field_errors,
            execution_state=ExecutionState.NOT_EXECUTED,
            extra=details.extra,
            inferred=details.inferred,
        )
        error_id = new_error_id()
        logger.info("tool %r: the identical call failed %.1f s ago; answered without the upstream", name, ago)
        record_proxy_decision("repeat_refused", tool=name)
        meta = {REPEAT_OF_META: {"errorId": first.error_id, "secondsAgo": round(ago, 1)}}
        result = error_tool_result(details=repeat, error_id=error_id, meta=meta)
        annotate_tool_result(name, result)
        return result


class RepeatGuardMiddleware(ToolCallMiddleware):
    """The repeat guard on its own, as a middleware placed anywhere in a fastmcp server's chain.

    Args:
        window: Seconds after a failure during which its identical resend is answered by the proxy.
        clock: Monotonic seconds (tests pass a fake).
    """

    def __init__(self, window: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.guard = RepeatGuard(window, clock=clock)

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        guarded = self.guard.before(context, current_front_session())
        if isinstance(guarded, ToolResult):
            return guarded
        result = await call_next(context)
        await self.guard.after(context, guarded, result)
        return result


_PER_REQUEST_META: Final = frozenset({"progressToken", "traceparent", "tracestate", "baggage"})
"""`_meta` keys that differ with every request whatever the call is: not part of its identity."""


def _meta_identity(meta: Mapping[str, Any] | None) -> str:
    """The part of a request's `_meta` that says which call it is (an idempotency key, application keys)."""
    if not meta:
        return ""
    kept = {
        key: value
        for key, value in meta.items()
        if key not in _PER_REQUEST_META and not key.startswith("io.modelcontextprotocol/")
    }
    return fingerprint(kept) if kept else ""


def _request_meta(context: MiddlewareContext[CallToolRequestParams]) -> Mapping[str, Any] | None:
    """The request's `params._meta` (fastmcp's message carries it only on some paths; the request context always)."""
    request = context.fastmcp_context.request_context if context.fastmcp_context is not None else None
    meta = request.meta if request is not None else None
    return meta if meta is not None else context.message.meta


async def _is_read_only(context: MiddlewareContext[CallToolRequestParams], name: str) -> bool:
    """Whether the upstream annotates the tool `readOnlyHint` (a tool the proxy cannot find may write)."""
    if context.fastmcp_context is None:
        return False
    try:
        tool = await context.fastmcp_context.fastmcp.get_tool(name)
    except Exception:
        return False
    return bool(tool is not None and tool.annotations is not None and tool.annotations.read_only_hint)


def _final_failure(result: ToolResult) -> FailureDetails | None:
    """A contract failure no resend can change, as details to answer its repeats with; else `None`."""
    envelope = result.structured_content
    if not (result.is_error and is_error_envelope(envelope) and envelope is not None):
        return None
    if envelope.get("isRetryable") is not False:
        return None
    from mcp_errors._client.outcome import read_result  # on first use: start-up without the client side

    outcome = read_result(CallToolResult(content=result.content, structured_content=envelope, is_error=True))
    if outcome.category is None:
        return None
    return FailureDetails(
        message=outcome.message,
        category=outcome.category,
        description=outcome.description,
        code=outcome.code,
        field_errors=outcome.field_errors,
        extra={key: value for key, value in envelope.items() if key not in CONTRACT_FIELDS},
        inferred=envelope.get(CATEGORY_INFERRED) is True,
    )


def _error_id(result: ToolResult) -> str | None:
    envelope: Any = result.structured_content
    value = envelope.get("errorId") if isinstance(envelope, Mapping) else None
    return value if isinstance(value, str) else None
