"""`call_tool_with_recovery` end to end against real servers: in memory (both modes) and over stdio,
through an `mcp.Client` and through the SDK's own `stdio_client` + `ClientSession`.

The stdio servers are started once for the module (`stdio_shops`) and reset before each test.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, Tool, ToolAnnotations, ToolListChangedNotification

from hostile_strategies import well_formed_hostile_results
from mcp_errors import (
    AccessDeniedError,
    Decision,
    ErrorCategory,
    ExecutionState,
    RecoveryPolicy,
    RetryBudget,
    TransientError,
    call_tool_with_recovery,
    install,
)
from mcp_errors._client.adapter import index_tools
from mcp_errors._shared.advice import to_milliseconds
from mcp_errors._shared.envelope import FailureDetails, error_result
from mcp_errors.testing import add_flaky_tool, drop_answers, set_testing
from servers import SERVERS_DIR
from servers.changing_tools import build_changing_tools_server
from servers.checks import assert_sound_outcome
from servers.scripted_server import build_scripted_server
from servers.shop import build_shop, build_third_party

SHOP = SERVERS_DIR / "shop.py"
TRANSPORTS = ["legacy", "auto", *(pytest.param(name, marks=pytest.mark.slow) for name in ("stdio", "stdio-session"))]
"""In memory in both modes; over stdio with an `mcp.Client`, and with the `ClientSession` most
code holds (`stdio_client` + `ClientSession` + `initialize()`, as the SDK's README connects)."""

Connect = Callable[..., AbstractAsyncContextManager[Client | ClientSession]]


pytestmark = pytest.mark.usefixtures("zero_wait")

ShopKey = tuple[str, bool, str, bool]
"""A stdio shop: transport, `idempotency`, `role`, `third_party` (the arguments of `connect`)."""
STDIO_SHOPS: list[ShopKey] = [
    (transport, idempotency, role, third_party)
    for transport in ("stdio", "stdio-session")
    for idempotency, role, third_party in (
        (False, "support", False),
        (True, "support", False),
        (False, "admin", False),
        (False, "support", True),
    )
]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that the tests can share the stdio servers (`stdio_shops`)."""
    return "asyncio"


@pytest.fixture(scope="module")
async def stdio_shops() -> AsyncIterator[dict[ShopKey, Client | ClientSession]]:
    """A client of each stdio shop the tests ask for, started once for the module.

    Starting a server process costs about a second of CPU; the shops' `reset` tool gives each
    test the fresh start a new process would.
    """
    clients: dict[ShopKey, Client | ClientSession] = {}
    async with AsyncExitStack() as stack:
        for key in STDIO_SHOPS:
            transport, idempotency, role, third_party = key
            args = [str(SHOP), "--role", role, "--resettable"]
            args += ["--idempotency"] if idempotency else []
            args += ["--third-party"] if third_party else []
            target: Any = StdioServerParameters(command=sys.executable, args=args)
            if transport == "stdio-session":
                read, write = await stack.enter_async_context(stdio_client(target))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                clients[key] = session
            else:
                clients[key] = await stack.enter_async_context(Client(target))
        yield clients


def run_apart(main: Callable[[], Awaitable[Any]]) -> Any:
    """`anyio.run(main)` for a sync test, in a thread of its own: this one runs the module's event loop."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(anyio.run, main).result()


@pytest.fixture(params=TRANSPORTS)
def connect(request: pytest.FixtureRequest) -> Connect:
    transport: str = request.param
    shops = request.getfixturevalue("stdio_shops") if transport.startswith("stdio") else {}

    @asynccontextmanager
    async def open_client(
        *, idempotency: bool = False, role: str = "support", third_party: bool = False
    ) -> AsyncIterator[Client | ClientSession]:
        if transport.startswith("stdio"):
            client = shops[transport, idempotency, role, third_party]
            assert (await client.call_tool("reset", {})).is_error is False
            yield client
        else:
            server = build_third_party() if third_party else build_shop(idempotency=idempotency, role=role)
            async with Client(server, mode=transport) as client:
                yield client

    return open_client


async def charges_made(client: Client | ClientSession) -> int:
    result = await client.call_tool("charges_made", {})
    assert result.structured_content is not None
    return int(result.structured_content["result"])


@pytest.mark.anyio
async def test_a_read_only_tool_that_fails_twice_is_resent_until_it_succeeds(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect() as client:
            report = await call_tool_with_recovery(client, "search_orders", {}, policy=RecoveryPolicy(max_attempts=3))
    assert report.decision is Decision.DONE
    assert [a.outcome.category for a in report.attempts] == [ErrorCategory.TRANSIENT, ErrorCategory.TRANSIENT, None]
    assert report.attempts[0].wait_before == 0
    assert report.outcome.kind == "success"


@pytest.mark.anyio
async def test_a_permanent_outage_escalates_after_max_attempts(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect() as client:
            report = await call_tool_with_recovery(
                client, "inventory_status", {}, policy=RecoveryPolicy(max_attempts=4)
            )
    assert (report.decision, report.reason) == (Decision.ESCALATE, "retries_exhausted")
    assert len(report.attempts) == 4


@pytest.mark.anyio
async def test_a_write_that_timed_out_is_not_resent_without_an_honoured_key(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect() as client:
            report = await call_tool_with_recovery(client, "charge_slow_upstream", {"amount": 10})
            applied = await charges_made(client)
    assert (report.decision, report.reason) == (Decision.ESCALATE, "outcome_unknown")
    assert report.outcome.execution_state is ExecutionState.OUTCOME_UNKNOWN
    assert len(report.attempts) == 1
    assert applied == 1


@pytest.mark.anyio
async def test_a_lost_answer_of_a_write_is_not_resent_when_the_server_does_not_replay(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect() as client:
            tools = (await client.list_tools()).tools
            report = await call_tool_with_recovery(drop_answers(client), "charge", {"amount": 10}, tools=tools)
            applied = await charges_made(client)
    assert (report.decision, report.reason) == (Decision.ESCALATE, "outcome_unknown")
    assert applied == 1


@pytest.mark.anyio
async def test_a_lost_answer_of_a_write_is_resent_with_its_key_and_applied_once(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect(idempotency=True) as client:
            tools = (await client.list_tools()).tools
            lossy = drop_answers(client, times=2)
            report = await call_tool_with_recovery(lossy, "charge", {"amount": 10}, tools=tools)
            applied = await charges_made(client)
    assert report.decision is Decision.DONE
    assert len(report.attempts) == 3
    assert applied == 1
    assert report.outcome.message.startswith("charged 10; 1 charge(s)")


@pytest.mark.anyio
async def test_a_write_timed_out_upstream_is_resent_with_its_key_and_never_applied_twice(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect(idempotency=True) as client:
            report = await call_tool_with_recovery(client, "charge_slow_upstream", {"amount": 10})
            applied = await charges_made(client)
    # The resend is safe, and the server replays the first (unknown) outcome, marked as a
    # replay: another resend would learn nothing more, so the policy stops there.
    assert (report.decision, report.reason) == (Decision.ESCALATE, "outcome_unknown")
    assert len(report.attempts) == 2
    assert {a.outcome.error_id for a in report.attempts} == {report.attempts[0].outcome.error_id}
    assert applied == 1


@pytest.mark.anyio
async def test_validation_errors_are_never_resent_and_carry_field_errors(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect() as client:
            report = await call_tool_with_recovery(client, "refund", {"order_id": "#1", "amount": "lots"})
    assert (report.decision, report.reason) == (Decision.FIX_INPUT, "validation")
    assert len(report.attempts) == 1
    assert [fe.field for fe in report.field_errors] == ["amount"]


@pytest.mark.anyio
async def test_business_errors_are_never_resent(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect() as client:
            report = await call_tool_with_recovery(client, "refund", {"order_id": "#1", "amount": 900})
    assert (report.decision, report.reason) == (Decision.ESCALATE, "business")
    assert report.outcome.code == "REFUND_LIMIT_EXCEEDED"
    assert len(report.attempts) == 1


@pytest.mark.anyio
async def test_permission_errors_escalate_without_a_hook(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect() as client:
            report = await call_tool_with_recovery(client, "delete_account", {"customer_id": "c1"})
    assert (report.decision, report.reason) == (Decision.ESCALATE, "permission")
    assert len(report.attempts) == 1


@pytest.mark.anyio
async def test_the_permission_hook_retries_once_as_another_principal(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect() as support, connect(role="admin") as admin:
            seen: list[str] = []

            async def as_admin(tool: str, outcome: Any) -> Client:
                seen.append(f"{tool}:{outcome.category}")
                return admin  # type: ignore[return-value]

            policy = RecoveryPolicy(on_permission_denied=as_admin)
            report = await call_tool_with_recovery(support, "delete_account", {"customer_id": "c1"}, policy=policy)
    assert report.decision is Decision.DONE
    assert seen == ["delete_account:permission"]
    assert [a.principal_changed for a in report.attempts] == [False, True]


@pytest.mark.anyio
@pytest.mark.parametrize(("max_attempts", "admin_calls"), [(3, 2), (1, 1)])
async def test_the_other_principals_calls_count_towards_the_same_max_attempts_with_at_least_one(
    mode: str, max_attempts: int, admin_calls: int
) -> None:
    as_user = install(MCPServer("ledger"))

    @as_user.tool()
    def export(query: str = "") -> str:
        raise AccessDeniedError("Not your ledger", description="Ask an admin.")

    as_admin = install(MCPServer("ledger"))
    outage = add_flaky_tool(as_admin, "export", failures=10**9, read_only=True, execution_state="not_executed")
    with anyio.fail_after(10):
        async with Client(as_user, mode=mode) as user, Client(as_admin, mode=mode) as admin:

            async def other_principal(tool: str, outcome: Any) -> Client:
                return admin

            policy = RecoveryPolicy(max_attempts=max_attempts, on_permission_denied=other_principal)
            report = await call_tool_with_recovery(user, "export", {}, policy=policy)
    assert (report.decision, report.reason) == (Decision.ESCALATE, "retries_exhausted")
    assert [a.principal_changed for a in report.attempts] == [False] + [True] * admin_calls
    assert [a.number for a in report.attempts] == list(range(1, admin_calls + 2))
    assert outage.calls == admin_calls


@pytest.mark.anyio
async def test_a_third_party_servers_argument_report_asks_for_new_input_and_never_for_another_principal(
    mode: str,
) -> None:
    asked: list[str] = []

    async def other_principal(tool: str, outcome: Any) -> None:
        asked.append(tool)

    policy = RecoveryPolicy(on_permission_denied=other_principal)
    with anyio.fail_after(10):
        async with Client(build_third_party(), mode=mode) as client:
            report = await call_tool_with_recovery(client, "grant", {"user": "bob"}, policy=policy)
    assert (report.decision, report.reason, report.outcome.category) == (
        Decision.FIX_INPUT,
        "validation",
        ErrorCategory.VALIDATION,
    )
    assert asked == []
    assert len(report.attempts) == 1


@pytest.mark.anyio
async def test_an_empty_result_is_done_and_never_resent(connect: Connect) -> None:
    with anyio.fail_after(30):
        async with connect() as client:
            report = await call_tool_with_recovery(client, "find_customer", {"email": "a@b.c"})
    assert report.decision is Decision.DONE
    assert report.outcome.kind == "empty"
    assert len(report.attempts) == 1


@pytest.mark.anyio
async def test_a_third_partys_plainly_transient_text_is_resent_only_where_a_resend_is_safe(connect: Connect) -> None:
    # "Service temporarily unavailable, try again later" from a read-only tool: a wait may fix
    # it and a resend cannot apply anything twice.
    with anyio.fail_after(30), set_testing():
        async with connect(third_party=True) as client:
            report = await call_tool_with_recovery(client, "weather", {"city": "Hanoi"})
            ran = (await client.call_tool("weather_calls", {})).structured_content
            crash = await call_tool_with_recovery(client, "crash", {})
    assert report.outcome.category is ErrorCategory.TRANSIENT
    assert report.outcome.category_inferred
    assert (report.decision, report.reason) == (Decision.ESCALATE, "retries_exhausted")
    assert ran == {"result": len(report.attempts)} == {"result": RecoveryPolicy().max_attempts}
    assert (crash.outcome.category, crash.decision, crash.reason) == (None, Decision.ESCALATE, "unclassified")


@pytest.mark.anyio
async def test_a_write_is_not_resent_on_an_execution_state_read_from_prose() -> None:
    calls: list[int] = []

    async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        calls.append(1)
        return CallToolResult(content=[TextContent(type="text", text="Service temporarily unavailable")], is_error=True)

    with set_testing():
        report = await call_tool_with_recovery(call, "create_invoice", {})
    assert report.outcome.execution_state is ExecutionState.NOT_EXECUTED  # what the words say ...
    assert (report.reason, len(calls)) == ("outcome_unknown", 1)  # ... is no licence to resend a write


HITS_SCHEMA = {"type": "object", "properties": {"hits": {"type": "array"}}, "required": ["hits"]}


@pytest.mark.anyio
@pytest.mark.parametrize(
    "structured", [{"status": "index rebuilding"}, None], ids=["breaks-the-schema", "no-structured-content"]
)
async def test_a_success_that_breaks_the_tools_output_schema_ends_in_a_report_and_is_never_resent(
    mode: str, structured: dict[str, Any] | None
) -> None:
    calls: list[int] = []

    def answer() -> CallToolResult:
        calls.append(1)
        return CallToolResult(content=[TextContent(type="text", text="try later")], structured_content=structured)

    server = build_scripted_server(answer, output_schema=HITS_SCHEMA)
    with anyio.fail_after(10):
        async with Client(server, mode=mode) as client:
            report = await call_tool_with_recovery(client, "answer", {}, policy=RecoveryPolicy())
    assert (report.decision, report.reason) == (Decision.ESCALATE, "unclassified")
    outcome = report.outcome
    assert (outcome.kind, outcome.category, outcome.is_retryable, outcome.execution_state) == (
        "error",
        None,
        False,
        ExecutionState.OUTCOME_UNKNOWN,
    )
    assert len(calls) == len(report.attempts) == 1


@pytest.mark.anyio
async def test_every_resend_of_an_operation_carries_the_same_idempotency_key() -> None:
    seen: list[Any] = []

    async def flaky(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        seen.append(meta)
        return error_result(_transient(ExecutionState.NOT_EXECUTED))

    report = await call_tool_with_recovery(flaky, "write", {}, policy=RecoveryPolicy(max_attempts=3))
    assert len(seen) == 3
    # Only the key is compared: with tracing on, `_meta` also carries the trace context.
    assert all(meta["mcp-errors/idempotencyKey"] == report.idempotency_key for meta in seen)
    assert report.idempotency_key


@pytest.mark.anyio
async def test_a_retry_after_beyond_the_deadline_escalates_at_once() -> None:
    async def busy(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        return error_result(_transient(ExecutionState.NOT_EXECUTED, retry_after=60))

    report = await call_tool_with_recovery(busy, "write", {}, policy=RecoveryPolicy(deadline=10))
    assert (report.decision, report.reason) == (Decision.ESCALATE, "deadline")
    assert len(report.attempts) == 1


@pytest.mark.anyio
async def test_no_resend_is_sent_when_less_time_is_left_than_the_last_attempt_took(mode: str) -> None:
    """Such a resend would be cut off by the deadline: a write the server refused cleanly
    ("not executed") could then be applied and still be reported as "outcome unknown"."""
    server = install(MCPServer("slow"))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def search() -> str:
        await anyio.Event().wait()  # answers only after the caller gave up
        raise AssertionError("unreachable")

    policy = RecoveryPolicy(attempt_timeout=0.2, deadline=0.3, initial_wait=0.0)
    with anyio.fail_after(10):
        async with Client(server, mode=mode) as client:
            report = await call_tool_with_recovery(client, "search", {}, policy=policy)
    assert (report.decision, report.reason) == (Decision.ESCALATE, "deadline")
    assert len(report.attempts) == 1


@pytest.mark.anyio
async def test_retry_after_is_a_floor_for_the_wait() -> None:
    async def busy(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        return error_result(_transient(ExecutionState.NOT_EXECUTED, retry_after=5))

    policy = RecoveryPolicy(max_attempts=3, deadline=100, initial_wait=0.1, max_wait=1)
    report = await call_tool_with_recovery(busy, "write", {}, policy=policy)
    assert [a.wait_before for a in report.attempts] == [0, 5, 5]


@pytest.mark.anyio
async def test_a_spent_retry_budget_stops_resends_but_not_first_attempts() -> None:
    calls: list[str] = []

    async def down(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        calls.append(name)
        return error_result(_transient(ExecutionState.NOT_EXECUTED))

    budget = RetryBudget(max_tokens=4, token_ratio=1)
    first = await call_tool_with_recovery(down, "read", {}, budget=budget, policy=RecoveryPolicy(max_attempts=5))
    second = await call_tool_with_recovery(down, "read", {}, budget=budget, policy=RecoveryPolicy(max_attempts=5))
    assert (len(first.attempts), first.reason) == (2, "retry_budget")
    assert (len(second.attempts), second.reason) == (1, "retry_budget")


@pytest.mark.anyio
async def test_an_annotation_makes_an_unknown_outcome_safe_to_resend_unless_annotations_are_distrusted() -> None:
    async def flaky(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        return error_result(_transient(ExecutionState.OUTCOME_UNKNOWN))

    tools = [Tool(name="put", input_schema={"type": "object"}, annotations=ToolAnnotations(idempotent_hint=True))]
    trusted = await call_tool_with_recovery(flaky, "put", {}, tools=tools, policy=RecoveryPolicy(max_attempts=2))
    distrusted = await call_tool_with_recovery(
        flaky, "put", {}, tools=tools, policy=RecoveryPolicy(max_attempts=2, trust_annotations=False)
    )
    assert (len(trusted.attempts), trusted.reason) == (2, "retries_exhausted")
    assert (len(distrusted.attempts), distrusted.reason) == (1, "outcome_unknown")


@pytest.mark.anyio
async def test_a_connection_failure_is_resent_because_nothing_ran() -> None:
    outcomes = [ConnectionRefusedError(), None]

    async def unreachable(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        failure = outcomes.pop(0)
        if failure is not None:
            raise failure
        return CallToolResult(content=[TextContent(type="text", text="ok")])

    report = await call_tool_with_recovery(unreachable, "write", {})
    assert report.decision is Decision.DONE
    assert report.attempts[0].outcome.execution_state is ExecutionState.NOT_EXECUTED


@pytest.mark.anyio
async def test_the_deadline_also_bounds_reading_the_tool_list() -> None:
    """An overloaded server may be slow to list its tools; the caller still gets its answer in time."""

    class SlowToList(MCPServer):
        async def list_tools(self) -> list[Any]:
            await anyio.Event().wait()  # never answers
            raise AssertionError("unreachable")

    server = install(SlowToList("slow"))

    @server.tool()
    def write() -> str:
        raise TransientError("Upstream busy", description="Resend later.")

    with anyio.fail_after(10):
        async with Client(server) as client:
            report = await call_tool_with_recovery(client, "write", {}, policy=RecoveryPolicy(deadline=0.2))
    assert (report.decision, report.reason) == (Decision.ESCALATE, "outcome_unknown")
    assert len(report.attempts) == 1


@pytest.mark.anyio
async def test_a_call_slower_than_the_attempt_timeout_counts_as_an_unknown_outcome() -> None:
    async def hangs(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        await anyio.Event().wait()
        raise AssertionError("unreachable")

    with anyio.fail_after(10):
        report = await call_tool_with_recovery(hangs, "write", {}, policy=RecoveryPolicy(attempt_timeout=0.05))
    assert (report.decision, report.reason) == (Decision.ESCALATE, "outcome_unknown")
    assert report.outcome.category is ErrorCategory.TRANSIENT


@pytest.mark.anyio
async def test_every_attempt_logs_a_structured_event(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_errors.recovery")

    async def down(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        return error_result(_transient(ExecutionState.NOT_EXECUTED))

    await call_tool_with_recovery(down, "read", {}, policy=RecoveryPolicy(max_attempts=2))
    events = [(r.tool, r.attempt, r.category, r.decision) for r in caplog.records if r.name == "mcp_errors.recovery"]  # type: ignore[attr-defined]
    assert events == [("read", 1, "transient", "retry"), ("read", 2, "transient", "escalate")]
    assert caplog.records[-1].wait is None  # type: ignore[attr-defined]


@given(
    max_attempts=st.integers(1, 6),
    deadline=st.floats(0.5, 60),
    initial=st.floats(0.01, 5),
    cap=st.floats(0.01, 30),
    floor=st.one_of(st.none(), st.floats(0, 20)),
)
@settings(deadline=None)
def test_waits_stay_between_the_floor_and_the_cap_and_within_the_deadline(
    max_attempts: int, deadline: float, initial: float, cap: float, floor: float | None
) -> None:
    async def down(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        return error_result(_transient(ExecutionState.NOT_EXECUTED, retry_after=floor))

    policy = RecoveryPolicy(max_attempts=max_attempts, deadline=deadline, initial_wait=initial, max_wait=cap)

    async def run() -> Any:
        with set_testing():
            return await call_tool_with_recovery(down, "read", {}, policy=policy, budget=RetryBudget(max_tokens=100))

    report = run_apart(run)
    assert 1 <= len(report.attempts) <= max_attempts
    asked = 0 if floor is None else to_milliseconds(floor)  # as the envelope carries it
    for attempt in report.attempts[1:]:
        assert asked <= attempt.wait_before <= max(cap, asked)
    assert report.total_wait < deadline
    assert report.attempts[-1].elapsed < deadline


def _transient(state: ExecutionState, retry_after: float | None = None) -> FailureDetails:
    return FailureDetails(
        message="Busy",
        category=ErrorCategory.TRANSIENT,
        description="Busy; resend later.",
        code="BUSY",
        retry_after_seconds=retry_after,
        execution_state=state,
    )


@pytest.mark.anyio
async def test_a_write_that_fails_after_writing_is_not_resent_even_on_connection_refused() -> None:
    """Connection refused *inside* a tool does not mean the tool did nothing."""
    server = install(MCPServer("writes"))
    writes = 0

    @server.tool()
    def save_and_notify(note: str) -> str:
        nonlocal writes
        writes += 1  # the write lands ...
        raise ConnectionRefusedError  # ... then the notification service is down

    with set_testing(), anyio.fail_after(10):
        async with Client(server) as client:
            report = await call_tool_with_recovery(client, "save_and_notify", {"note": "n"}, policy=RecoveryPolicy())
    assert writes == 1
    assert report.decision is Decision.ESCALATE
    assert report.reason == "outcome_unknown"


@pytest.mark.anyio
async def test_fastmcp_clients_get_the_same_recovery_through_the_adapter() -> None:
    import fastmcp

    server = install(fastmcp.FastMCP("fastmcp-shop"))
    calls = 0

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))  # type: ignore[call-arg]
    def stock(sku: str) -> int:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise TimeoutError  # read-only, so a resend is safe
        return 7

    @server.tool()
    def reserve(sku: str) -> str:
        raise TimeoutError  # a write: its outcome is unknown

    with set_testing(), anyio.fail_after(20):
        async with fastmcp.Client(server) as client:
            read = await call_tool_with_recovery(client, "stock", {"sku": "A"}, policy=RecoveryPolicy())
            write = await call_tool_with_recovery(client, "reserve", {"sku": "A"}, policy=RecoveryPolicy())
    assert (read.decision, len(read.attempts)) == (Decision.DONE, 3)
    assert (write.decision, write.reason, len(write.attempts)) == (Decision.ESCALATE, "outcome_unknown", 1)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    answers=st.lists(well_formed_hostile_results(), min_size=1, max_size=3), mode=st.sampled_from(["legacy", "auto"])
)
def test_whatever_a_server_answers_the_recovery_ends_in_a_report(answers: list[dict[str, Any]], mode: str) -> None:
    script = iter(answers)
    last = answers[-1]

    def answer() -> CallToolResult:
        return CallToolResult.model_validate(next(script, last))

    async def run() -> Any:
        with set_testing(), anyio.fail_after(30):
            async with Client(build_scripted_server(answer), mode=mode) as client:
                return await call_tool_with_recovery(client, "answer", {}, policy=RecoveryPolicy(max_attempts=3))

    report = run_apart(run)
    assert report.decision in Decision
    assert 1 <= len(report.attempts) <= 3
    for attempt in report.attempts:
        assert_sound_outcome(attempt.outcome)
    # Resent only after an outcome that said it was transient and retryable.
    for attempt in report.attempts[:-1]:
        assert attempt.outcome.category is ErrorCategory.TRANSIENT
        assert attempt.outcome.is_retryable


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("structured", "decision", "reason"),
    [
        ({"errorCategory": ["transient"], "isRetryable": True, "description": "x"}, Decision.ESCALATE, "unclassified"),
        (
            {"errorCategory": "transient", "isRetryable": True, "description": "x", "retryAfterSeconds": 10**400},
            Decision.ESCALATE,
            "deadline",
        ),
    ],
    ids=["category-list", "huge-wait"],
)
async def test_the_issues_hostile_values_end_in_a_report(
    mode: str, structured: dict[str, Any], decision: Decision, reason: str
) -> None:
    def answer() -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text="x")], structured_content=structured, is_error=True
        )

    async with Client(build_scripted_server(answer), mode=mode) as client:
        report = await call_tool_with_recovery(client, "answer", {}, policy=RecoveryPolicy(max_attempts=3))
    assert (report.decision, report.reason) == (decision, reason)
    assert len(report.attempts) == 1


@asynccontextmanager
async def tool_list_watch(client: Client, mode: str) -> AsyncIterator[None]:
    """On a 2026-07-28 connection, list_changed reaches only a client that listens for it."""
    if mode == "auto":
        async with client.listen(tools_list_changed=True):
            yield
    else:
        yield


@pytest.mark.anyio
async def test_recovery_lists_the_servers_tools_once_per_connection(mode: str) -> None:
    server, listings = build_changing_tools_server(padding=50)
    async with Client(server, mode=mode) as client:
        for _ in range(5):
            report = await call_tool_with_recovery(client, "write", {"order_id": "#7"}, budget=RetryBudget())
            assert report.reason == "outcome_unknown"
    assert listings.count == 1


@pytest.mark.anyio
async def test_recovery_reads_the_tool_list_again_after_the_server_says_it_changed(mode: str) -> None:
    server, listings = build_changing_tools_server()
    changed = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed.set()

    async with Client(server, mode=mode, message_handler=on_message) as client, tool_list_watch(client, mode):
        before = await call_tool_with_recovery(client, "write", {}, budget=RetryBudget())
        await client.call_tool("declare_write_idempotent", {})
        with anyio.fail_after(5):
            await changed.wait()
        after = await call_tool_with_recovery(client, "write", {}, budget=RetryBudget())
    assert (before.reason, len(before.attempts)) == ("outcome_unknown", 1)
    assert (after.reason, len(after.attempts)) == ("retries_exhausted", 3)  # idempotent now: resent
    assert listings.count == 2


@pytest.mark.anyio
async def test_a_tool_list_given_by_the_caller_is_indexed_once_per_list() -> None:
    tools = [Tool(name=f"t{i}", input_schema={"type": "object"}) for i in range(1000)]
    tools.append(Tool(name="put", input_schema={"type": "object"}, annotations=ToolAnnotations(idempotent_hint=True)))
    assert index_tools(tools) is index_tools(tools)
    assert index_tools(tools)["put"].annotations is not None
    tools.append(Tool(name="late", input_schema={"type": "object"}))
    assert "late" in index_tools(tools)  # grown in place: indexed again
