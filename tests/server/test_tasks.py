"""Tools that run as tasks (SEP-2663) on an installed fastmcp server, with the real `fastmcp-tasks` extension.

Every failure of a task completes the task with the contract and no raw text; a keyed task is
created once, whichever replica and store; over stdio too, and with two server processes
sharing Redis (Docket's backend) and an idempotency store. The end-to-end tests need
`fastmcp-tasks`, which pins an older fastmcp: they are marked `tasks` and run in the second
environment (`tests/tasks-env`; `uv run pytest` runs them there through
`tests/test_tasks_env.py`); the reading of a task's state runs everywhere.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY, URL_ELICITATION_REQUIRED, CallToolResult

from mcp_errors import RecoveryPolicy, TaskPolling, call_tool_with_recovery, read_result
from mcp_errors._server.tasks import task_state_in_contract
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META, REPLAYED_META
from mcp_errors.stores import IdempotencyStore, MemoryStore, open_store
from servers.checks import assert_nothing_leaks, check_error
from services import require_fastmcp_tasks

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

SERVER_SCRIPT = Path(__file__).parents[1] / "servers" / "task_reports.py"


def wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


# -- a task's state in the contract: what `tasks/get` answers, whatever the extension wrote --


def failed(message: str, code: int = INTERNAL_ERROR) -> dict[str, Any]:
    return {"taskId": "t-1", "status": "failed", "error": {"code": code, "message": message}, "ttlMs": 1000}


def test_a_task_that_failed_in_the_server_completes_with_an_internal_error_and_none_of_its_text() -> None:
    state = task_state_in_contract(failed("snapshot for postgres://svc:pw@db/x could not be decrypted"))
    assert state["status"] == "completed"
    assert "error" not in state
    envelope = check_error(state["result"], None)
    assert (envelope["errorCategory"], envelope["code"]) == ("business", "INTERNAL_ERROR")
    assert_nothing_leaks(state["result"], "postgres://", "decrypted")
    # Polled again (from any replica), the same task gives the same errorId.
    assert (
        task_state_in_contract(failed("other words"))["result"]["structuredContent"]["errorId"] == (envelope["errorId"])
    )


def test_a_task_stopped_at_the_workers_time_limit_completes_with_a_transient_timeout() -> None:
    state = task_state_in_contract(failed("Docket task anon:t-1:tool:tool%3Areport%40 exceeded timeout of 30.0s"))
    envelope = check_error(state["result"], None)
    assert (envelope["errorCategory"], envelope["code"], envelope["executionState"]) == (
        "transient",
        "TASK_TIMEOUT",
        "outcome_unknown",
    )
    assert_nothing_leaks(state["result"], "anon:t-1")


def test_a_json_rpc_error_the_client_must_act_on_stays_the_failed_tasks_error() -> None:
    state = failed("Sign in first", code=URL_ELICITATION_REQUIRED)
    assert task_state_in_contract(state) is state


def test_a_cancelled_task_gets_a_status_message_and_reads_as_an_unknown_outcome() -> None:
    state = task_state_in_contract({"taskId": "t-1", "status": "cancelled"})
    assert state["statusMessage"]
    outcome = read_result(state)
    assert (outcome.category, outcome.code, outcome.execution_state) == (
        "business",
        "TASK_CANCELLED",
        "outcome_unknown",
    )
    assert outcome.task_id == "t-1"


def test_working_and_completed_tasks_pass_unchanged() -> None:
    for state in ({"taskId": "t", "status": "working"}, {"taskId": "t", "status": "completed", "result": {}}):
        assert task_state_in_contract(state) is state


# -- end to end, with fastmcp-tasks --


@pytest.fixture
def reports() -> Any:
    """The reports server module (it imports `fastmcp-tasks`)."""
    require_fastmcp_tasks()
    from servers import task_reports

    return task_reports


FAILURES = [
    ("warehouse_query", {"sql": "select 1"}, "transient", "UPSTREAM_TIMEOUT"),
    ("refund_batch", {"total": 12_000.0}, "business", "REFUND_BATCH_LIMIT"),
    ("crash", {}, "business", "INTERNAL_ERROR"),
    ("bounded", {}, "transient", "TASK_TIMEOUT"),
]


@pytest.mark.tasks
@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "arguments", "category", "code"), FAILURES, ids=[case[0] for case in FAILURES])
async def test_every_failure_of_a_task_completes_it_with_the_contract_and_no_raw_text(
    reports: Any, tool: str, arguments: dict[str, Any], category: str, code: str
) -> None:
    from fastmcp import Client as FastMCPClient
    from fastmcp_tasks import call_tool_task

    server, _ = reports.build()
    async with FastMCPClient(server) as client:
        # The two paths: fastmcp's client polling the task itself, and a task handle.
        polled = wire(await client.call_tool_mcp(tool, arguments))
        task = await call_tool_task(client, tool, arguments, raise_on_error=False)
        with anyio.fail_after(10):
            state = await task.wait(timeout=10)
    assert state.status == "completed"  # an isError result completes a task (SEP-2663)
    for result in (polled, state.result):
        envelope = check_error(result, None)
        assert (envelope["errorCategory"], envelope["code"]) == (category, code)
        assert_nothing_leaks(result, reports.LEAKED_PASSWORD, reports.LEAKED_DSN, reports.LEAKED_PATH)


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_task_failure_reaches_an_mcp_client_with_task_polling_and_reads_as_the_tools(reports: Any) -> None:
    server, _ = reports.build()
    async with Client(server._mcp_server, extensions=[TaskPolling()]) as client:
        result = await client.call_tool("refund_batch", {"total": 12_000.0})
    outcome = read_result(result)
    assert (outcome.category, outcome.code, outcome.source) == ("business", "REFUND_BATCH_LIMIT", "envelope")
    assert outcome.task_id is not None


@pytest.mark.tasks
@pytest.mark.anyio
async def test_the_same_tool_called_without_a_task_fails_in_the_contract_as_before(reports: Any, mode: str) -> None:
    server, _ = reports.build()
    async with Client(server._mcp_server, mode=mode) as plain:
        inline = wire(await plain.call_tool("optional_report", {"quarter": "Q3"}))
    async with Client(server._mcp_server, extensions=[TaskPolling()]) as tasking:
        as_task = await tasking.call_tool("optional_report", {"quarter": "Q3"})
    assert read_result(as_task).task_id is not None
    for result in (inline, wire(as_task)):
        assert check_error(result, None)["code"] == "UPSTREAM_TIMEOUT"
        assert_nothing_leaks(result, reports.LEAKED_PASSWORD)


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_json_rpc_error_the_client_must_act_on_ends_the_task_failed_with_its_code(reports: Any) -> None:
    from fastmcp import Client as FastMCPClient
    from fastmcp_tasks import call_tool_task

    server, _ = reports.build()
    async with FastMCPClient(server) as client:
        task = await call_tool_task(client, "needs_sampling", {}, raise_on_error=False)
        state = await task.wait(timeout=10)
    assert state.status == "failed"
    assert state.error is not None
    assert state.error["code"] == MISSING_REQUIRED_CLIENT_CAPABILITY


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_cancelled_task_stops_its_work_and_says_what_its_caller_should_do(reports: Any) -> None:
    from fastmcp import Client as FastMCPClient
    from fastmcp_tasks import call_tool_task

    server, runs = reports.build()
    async with FastMCPClient(server) as client:
        task = await call_tool_task(client, "slow", {"seconds": 30})
        await task.wait(state="working", timeout=10)
        await runs.sleeping.wait()
        await task.cancel()
        with anyio.fail_after(10):
            await runs.cancelled.wait()
        state = await task.wait(timeout=10)
    assert state.status == "cancelled"
    assert state.status_message is not None
    assert "read-only tool" in state.status_message


# -- exactly-once creation of a keyed task --


async def call_with_key(client: Client, tool: str, arguments: dict[str, Any], key: str) -> CallToolResult:
    return await client.call_tool(tool, arguments, meta={IDEMPOTENCY_KEY_META: key})  # type: ignore[arg-type]


@asynccontextmanager
async def clients(*servers: Any, polling: bool = True) -> AsyncIterator[list[Client]]:
    async with AsyncExitStack() as stack:
        extensions = [TaskPolling()] if polling else []
        yield [await stack.enter_async_context(Client(server, extensions=extensions)) for server in servers]


@pytest.fixture(params=["memory", "sqlite", "postgres", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    kind = request.param
    if kind == "memory":
        return "memory://"
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'keys.sqlite3'}"
    url: str = request.getfixturevalue(f"{kind}_url")
    return url


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_keyed_task_is_created_once_and_a_resend_to_another_replica_gets_the_same_task(
    reports: Any, store_url: str, redis_url: str, tmp_path: Path
) -> None:
    # Two replicas: one idempotency store (a memory store shared by object), one Docket backend.
    store: IdempotencyStore = MemoryStore() if store_url == "memory://" else open_store(store_url)
    lines = tmp_path / "runs.txt"
    lines.touch()
    queue = f"reports-{tmp_path.name}"
    first, _ = reports.build(docket=redis_url, docket_name=queue, store=store, lines=lines)
    second, _ = reports.build(docket=redis_url, docket_name=queue, store=store, lines=lines)
    key = f"report-{tmp_path.name}"
    async with clients(first._mcp_server, second._mcp_server) as (a, b):
        with anyio.fail_after(30):
            results = [await call_with_key(client, "slow", {"seconds": 0.2}, key) for client in (a, b)]
    outcomes = [read_result(result) for result in results]
    assert outcomes[0].task_id is not None
    assert outcomes[0].task_id == outcomes[1].task_id
    assert [outcome.message for outcome in outcomes] == ["slept", "slept"]
    assert lines.read_text(encoding="utf-8").count("slow pid=") == 1
    await store.aclose()


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_resend_that_does_not_ask_for_a_task_waits_for_the_keyed_task_then_gets_its_result(
    reports: Any,
) -> None:
    server, runs = reports.build(store=MemoryStore())
    async with clients(server._mcp_server) as (tasking,), clients(server._mcp_server, polling=False) as (plain,):
        created = await tasking.session.call_tool(  # type: ignore[call-overload]
            "slow", {"seconds": 0.3}, meta={IDEMPOTENCY_KEY_META: "k-1"}, allow_claimed=True
        )
        running = read_result(await call_with_key(plain, "slow", {"seconds": 0.3}, "k-1"))
        assert (running.code, running.execution_state) == ("IN_PROGRESS", "not_executed")
        with anyio.fail_after(10):
            while True:
                done = await call_with_key(plain, "slow", {"seconds": 0.3}, "k-1")
                if not done.is_error:
                    break
                await anyio.sleep(0.05)
    assert read_result(done).message == "slept"
    assert (done.meta or {}).get(REPLAYED_META) is True
    assert runs.started.count("slow") == 1
    assert getattr(created, "task_id", None) is not None


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_task_that_ended_without_applying_anything_runs_anew_under_its_key_once(reports: Any) -> None:
    server, runs = reports.build(store=MemoryStore())
    async with clients(server._mcp_server) as (client,):
        busy, done, again = [
            read_result(await call_with_key(client, "quarterly_report", {"quarter": "Q3"}, "q3-1")) for _ in range(3)
        ]
    assert (busy.code, busy.execution_state) == ("WAREHOUSE_BUSY", "not_executed")
    assert done.ok
    assert done.structured == {"quarter": "Q3", "revenue": 1250}
    assert done.task_id != busy.task_id  # the second run is a new task...
    assert again.task_id == done.task_id
    assert again.ok
    assert runs.started.count("report Q3") == 2


@pytest.mark.tasks
@pytest.mark.anyio
async def test_recovery_resends_a_task_that_failed_without_applying_anything_and_gets_the_report(
    reports: Any,
) -> None:
    server, runs = reports.build(store=MemoryStore())
    async with clients(server._mcp_server) as (client,):
        report = await call_tool_with_recovery(
            client, "quarterly_report", {"quarter": "Q4"}, policy=RecoveryPolicy(initial_wait=0.01, deadline=20)
        )
    assert report.decision == "done"
    assert [attempt.outcome.code for attempt in report.attempts] == ["WAREHOUSE_BUSY", None]
    assert runs.started.count("report Q4") == 2


# -- over stdio, and two server processes sharing Redis and a store --


def stdio(*arguments: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(SERVER_SCRIPT), *arguments])


@pytest.mark.tasks
@pytest.mark.anyio
async def test_over_stdio_a_tasks_failure_is_in_the_contract_and_recovery_gets_the_report(
    reports: Any, tmp_path: Path
) -> None:
    async with Client(stdio("--store", f"sqlite:///{tmp_path / 'keys.sqlite3'}"), extensions=[TaskPolling()]) as client:
        with anyio.fail_after(30):
            leaked = wire(await client.call_tool("warehouse_query", {"sql": "select 1"}))
            report = await call_tool_with_recovery(
                client, "quarterly_report", {"quarter": "Q1"}, policy=RecoveryPolicy(initial_wait=0.01, deadline=20)
            )
    assert check_error(leaked, None)["code"] == "UPSTREAM_TIMEOUT"
    assert_nothing_leaks(leaked, reports.LEAKED_PASSWORD, reports.LEAKED_DSN)
    assert report.decision == "done"
    assert len(report.attempts) == 2


@pytest.mark.tasks
@pytest.mark.anyio
async def test_keyed_task_creation_happens_once_across_two_server_processes_sharing_redis_and_a_store(
    reports: Any, redis_url: str, tmp_path: Path
) -> None:
    lines = tmp_path / "runs.txt"
    lines.touch()
    shared = ["--docket", redis_url, "--docket-name", f"reports-{tmp_path.name}", "--runs", str(lines)]
    store = ["--store", f"sqlite:///{tmp_path / 'keys.sqlite3'}"]
    async with (
        Client(stdio(*shared, *store), extensions=[TaskPolling()]) as a,
        Client(stdio(*shared, *store), extensions=[TaskPolling()]) as b,
    ):
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                results: dict[str, CallToolResult] = {}

                async def call(name: str, client: Client) -> None:
                    results[name] = await call_with_key(client, "slow", {"seconds": 0.5}, "nightly-1")

                group.start_soon(call, "a", a)
                group.start_soon(call, "b", b)
    outcomes = {name: read_result(result) for name, result in results.items()}
    assert outcomes["a"].task_id == outcomes["b"].task_id is not None
    assert outcomes["a"].message == outcomes["b"].message == "slept"
    runs = lines.read_text(encoding="utf-8").splitlines()
    assert len([line for line in runs if line.startswith("slow ")]) == 1, runs


@pytest.mark.tasks
@pytest.mark.anyio
async def test_a_failed_tasks_protocol_error_is_raised_again_to_a_resend_that_does_not_ask_for_a_task(
    reports: Any,
) -> None:
    server, _ = reports.build(store=MemoryStore())
    async with clients(server._mcp_server) as (tasking,), clients(server._mcp_server, polling=False) as (plain,):
        first = read_result(await call_with_key(tasking, "needs_sampling", {}, "in-1"))
        with pytest.raises(MCPError) as raised:
            await call_with_key(plain, "needs_sampling", {}, "in-1")
    assert (first.code, first.execution_state) == ("TASK_FAILED", "outcome_unknown")
    assert raised.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY


# -- the proxy in front of a server whose tools run as tasks --


@pytest.mark.tasks
@pytest.mark.anyio
async def test_the_proxy_answers_a_task_only_tool_with_a_classified_error_and_relays_the_others(
    reports: Any,
) -> None:
    from mcp_errors.proxy import ChildProcess, build_proxy
    from mcp_errors.proxy._server import check_upstream

    child = ChildProcess(sys.executable, [str(SERVER_SCRIPT)])
    proxy = build_proxy(child)
    try:
        await check_upstream(proxy, child, seconds=60)
        # The host asks for tasks; fastmcp's proxy forbids them, so every call runs as a plain call.
        async with Client(proxy._mcp_server, extensions=[TaskPolling()]) as client:
            task_only = wire(await client.call_tool("quarterly_report", {"quarter": "Q2"}))
            optional = wire(await client.call_tool("optional_report", {"quarter": "Q2"}))
    finally:
        await child.close()
    envelope = check_error(task_only, None)
    assert (envelope["errorCategory"], envelope["code"], envelope["executionState"]) == (
        "business",
        "TASK_NOT_RELAYED",
        "not_executed",
    )
    assert check_error(optional, None)["code"] == "UPSTREAM_TIMEOUT"  # the upstream's own contract, relayed
    assert_nothing_leaks(optional, reports.LEAKED_PASSWORD, reports.LEAKED_DSN)


# -- the checker on tools that run only as tasks --


@pytest.mark.tasks
@pytest.mark.anyio
async def test_the_checker_calls_task_only_tools_as_tasks_and_judges_what_they_answer(reports: Any) -> None:
    from mcp_errors.check import CheckOptions, check_server

    options = CheckOptions(call_valid=True, timeout=10)
    installed = await check_server(stdio(), options)
    plain = await check_server(stdio("--plain"), options)

    for report in (installed, plain):
        assert report.tools_skipped == {}
        assert {"warehouse_query", "refund_batch", "crash", "quarterly_report"} <= set(report.tools_checked)
    flagged = {(finding.tool, finding.rule) for finding in plain.findings}
    # Without the contract, fastmcp-tasks completes the task with the timeout's raw text, DSN included.
    assert ("warehouse_query", "ME010") in flagged
    assert ("warehouse_query", "ME002") in flagged
    assert not {finding.rule for finding in installed.findings if finding.tool == "warehouse_query"}


@pytest.mark.tasks
@pytest.mark.anyio
async def test_on_a_legacy_connection_the_checker_says_why_it_skips_a_task_only_tool(reports: Any) -> None:
    from mcp_errors.check import CheckOptions, check_server

    report = await check_server(stdio(), CheckOptions(mode="legacy", timeout=10))
    assert "quarterly_report" in report.tools_skipped
    assert "optional_report" in report.tools_checked
