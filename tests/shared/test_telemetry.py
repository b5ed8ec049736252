"""OpenTelemetry signals through the real client and server, read back with the SDK's in-memory exporters."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import fastmcp
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, ObservableCounter
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader, MetricsData
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from mcp_errors import (
    AccessDeniedError,
    BusinessRuleError,
    InputValidationError,
    RecoveryPolicy,
    RetryBudget,
    TaskPolling,
    ToolCall,
    TransientError,
    call_tool_with_recovery,
    empty_result,
    gather_partial,
    install,
)
from mcp_errors._shared.signals import CONTRACT_CODES
from mcp_errors.proxy import ChildProcess, ProxySettings, build_proxy
from mcp_errors.proxy._server import check_upstream
from mcp_errors.stores import MemoryStore
from mcp_errors.testing import add_flaky_tool
from servers import proxy_upstream
from servers.contract_fastmcp import build_fastmcp_server
from services import fastmcp_before_4_2, require_fastmcp_tasks

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("zero_wait"), pytest.mark.slow]

# Metric attributes may only ever be these: no errorId, key or argument value.
LOW_CARDINALITY = {
    "mcp_errors.tool.name",
    "mcp_errors.outcome",
    "mcp_errors.error.category",
    "mcp_errors.error.code",
    "mcp_errors.replayed",
    "mcp_errors.decision",
    "mcp_errors.server.name",
    "mcp_errors.proxy.decision",
    "mcp_errors.proxy.breaker.scope",
}


@dataclass
class Telemetry:
    spans: InMemorySpanExporter
    metrics: InMemoryMetricReader
    _collected: MetricsData | None = None

    def finished(self, name: str) -> list[ReadableSpan]:
        return [span for span in self.spans.get_finished_spans() if span.name == name]

    def points(self, metric: str) -> list[tuple[dict[str, Any], Any]]:
        """Every data point of `metric`: its attributes and its value (a sum, or a histogram point)."""
        # Collected once per test: the reader reports what was recorded since the last collection.
        if self._collected is None:
            self._collected = self.metrics.get_metrics_data()
        data = self._collected
        found: list[tuple[dict[str, Any], Any]] = []
        for resource in data.resource_metrics if data is not None else []:
            for scope in resource.scope_metrics:
                for item in scope.metrics:
                    if item.name == metric:
                        found.extend((dict(point.attributes or {}), point) for point in item.data.data_points)
        return found

    def count(self, metric: str, **attributes: Any) -> float:
        """The sum of a counter's points whose attributes include `attributes` (dotted names as `_`)."""
        wanted = {f"mcp_errors.{key.replace('__', '.')}": value for key, value in attributes.items()}
        total: float = sum(point.value for found, point in self.points(metric) if found.items() >= wanted.items())
        return total


_SPANS = InMemorySpanExporter()
_METRICS = InMemoryMetricReader(
    preferred_temporality={
        Counter: AggregationTemporality.DELTA,
        ObservableCounter: AggregationTemporality.DELTA,
        Histogram: AggregationTemporality.DELTA,
    }
)


@pytest.fixture(scope="module")
def installed_sdk() -> Iterator[None]:
    """The OpenTelemetry SDK as an application would configure it, once per process.

    The providers cannot be unset, so after this module the span exporter stops keeping
    spans: the tests that run later in the same process (memory bounds among them) must not
    see the spans of their own calls pile up in it.
    """
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_SPANS))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[_METRICS]))
    yield
    _SPANS.clear()
    _SPANS.shutdown()


@pytest.fixture
def telemetry(installed_sdk: None) -> Telemetry:
    _SPANS.clear()
    _METRICS.get_metrics_data()  # what earlier tests recorded
    return Telemetry(_SPANS, _METRICS)


def a_server(name: str) -> MCPServer[Any]:
    server = install(MCPServer(name))

    @server.tool()
    def answer() -> str:
        return "42"

    @server.tool()
    def find(query: str) -> Any:
        return empty_result(f"Nothing matches {query!r}; the search ran and found nothing.")

    @server.tool()
    def busy() -> str:
        raise TransientError("Busy", description="The database is busy; resend in a second.", code="DB_BUSY")

    @server.tool()
    def bad(order_id: str) -> str:
        raise InputValidationError("Bad id", description="Send #NNNNN, e.g. #12345.", code="BAD_ORDER_ID")

    @server.tool()
    def limit() -> str:
        raise BusinessRuleError("Over the limit", description="Refunds above 500 need a manager.", code="LIMIT")

    @server.tool()
    def secret() -> str:
        raise AccessDeniedError("No access", description="Escalate to someone with the finance role.")

    return server


async def test_every_result_is_counted_and_its_error_facts_land_on_the_sdks_tools_call_span(
    telemetry: Telemetry, mode: str
) -> None:
    server = a_server(f"all-{mode}")
    async with Client(server, mode=mode) as client:  # a checked literal
        for tool, arguments in [
            ("answer", {}),
            ("find", {"query": "x"}),
            ("busy", {}),
            ("bad", {"order_id": "abc"}),
            ("limit", {}),
            ("secret", {}),
            ("bad", {}),
        ]:
            await client.call_tool(tool, arguments)

    assert telemetry.count("mcp_errors.tool.results", tool__name="answer", outcome="success") == 1
    assert telemetry.count("mcp_errors.tool.results", tool__name="find", outcome="empty") == 1
    for tool, category, code in [
        ("busy", "transient", "DB_BUSY"),
        ("limit", "business", "LIMIT"),
        ("secret", "permission", None),
    ]:
        attributes = {"tool__name": tool, "outcome": "error", "error__category": category}
        assert telemetry.count("mcp_errors.tool.results", **attributes) == 1
        if code is not None:
            assert telemetry.count("mcp_errors.tool.results", error__code=code, tool__name=tool) == 1
    assert telemetry.count("mcp_errors.tool.results", tool__name="bad", error__category="validation") == 2
    assert telemetry.count("mcp_errors.tool.results", error__code="INVALID_ARGUMENTS") >= 1

    [busy] = telemetry.finished("tools/call busy")
    assert busy.attributes is not None
    assert busy.attributes["mcp_errors.error.category"] == "transient"
    assert busy.attributes["mcp_errors.error.retryable"] is True
    assert busy.attributes["mcp_errors.error.code"] == "DB_BUSY"
    assert len(str(busy.attributes["mcp_errors.error.id"])) == 12
    assert busy.attributes["error.type"] == "tool_error"  # the SDK's own convention, kept
    [answer] = telemetry.finished("tools/call answer")
    assert answer.attributes is not None
    assert answer.attributes["mcp_errors.outcome"] == "success"
    assert "mcp_errors.error.category" not in answer.attributes
    for found, _ in telemetry.points("mcp_errors.tool.results"):
        assert set(found) <= LOW_CARDINALITY


async def test_an_unknown_tool_name_from_a_caller_is_not_a_metric_attribute(telemetry: Telemetry) -> None:
    async with Client(a_server("unknown")) as client:
        await client.call_tool("no-such-tool-7f3a", {})
        await call_tool_with_recovery(client, "invented-by-a-model-91c2", {}, policy=RecoveryPolicy())

    for metric in ("mcp_errors.tool.results", "mcp_errors.client.call.attempts", "mcp_errors.client.call.retry_delay"):
        # Points of this test only (an asynchronous counter reports earlier series as 0).
        recorded = [found for found, point in telemetry.points(metric) if getattr(point, "value", 1) > 0]
        assert {found.get("mcp_errors.tool.name") for found in recorded} == {"(unknown)"}, metric
    assert telemetry.count("mcp_errors.tool.results", error__code="UNKNOWN_TOOL", tool__name="(unknown)") == 2
    assert len(telemetry.finished("recover invented-by-a-model-91c2")) == 1  # the span keeps the name


async def test_a_call_that_succeeded_after_a_resend_is_one_span_with_an_event_per_attempt_and_no_error(
    telemetry: Telemetry,
) -> None:
    server = install(MCPServer("retried"))
    add_flaky_tool(server, "retried_search", failures=1, read_only=True)
    async with Client(server) as client:
        report = await call_tool_with_recovery(client, "retried_search", {}, policy=RecoveryPolicy())

    [span] = telemetry.finished("recover retried_search")
    assert span.status.status_code is StatusCode.UNSET
    assert span.attributes is not None
    assert (span.attributes["mcp_errors.decision"], span.attributes["mcp_errors.attempts"]) == ("done", 2)
    events = [event for event in span.events if event.name == "mcp_errors.attempt"]
    assert [event.attributes["mcp_errors.outcome"] for event in events if event.attributes] == ["error", "success"]
    assert events[0].attributes is not None
    assert events[0].attributes["mcp_errors.error.category"] == "transient"
    assert events[1].attributes is not None
    assert events[1].attributes["mcp_errors.attempt.wait_before"] == report.attempts[1].wait_before
    attempts = [
        point
        for found, point in telemetry.points("mcp_errors.client.call.attempts")
        if found.get("mcp_errors.tool.name") == "retried_search"
    ]
    assert [(point.count, point.sum) for point in attempts] == [(1, 2)]
    delays = [
        point
        for found, point in telemetry.points("mcp_errors.client.call.retry_delay")
        if found.get("mcp_errors.tool.name") == "retried_search"
    ]
    assert delays[0].sum == pytest.approx(report.total_wait)
    # The SDK's client and server spans of each attempt are children of the logical call:
    # the trace context travelled in the request's `_meta`.
    server_spans = telemetry.finished("tools/call retried_search")
    assert len(server_spans) == 2
    assert {s.context.trace_id for s in server_spans if s.context} == {span.context.trace_id if span.context else 0}


async def test_an_escalated_call_is_an_error_span_with_its_decision_and_reason(telemetry: Telemetry) -> None:
    async with Client(a_server("escalated")) as client:
        await call_tool_with_recovery(client, "limit", {}, policy=RecoveryPolicy())

    [span] = telemetry.finished("recover limit")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes["mcp_errors.decision"] == "escalate"
    assert span.attributes["mcp_errors.decision.reason"] == "business"
    assert span.attributes["error.type"] == "business"
    [event] = span.events
    assert event.attributes is not None
    assert event.attributes["mcp_errors.attempt.stop_reason"] == "business"


async def test_a_call_whose_resend_the_budget_refused_is_counted(telemetry: Telemetry) -> None:
    server = install(MCPServer("outage"))
    add_flaky_tool(server, "down_search", failures=10**9, read_only=True)
    policy = RecoveryPolicy(budget_factory=lambda: RetryBudget(max_tokens=2, token_ratio=1))
    async with Client(server) as client:
        reports = [await call_tool_with_recovery(client, "down_search", {}, policy=policy) for _ in range(3)]

    refused = sum(report.reason == "retry_budget" for report in reports)
    assert refused >= 1
    assert telemetry.count("mcp_errors.client.retry_budget.refusals", tool__name="down_search") == refused


async def test_a_replayed_answer_is_marked_on_the_span_and_in_the_count(telemetry: Telemetry, mode: str) -> None:
    server = install(MCPServer(f"replay-{mode}"), idempotency=MemoryStore())
    charges: list[float] = []

    @server.tool()
    def charge_card(amount: float) -> str:
        charges.append(amount)
        return f"charged {amount:.2f} EUR"

    key = {"mcp-errors/idempotencyKey": f"op-{mode}"}
    async with Client(server, mode=mode) as client:  # a checked literal
        for _ in range(2):
            await client.call_tool("charge_card", {"amount": 5.0}, meta=key)  # type: ignore[arg-type]

    assert charges == [5.0]
    spans = telemetry.finished("tools/call charge_card")
    assert [span.attributes.get("mcp_errors.replayed") for span in spans if span.attributes] == [None, True]
    assert telemetry.count("mcp_errors.tool.results", tool__name="charge_card", replayed=True) == 1
    assert telemetry.count("mcp_errors.tool.results", tool__name="charge_card") == 2


async def test_a_partial_fan_out_is_one_span_over_its_sub_calls(telemetry: Telemetry) -> None:
    sources = install(MCPServer("sources"))

    @sources.tool(annotations=ToolAnnotations(read_only_hint=True))
    def source_search(source: int) -> str:
        if source == 2:
            raise TransientError("Source timed out", description="Resend after a short wait.")
        return f"hits from {source}"

    with anyio.fail_after(20):
        async with Client(sources) as client:
            calls = {f"s{n}": ToolCall(client, "source_search", {"source": n}) for n in (1, 2)}
            report = await gather_partial(calls, policy=RecoveryPolicy(max_attempts=2))

    assert report.summary().startswith("1 of 2")
    [fan_out] = telemetry.finished("gather_partial")
    assert fan_out.attributes is not None
    assert (fan_out.attributes["mcp_errors.partial.answered"], fan_out.attributes["mcp_errors.partial.total"]) == (1, 2)
    children = telemetry.finished("recover source_search")
    assert len(children) == 2
    assert {child.parent.span_id for child in children if child.parent} == {
        fan_out.context.span_id if fan_out.context else 0
    }


def spans_with(telemetry: Telemetry, key: str, value: Any) -> list[ReadableSpan]:
    return [span for span in telemetry.spans.get_finished_spans() if (span.attributes or {}).get(key) == value]


async def test_a_fastmcp_server_counts_its_results_and_marks_its_own_tools_call_span(telemetry: Telemetry) -> None:
    async with fastmcp.Client(build_fastmcp_server()) as client:
        await client.call_tool_mcp("check_stock", {})
        await client.call_tool_mcp("refund", {"order_id": "#12345", "amount": 750.0})

    assert telemetry.count("mcp_errors.tool.results", tool__name="check_stock", error__code="INVENTORY_BUSY") == 1
    assert telemetry.count("mcp_errors.tool.results", tool__name="refund", error__category="business") == 1
    [busy] = spans_with(telemetry, "mcp_errors.error.code", "INVENTORY_BUSY")
    assert busy.attributes is not None
    assert busy.attributes["mcp_errors.error.retryable"] is True
    assert "check_stock" in busy.name  # fastmcp's span of the call, not a second one of ours


async def test_what_the_proxy_decides_is_counted_with_closed_labels_and_marked_on_the_calls_span(
    telemetry: Telemetry,
) -> None:
    child = ChildProcess(sys.executable, [str(Path(proxy_upstream.__file__))])
    proxy = build_proxy(child, ProxySettings(breaker_failures=2, breaker_cooldown=60, repeat_guard=60))
    try:
        await check_upstream(proxy, child, seconds=60)
        async with Client(proxy._mcp_server) as client:  # fastmcp's low-level server
            for _ in range(3):  # two declared time-outs open the tool's circuit; the third is refused
                await client.call_tool("flaky_status", {"key": "t", "failures": 9})
            for _ in range(2):  # the identical resend of a validation failure
                await client.call_tool("refuse", {"key": "bad"})
            await client.call_tool("crash", {})
            await client.call_tool("echo", {"text": "after the restart"})
    finally:
        await child.close()

    assert (
        telemetry.count("mcp_errors.proxy.decisions", proxy__decision="breaker_opened", proxy__breaker__scope="tool")
        == 1
    )
    assert (
        telemetry.count("mcp_errors.proxy.decisions", proxy__decision="breaker_refused", proxy__breaker__scope="tool")
        == 1
    )
    assert telemetry.count("mcp_errors.proxy.decisions", proxy__decision="repeat_refused") == 1
    assert telemetry.count("mcp_errors.proxy.decisions", proxy__decision="upstream_restarted") == 1
    assert telemetry.count("mcp_errors.proxy.decisions", proxy__decision="restart_notified") == 1
    for found, _ in telemetry.points("mcp_errors.proxy.decisions"):
        assert set(found) <= LOW_CARDINALITY
    [refused] = spans_with(telemetry, "mcp_errors.proxy.decision", "breaker_refused")
    assert refused.name.startswith("tools/call")  # the SDK's span of the call, not one of ours
    assert (refused.attributes or {})["mcp_errors.error.code"] == "UPSTREAM_UNAVAILABLE"
    [event] = [event for event in refused.events if event.name == "mcp_errors.proxy.decision"]
    assert event.attributes is not None
    assert event.attributes["mcp_errors.tool.name"] == "flaky_status"  # on the span only
    [repeated] = spans_with(telemetry, "mcp_errors.proxy.decision", "repeat_refused")
    assert (repeated.attributes or {})["mcp_errors.error.category"] == "validation"


async def test_the_proxy_counts_an_upstream_failure_it_classified(telemetry: Telemetry) -> None:
    child = ChildProcess(sys.executable, [str(Path(proxy_upstream.__file__))])
    proxy = build_proxy(child)
    try:
        await check_upstream(proxy, child, seconds=60)
        async with Client(proxy._mcp_server) as client:  # fastmcp's low-level server
            await client.call_tool("echo", {"text": "hi"})
            await client.call_tool("fail_jsonrpc", {"code": -32602, "message": "Invalid params: bad city"})
    finally:
        await child.close()

    assert telemetry.count("mcp_errors.tool.results", tool__name="echo", outcome="success") == 1
    assert telemetry.count("mcp_errors.tool.results", tool__name="fail_jsonrpc", error__category="validation") == 1
    [failed] = spans_with(telemetry, "mcp_errors.error.category", "validation")
    assert "fail_jsonrpc" in failed.name


# fastmcp 4.1 (the one fastmcp-tasks pins) records a tool's exception on its tools/call span as
# it leaves the tool, before install writes it as a result: docs/observability.md, "Limits".
OWN_SPAN_RECORDED_EARLY = pytest.mark.skipif(
    fastmcp_before_4_2(), reason="fastmcp 4.1 records the raw exception on its own span before install sees it"
)


def span_texts(telemetry: Telemetry, kind: SpanKind | None = None) -> list[str]:
    """Each finished span as its exporter writes it: attributes, status, events and their stack traces."""
    return [span.to_json() for span in telemetry.spans.get_finished_spans() if kind is None or span.kind is kind]


@OWN_SPAN_RECORDED_EARLY
async def test_a_fastmcp_tools_call_span_carries_no_raw_exception_text(telemetry: Telemetry) -> None:
    server = install(fastmcp.FastMCP("spans"))

    @server.tool
    def connect() -> str:
        raise RuntimeError("connect failed: password=hunter2-Sup3r, config /etc/app/secret.yaml")

    async with fastmcp.Client(server) as client:
        result = await client.call_tool_mcp("connect", {})

    error_id = result.structured_content["errorId"]
    [span] = spans_with(telemetry, "mcp_errors.error.id", error_id)
    assert span.status.status_code is StatusCode.ERROR
    assert error_id in (span.status.description or "")  # where the full text is: the log, under this id
    for text in span_texts(telemetry):
        assert "hunter2" not in text
        assert "/etc/app" not in text
        assert __file__ not in text  # no stack trace of the tool either


@OWN_SPAN_RECORDED_EARLY
async def test_the_proxys_tools_call_span_carries_no_upstream_secret(telemetry: Telemetry) -> None:
    child = ChildProcess(sys.executable, [str(Path(proxy_upstream.__file__))])
    proxy = build_proxy(child)
    said = f"denied: Authorization: Bearer {proxy_upstream.LEAKED_SECRET} at {proxy_upstream.LEAKED_PATH}"
    try:
        await check_upstream(proxy, child, seconds=60)
        async with Client(proxy._mcp_server) as client:  # fastmcp's low-level server
            await client.call_tool("fail_jsonrpc", {"code": -32603, "message": said})
            await client.call_tool("fail", {"message": said})
    finally:
        await child.close()

    server_spans = span_texts(telemetry, SpanKind.SERVER)
    assert len(server_spans) >= 2
    for text in server_spans:
        assert proxy_upstream.LEAKED_SECRET not in text
        assert proxy_upstream.LEAKED_PATH not in text


def series(telemetry: Telemetry, metric: str, tool: str) -> list[dict[str, Any]]:
    """Every label set `metric` reports for `tool`, those of earlier tests' results included (as 0)."""
    return [found for found, _ in telemetry.points(metric) if found.get("mcp_errors.tool.name") == tool]


async def test_codes_an_upstream_chooses_do_not_make_a_series_each(telemetry: Telemetry) -> None:
    child = ChildProcess(sys.executable, [str(Path(proxy_upstream.__file__))])
    proxy = build_proxy(child)
    try:
        await check_upstream(proxy, child, seconds=60)
        async with Client(proxy._mcp_server) as client:  # fastmcp's low-level server
            for number in range(300):
                # Half already in the contract (passed through), half the upstream's own fields.
                structured = (
                    {"errorCategory": "business", "isRetryable": False, "description": "No.", "code": f"UP_{number}"}
                    if number % 2
                    else {"error": {"code": f"UP_{number}", "message": "refused"}}
                )
                await client.call_tool("fail_structured", {"structured": structured})
    finally:
        await child.close()

    found = series(telemetry, "mcp_errors.tool.results", "fail_structured")
    assert telemetry.count("mcp_errors.tool.results", tool__name="fail_structured") == 300
    assert len(found) <= 4  # per category the upstream's words gave, with the code `other`
    assert {labels.get("mcp_errors.error.code") for labels in found} <= {"other", None, *CONTRACT_CODES}


async def test_a_servers_own_codes_label_the_count_up_to_a_bound(telemetry: Telemetry) -> None:
    server = install(MCPServer("many-codes"))

    @server.tool()
    def refuse(number: int) -> str:
        raise BusinessRuleError("Refused", description="Take another path.", code=f"RULE_{number}")

    async with Client(server) as client:
        for number in range(300):
            await client.call_tool("refuse", {"number": number})

    codes = {labels["mcp_errors.error.code"] for labels in series(telemetry, "mcp_errors.tool.results", "refuse")}
    assert "other" in codes
    assert len(codes) <= 101


async def test_a_tool_name_a_caller_invents_against_a_server_without_the_contract_is_unknown_on_the_client(
    telemetry: Telemetry,
) -> None:
    plain: MCPServer[Any] = MCPServer("plain")  # no install: unknown tools are the SDK's own text errors

    @plain.tool()
    def lookup() -> str:
        return "found"

    async with Client(plain) as client:
        await call_tool_with_recovery(client, "lookup", {}, policy=RecoveryPolicy())
        for number in range(20):
            await call_tool_with_recovery(client, f"invented-{number}", {}, policy=RecoveryPolicy())

    for metric in ("mcp_errors.client.call.attempts", "mcp_errors.client.call.retry_delay"):
        names = {found.get("mcp_errors.tool.name") for found, point in telemetry.points(metric) if point.count}
        assert names == {"lookup", "(unknown)"}, metric


@pytest.mark.tasks
async def test_a_task_that_failed_in_its_worker_is_counted_and_marks_the_workers_span(telemetry: Telemetry) -> None:
    require_fastmcp_tasks()
    from servers import task_reports

    server, _ = task_reports.build()
    async with Client(server._mcp_server, extensions=[TaskPolling()]) as client:
        await client.call_tool("refund_batch", {"total": 12_000.0})
        await client.call_tool("slow", {"seconds": 0.01})

    # (The code is a label only while the process has seen few codes of servers' own: not asserted here.)
    assert telemetry.count("mcp_errors.tool.results", tool__name="refund_batch", error__category="business") == 1
    assert telemetry.count("mcp_errors.tool.results", tool__name="slow", outcome="success") == 1
    # The tool ran in the task worker, inside Docket's span for it (the `tools/call` span had ended).
    [worker] = [span for span in telemetry.spans.get_finished_spans() if span.name.startswith("tool:refund_batch")]
    assert worker.attributes is not None
    assert worker.attributes["mcp_errors.error.code"] == "REFUND_BATCH_LIMIT"
    assert worker.attributes["mcp_errors.error.retryable"] is False
