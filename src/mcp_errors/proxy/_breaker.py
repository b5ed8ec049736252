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
  opens it again for another cool-down. A probe that has not answered within `probe_timeout`
  seconds (the cool-down by default) counts as failed: the circuit opens again, and the
  first call after that cool-down is the next probe. A hung probe (its caller gone, the
  cancel unable to reach it) cannot keep everyone out.

There is one circuit for the upstream and one per tool. A failure to reach or hear from the
upstream (it is not running, the connection was refused or lost, it died mid-call) counts
for the upstream's circuit: every tool shares it. A transient failure the upstream answered
(a tool timed out on its own backend, a rate limit) counts for that tool's circuit only, and
shows the upstream itself is there. Which of the two a failure was is noted (`Answer`) inside
the contract, where the upstream's exceptions are still exceptions; the breaker reads the
contract results outside it.

What counts: a transient failure the proxy *knows* to be one: a failure to reach the
upstream, a code, status or category the upstream declared, a rules file's verdict. A
category inferred from prose (`categoryInferred`) and a success that `--disguised-failures`
read as a failure never count: a file's text or a server's wording is not evidence enough to
refuse other callers. A transient failure whose words name its caller (a per-user rate
limit or quota: `names_its_caller`) counts for that caller alone: a circuit per front session
and tool, which refuses only that caller; the tool's circuit, shared by every caller, does not
see it.

Only tools/call is guarded; tools/list answers from the last good list while the upstream is
down (`_server.py`).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from fastmcp.tools import ToolResult
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent

from mcp_errors._server.classify import new_error_id
from mcp_errors._server.fastmcp import error_tool_result
from mcp_errors._shared.advice import resend_after
from mcp_errors._shared.causes import causes
from mcp_errors._shared.contract import ErrorCategory, ExecutionState
from mcp_errors._shared.envelope import CATEGORY_INFERRED, FailureDetails
from mcp_errors._shared.signals import JSONRPC_CODES
from mcp_errors._shared.telemetry import BreakerScope, ProxyDecision, annotate_tool_result, record_proxy_decision
from mcp_errors._shared.waits import capped_wait
from mcp_errors.proxy._child import UpstreamUnavailableError
from mcp_errors.proxy._sessions import FrontSession, new_slot

__all__ = ["Admitted", "Answer", "Breaker", "BreakerSettings", "Circuit"]

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
        probe_timeout: Seconds a probe may take before it counts as failed (`None`: the cool-down).
    """

    failures: int = 5
    window: float = 30.0
    cooldown: float = 30.0
    probe_timeout: float | None = None

    def __post_init__(self) -> None:
        if self.failures < 0 or not (self.window > 0 and self.cooldown > 0):
            raise ValueError("breaker failures must be >= 0, window and cooldown > 0")
        if self.probe_timeout is not None and not self.probe_timeout > 0:
            raise ValueError("the breaker's probe timeout must be > 0 seconds")

    @property
    def probe_seconds(self) -> float:
        """How long a probe may take before it counts as failed."""
        return self.cooldown if self.probe_timeout is None else self.probe_timeout


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
    _probe_until: float = 0.0
    probe_ticket: int = 0
    """Counts the probes let through; the one out is the last (an older probe's late answer is not its)."""

    def admit(self, now: float) -> tuple[bool, float | None]:
        """Whether a call may pass now: `(is_probe, None)`, or `(False, seconds)` to answer it at once.

        A probe's ticket (to pass to `record` and `release`) is `probe_ticket` right after.
        """
        if self.state == "half_open" and self._probing and now >= self._probe_until:
            # The probe never answered in its time: the upstream did not show it works.
            logger.warning("circuit breaker: a probe did not answer within %g s; counted as failed", self._probe_s)
            self._probing = False
            self._open(self._probe_until, None)
        if self.state == "open":
            if now < self._open_until:
                return False, self._open_until - now
            self._become("half_open")
        if self.state == "half_open":
            if self._probing:
                return False, max(0.1, min(_PROBE_WAIT, self._probe_until - now))
            self._probing = True
            self._probe_until = now + self._probe_s
            self.probe_ticket += 1
            return True, None
        return False, None

    def release(self, ticket: int | None = None) -> None:
        """Give back a probe that was admitted but not sent (or whose answer tells nothing)."""
        if ticket is None or ticket == self.probe_ticket:
            self._probing = False

    def record(
        self,
        verdict: Verdict,
        *,
        now: float,
        probe: bool,
        retry_after: float | None = None,
        ticket: int | None = None,
    ) -> None:
        """Take in one answer of a call this circuit admitted (a probe's with its `ticket`)."""
        if probe and ticket is not None and (ticket != self.probe_ticket or not self._probing):
            return  # a probe given up on: the circuit already decided without it
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

    @property
    def _probe_s(self) -> float:
        return self.settings.probe_seconds

    def _open(self, now: float, retry_after: float | None) -> None:
        self._run.clear()
        cooldown = max(self.settings.cooldown, capped_wait(retry_after or 0.0))
        self._open_until = now + cooldown
        self._become("open")

    def _become(self, state: State) -> None:
        self.state = state
        self.changed(state)


_TRANSIENT: Final = ErrorCategory.TRANSIENT.value
"""A transient failure's `errorCategory` (an enum's `value` is a property: read once, not per call)."""
_PROBE_WAIT: Final = 1.0
"""What a call is told to wait while a probe is out: about one call's time."""
_MAX_TOOL_CIRCUITS: Final = 1024


@dataclass
class Answer:
    """What the upstream answered one call, noted where its exceptions are still exceptions.

    The proxy's tools/call middleware (`_calls.py`) notes it inside the contract, which turns
    the upstream's exceptions into results (and may read a success as a disguised failure);
    the breaker reads it with the contract's result.
    """

    answered: bool | None = None
    """`True` it answered, `False` it could not be reached or heard from, `None` nothing known."""
    succeeded: bool = False
    """Its own answer was a success (a failure the proxy then read in it was disguised)."""
    _said: str | ToolResult = ""
    """The words of its failed answer, or the failed result to read them from (`said`)."""

    @property
    def said(self) -> str:
        """The words of its failed answer (capped), for whom they name."""
        # Read only for a transient failure the proxy knows of (`Breaker.record`): a failed
        # result's words are not joined (and its structuredContent not dumped) on every error.
        said = self._said
        return said if isinstance(said, str) else _words_of(said)

    def heard(self, result: ToolResult) -> None:
        """The upstream answered `result` (the contract makes new results, never changes this one)."""
        self.answered = True
        self.succeeded = not result.is_error
        if result.is_error:
            self._said = result

    def failed(self, exc: BaseException) -> None:
        """The call raised `exc`: a failure to reach the upstream, its JSON-RPC error, or neither."""
        self.answered = _answered(exc)
        rpc = next((cause for cause in causes(exc) if isinstance(cause, MCPError)), None)
        self._said = rpc.error.message[:_MAX_SAID_CHARS] if rpc is not None else ""


_MAX_SAID_CHARS: Final = 4096


def _words_of(result: ToolResult) -> str:
    text = " ".join(block.text for block in result.content if isinstance(block, TextContent))[:_MAX_SAID_CHARS]
    if result.structured_content is not None and len(text) < _MAX_SAID_CHARS:
        text += " " + json.dumps(result.structured_content, ensure_ascii=False, default=str)[:_MAX_SAID_CHARS]
    return text


def _names_its_caller(said: str) -> bool:
    """Whether a transient failure's words name the caller's own limit or quota (`names_its_caller`)."""
    # The failure words load with the classification chain, at the first failure: not at start-up.
    from mcp_errors._shared.failure_words import names_its_caller

    return names_its_caller(said)


def _answered(exc: BaseException) -> bool | None:
    """`False` for a failure to reach or hear from the upstream, `True` for its JSON-RPC error, else `None`."""
    from mcp_errors._client.outcome import is_call_failure  # on first use: start-up without the client side

    found: MCPError | None = None
    for cause in causes(exc):
        if isinstance(cause, UpstreamUnavailableError):
            return False
        if isinstance(cause, MCPError):
            signal = JSONRPC_CODES.get(cause.code)
            if signal is not None and not signal.answered:
                return False
            found = found or cause
        elif is_call_failure(cause):
            return False  # a transport failure under fastmcp's MCPError for an unreachable upstream
    return True if found is not None else None


@dataclass
class Admitted:
    """A call the breaker let through: the circuits it probes (by ticket), its caller's circuits, its answer."""

    mine: OrderedDict[str, Circuit]
    probes: list[tuple[Circuit, int]] = field(default_factory=list)
    answer: Answer = field(default_factory=Answer)

    def ticket(self, circuit: Circuit | None) -> int | None:
        for probed, ticket in self.probes:  # most calls probe nothing
            if probed is circuit:
                return ticket
        return None

    def release(self) -> None:
        """Give back its probes: the call was not sent, or its end tells nothing of the upstream."""
        for circuit, ticket in self.probes:
            circuit.release(ticket)


class Breaker:
    """Answers calls at once while a circuit is open: one for the upstream, one per tool, one per caller and tool.

    A step of the proxy's tools/call middleware (`_calls.py`), outside the contract (and its
    resends, `--retry`): `admit` before the call, `record` with its contract result, so a
    call's resends count as one answer; `Admitted.release` when it ends otherwise.

    Args:
        settings: The thresholds.
    """

    def __init__(self, settings: BreakerSettings) -> None:
        self.settings = settings
        self.upstream = Circuit(settings, changed=self._changed("upstream", None))
        self._tools: OrderedDict[str, Circuit] = OrderedDict()
        self._slot = new_slot()  # each front session's own circuits, by tool

    def admit(self, name: str, front: FrontSession) -> ToolResult | Admitted:
        """The proxy's answer while a circuit of the call is open, else the call let through."""
        now = time.monotonic()
        mine: OrderedDict[str, Circuit] | None = front.state.get(self._slot)
        if mine is None:
            mine = front.state[self._slot] = OrderedDict()
        admitted = Admitted(mine)
        circuits: tuple[tuple[BreakerScope, Circuit | None], ...] = (
            ("upstream", self.upstream),
            ("tool", self._tools.get(name)),
            ("caller", mine.get(name)),
        )
        for scope, circuit in circuits:
            if circuit is None or circuit.state == "closed":
                continue  # a closed circuit lets every call through, none as a probe
            probe, wait = circuit.admit(now)
            if wait is not None:
                admitted.release()
                return self._refuse(name, scope, wait)
            if probe:
                admitted.probes.append((circuit, circuit.probe_ticket))
        return admitted

    def record(self, name: str, result: ToolResult, admitted: Admitted) -> None:
        """Take in the contract result of a call `admit` let through."""
        answer, mine = admitted.answer, admitted.mine
        now = time.monotonic()
        envelope = result.structured_content if result.is_error else None
        transient = isinstance(envelope, Mapping) and envelope.get("errorCategory") == _TRANSIENT
        retry_after = _retry_after(envelope) if transient else None
        # Only what the proxy knows counts: not a category read from prose, nor a success read as a failure.
        known = transient and not answer.succeeded and not (envelope or {}).get(CATEGORY_INFERRED)
        callers_own = known and answer.answered is True and _names_its_caller(answer.said)
        # The upstream's circuit: did it answer at all?
        upstream: Verdict = (
            "success" if answer.answered else ("failure" if answer.answered is False and known else "neither")
        )
        ticket = admitted.ticket(self.upstream)
        self.upstream.record(upstream, now=now, probe=ticket is not None, retry_after=retry_after, ticket=ticket)
        if not answer.answered:
            admitted.release()  # the tool's and the caller's probes learnt nothing
            return
        # The tool's circuit (every caller's): did the tool work? The caller's: did it work for them?
        worked: Verdict = "neither" if transient or (result.is_error and answer.succeeded) else "success"
        self._take(self._tools, name, "failure" if known and not callers_own else worked, admitted, now, retry_after)
        self._take(mine, name, "failure" if callers_own else worked, admitted, now, retry_after, caller=True)

    def _take(
        self,
        circuits: OrderedDict[str, Circuit],
        name: str,
        verdict: Verdict,
        admitted: Admitted,
        now: float,
        retry_after: float | None,
        *,
        caller: bool = False,
    ) -> None:
        circuit = circuits.get(name)
        if circuit is None:
            if verdict != "failure":
                return  # a working tool needs no circuit until it fails
            changed = self._changed("caller" if caller else "tool", name)
            circuit = circuits[name] = Circuit(self.settings, changed=changed)
            _forget_closed(circuits)
        else:
            circuits.move_to_end(name)
        ticket = admitted.ticket(circuit)
        circuit.record(verdict, now=now, probe=ticket is not None, retry_after=retry_after, ticket=ticket)

    def _refuse(self, name: str, scope: BreakerScope, wait: float) -> ToolResult:
        retry_after = math.ceil(wait * 10) / 10
        what = "this server" if scope == "upstream" else f"the tool {name!r}"
        failures = self.settings.failures
        if scope == "caller":
            why = (
                f"Your last {failures} calls to {what} were refused by a limit on your own calls (a per-user rate "
                "limit or quota), so the proxy stopped sending your calls to it for a while (a circuit breaker)."
            )
        else:
            why = (
                f"{failures} calls in a row to {what}, from any of the proxy's callers, failed for a temporary "
                "reason, so the proxy stopped sending it calls for a while (a circuit breaker)."
            )
        details = FailureDetails(
            message=f"Calls to {what} are paused",
            category=ErrorCategory.TRANSIENT,
            description=f"{why} This call was not sent, so nothing was applied. {resend_after(retry_after)}",
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
        if scope == "caller":
            what += " for one caller"

        def changed(state: State) -> None:
            log = logger.warning if state == "open" and scope != "caller" else logger.info
            log("circuit breaker: %s is now %s", what, state.replace("_", "-"))
            record_proxy_decision(_DECISIONS[state], scope=scope, tool=tool)

        return changed


def _forget_closed(circuits: OrderedDict[str, Circuit]) -> None:
    # Names come from the upstream's answers, not from callers; still bounded.
    for name in [name for name, circuit in circuits.items() if circuit.state == "closed"]:
        if len(circuits) <= _MAX_TOOL_CIRCUITS:
            return
        del circuits[name]
    while len(circuits) > _MAX_TOOL_CIRCUITS:
        circuits.popitem(last=False)


_DECISIONS: Final[Mapping[State, ProxyDecision]] = {
    "open": "breaker_opened",
    "half_open": "breaker_half_opened",
    "closed": "breaker_closed",
}


def _retry_after(envelope: Mapping[str, Any] | None) -> float | None:
    value = envelope.get("retryAfterSeconds") if envelope is not None else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else None
