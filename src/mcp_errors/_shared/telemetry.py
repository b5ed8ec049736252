"""OpenTelemetry signals: what each tool result was, and what the client side did about it.

Only the OpenTelemetry API is used (the `mcp` SDK already depends on it), so with no SDK
configured every function here costs a no-op call. Configure an SDK (a `TracerProvider`
and a `MeterProvider`) and the signals below appear; `docs/observability.md` lists each
one with its unit and attributes. Every name is under this package's own prefix: the MCP
semantic conventions (in development) own `mcp.*` and `gen_ai.*`, and define nothing for
categories, retries or recovery decisions.

Server side (`install`, the proxy, replay): the error facts of a result are set as
attributes on the SDK's current `tools/call` span, in which the tool runs (no second span),
and one counter counts every result, successes included. Client side
(`call_tool_with_recovery`, `gather_partial`): one span per logical call, an event per
attempt, the decision and its reason, and the retry histograms of gRPC's proposal A96.

Metric attributes come from closed sets, so that no caller and no upstream can make a new
time series per value: a tool the server has (a name it does not know is `(unknown)`), an
outcome, one of the four categories, a code this project writes or a server's own code (an
upstream's code through the proxy, or the 101st code a server's tools write, is `other`), a
decision. Never an errorId, an idempotency key or an argument value (those go on spans only).
"""

from __future__ import annotations

import collections
import datetime
import functools
import os
import sys
import threading
from collections.abc import Container, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import opentelemetry.trace as _trace_state
from opentelemetry import trace
from opentelemetry.propagate import inject
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from mcp_errors._shared.contract import CATEGORY_VALUES
from mcp_errors._shared.envelope import ResultLike, is_empty_result
from mcp_errors._shared.signals import CONTRACT_CODES

if TYPE_CHECKING:
    from opentelemetry import metrics

__all__ = [
    "ATTEMPT_EVENT",
    "PROXY_DECISION_EVENT",
    "BreakerScope",
    "OutcomeLabel",
    "ProxyDecision",
    "ToolResultLike",
    "annotate_tool_result",
    "enabled",
    "inject_trace_context",
    "partial_span",
    "record_attempt",
    "record_budget_refusal",
    "record_decision",
    "record_partial",
    "record_proxy_decision",
    "recording_metrics",
    "recovery_span",
]

_NAME: Final = "mcp_errors"

# The tracer, the meter (and with it OpenTelemetry's metrics API) and this package's version
# are looked up when something is first recorded, not at import: a process with no SDK
# configured never needs them (docs/performance.md#proxy-start-up-and-memory).


@functools.cache
def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("mcp-errors")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree
        return ""


@functools.cache
def _tracer() -> trace.Tracer:
    return trace.get_tracer(_NAME, _version())


OutcomeLabel = Literal["success", "empty", "error"]

ProxyDecision = Literal[
    "breaker_opened",
    "breaker_half_opened",
    "breaker_closed",
    "breaker_refused",
    "repeat_refused",
    "upstream_restarted",
    "session_reopened",
    "restart_notified",
]
"""What `mcp-errors proxy` decided on its own: a closed set, so it can be a metric attribute."""
BreakerScope = Literal["upstream", "tool", "caller"]


class ToolResultLike(ResultLike, Protocol):
    """A tool result with its error flag (`CallToolResult`, fastmcp's `ToolResult`)."""

    @property
    def is_error(self) -> bool | None: ...


# Attribute names, on spans and (the low-cardinality ones) on metrics.
TOOL: Final = "mcp_errors.tool.name"
OUTCOME: Final = "mcp_errors.outcome"
CATEGORY: Final = "mcp_errors.error.category"
RETRYABLE: Final = "mcp_errors.error.retryable"
CODE: Final = "mcp_errors.error.code"
ERROR_ID: Final = "mcp_errors.error.id"
EXECUTION_STATE: Final = "mcp_errors.error.execution_state"
REPLAYED: Final = "mcp_errors.replayed"
SERVER: Final = "mcp_errors.server.name"
DECISION: Final = "mcp_errors.decision"
REASON: Final = "mcp_errors.decision.reason"
ATTEMPTS: Final = "mcp_errors.attempts"
ATTEMPT_NUMBER: Final = "mcp_errors.attempt.number"
WAIT: Final = "mcp_errors.attempt.wait_before"
STOP: Final = "mcp_errors.attempt.stop_reason"
IDEMPOTENCY_KEY: Final = "mcp_errors.idempotency_key"
ANSWERED: Final = "mcp_errors.partial.answered"
TOTAL: Final = "mcp_errors.partial.total"

PROXY_DECISION: Final = "mcp_errors.proxy.decision"
BREAKER_SCOPE: Final = "mcp_errors.proxy.breaker.scope"

ATTEMPT_EVENT: Final = "mcp_errors.attempt"
"""The name of the client span's event for each attempt."""
PROXY_DECISION_EVENT: Final = "mcp_errors.proxy.decision"
"""The name of the event a proxy decision adds to the `tools/call` span it happened in."""


class _Instruments:
    """The metric instruments, made from one meter."""

    def __init__(self, meter: metrics.Meter) -> None:
        # Every tool result is counted, so this counter is on the server's hot path, where
        # the SDK's synchronous `Counter.add` costs more than the rest of the result's telemetry
        # (attribute handling, exemplar sampling; docs/performance.md#observability). Counting in
        # a dict and reporting the totals when a reader collects (the SDK's asynchronous counter,
        # the pattern its docs give for hot paths) exports the same cumulative sum for less.
        self._result_counts: collections.Counter[tuple[tuple[str, str | bool], ...]] = collections.Counter()
        self._result_counts_lock = threading.Lock()
        meter.create_observable_counter(
            "mcp_errors.tool.results",
            callbacks=[self._observe_results],
            unit="{result}",
            description="Tool results a server sent, by outcome, category and code (successes included).",
        )
        self.call_attempts = meter.create_histogram(
            "mcp_errors.client.call.attempts",
            unit="{attempt}",
            description="Attempts made for one logical tool call, the first included (gRPC A96's retries + 1).",
            explicit_bucket_boundaries_advisory=[1, 2, 3, 4, 5, 6, 8, 10],
        )
        self.retry_delay = meter.create_histogram(
            "mcp_errors.client.call.retry_delay",
            unit="s",
            description="Total time one logical tool call waited between its attempts.",
            explicit_bucket_boundaries_advisory=[0, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
        )
        self.budget_refusals = meter.create_counter(
            "mcp_errors.client.retry_budget.refusals",
            unit="{call}",
            description="Logical tool calls whose resend the retry budget refused.",
        )
        self.proxy_decisions = meter.create_counter(
            "mcp_errors.proxy.decisions",
            unit="{decision}",
            description="Decisions mcp-errors proxy took on its own: circuit breaker changes and refusals, "
            "guarded repeats, upstream restarts and the notices of them.",
        )

    def count_result(self, labels: tuple[tuple[str, str | bool], ...]) -> None:
        with self._result_counts_lock:
            self._result_counts[labels] += 1

    def _observe_results(self, options: metrics.CallbackOptions) -> list[metrics.Observation]:
        from opentelemetry.metrics import Observation

        with self._result_counts_lock:
            totals = list(self._result_counts.items())
        return [Observation(count, dict(labels)) for labels, count in totals]


_recording: _Instruments | None = None
"""The instruments of `recording_metrics`' provider while it lasts."""


@functools.cache
def _global_instruments() -> _Instruments:
    from opentelemetry import metrics

    return _Instruments(metrics.get_meter(_NAME, _version()))


def _instruments() -> _Instruments:
    """Where metrics go now: `recording_metrics`' provider, else the global one (made on first use)."""
    return _recording if _recording is not None else _global_instruments()


def enabled() -> bool:
    """Whether anything is recorded: an OpenTelemetry SDK (or `recording_metrics`) is in place.

    Checked first by every function here, so that a server or client with no SDK pays two
    attribute reads per call and nothing else (docs/performance.md#observability).
    """
    global _configured
    if _configured or _recording is not None:
        return True
    # The API's own globals, read directly: `get_tracer_provider()` and `get_meter_provider()`
    # look at the environment on every call, which showed in the per-call cost (benchmarks/instructions.py).
    # A meter provider is set through the metrics API's module: not imported, none is set.
    if getattr(_trace_state, "_TRACER_PROVIDER", None) is None and (
        getattr(sys.modules.get("opentelemetry.metrics._internal"), "_METER_PROVIDER", None) is None
    ):
        return False
    _configured = True  # a global provider, once set, is never unset
    return True


# Providers named in the environment are loaded on first use, not set: count them as set.
_configured = any(name in os.environ for name in ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER"))


@contextmanager
def recording_metrics(meter_provider: metrics.MeterProvider) -> Iterator[None]:
    """Record metrics with `meter_provider` instead of the global one, for the duration.

    For a program that reads its own metrics (`mcp-errors demo` prints its run's figures)
    without installing a process-wide provider that the user's own setup would then lose to.
    """
    global _recording
    previous, _recording = _recording, _Instruments(meter_provider.get_meter(_NAME, _version()))
    try:
        yield
    finally:
        _recording = previous


def annotate_tool_result(
    tool: str, result: ToolResultLike, *, replayed: bool = False, upstream_codes: Container[str] | None = None
) -> None:
    """Set a result's error facts on the current `tools/call` span and count the result.

    Args:
        tool: The tool's name.
        result: What the server sends back.
        replayed: Whether the result came from the idempotency store.
        upstream_codes: For results whose code another server chose (the proxy's), the codes
            besides this project's own that may label the metric (a rules file's); any other
            is counted as `other`. `None`: the codes are the server's own tools'.
    """
    if not enabled():
        return
    structured = result.structured_content
    envelope = structured if result.is_error and isinstance(structured, Mapping) else None
    outcome: OutcomeLabel = "error" if result.is_error else ("empty" if is_empty_result(result) else "success")
    # Category and code go on the metric too, from closed sets; the rest only on the span.
    facts = _strings(envelope, (("errorCategory", CATEGORY), ("code", CODE))) if envelope is not None else {}
    labels: dict[str, str | bool] = {TOOL: _tool_label(tool, facts.get(CODE)), OUTCOME: outcome}
    if CATEGORY in facts:
        labels[CATEGORY] = facts[CATEGORY] if facts[CATEGORY] in CATEGORY_VALUES else OTHER
    if CODE in facts:
        labels[CODE] = _CODE_LABELS.label(facts[CODE], upstream_codes)
    if replayed:
        labels[REPLAYED] = True
    _instruments().count_result(tuple(labels.items()))
    span = trace.get_current_span()
    if not span.is_recording():
        return
    attributes: dict[str, Any] = {OUTCOME: outcome, **facts}
    if replayed:
        attributes[REPLAYED] = True
    if envelope is not None:
        attributes |= _strings(envelope, (("errorId", ERROR_ID), ("executionState", EXECUTION_STATE)))
        if isinstance(envelope.get("isRetryable"), bool):
            attributes[RETRYABLE] = envelope["isRetryable"]
    span.set_attributes(attributes)


@contextmanager
def recovery_span(tool: str, *, server: str, idempotency_key: str | None) -> Iterator[Span]:
    """The span of one logical call: its attempts, waits and final decision happen inside it."""
    if not enabled():
        yield trace.INVALID_SPAN
        return
    attributes: dict[str, Any] = {TOOL: tool, SERVER: server}
    if idempotency_key is not None:
        attributes[IDEMPOTENCY_KEY] = idempotency_key
    # Errors are the decision's to report (`record_decision`), not an exception's: a call
    # that failed twice and then answered is a success.
    with _tracer().start_as_current_span(
        f"recover {tool}",
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        record_exception=True,
        set_status_on_exception=True,
    ) as span:
        yield span


def inject_trace_context(meta: dict[str, Any]) -> None:
    """Put the current trace context (W3C `traceparent`) in a request's `_meta`, when tracing."""
    if enabled() and trace.get_current_span().is_recording():
        inject(meta)


def record_attempt(
    span: Span,
    *,
    number: int,
    at: datetime.datetime,
    outcome: OutcomeLabel,
    category: str | None,
    code: str | None,
    wait_before: float,
    stop_reason: str | None,
) -> None:
    """Add one attempt's event to the logical call's span."""
    if not span.is_recording():
        return
    attributes: dict[str, Any] = {ATTEMPT_NUMBER: number, OUTCOME: outcome, WAIT: wait_before}
    if category is not None:
        attributes[CATEGORY] = category
    if code is not None:
        attributes[CODE] = code
    if stop_reason is not None:
        attributes[STOP] = stop_reason
    span.add_event(ATTEMPT_EVENT, attributes, timestamp=int(at.timestamp() * 1e9))


def record_decision(
    span: Span,
    *,
    tool: str,
    listed: bool,
    decision: str,
    reason: str | None,
    category: str | None,
    code: str | None,
    attempts: int,
    total_wait: float,
) -> None:
    """Close a logical call: the decision on its span, and the retry histograms.

    Args:
        listed: Whether the server listed the tool; a name it did not list came from the
            caller and is labelled `(unknown)` on the metrics (the span keeps it).
    """
    if not enabled():
        return
    labels: dict[str, str] = {TOOL: _tool_label(tool, code) if listed else UNKNOWN_TOOL, DECISION: decision}
    if category is not None:
        labels[CATEGORY] = category
    instruments = _instruments()
    instruments.call_attempts.record(attempts, labels)
    instruments.retry_delay.record(total_wait, labels)
    if not span.is_recording():
        return
    attributes: dict[str, Any] = {DECISION: decision, ATTEMPTS: attempts}
    if reason is not None:
        attributes[REASON] = reason
    if category is not None:
        attributes[CATEGORY] = category
    span.set_attributes(attributes)
    if decision != "done":
        span.set_attribute("error.type", category or "unclassified")
        span.set_status(Status(StatusCode.ERROR, reason))


def record_budget_refusal(*, tool: str, listed: bool, server: str) -> None:
    """Count a logical call whose resend the retry budget refused (`listed` as for `record_decision`)."""
    if not enabled():
        return
    _instruments().budget_refusals.add(1, {TOOL: tool if listed else UNKNOWN_TOOL, SERVER: server})


def record_proxy_decision(
    decision: ProxyDecision, *, scope: BreakerScope | None = None, tool: str | None = None
) -> None:
    """Count a decision of the proxy, and add it as an event to the current span (a `tools/call`'s).

    Args:
        decision: What was decided.
        scope: For the circuit breaker, whether the circuit is the upstream's or one tool's.
        tool: The tool concerned, on the span only (metric attributes stay a closed set).
    """
    if not enabled():
        return
    labels: dict[str, str] = {PROXY_DECISION: decision}
    if scope is not None:
        labels[BREAKER_SCOPE] = scope
    _instruments().proxy_decisions.add(1, labels)
    span = trace.get_current_span()
    if span.is_recording():
        span.add_event(PROXY_DECISION_EVENT, {**labels, TOOL: tool} if tool is not None else labels)
        span.set_attribute(PROXY_DECISION, decision)


@contextmanager
def partial_span(names: int) -> Iterator[Span]:
    """The span of one `gather_partial` fan-out; each sub-call's span nests inside it."""
    if not enabled():
        yield trace.INVALID_SPAN
        return
    with _tracer().start_as_current_span("gather_partial", attributes={TOTAL: names}) as span:
        yield span


def record_partial(span: Span, *, answered: int) -> None:
    """How many sub-calls of the fan-out answered (their number is set when the span starts)."""
    if span.is_recording():
        span.set_attribute(ANSWERED, answered)


def _tool_label(tool: str, code: object) -> str:
    # A name the server does not know came from the caller (a model may invent any): as a
    # metric attribute, every such string would be a new time series. Spans keep it.
    return UNKNOWN_TOOL if code == "UNKNOWN_TOOL" else tool


UNKNOWN_TOOL: Final = "(unknown)"
"""The tool label of a call whose name the server does not have (or did not list)."""
OTHER: Final = "other"
"""The label of a category or code outside the closed sets metrics keep."""


class _CodeLabels:
    """The values `mcp_errors.error.code` takes on the result counter: a closed set.

    This project's codes always; a server's own codes (its tools chose them, as they chose
    their names) up to `_MAX_OWN_CODES` per process, after which new ones count as `other`,
    so that a tool passing a downstream's codes along cannot grow the series without bound;
    codes another server chose (through the proxy) only when the caller admits them.
    """

    def __init__(self) -> None:
        self._own: set[str] = set()
        self._lock = threading.Lock()

    def label(self, code: str, upstream_codes: Container[str] | None) -> str:
        if code in CONTRACT_CODES:
            return code
        if upstream_codes is not None:
            return code if code in upstream_codes else OTHER
        if code in self._own:
            return code
        with self._lock:
            if len(self._own) < _MAX_OWN_CODES:
                self._own.add(code)
                return code
        return OTHER


_MAX_OWN_CODES: Final = 100
_CODE_LABELS: Final = _CodeLabels()


def _strings(data: Mapping[str, Any], pairs: tuple[tuple[str, str], ...]) -> dict[str, str]:
    # Only string values of bounded length reach telemetry: the envelope may come from a
    # server that does not follow the contract.
    return {
        name: value for field, name in pairs if isinstance(value := data.get(field), str) and len(value) <= _MAX_CHARS
    }


_MAX_CHARS: Final = 128
