"""The circuit breaker: an upstream (or one of its tools) that keeps failing is left alone for a while.

Without it, an upstream that fails every call still receives every call, each one costing
the agent the upstream's full timeout. The breaker follows the well-known pattern, with
three states per circuit:

- **closed** (the normal state): calls pass. A run of `failures` transient failures in a
  row, the last of them within `window` seconds of the first, opens the circuit. Any other
  answer ends the run.
- **open**: calls are answered at once, without reaching the upstream, as `transient`,
  `UPSTREAM_UNAVAILABLE`, `executionState: not_executed`, with `retryAfterSeconds` the
  cool-down left (`cooldown` seconds, or the wait the failure that opened it asked for, if
  longer).
- **half-open**, once the cool-down is over: one call is let through as a probe, the others
  are answered as while open. The probe's answer closes the circuit, or its transient failure
  opens it again for another cool-down.

There is one circuit for the upstream and one per tool. A failure to reach or hear from the
upstream (it is not running, the connection was refused or lost, it died mid-call) counts
for the upstream's circuit: every tool shares it. A transient failure the upstream answered
(a tool timed out on its own backend, a rate limit) counts for that tool's circuit only, and
shows the upstream itself is there. Which of the two a failure was is seen by `AnswerProbe`,
a small middleware inside the contract middleware, where the upstream's exceptions are
still exceptions; the breaker reads the contract results outside it.

Only tools/call is guarded; tools/list answers from the last good list while the upstream is
down (`_server.py`).
"""

from __future__ import annotations

import contextvars
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from fastmcp.server.middleware import CallNext, MiddlewareContext
from fastmcp.tools import ToolResult
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT, CallToolRequestParams

from mcp_errors._client.outcome import is_call_failure
from mcp_errors._server.classify import new_error_id
from mcp_errors._server.fastmcp import error_tool_result
from mcp_errors._shared.causes import causes
from mcp_errors._shared.contract import MAX_RETRY_AFTER_SECONDS, ErrorCategory, ExecutionState
from mcp_errors._shared.envelope import FailureDetails
from mcp_errors._shared.telemetry import BreakerScope, ProxyDecision, annotate_tool_result, record_proxy_decision
from mcp_errors._shared.words import resend_after
from mcp_errors.proxy._child import UpstreamUnavailableError
from mcp_errors.proxy._sessions import ToolCallMiddleware

__all__ = ["AnswerProbe", "BreakerMiddleware", "BreakerSettings", "Circuit"]

logger = logging.getLogger("mcp_errors.proxy")

State = Literal["closed", "open", "half_open"]
Verdict = Literal["failure", "success", "neither"]
"""What one answer tells a circuit: a transient failure, a working upstream, or nothing."""


@dataclass(frozen=True, kw_only=True)
class BreakerSettings:
    """When circuits open, and for how long.

    Args:
        failures: Transient failures in a row that open a circuit (0 turns the breaker off).
        window: Seconds within which that run must fall.
        cooldown: Seconds an open circuit answers at once before it lets a probe through.
    """

    failures: int = 5
    window: float = 30.0
    cooldown: float = 30.0

    def __post_init__(self) -> None:
        if self.failures < 0 or not (self.window > 0 and self.cooldown > 0):
            raise ValueError("breaker failures must be >= 0, window and cooldown > 0")


@dataclass
class Circuit:
    """One circuit's state machine; times are `time.monotonic()` seconds.

    Args:
        settings: Its thresholds.
        changed: Told each change of state (to log and count it).
    """

    settings: BreakerSettings
    changed: Callable[[State], None] = lambda state: None
    state: State = "closed"
    _run: deque[float] = field(default_factory=deque)
    _open_until: float = 0.0
    _probing: bool = False

    def admit(self, now: float) -> tuple[bool, float | None]:
        """Whether a call may pass now: `(is_probe, None)`, or `(False, seconds)` to answer it at once."""
        if self.state == "open":
            if now < self._open_until:
                return False, self._open_until - now
            self._become("half_open")
        if self.state == "half_open":
            if self._probing:
                return False, _PROBE_WAIT
            self._probing = True
            return True, None
        return False, None

    def release(self) -> None:
        """Give back a probe that was admitted but not sent."""
        self._probing = False

    def record(self, verdict: Verdict, *, now: float, probe: bool, retry_after: float | None = None) -> None:
        """Take in one answer of a call this circuit admitted."""
        if self.state == "open" or (self.state == "half_open" and not probe):
            return  # a call admitted before the circuit opened: the probe decides
        if self.state == "half_open":
            self._probing = False
            if verdict == "failure":
                self._open(now, retry_after)
            elif verdict == "success":
                self._run.clear()
                self._become("closed")
            return
        if verdict == "success":
            self._run.clear()
        elif verdict == "failure":
            self._run.append(now)
            while self._run and now - self._run[0] > self.settings.window:
                self._run.popleft()
            if len(self._run) >= self.settings.failures:
                self._open(now, retry_after)

    def _open(self, now: float, retry_after: float | None) -> None:
        self._run.clear()
        cooldown = max(self.settings.cooldown, min(retry_after or 0.0, MAX_RETRY_AFTER_SECONDS))
        self._open_until = now + cooldown
        self._become("open")

    def _become(self, state: State) -> None:
        self.state = state
        self.changed(state)


_PROBE_WAIT: Final = 1.0
"""What a call is told to wait while a probe is out: about one call's time."""
_MAX_TOOL_CIRCUITS: Final = 1024


@dataclass
class _Answer:
    """Whether the upstream answered one call: set by `AnswerProbe`, read by the breaker."""

    answered: bool | None = None


_answer: contextvars.ContextVar[_Answer | None] = contextvars.ContextVar("mcp_errors_proxy_answer", default=None)


class AnswerProbe(ToolCallMiddleware):
    """Notes, for the breaker, whether the upstream answered the call or could not be reached.

    Sits inside the contract middleware, which turns the upstream's exceptions into results.
    """

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        answer = _answer.get()
        try:
            result = await call_next(context)
        except Exception as exc:
            if answer is not None:
                answer.answered = _answered(exc)
            raise
        if answer is not None:
            answer.answered = True
        return result


def _answered(exc: BaseException) -> bool | None:
    """`False` for a failure to reach or hear from the upstream, `True` for its JSON-RPC error, else `None`."""
    found: MCPError | None = None
    for cause in causes(exc):
        if isinstance(cause, UpstreamUnavailableError):
            return False
        if isinstance(cause, MCPError):
            if cause.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
                return False
            found = found or cause
        elif is_call_failure(cause):
            return False  # a transport failure under fastmcp's MCPError for an unreachable upstream
    return True if found is not None else None


class BreakerMiddleware(ToolCallMiddleware):
    """Answers calls at once while a circuit is open; one circuit for the upstream, one per tool.

    Outside the contract middleware (and its resends, `--retry`): it reads contract results,
    and a call's resends count as one answer.

    Args:
        settings: The thresholds.
    """

    def __init__(self, settings: BreakerSettings) -> None:
        self.settings = settings
        self.upstream = Circuit(settings, changed=self._changed("upstream", None))
        self._tools: OrderedDict[str, Circuit] = OrderedDict()

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        now = time.monotonic()
        upstream_probe, wait = self.upstream.admit(now)
        if wait is not None:
            return self._refuse(name, "upstream", wait)
        tool = self._tools.get(name)
        tool_probe = False
        if tool is not None:
            tool_probe, wait = tool.admit(now)
            if wait is not None:
                if upstream_probe:
                    self.upstream.release()
                return self._refuse(name, "tool", wait)
        answer = _Answer()
        token = _answer.set(answer)
        try:
            result = await call_next(context)
        except BaseException:
            # Cancelled or failed inside the proxy: it tells nothing of the upstream.
            for probing, circuit in ((upstream_probe, self.upstream), (tool_probe, tool)):
                if probing and circuit is not None:
                    circuit.release()
            raise
        finally:
            _answer.reset(token)
        self._record(name, result, answer.answered, upstream_probe=upstream_probe, tool_probe=tool_probe)
        return result

    def _record(
        self, name: str, result: ToolResult, answered: bool | None, *, upstream_probe: bool, tool_probe: bool
    ) -> None:
        now = time.monotonic()
        envelope = result.structured_content if result.is_error else None
        transient = isinstance(envelope, Mapping) and envelope.get("errorCategory") == ErrorCategory.TRANSIENT.value
        retry_after = _retry_after(envelope) if transient else None
        failure: Verdict = "failure" if transient else "success"
        # The upstream's circuit: did it answer at all? The tool's: did the tool work?
        upstream: Verdict = "success" if answered else ("failure" if answered is False and transient else "neither")
        self.upstream.record(upstream, now=now, probe=upstream_probe, retry_after=retry_after)
        if not answered:
            if tool_probe:
                self._tools[name].release()
            return
        tool = self._tools.get(name)
        if tool is None:
            if not transient:
                return  # a working tool needs no circuit until it fails
            tool = self._tools[name] = Circuit(self.settings, changed=self._changed("tool", name))
            self._forget_closed()
        else:
            self._tools.move_to_end(name)
        tool.record(failure, now=now, probe=tool_probe, retry_after=retry_after)

    def _forget_closed(self) -> None:
        # Names come from the upstream's answers, not from callers; still bounded.
        for name in [name for name, circuit in self._tools.items() if circuit.state == "closed"]:
            if len(self._tools) <= _MAX_TOOL_CIRCUITS:
                return
            del self._tools[name]
        while len(self._tools) > _MAX_TOOL_CIRCUITS:
            self._tools.popitem(last=False)

    def _refuse(self, name: str, scope: BreakerScope, wait: float) -> ToolResult:
        retry_after = math.ceil(wait * 10) / 10
        what = "this server" if scope == "upstream" else f"the tool {name!r}"
        details = FailureDetails(
            message=f"Calls to {what} are paused",
            category=ErrorCategory.TRANSIENT,
            description=f"The last {self.settings.failures} calls to {what} failed for a temporary reason, so the "
            f"proxy stopped sending it calls for a while (a circuit breaker). This call was not sent, so nothing "
            f"was applied. {resend_after(retry_after)}",
            code="UPSTREAM_UNAVAILABLE",
            retry_after_seconds=retry_after,
            execution_state=ExecutionState.NOT_EXECUTED,
        )
        error_id = new_error_id()
        logger.info("tool %r: refused at once, the %s circuit is open; errorId %s", name, scope, error_id)
        record_proxy_decision("breaker_refused", scope=scope, tool=name)
        result = error_tool_result(details, error_id)
        annotate_tool_result(name, result)
        return result

    @staticmethod
    def _changed(scope: BreakerScope, tool: str | None) -> Callable[[State], None]:
        what = "the upstream" if tool is None else f"the tool {tool!r}"

        def changed(state: State) -> None:
            log = logger.warning if state == "open" else logger.info
            log("circuit breaker: %s is now %s", what, state.replace("_", "-"))
            record_proxy_decision(_DECISIONS[state], scope=scope, tool=tool)

        return changed


_DECISIONS: Final[Mapping[State, ProxyDecision]] = {
    "open": "breaker_opened",
    "half_open": "breaker_half_opened",
    "closed": "breaker_closed",
}


def _retry_after(envelope: Mapping[str, Any] | None) -> float | None:
    value = envelope.get("retryAfterSeconds") if envelope is not None else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None
