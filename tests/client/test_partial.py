"""Multi-agent propagation, end to end: coordinator -> subagent MCP server -> source MCP server."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from hostile_strategies import HUGE_INT, PARTIAL_REPORTS, nested
from mcp_errors import (
    ENVELOPE_SCHEMA,
    AccessDeniedError,
    ErrorCategory,
    FailedCall,
    NextStep,
    PartialReport,
    RecoveryPolicy,
    ToolCall,
    TransientError,
    gather_partial,
    install,
    plan_next_step,
    read_partial,
    read_result,
)

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("zero_wait")]

ATTEMPTS = 3
ALL_SOURCES = [1, 2, 3, 4, 5]


class Hits(BaseModel):
    source: int
    resultCount: int  # noqa: N815  # the wire name of the contract's empty-result field
    hits: list[str]


def make_source_server(behaviour: Callable[[int], None], calls: Counter[int]) -> MCPServer[Any]:
    """Five knowledge sources behind one read-only tool; `behaviour` decides who fails."""
    server = install(MCPServer("sources"))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search_source(source: int, query: str) -> Hits:
        calls[source] += 1
        behaviour(source)
        return Hits(source=source, resultCount=1, hits=[f"{query} in source {source}"])

    return server


def sources_4_and_5_time_out(source: int) -> None:
    if source >= 4:
        raise TimeoutError


def make_subagent(sources: MCPServer[Any]) -> MCPServer[Any]:
    """A subagent whose one tool fans out over the source server through a real client."""
    # One long-lived policy, as a real subagent keeps: its retry budget spans both runs.
    policy = RecoveryPolicy(max_attempts=ATTEMPTS)
    subagent = install(MCPServer("research-subagent"))

    @subagent.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def research(query: str, sources_to_search: list[int] = ALL_SOURCES) -> CallToolResult:
        async with Client(sources) as client:
            calls = {
                f"source_{n}": ToolCall(client, "search_source", {"source": n, "query": query})
                for n in sources_to_search
            }
            report = await gather_partial(calls, policy=policy)
        return report.to_tool_result()

    return subagent


@asynccontextmanager
async def coordinator(subagent: MCPServer[Any], mode: str) -> AsyncIterator[Client]:
    async with Client(subagent, mode=mode) as client:
        yield client


async def test_coordinator_receives_partial_answer_and_reruns_only_failed_sources(mode: str) -> None:
    calls: Counter[int] = Counter()
    subagent = make_subagent(make_source_server(sources_4_and_5_time_out, calls))
    with anyio.fail_after(20):
        async with coordinator(subagent, mode) as client:
            result = await client.call_tool("research", {"query": "refund policy"})
            outcome = read_result(result)
            report = read_partial(outcome)

            assert outcome.kind == "success"
            assert report is not None
            assert not report.complete
            assert sorted(report.succeeded) == ["source_1", "source_2", "source_3"]
            assert sorted(report.failed) == ["source_4", "source_5"]
            for failure in report.failed.values():
                assert failure.category is ErrorCategory.TRANSIENT
                assert failure.is_retryable
                assert failure.attempts == ATTEMPTS
            assert result.structured_content is not None
            assert result.structured_content["partial"] is True
            assert "3 of 5" in outcome.message
            assert calls == Counter({1: 1, 2: 1, 3: 1, 4: 3, 5: 3})

            step = plan_next_step(outcome)
            assert step.action == "rerun_failed"
            assert step.rerun == ("source_4", "source_5")

            rerun_sources = [int(name.removeprefix("source_")) for name in step.rerun]
            await client.call_tool("research", {"query": "refund policy", "sources_to_search": rerun_sources})

    assert [calls[n] for n in (1, 2, 3)] == [1, 1, 1], "sources that answered are never called again"
    assert calls[4] > ATTEMPTS
    assert calls[5] > ATTEMPTS


async def test_enough_answers_let_the_coordinator_proceed(mode: str) -> None:
    subagent = make_subagent(make_source_server(sources_4_and_5_time_out, Counter()))
    with anyio.fail_after(20):
        async with coordinator(subagent, mode) as client:
            outcome = read_result(await client.call_tool("research", {"query": "q"}))
    assert plan_next_step(outcome, min_answered=3).action == "proceed"


async def test_all_sources_failing_is_an_error_never_an_empty_success(mode: str) -> None:
    def all_time_out(source: int) -> None:
        raise TimeoutError

    subagent = make_subagent(make_source_server(all_time_out, Counter()))
    with anyio.fail_after(20):
        async with coordinator(subagent, mode) as client:
            result = await client.call_tool("research", {"query": "q"})

    assert result.is_error
    jsonschema.validate(result.structured_content, ENVELOPE_SCHEMA)
    outcome = read_result(result)
    assert outcome.category is ErrorCategory.TRANSIENT
    assert outcome.is_retryable
    assert result.structured_content is not None
    assert result.structured_content["answered"] == 0
    assert sorted(result.structured_content["failed"]) == [f"source_{n}" for n in ALL_SOURCES]
    assert plan_next_step(outcome).action == "rerun_failed"


async def test_all_sources_answering_is_a_complete_success(mode: str) -> None:
    subagent = make_subagent(make_source_server(lambda source: None, Counter()))
    with anyio.fail_after(20):
        async with coordinator(subagent, mode) as client:
            result = await client.call_tool("research", {"query": "q"})

    assert not result.is_error
    report = read_partial(result)
    assert report is not None
    assert report.complete
    assert result.structured_content is not None
    assert result.structured_content["partial"] is False
    assert result.structured_content["resultCount"] == 5
    assert plan_next_step(report).action == "proceed"


async def test_mixed_categories_escalate_what_a_rerun_cannot_fix(mode: str) -> None:
    def mixed(source: int) -> None:
        if source == 4:
            raise TimeoutError
        if source == 5:
            raise AccessDeniedError("No access", description="This source needs the research role. Escalate.")

    calls: Counter[int] = Counter()
    subagent = make_subagent(make_source_server(mixed, calls))
    with anyio.fail_after(20):
        async with coordinator(subagent, mode) as client:
            outcome = read_result(await client.call_tool("research", {"query": "q"}))

    report = read_partial(outcome)
    assert report is not None
    assert report.failed["source_5"].category is ErrorCategory.PERMISSION
    assert report.failed["source_5"].attempts == 1, "a permission error is never resent"
    assert calls[5] == 1
    step = plan_next_step(outcome)
    assert step.action == "rerun_failed"
    assert step.rerun == ("source_4",), "only the transient failure is worth re-running"


def failed(category: ErrorCategory | None) -> FailedCall:
    retryable = category is ErrorCategory.TRANSIENT
    return FailedCall(category=category, is_retryable=retryable, attempts=1, description="d")


@pytest.mark.parametrize(
    ("categories", "expected"),
    [
        ([ErrorCategory.TRANSIENT, ErrorCategory.TRANSIENT], ErrorCategory.TRANSIENT),
        ([ErrorCategory.TRANSIENT, ErrorCategory.VALIDATION], ErrorCategory.VALIDATION),
        ([ErrorCategory.VALIDATION, ErrorCategory.BUSINESS], ErrorCategory.BUSINESS),
        ([ErrorCategory.BUSINESS, ErrorCategory.PERMISSION, ErrorCategory.TRANSIENT], ErrorCategory.PERMISSION),
        ([None, ErrorCategory.TRANSIENT], ErrorCategory.BUSINESS),
    ],
)
def test_all_failed_category_is_the_one_whose_recovery_comes_first(
    categories: list[ErrorCategory | None], expected: ErrorCategory
) -> None:
    report = PartialReport(succeeded={}, failed={f"s{i}": failed(c) for i, c in enumerate(categories)})
    assert report.aggregated_category() is expected
    result = report.to_tool_result()
    assert result.is_error
    assert result.structured_content is not None
    assert result.structured_content["errorCategory"] == expected.value
    jsonschema.validate(result.structured_content, ENVELOPE_SCHEMA)


async def test_factories_run_beside_tool_calls_and_failures_do_not_cancel_siblings() -> None:
    async def answers() -> dict[str, int]:
        return {"resultCount": 2}

    async def crashes() -> object:
        raise ConnectionRefusedError

    with anyio.fail_after(10):
        report = await gather_partial({"good": answers, "bad": crashes}, policy=RecoveryPolicy(max_attempts=ATTEMPTS))
    assert report.succeeded["good"].structured == {"resultCount": 2}
    assert report.failed["bad"].category is ErrorCategory.TRANSIENT
    assert report.failed["bad"].attempts == ATTEMPTS, "connection refused means not executed: resent"


async def test_cancelling_the_coordinator_leaves_no_orphaned_sub_calls() -> None:
    started = 0
    finished_by_cancel = 0
    all_started = anyio.Event()

    async def hangs() -> object:
        nonlocal started, finished_by_cancel
        started += 1
        if started == 3:
            all_started.set()
        try:
            await anyio.Event().wait()
        finally:
            finished_by_cancel += 1
        return None  # pragma: no cover - never reached

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(partial(gather_partial, {"a": hangs, "b": hangs, "c": hangs}, policy=RecoveryPolicy()))
            await all_started.wait()
            group.cancel_scope.cancel()

    assert finished_by_cancel == 3


@pytest.mark.slow  # a server in a subprocess
async def test_partial_results_survive_a_stdio_hop(tmp_path: Any) -> None:
    """The subagent runs as a real subprocess; the coordinator reads it over stdio."""
    from mcp import StdioServerParameters

    script = tmp_path / "subagent.py"
    script.write_text(SUBAGENT_SCRIPT)
    params = StdioServerParameters(command=sys.executable, args=[str(script)])
    with anyio.fail_after(60):
        async with Client(params) as client:
            outcome = read_result(await client.call_tool("research", {"query": "q"}))
    report = read_partial(outcome)
    assert report is not None
    assert sorted(report.failed) == ["source_4", "source_5"]
    assert plan_next_step(outcome).rerun == ("source_4", "source_5")


SUBAGENT_SCRIPT = """
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from mcp_errors import RecoveryPolicy, ToolCall, gather_partial, install
from mcp_errors.testing import set_testing

set_testing()
sources = install(MCPServer("sources"))

@sources.tool(annotations=ToolAnnotations(read_only_hint=True))
def search_source(source: int, query: str) -> str:
    if source >= 4:
        raise TimeoutError
    return f"{query} in {source}"

subagent = install(MCPServer("subagent"))

@subagent.tool()
async def research(query: str) -> CallToolResult:
    async with Client(sources) as client:
        calls = {f"source_{n}": ToolCall(client, "search_source", {"source": n, "query": query}) for n in range(1, 6)}
        report = await gather_partial(calls, policy=RecoveryPolicy(max_attempts=2))
    return report.to_tool_result()

subagent.run()
"""


@pytest.mark.slow  # a server in a subprocess
async def test_sub_calls_on_an_sdk_client_session_over_stdio_recover_and_report_what_failed() -> None:
    """`gather_partial` takes the `ClientSession` of `stdio_client`, as `call_tool_with_recovery` does."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from servers import SERVERS_DIR

    params = StdioServerParameters(command=sys.executable, args=[str(SERVERS_DIR / "shop.py")])
    with anyio.fail_after(60):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            calls = {
                "orders": ToolCall(session, "search_orders", {}),  # fails twice, then answers
                "stock": ToolCall(session, "inventory_status", {}),  # never recovers
            }
            report = await gather_partial(calls, policy=RecoveryPolicy(max_attempts=ATTEMPTS))

    assert list(report.succeeded) == ["orders"]
    assert len(report.reports["orders"].attempts) == ATTEMPTS
    assert list(report.failed) == ["stock"]
    assert report.failed["stock"].category is ErrorCategory.TRANSIENT
    assert report.failed["stock"].attempts == ATTEMPTS


async def test_a_sub_call_that_crashes_is_reported_and_never_cancels_its_siblings() -> None:
    async def answers() -> dict[str, int]:
        return {"resultCount": 1}

    async def has_a_bug() -> object:
        raise ValueError("secret=hunter2 in /srv/app/tool.py")

    with anyio.fail_after(10):
        report = await gather_partial({"good": answers, "buggy": has_a_bug}, policy=RecoveryPolicy())
    assert report.succeeded["good"].structured == {"resultCount": 1}
    failure = report.failed["buggy"]
    assert (failure.code, failure.is_retryable) == ("INTERNAL_ERROR", False)
    text = report.to_tool_result().model_dump_json()
    assert "hunter2" not in text
    assert "/srv/app" not in text


async def test_a_write_with_an_unknown_outcome_is_escalated_not_rerun(mode: str) -> None:
    sources = install(MCPServer("writes"))
    writes: Counter[int] = Counter()

    @sources.tool()
    def publish(source: int) -> str:
        writes[source] += 1
        if source == 2:
            raise TimeoutError  # after the write: it may have landed
        return "published"

    with anyio.fail_after(20):
        async with Client(sources, mode=mode) as client:
            calls = {f"target_{n}": ToolCall(client, "publish", {"source": n}) for n in (1, 2)}
            report = await gather_partial(calls, policy=RecoveryPolicy())
    outcome = read_result(report.to_tool_result())
    read_back = read_partial(outcome)
    assert read_back is not None
    assert read_back.failed["target_2"].reason == "outcome_unknown"
    assert writes[2] == 1, "a non-idempotent write is not resent locally"
    assert plan_next_step(outcome).action == "escalate", "nor re-run by the coordinator"


async def test_a_fan_out_where_every_source_found_nothing_is_a_valid_empty_result() -> None:
    async def nothing() -> dict[str, int]:
        return {"resultCount": 0}

    with anyio.fail_after(10):
        report = await gather_partial({"a": nothing, "b": nothing}, policy=RecoveryPolicy())
    result = report.to_tool_result()
    assert not result.is_error
    outcome = read_result(result)
    assert outcome.kind == "empty"
    read_back = read_partial(outcome)
    assert read_back is not None
    assert all(answer.kind == "empty" for answer in read_back.succeeded.values())


@pytest.mark.parametrize("nothing_found", [None, [], {}, ""], ids=["none", "list", "object", "string"])
async def test_a_factory_that_found_nothing_is_an_empty_answer_as_the_same_answer_through_a_tool_call_is(
    mode: str, nothing_found: object
) -> None:
    sources = install(MCPServer("sources"))

    @sources.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search() -> list[str]:
        return []

    async def factory() -> object:
        return nothing_found

    with anyio.fail_after(10):
        async with Client(sources, mode=mode) as client:
            report = await gather_partial(
                {"factory": factory, "tool": ToolCall(client, "search")}, policy=RecoveryPolicy()
            )
    assert {name: answer.kind for name, answer in report.succeeded.items()} == {"factory": "empty", "tool": "empty"}
    result = report.to_tool_result()
    assert result.structured_content is not None
    assert (result.structured_content["answered"], result.structured_content["resultCount"]) == (2, 0)
    assert read_result(result).kind == "empty"


def test_a_rerun_merged_into_the_report_replaces_what_it_ran_again() -> None:
    ok = read_result(CallToolResult(content=[TextContent(type="text", text="hits")]))
    first = PartialReport(succeeded={"a": ok}, failed={"b": failed(ErrorCategory.TRANSIENT)}, order=("a", "b"))
    rerun = PartialReport(succeeded={"b": ok}, failed={}, order=("b",))
    merged = first.merged_with(rerun)
    assert merged.complete
    assert merged.names == ["a", "b"]


async def test_a_fan_out_of_writes_that_may_all_have_landed_is_not_a_retryable_error(mode: str) -> None:
    """Resending the whole fan-out could apply every write twice: the error must not invite it."""
    sources = install(MCPServer("writes"))
    writes: Counter[int] = Counter()

    @sources.tool()
    def publish(source: int) -> str:
        writes[source] += 1
        raise TimeoutError  # after the write: it may have landed

    with anyio.fail_after(20):
        async with Client(sources, mode=mode) as client:
            calls = {f"target_{n}": ToolCall(client, "publish", {"source": n}) for n in (1, 2)}
            report = await gather_partial(calls, policy=RecoveryPolicy())
    result = report.to_tool_result()
    assert result.is_error
    assert result.structured_content is not None
    jsonschema.validate(result.structured_content, ENVELOPE_SCHEMA)
    assert (result.structured_content["errorCategory"], result.structured_content["isRetryable"]) == ("business", False)
    assert writes == Counter({1: 1, 2: 1})
    assert plan_next_step(read_result(result)).action == "escalate"


async def test_answers_that_found_nothing_beside_a_failure_do_not_hide_the_failure() -> None:
    sources = install(MCPServer("sources"))

    @sources.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search_source(source: int) -> Hits:
        if source == 2:
            raise TransientError("Source timed out", description="Resend after a short wait.")
        return Hits(source=source, resultCount=0, hits=[])

    with anyio.fail_after(20):
        async with Client(sources) as client:
            calls = {name: ToolCall(client, "search_source", {"source": n}) for name, n in (("a", 1), ("b", 2))}
            report = await gather_partial(calls, policy=RecoveryPolicy())
    outcome = read_result(report.to_tool_result())
    assert (outcome.kind, outcome.ok) == ("success", True)
    read_back = read_partial(outcome)
    assert read_back is not None
    assert list(read_back.failed) == ["b"]
    assert plan_next_step(outcome) == plan_next_step(read_back)
    assert plan_next_step(outcome).rerun == ("b",)


async def test_a_deadline_is_blamed_on_the_servers_wait_only_when_that_wait_reached_past_it(mode: str) -> None:
    sources = install(MCPServer("sources"))
    read_only = ToolAnnotations(read_only_hint=True)

    @sources.tool(annotations=read_only)
    async def slow_search() -> str:
        await anyio.Event().wait()  # answers only after the caller gave up
        raise AssertionError("unreachable")

    @sources.tool(annotations=read_only)
    def busy_search() -> str:
        raise TransientError("Index busy", description="Resend later.", retry_after_seconds=60)

    @sources.tool(annotations=read_only)
    def search() -> str:
        return "3 hits"

    policy = RecoveryPolicy(attempt_timeout=0.1, deadline=0.25, initial_wait=0.0, max_attempts=10)
    with anyio.fail_after(10):
        async with Client(sources, mode=mode) as client:
            calls = {name: ToolCall(client, name) for name in ("slow_search", "busy_search", "search")}
            report = await gather_partial(calls, policy=policy)
    read_back = read_partial(read_result(report.to_tool_result()))
    assert read_back is not None
    for seen in (report, read_back):
        slow, busy = seen.failed["slow_search"], seen.failed["busy_search"]
        assert (slow.reason, slow.retry_after_seconds) == ("deadline", None)
        assert (busy.reason, busy.retry_after_seconds) == ("deadline", 60)
        summary = seen.summary()
        assert "server" not in summary[summary.index("slow_search") : summary.index("busy_search")]
        assert "server" in summary[summary.index("busy_search") :]
    assert read_back.summary() == report.summary()


def test_a_report_read_back_keeps_its_order_its_empty_answers_and_its_counts() -> None:
    answers = {
        "b": CallToolResult(content=[], structured_content={"result": []}),
        "c": CallToolResult(content=[]),
        "d": CallToolResult(content=[TextContent(type="text", text="3 hits")]),
    }
    succeeded = {name: read_result(result) for name, result in answers.items()}
    report = PartialReport(
        succeeded=succeeded, failed={"a": failed(ErrorCategory.TRANSIENT)}, order=("a", "b", "c", "d")
    )
    written = report.to_tool_result()
    back = read_partial(written)
    assert back is not None
    assert back.names == ["a", "b", "c", "d"]
    assert {name: o.kind for name, o in back.succeeded.items()} == {"b": "empty", "c": "empty", "d": "success"}
    assert back.to_tool_result().structured_content == written.structured_content


def test_a_report_from_another_writer_with_an_odd_attempt_count_is_still_read() -> None:
    body = {
        "partial": True,
        "answered": 0,
        "total": 1,
        "failed": {"s": {"errorCategory": "transient", "attempts": "3x"}},
    }
    back = read_partial(CallToolResult(content=[], structured_content=body, is_error=True))
    assert back is not None
    assert back.failed["s"].attempts == 0


async def test_sub_calls_to_different_servers_keep_separate_retry_budgets() -> None:
    async def down(name: str, arguments: dict[str, Any], meta: Any) -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text="busy")],
            structured_content={"errorCategory": "transient", "isRetryable": True, "description": "Resend later."},
            is_error=True,
        )

    policy = RecoveryPolicy()
    calls = {f"s{n}": ToolCall(down, "search", {"n": n}, tools=[], server="server-a") for n in range(4)}
    with anyio.fail_after(10):
        await gather_partial(calls, policy=policy)
    assert policy.budget_for("server-a").tokens < policy.budget_for("server-b").tokens


# A report from another writer may say anything in any field: the coordinator still gets a
# next step, and reruns only sources that failed in a way a resend can fix.


def plan_for(body: dict[str, Any], *, is_error: bool) -> tuple[NextStep, PartialReport | None]:
    result = CallToolResult(
        content=[TextContent(type="text", text="report")], structured_content=body, is_error=is_error
    )
    return plan_next_step(read_result(result)), read_partial(result)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(PARTIAL_REPORTS, st.booleans())
def test_any_json_in_a_partial_report_gives_a_next_step(body: dict[str, Any], is_error: bool) -> None:
    step, report = plan_for(body, is_error=is_error)
    assert step.action in ("proceed", "rerun_failed", "escalate")
    if step.rerun:
        assert report is not None
        assert all(report.failed[name].category is ErrorCategory.TRANSIENT for name in step.rerun)
        assert not set(step.rerun) & set(report.succeeded)


@pytest.mark.parametrize("results", [5, "ab", True, [1, 2], None], ids=repr)
def test_a_report_whose_results_are_not_an_object_still_gives_a_next_step(results: object) -> None:
    body = {"answered": 1, "total": 2, "results": results, "failed": {"b": {"errorCategory": "transient"}}}
    step, report = plan_for(body, is_error=False)
    assert report is not None
    assert report.names == ["b"]
    assert step.action == "escalate"


def test_a_failure_that_claims_to_be_retryable_but_is_not_transient_is_not_rerun() -> None:
    failed = {"b": {"errorCategory": "business", "isRetryable": True, "reason": "retries_exhausted"}}
    step, _ = plan_for({"answered": 0, "total": 1, "failed": failed}, is_error=True)
    assert step.action == "escalate"


@pytest.mark.parametrize("value", [HUGE_INT, nested(5000)], ids=["huge-int", "nested-past-the-recursion-limit"])
def test_values_no_encoder_can_write_are_read_from_a_report(value: object) -> None:
    body = {
        "answered": 1,
        "results": {"a": value},
        "failed": {"b": {"errorCategory": "transient", "description": value, "attempts": value}},
        "order": [value, "a", "b"],
    }
    step, report = plan_for(body, is_error=False)
    assert report is not None
    assert set(report.names) == {"a", "b"}
    assert step.action == "escalate"
