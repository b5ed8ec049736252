"""`TaskPolling` and the recovery policy on tools that run as tasks: polls, deadlines, cancels, reports.

The calls reach the real `fastmcp-tasks` extension (the reports server of
`tests/servers/task_reports.py`), so they are marked `tasks` and run in the second
environment (`tests/tasks-env`, through `tests/test_tasks_env.py` in `uv run pytest`); the
reading of task states runs everywhere.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest
import redis.asyncio
from mcp import Client
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    REQUEST_TIMEOUT,
    CallToolResult,
    RequestParams,
    TextContent,
)

from mcp_errors import (
    Decision,
    RecoveryPolicy,
    TaskPolling,
    ToolCall,
    call_tool_with_recovery,
    gather_partial,
    plan_next_step,
    read_partial,
    read_result,
)
from mcp_errors._client import task_polling
from mcp_errors._client.task_polling import watching_task
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META, TASK_META, TASKS_EXTENSION
from mcp_errors.stores import MemoryStore
from servers.checks import assert_sound_outcome
from services import require_fastmcp_tasks

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

# -- reading a task's state (a `tasks/get` answer), which needs no server --


def state(status: str, **fields: Any) -> dict[str, Any]:
    return {"taskId": "t-9", "status": status, "createdAt": "2026-01-01T00:00:00Z", "ttlMs": 60_000, **fields}


@pytest.mark.parametrize(
    ("status", "fields", "kind", "category", "code"),
    [
        ("completed", {"result": {"content": [{"type": "text", "text": "42"}]}}, "success", None, None),
        ("failed", {"error": {"code": -32603, "message": "boom at /srv/x.py"}}, "error", "business", "TASK_FAILED"),
        ("failed", {"error": {"code": REQUEST_TIMEOUT, "message": "late"}}, "error", "transient", "TASK_FAILED"),
        ("cancelled", {}, "error", "business", "TASK_CANCELLED"),
        ("working", {}, "error", None, "TASK_RUNNING"),
        ("input_required", {"inputRequests": {}}, "error", None, "TASK_INPUT_REQUIRED"),
    ],
)
def test_a_tasks_state_reads_as_its_result_or_as_an_outcome_that_says_what_to_do(
    status: str, fields: dict[str, Any], kind: str, category: str | None, code: str | None
) -> None:
    outcome = read_result(state(status, **fields))
    assert_sound_outcome(outcome)
    assert (outcome.kind, outcome.category, outcome.code, outcome.task_id) == (kind, category, code, "t-9")
    if kind == "error":
        assert outcome.execution_state == "outcome_unknown"  # a task that started may have applied its work
        assert "/srv/x.py" not in outcome.description
    if status == "failed":
        assert outcome.category_inferred


def test_a_completed_task_without_a_tool_result_reads_as_an_unreadable_answer() -> None:
    outcome = read_result(state("completed", result={"content": "not a list"}))
    assert (outcome.kind, outcome.execution_state, outcome.task_id) == ("error", "outcome_unknown", None)


def test_a_tool_that_must_run_as_a_task_refuses_a_client_without_the_extension_and_says_which() -> None:
    error = MCPError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        "Tool requires the tasks extension",
        {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}},
    )
    outcome = read_result(error)
    assert (outcome.category, outcome.code, outcome.execution_state) == (
        "business",
        "CLIENT_CAPABILITY_REQUIRED",
        "not_executed",
    )
    assert "TaskPolling" in outcome.description


def test_a_result_that_names_its_task_reads_with_the_tasks_id() -> None:
    result = CallToolResult(content=[TextContent(type="text", text="ok")], _meta={TASK_META: {"taskId": "t-3"}})
    assert read_result(result).task_id == "t-3"


# -- end to end, with fastmcp-tasks --


@pytest.fixture
def reports() -> Any:
    require_fastmcp_tasks()
    from servers import task_reports

    return task_reports


def tasking(server: Any, **options: Any) -> Client:
    return Client(server._mcp_server, extensions=[TaskPolling()], **options)


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_task_is_polled_no_faster_than_the_server_asks(reports: Any) -> None:
    server, _ = reports.build()
    async with tasking(server) as client:
        with watching_task(None) as watch:
            started = anyio.current_time()
            result = await client.call_tool("slow", {"seconds": 0.3})
            elapsed = anyio.current_time() - started
    assert read_result(result).message == "slept"
    interval = reports.POLL.total_seconds()
    assert 1 <= watch.polls <= math.floor(elapsed / interval) + 1
    assert watch.status == "completed"
    assert watch.cancel == "not sent"


@pytest.mark.tasks
@pytest.mark.anyio
async def test_at_the_deadline_recovery_cancels_the_task_and_says_so(reports: Any) -> None:
    server, runs = reports.build()
    async with tasking(server) as client:
        with anyio.fail_after(20):
            report = await call_tool_with_recovery(client, "slow", {"seconds": 30}, policy=RecoveryPolicy(deadline=0.5))
            await runs.cancelled.wait()  # the task's own work was stopped, on the server
    outcome = report.outcome
    assert report.decision is Decision.ESCALATE
    assert (outcome.category, outcome.code, outcome.execution_state) == (
        "transient",
        "TASK_DEADLINE",
        "outcome_unknown",
    )
    assert outcome.task_id is not None
    assert len(report.attempts) == 1
    assert runs.started.count("slow") == 1


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_plain_call_with_a_read_timeout_cancels_its_task_at_the_timeout(reports: Any) -> None:
    server, runs = reports.build()
    async with tasking(server) as client:
        with anyio.fail_after(20):
            result = await client.call_tool("slow", {"seconds": 30}, read_timeout_seconds=0.3)
            await runs.cancelled.wait()
    assert read_result(result).code == "TASK_DEADLINE"


@pytest.mark.tasks
@pytest.mark.anyio
async def test_cancelling_the_caller_cancels_the_task_it_started(reports: Any) -> None:
    server, runs = reports.build()
    async with tasking(server) as client:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                group.start_soon(client.call_tool, "slow", {"seconds": 30})
                await runs.sleeping.wait()
                group.cancel_scope.cancel()
            await runs.cancelled.wait()


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_task_that_asks_for_input_this_client_does_not_give_is_cancelled(reports: Any) -> None:
    server, _ = reports.build()
    async with tasking(server) as client:
        with anyio.fail_after(20):
            outcome = read_result(await client.call_tool("approve_payout", {"amount": 900.0}))
    assert (outcome.category, outcome.code, outcome.execution_state) == (
        "business",
        "TASK_INPUT_REQUIRED",
        "outcome_unknown",
    )


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_task_the_server_forgot_while_it_ran_reads_as_expired(reports: Any, redis_url: str) -> None:
    server, runs = reports.build(docket=redis_url)
    async with tasking(server) as client:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                results: list[CallToolResult] = []

                async def call() -> None:
                    results.append(await client.call_tool("slow", {"seconds": 2}))

                group.start_soon(call)
                await runs.sleeping.wait()
                connection = redis.asyncio.from_url(redis_url)
                await connection.flushdb()  # the backend loses every task record
                await connection.aclose()
    assert read_result(results[0]).code == "TASK_EXPIRED"


@pytest.mark.tasks
@pytest.mark.anyio
async def test_recovery_does_not_resend_into_a_task_the_key_already_holds(reports: Any) -> None:
    server, runs = reports.build(store=MemoryStore())
    async with tasking(server) as client:
        report = await call_tool_with_recovery(
            client, "warehouse_query", {"sql": "select 1"}, policy=RecoveryPolicy(initial_wait=0.01, deadline=20)
        )
    # The timeout may have written: the server keeps the task for the key, and a resend got it again.
    assert (report.decision, report.reason, report.outcome.code) == (
        Decision.ESCALATE,
        "outcome_unknown",
        "UPSTREAM_TIMEOUT",
    )
    assert len(report.attempts) == 2
    assert report.attempts[0].outcome.task_id == report.attempts[1].outcome.task_id
    assert runs.started.count("query") == 1


@pytest.mark.tasks
@pytest.mark.anyio
async def test_gather_partial_reports_a_sub_task_still_running_at_the_deadline_with_its_task(reports: Any) -> None:
    server, _ = reports.build()
    async with tasking(server) as client:
        with anyio.fail_after(20):
            report = await gather_partial(
                {
                    "q3": ToolCall(client, "refund_batch", {"total": 12_000.0}),
                    "nightly": ToolCall(client, "slow", {"seconds": 3}),
                    "fast": ToolCall(client, "slow", {"seconds": 0.05}),
                },
                policy=RecoveryPolicy(deadline=1.0),
            )
    assert set(report.succeeded) == {"fast"}
    running = report.failed["nightly"]
    assert (running.code, running.attempts, running.category) == ("TASK_DEADLINE", 1, "transient")
    assert running.task_id is not None
    assert report.failed["q3"].task_id is not None
    assert report.failed["q3"].code == "REFUND_BATCH_LIMIT"
    # What the coordinator reads back keeps the tasks, and does not rerun a write that may have run.
    read = read_partial(read_result(report.to_tool_result()))
    assert read is not None
    assert read.failed["nightly"].task_id == running.task_id
    assert plan_next_step(read).action == "escalate"


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_legacy_connection_gets_no_task_and_reads_why(reports: Any) -> None:
    server, _ = reports.build()
    async with tasking(server, mode="legacy") as client:
        report = await call_tool_with_recovery(client, "slow", {"seconds": 0.1})
    assert (report.decision, report.outcome.code) == (Decision.ESCALATE, "CLIENT_CAPABILITY_REQUIRED")


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_keyed_resend_while_its_task_runs_polls_the_same_task(reports: Any) -> None:
    server, runs = reports.build(store=MemoryStore())
    meta = {IDEMPOTENCY_KEY_META: "nightly-7"}
    async with tasking(server) as client:
        with anyio.fail_after(20):
            created = await client.session.call_tool("slow", {"seconds": 0.4}, meta=meta, allow_claimed=True)  # type: ignore[call-overload]
            again = await client.call_tool("slow", {"seconds": 0.4}, meta=meta)  # type: ignore[arg-type]
    assert read_result(again).task_id == getattr(created, "task_id", None)
    assert runs.started.count("slow") == 1


# -- a low-level task server that asks for 10^9 ms between polls (runs in the main environment) --


class _PacedTasks(Extension):
    """The tasks extension as a hostile server plays it: every answer asks for 10^9 ms between polls.

    Its one task ends `completed` half a second after it starts; with `fail_get`, every
    `tasks/get` answers JSON-RPC error -32603 instead.
    """

    identifier = TASKS_EXTENSION

    def __init__(self, *, fail_get: bool = False) -> None:
        self.fail_get = fail_get
        self.started = math.inf
        self.gets = 0
        self.cancels = 0

    def _task(self, status: str, **fields: Any) -> dict[str, Any]:
        return {"taskId": "t-1", "status": status, "createdAt": "2026-01-01T00:00:00Z", "ttlMs": 60_000,
                "pollIntervalMs": 10**9, **fields}  # fmt: skip

    async def intercept_tool_call(self, params: Any, ctx: Any, call_next: Any) -> dict[str, Any]:
        self.started = anyio.current_time()
        return {"resultType": "task", **self._task("working")}

    def methods(self) -> tuple[MethodBinding, ...]:
        return (
            MethodBinding("tasks/get", _TaskIdParams, self._get),
            MethodBinding("tasks/cancel", _TaskIdParams, self._cancel),
        )

    async def _get(self, ctx: Any, params: Any) -> dict[str, Any]:
        self.gets += 1
        if self.fail_get:
            raise MCPError(INTERNAL_ERROR, "task store unavailable")
        if anyio.current_time() - self.started < 0.5:
            return self._task("working")
        return self._task("completed", result={"content": [{"type": "text", "text": "report ready"}]})

    async def _cancel(self, ctx: Any, params: Any) -> dict[str, Any]:
        self.cancels += 1
        return self._task("cancelled")


class _TaskIdParams(RequestParams):
    taskId: str  # noqa: N815 (the wire's name)


def paced(extension: _PacedTasks) -> Client:
    server = MCPServer("paced", extensions=[extension])

    @server.tool(structured_output=False)
    def quarterly_report() -> None:
        """Never runs: the extension answers every call with a task."""

    return Client(server, extensions=[TaskPolling()])


@pytest.mark.anyio
async def test_a_task_that_ended_in_half_a_second_is_seen_before_the_deadline_whatever_interval_the_server_asks() -> (
    None
):
    tasks = _PacedTasks()
    async with paced(tasks) as client:
        with anyio.fail_after(20):
            report = await call_tool_with_recovery(client, "quarterly_report", {}, policy=RecoveryPolicy(deadline=3))
    assert report.outcome.ok, report.outcome
    assert report.outcome.message == "report ready"
    assert tasks.cancels == 0


@pytest.mark.anyio
async def test_a_plain_call_with_a_read_timeout_sees_its_task_end_whatever_interval_the_server_asks() -> None:
    tasks = _PacedTasks()
    async with paced(tasks) as client:
        with anyio.fail_after(20):
            started = anyio.current_time()
            result = await client.call_tool("quarterly_report", {}, read_timeout_seconds=3)
            elapsed = anyio.current_time() - started
    assert read_result(result).message == "report ready"
    assert elapsed < 2.5  # seen within the time, not at its very end
    assert tasks.cancels == 0


@pytest.mark.anyio
async def test_without_a_deadline_the_servers_interval_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    assert task_polling.MAX_POLL_SECONDS <= 60  # never days, whatever the server asks
    monkeypatch.setattr(task_polling, "MAX_POLL_SECONDS", 0.6)  # the cap, shortened for the test
    tasks = _PacedTasks()
    async with paced(tasks) as client:
        with anyio.fail_after(20), watching_task(None) as watch:
            result = await client.call_tool("quarterly_report", {})
    assert read_result(result).message == "report ready"
    assert watch.polls <= 2


@pytest.mark.anyio
async def test_a_failing_tasks_get_is_reported_as_what_it_was_not_as_a_deadline() -> None:
    tasks = _PacedTasks(fail_get=True)
    async with paced(tasks) as client:
        with anyio.fail_after(20):
            started = anyio.current_time()
            report = await call_tool_with_recovery(client, "quarterly_report", {}, policy=RecoveryPolicy(deadline=10))
            elapsed = anyio.current_time() - started
    outcome = report.outcome
    assert_sound_outcome(outcome)
    assert (outcome.category, outcome.code, outcome.execution_state) == (
        "transient",
        "TASK_POLL_FAILED",
        "outcome_unknown",
    )
    assert outcome.task_id == "t-1"
    assert tasks.cancels == 1  # not left running for nobody
    assert elapsed < 10  # the first poll came within half the time, and its failure ended the call


@pytest.mark.anyio
async def test_a_failing_tasks_get_on_a_plain_call_answers_in_the_contract() -> None:
    tasks = _PacedTasks(fail_get=True)
    async with paced(tasks) as client:
        with anyio.fail_after(20):
            outcome = read_result(await client.call_tool("quarterly_report", {}, read_timeout_seconds=1))
    assert (outcome.code, outcome.execution_state, outcome.task_id) == ("TASK_POLL_FAILED", "outcome_unknown", "t-1")
