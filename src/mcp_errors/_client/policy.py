"""Act on tool outcomes: resend what is safe to resend, and say what to do with the rest.

The decision table (the reason is in `RecoveryReport.reason`):

| final outcome                                          | decision    | reason              |
|--------------------------------------------------------|-------------|---------------------|
| success or empty result                                | `done`      | -                   |
| validation                                             | `fix_input` | `validation`        |
| business                                               | `escalate`  | `business`          |
| permission (after the optional other-principal hook)   | `escalate`  | `permission`        |
| transient, resend not known to be safe                 | `escalate`  | `outcome_unknown`   |
| transient, `max_attempts` reached                      | `escalate`  | `retries_exhausted` |
| transient, no time left for a resend (deadline)       | `escalate`  | `deadline`          |
| transient, the server's retry budget is spent          | `escalate`  | `retry_budget`      |
| error whose words do not plainly say transient (prose)  | `escalate`  | `not_retryable`     |
| error of unknown category                              | `escalate`  | `unclassified`      |

A transient failure is resent only when that is safe: the error says the call did not run
(`executionState: not_executed`, declared by the server or seen by the client, never read
from prose), or tools/list annotates the tool `readOnlyHint` or
`idempotentHint`, or the call carries an idempotency key and the tool's `_meta` declares
`mcp-errors/honoursIdempotencyKey: true`. One key is made per logical operation and sent,
unchanged, on every resend in the request's `params._meta["mcp-errors/idempotencyKey"]`.

Waits: full-jitter exponential backoff (tenacity's `wait_random_exponential`), never less
than the server's `retryAfterSeconds`. The loop itself is tenacity's `AsyncRetrying`. No
resend is sent when the wait would end past the deadline, or would leave less time than the
last call took (the resend would likely be cut off).
"""

from __future__ import annotations

import datetime as _dt
import enum
import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NamedTuple

import anyio
from mcp_types import Tool
from opentelemetry.trace import Span
from tenacity import AsyncRetrying, RetryCallState, retry_if_result, wait_random_exponential
from tenacity.wait import wait_base

from mcp_errors._client.adapter import CallFn, FindToolFn, adapt_client, index_tools
from mcp_errors._client.budget import RetryBudget
from mcp_errors._client.outcome import ToolOutcome, is_call_failure, read_result
from mcp_errors._client.task_polling import watching_task
from mcp_errors._shared.config import is_testing
from mcp_errors._shared.contract import (
    HONOURS_IDEMPOTENCY_META,
    IDEMPOTENCY_KEY_META,
    REPLAYED_META,
    ErrorCategory,
    FieldError,
)
from mcp_errors._shared.telemetry import (
    enabled as telemetry_enabled,
)
from mcp_errors._shared.telemetry import (
    inject_trace_context,
    record_attempt,
    record_budget_refusal,
    record_decision,
    recovery_span,
)

__all__ = [
    "Attempt",
    "CallFn",
    "Decision",
    "EscalationReason",
    "RecoveryPolicy",
    "RecoveryReport",
    "call_tool_with_recovery",
]

logger = logging.getLogger("mcp_errors.recovery")

PermissionHook = Callable[[str, ToolOutcome], Awaitable[object | None]]
"""`async (tool_name, outcome) -> client | CallFn | None`: another principal to try.

Its calls count towards the same `max_attempts` as the first principal's; it always gets
at least one."""

EscalationReason = Literal[
    "validation",
    "business",
    "permission",
    "outcome_unknown",
    "retries_exhausted",
    "deadline",
    "retry_budget",
    "not_retryable",
    "unclassified",
]


class Decision(enum.StrEnum):
    """What the caller (or the model) should do with the final outcome."""

    DONE = "done"
    """The call succeeded, possibly with an empty result: use it, do not resend."""
    FIX_INPUT = "fix_input"
    """The arguments were rejected: correct them (see `RecoveryReport.field_errors`) and call again."""
    ESCALATE = "escalate"
    """Resending cannot help or is not safe: take another path or hand over to a human."""


@dataclass(frozen=True, kw_only=True)
class RecoveryPolicy:
    """How `call_tool_with_recovery` resends transient failures.

    Every field is keyword-only. A policy can be shared by many calls and servers; it keeps
    one `RetryBudget` per server.

    Args:
        max_attempts: Calls per logical operation, the first included, and those made as
            the permission hook's other principal too (which always gets at least one).
        deadline: Seconds for the whole operation, waits included. A wait that would end
            past it (for example a `retryAfterSeconds` too long), or leave less time than
            the last call took, escalates at once.
        initial_wait: Scale of the first backoff window (full jitter: uniform in
            `[0, initial_wait * 2**(n-1)]`, capped at `max_wait`).
        max_wait: Cap of the backoff window; a server's `retryAfterSeconds` may exceed it.
        attempt_timeout: Seconds one call may take before it counts as timed out (its
            outcome is then unknown); also bounded by the time left to the deadline.
        trust_annotations: Treat `readOnlyHint`/`idempotentHint` from tools/list as
            making a resend safe. Annotations are hints: disable for untrusted servers.
        send_idempotency_key: Send one key per logical operation in the request `_meta`.
        on_permission_denied: Optional `async (tool_name, outcome) -> client | None`
            returning another principal's client (or call function) to try; its calls
            count towards `max_attempts` (at least one is made).
        budget_factory: Builds the `RetryBudget` for each server.

    Raises:
        ValueError: If `max_attempts < 1` or a duration is negative.

    Example:
        ```python
        from mcp_errors import RecoveryPolicy

        policy = RecoveryPolicy(max_attempts=4, deadline=10.0)
        ```
    """

    max_attempts: int = 3
    deadline: float = 30.0
    initial_wait: float = 0.5
    max_wait: float = 20.0
    attempt_timeout: float | None = None
    trust_annotations: bool = True
    send_idempotency_key: bool = True
    on_permission_denied: PermissionHook | None = None
    budget_factory: Callable[[], RetryBudget] = RetryBudget
    _budgets: dict[str, RetryBudget] = field(default_factory=dict[str, RetryBudget], repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if min(self.deadline, self.initial_wait, self.max_wait) < 0 or (
            self.attempt_timeout is not None and self.attempt_timeout <= 0
        ):
            raise ValueError("durations must not be negative")

    def budget_for(self, server: str) -> RetryBudget:
        """The retry budget this policy keeps for `server` (made on first use)."""
        budget = self._budgets.get(server)
        if budget is None:
            budget = self._budgets[server] = self.budget_factory()
        return budget

    def reset_budgets(self) -> None:
        """Forget every server's retry budget: each starts full again on its next call."""
        self._budgets.clear()


DEFAULT_POLICY: Final = RecoveryPolicy()
"""The policy of calls made without one. A policy keeps the retry budget of each server, so
sharing one is what makes a full outage cost about one call per request."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One call made for a logical operation."""

    number: int
    """1 for the first call."""
    started_at: _dt.datetime
    """Wall-clock time the call was sent (UTC)."""
    elapsed: float
    """Seconds since the logical operation began (waits skipped in testing mode count)."""
    wait_before: float
    """Seconds waited before this call (0 for the first)."""
    outcome: ToolOutcome
    principal_changed: bool = False
    """Whether this call went through the permission hook's other principal."""
    duration: float = 0.0
    """Seconds the call took, until its answer or its failure."""


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What `call_tool_with_recovery` did and what the caller should do next."""

    tool: str
    outcome: ToolOutcome
    """The final outcome."""
    decision: Decision
    attempts: tuple[Attempt, ...]
    reason: EscalationReason | None = None
    """Why the decision is `fix_input` or `escalate`; `None` when done."""
    idempotency_key: str | None = None
    """The key sent with every call of this operation; reuse it to resume the operation."""

    @property
    def field_errors(self) -> tuple[FieldError, ...]:
        """The bad arguments, for `Decision.FIX_INPUT`."""
        return self.outcome.field_errors

    @property
    def total_wait(self) -> float:
        """Seconds spent waiting between calls."""
        return sum(attempt.wait_before for attempt in self.attempts)


@dataclass(frozen=True, slots=True)
class _ToolInfo:
    read_only: bool = False
    idempotent: bool = False
    honours_key: bool = False
    listed: bool = False
    """Whether the server listed the tool (else its name came from the caller alone)."""


def _tool_info(tool: Tool) -> _ToolInfo:
    annotations = tool.annotations
    return _ToolInfo(
        listed=True,
        read_only=bool(annotations and annotations.read_only_hint),
        idempotent=bool(annotations and annotations.idempotent_hint),
        honours_key=(tool.meta or {}).get(HONOURS_IDEMPOTENCY_META) is True,
    )


async def call_tool_with_recovery(
    client: object,
    name: str,
    arguments: Mapping[str, Any] | None = None,
    *,
    policy: RecoveryPolicy | None = None,
    budget: RetryBudget | None = None,
    server: str | None = None,
    idempotency_key: str | None = None,
    tools: Sequence[Tool] | None = None,
) -> RecoveryReport:
    """Call a tool, resend safe transient failures, and decide what to do with the result.

    Args:
        client: A connected `mcp.Client`, an initialised `mcp.ClientSession` (from
            `stdio_client` or `streamable_http_client`), a connected fastmcp `Client`, or
            any `async (name, arguments, meta) -> CallToolResult` function.
        name: The tool to call.
        arguments: Its arguments.
        policy: Attempts, deadline, waits. Omitted: one process-wide default policy, so
            that calls without a policy still share each server's retry budget.
        budget: The retry budget to use instead of the policy's one for this server.
        server: Name that selects the policy's budget; defaults to the server's name
            from the connection. Plain functions all share the budget `"default"`: give
            each server its own name here.
        idempotency_key: Resume a logical operation under an existing key; a new key
            is made when omitted.
        tools: The server's tool list, when `client` is a function. A client's list is
            read on the first failure whose resend safety depends on it, then kept for the
            connection and read again after `notifications/tools/list_changed`.

    Returns:
        The report: final `outcome`, every `attempt`, the `decision` and its `reason`.

    Raises:
        TypeError: If `client` is none of the accepted kinds.

    Example:
        ```python
        import anyio
        from mcp import Client
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import Decision, RecoveryPolicy, call_tool_with_recovery, install

        server = install(MCPServer("demo"))

        @server.tool()
        def ping() -> str:
            return "pong"

        async def main() -> None:
            async with Client(server) as client:
                report = await call_tool_with_recovery(client, "ping", {}, policy=RecoveryPolicy(max_attempts=2))
            assert report.decision is Decision.DONE

        anyio.run(main)
        ```
    """
    policy = policy or DEFAULT_POLICY
    adapter = adapt_client(client)
    info_source = _ToolInfoSource(tools, adapter.find_tool)
    server_name = server or adapter.server_name
    chosen_budget = budget or policy.budget_for(server_name)
    key = idempotency_key or (uuid.uuid4().hex if policy.send_idempotency_key else None)
    run = _RecoveryRun(
        policy=policy, name=name, arguments=dict(arguments or {}), budget=chosen_budget, key=key, server=server_name
    )
    return await run.execute(adapter.call, info_source)


class _ToolInfoSource:
    """What tools/list says of the called tool: looked up only when a decision needs it."""

    def __init__(self, tools: Sequence[Tool] | None, find_tool: FindToolFn | None) -> None:
        self._tools = tools
        self._find_tool = find_tool

    async def get(self, name: str) -> _ToolInfo:
        if self._tools is not None:
            tool = index_tools(self._tools).get(name)
        elif self._find_tool is not None:
            try:
                tool = await self._find_tool(name)
            except Exception as exc:
                if not is_call_failure(exc):
                    raise
                return _ToolInfo()  # unknown annotations: nothing is assumed safe
        else:
            tool = None
        return _ToolInfo() if tool is None else _tool_info(tool)


class _WaitAtLeastRetryAfter(wait_base):
    """tenacity's full-jitter wait, raised to the server's `retryAfterSeconds`."""

    def __init__(self, jitter: wait_base) -> None:
        self.jitter = jitter

    def __call__(self, retry_state: RetryCallState) -> float:
        floor = 0.0
        if retry_state.outcome is not None and not retry_state.outcome.failed:
            outcome = retry_state.outcome.result()
            if isinstance(outcome, ToolOutcome) and outcome.retry_after_seconds is not None:
                floor = outcome.retry_after_seconds
        return max(floor, self.jitter(retry_state))


_FINAL_BY_CATEGORY: Final[Mapping[ErrorCategory, tuple[Decision, EscalationReason]]] = {
    ErrorCategory.VALIDATION: (Decision.FIX_INPUT, "validation"),
    ErrorCategory.BUSINESS: (Decision.ESCALATE, "business"),
    ErrorCategory.PERMISSION: (Decision.ESCALATE, "permission"),
}


class _RecoveryRun:
    """One logical operation: its clock, key, budget and attempts."""

    def __init__(
        self,
        *,
        policy: RecoveryPolicy,
        name: str,
        arguments: dict[str, Any],
        budget: RetryBudget,
        key: str | None,
        server: str,
    ) -> None:
        self.policy = policy
        self.server = server
        self.name = name
        self.arguments = arguments
        self.budget = budget
        self.key = key
        self.attempts: list[Attempt] = []
        self._start = time.monotonic()
        self._skipped = 0.0
        self._pending_wait = 0.0
        self._principal_changed = False
        self._info: _ToolInfo | None = None

    def elapsed(self) -> float:
        return time.monotonic() - self._start + self._skipped

    async def execute(self, call: CallFn, info: _ToolInfoSource) -> RecoveryReport:
        with recovery_span(self.name, server=self.server, idempotency_key=self.key) as span:
            outcome, stopped = await self._loop(call, info)
            hook = self.policy.on_permission_denied
            if outcome.category is ErrorCategory.PERMISSION and hook is not None:
                other = await hook(self.name, outcome)
                if other is not None:
                    self._principal_changed = True
                    outcome, stopped = await self._loop(adapt_client(other).call, info)
            decision, reason = _decide(outcome, stopped)
            self._log(outcome, decision.value, wait=None, reason=reason)
            report = RecoveryReport(
                tool=self.name,
                outcome=outcome,
                decision=decision,
                attempts=tuple(self.attempts),
                reason=reason,
                idempotency_key=self.key,
            )
            if telemetry_enabled():
                # A metric names only tools the server listed: any other name came from the
                # caller, and would be a new time series per invented name.
                listed = (self._info if self._info is not None else await self._tool_info(info)).listed
                _record(span, report, server=self.server, listed=listed)
        return report

    async def _loop(self, call: CallFn, info: _ToolInfoSource) -> tuple[ToolOutcome, EscalationReason | None]:
        """Resend while that is safe and allowed: the last outcome, and why resending stopped."""
        policy = self.policy
        retrying = AsyncRetrying(
            retry=retry_if_result(lambda outcome: self._resend_refusal(outcome) is None),
            wait=_WaitAtLeastRetryAfter(wait_random_exponential(multiplier=policy.initial_wait, max=policy.max_wait)),
            stop=lambda state: self._stop_reason(state) is not None,
            sleep=self._sleep,
            before_sleep=self._before_sleep,
            retry_error_callback=self._stopped,
            reraise=True,
        )
        result: ToolOutcome | _Stopped = await retrying(self._attempt, call, info)
        if isinstance(result, _Stopped):
            return result.outcome, result.reason
        return result, self._resend_refusal(result)

    async def _attempt(self, call: CallFn, info: _ToolInfoSource) -> ToolOutcome:
        started = _dt.datetime.now(_dt.UTC)
        at = self.elapsed()
        wait_before, self._pending_wait = self._pending_wait, 0.0
        limit = self.policy.deadline - at
        if self.policy.attempt_timeout is not None:
            limit = min(limit, self.policy.attempt_timeout)
        meta = {IDEMPOTENCY_KEY_META: self.key} if self.key is not None else {}
        inject_trace_context(meta)
        timeout = max(limit, 0.0) if math.isfinite(limit) else None
        # A call the server runs as a task is polled to the same limit (`TaskPolling`), and
        # its task cancelled there: the watch says what it saw when the limit cut the call.
        with watching_task(None if timeout is None else anyio.current_time() + timeout) as task:
            limit_scope: anyio.CancelScope | None = None
            try:
                with anyio.fail_after(timeout) as limit_scope:
                    answer = await call(self.name, self.arguments, meta or None)
                    outcome = read_result(answer, arguments=self.arguments)
            except Exception as exc:
                if not is_call_failure(exc):
                    raise
                # Only the limit running out is a deadline: any other failure says what it was.
                cut = limit_scope is not None and limit_scope.cancelled_caught
                outcome = read_result(task.stopped_result() if task.running and cut else exc)
        duration = self.elapsed() - at
        if outcome.category is ErrorCategory.TRANSIENT:
            self.budget.record_failure()
            if outcome.is_retryable and not _known_not_run(outcome) and self._info is None:
                self._info = await self._tool_info(info)
        elif outcome.ok:
            self.budget.record_success()
        self.attempts.append(
            Attempt(
                number=len(self.attempts) + 1,
                started_at=started,
                elapsed=at,
                wait_before=wait_before,
                outcome=outcome,
                principal_changed=self._principal_changed,
                duration=duration,
            )
        )
        return outcome

    async def _tool_info(self, info: _ToolInfoSource) -> _ToolInfo:
        # The listing counts against the deadline too: an overloaded server is slow to list.
        with anyio.move_on_after(max(self.policy.deadline - self.elapsed(), 0.0)):
            return await info.get(self.name)
        return _ToolInfo()  # not in time: nothing is assumed safe

    def _resend_refusal(self, outcome: ToolOutcome) -> EscalationReason | None:
        """Why `outcome` must not be resent, or `None` when a resend is safe."""
        if outcome.category is not ErrorCategory.TRANSIENT or not outcome.is_retryable:
            return "not_retryable"
        if _known_not_run(outcome):
            return None
        if outcome.result is not None and (outcome.result.meta or {}).get(REPLAYED_META) is True:
            # The server answered from its idempotency store: every resend with this key
            # gets this same answer back.
            return "outcome_unknown"
        if outcome.task_id is not None and any(
            attempt.outcome.task_id == outcome.task_id for attempt in self.attempts[:-1]
        ):
            # A resend got the task an earlier call started: the server keeps it for the key.
            return "outcome_unknown"
        info = self._info or _ToolInfo()
        if self.policy.trust_annotations and (info.read_only or info.idempotent):
            return None
        if self.key is not None and info.honours_key:
            return None
        return "outcome_unknown"

    def _stop_reason(self, state: RetryCallState) -> EscalationReason | None:
        """Why no further resend is allowed after this attempt, or `None` to resend."""
        # Every call of the logical operation counts, the other principal's too (its loop's
        # own attempt numbers start again at 1); its first call is made regardless.
        if len(self.attempts) >= self.policy.max_attempts:
            return "retries_exhausted"
        # As of the attempt's end, so that asking twice about one attempt gives one answer.
        at = (state.outcome_timestamp or state.start_time) - self._start + self._skipped
        left = self.policy.deadline - at - state.upcoming_sleep
        # A resend given less time than the last call took would likely be cut off, and a
        # write refused as "not executed" would then end "outcome unknown", applied or not.
        if left <= 0 or left < self.attempts[-1].duration:
            return "deadline"
        if not self.budget.allows_retry():
            return "retry_budget"
        return None

    def _stopped(self, state: RetryCallState) -> _Stopped:
        # tenacity stops only after an attempt, and `_attempt` returns every failure as an
        # outcome, so there is always a result here.
        assert state.outcome is not None
        return _Stopped(state.outcome.result(), self._stop_reason(state))

    def _before_sleep(self, state: RetryCallState) -> None:
        if state.outcome is not None and not state.outcome.failed:
            self._log(state.outcome.result(), "retry", wait=state.upcoming_sleep, reason=None)

    async def _sleep(self, seconds: float) -> None:
        self._pending_wait = seconds
        if is_testing():
            self._skipped += seconds
        else:
            await anyio.sleep(seconds)

    def _log(self, outcome: ToolOutcome, decision: str, *, wait: float | None, reason: str | None) -> None:
        attempt = len(self.attempts)
        logger.info(
            "tool %r attempt %d: %s -> %s",
            self.name,
            attempt,
            outcome.category.value if outcome.category else outcome.kind,
            decision,
            extra={
                "tool": self.name,
                "attempt": attempt,
                "category": outcome.category.value if outcome.category else None,
                "outcome_kind": outcome.kind,
                "wait": wait,
                "decision": decision,
                "reason": reason,
                "idempotency_key": self.key,
            },
        )


class _Stopped(NamedTuple):
    """The loop's result when it stopped resending a failure it would otherwise resend."""

    outcome: ToolOutcome
    reason: EscalationReason | None


def _decide(outcome: ToolOutcome, stopped: EscalationReason | None) -> tuple[Decision, EscalationReason | None]:
    """The decision on the final outcome; `stopped` is why the loop stopped resending it."""
    if outcome.ok:
        return Decision.DONE, None
    if outcome.category is not None and outcome.category in _FINAL_BY_CATEGORY:
        return _FINAL_BY_CATEGORY[outcome.category]
    if outcome.category is ErrorCategory.TRANSIENT:
        if not outcome.is_retryable:
            return Decision.ESCALATE, "not_retryable"
        return Decision.ESCALATE, stopped or "retries_exhausted"
    return Decision.ESCALATE, "unclassified"


def _record(span: Span, report: RecoveryReport, *, server: str, listed: bool) -> None:
    """The logical call's telemetry: an event per attempt, the decision, the retry metrics."""
    last = len(report.attempts)
    for attempt in report.attempts:
        outcome = attempt.outcome
        record_attempt(
            span,
            number=attempt.number,
            at=attempt.started_at,
            outcome=outcome.kind,
            category=outcome.category.value if outcome.category is not None else None,
            code=outcome.code,
            wait_before=attempt.wait_before,
            stop_reason=report.reason if attempt.number == last else None,
        )
    final = report.outcome.category
    record_decision(
        span,
        tool=report.tool,
        listed=listed,
        decision=report.decision.value,
        reason=report.reason,
        category=final.value if final is not None else None,
        code=report.outcome.code,
        attempts=last,
        total_wait=report.total_wait,
    )
    if report.reason == "retry_budget":
        record_budget_refusal(tool=report.tool, listed=listed, server=server)


def _known_not_run(outcome: ToolOutcome) -> bool:
    """Whether the call is known not to have run, so that resending it cannot apply it twice.

    A server's declaration (its envelope) and what the client saw itself (a refused
    connection) are known; an execution state read from prose, by this reader or by a proxy
    (`categoryInferred`), is a guess, and a write is not resent on a guess.
    """
    return (
        outcome.not_executed
        and outcome.source != "text"
        and not (outcome.source == "envelope" and outcome.category_inferred)
    )
