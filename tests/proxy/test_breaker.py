"""The circuit breaker: closed, open (answered at once), half-open (one probe), per upstream and per tool."""

from __future__ import annotations

import contextlib
import random
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest
from fastmcp import FastMCP
from fastmcp.tools import ToolResult
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp_types import TextContent
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors._shared.telemetry import recording_metrics
from mcp_errors.proxy import ChildProcess, ProxySettings, _breaker
from mcp_errors.proxy._breaker import Answer, BreakerSettings, Circuit, Verdict
from proxying import STARTUP_SECONDS, UPSTREAM, command_params, front, http_upstream, proxied, served, served_upstream

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one proxy (`judging_proxy`)."""
    return "asyncio"


def decisions(reader: InMemoryMetricReader) -> dict[tuple[str, str | None], float]:
    """`mcp_errors.proxy.decisions` so far, by (decision, breaker scope)."""
    counted: dict[tuple[str, str | None], float] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data is not None else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name != "mcp_errors.proxy.decisions":
                    continue
                for point in metric.data.data_points:
                    attributes: dict[str, Any] = dict(point.attributes or {})
                    key = (attributes["mcp_errors.proxy.decision"], attributes.get("mcp_errors.proxy.breaker.scope"))
                    counted[key] = counted.get(key, 0) + point.value  # type: ignore[union-attr]  # a sum's point
    return counted


@contextlib.contextmanager
def recorded() -> Iterator[InMemoryMetricReader]:
    reader = InMemoryMetricReader()
    with recording_metrics(MeterProvider(metric_readers=[reader])):
        yield reader


# --- the state machine -----------------------------------------------------------------------


def test_a_run_of_failures_within_the_window_opens_and_the_cooldown_is_answered_at_once() -> None:
    circuit = Circuit(BreakerSettings(failures=3, window=10, cooldown=30))
    for now in (0.0, 1.0):
        circuit.record("failure", now=now, probe=False)
    assert circuit.state == "closed"
    circuit.record("failure", now=2.0, probe=False)
    # record() changed the state; mypy keeps the literal it narrowed to above.
    assert circuit.state == "open"  # type: ignore[comparison-overlap]
    assert circuit.admit(12.0) == (False, 20.0)


def test_a_success_ends_the_run_and_failures_spread_beyond_the_window_never_open() -> None:
    circuit = Circuit(BreakerSettings(failures=3, window=10, cooldown=30))
    for now, verdict in ((0.0, "failure"), (1.0, "failure"), (2.0, "success"), (3.0, "failure"), (4.0, "failure")):
        circuit.record(verdict, now=now, probe=False)  # type: ignore[arg-type]
    assert circuit.state == "closed"
    for now in (20.0, 31.0, 42.0, 53.0):  # a failure every 11 s: never three within 10 s
        circuit.record("failure", now=now, probe=False)
    assert circuit.state == "closed"


def test_after_the_cooldown_one_probe_passes_and_its_answer_closes_or_reopens() -> None:
    changes: list[str] = []
    circuit = Circuit(BreakerSettings(failures=1, window=10, cooldown=5), changed=changes.append)
    circuit.record("failure", now=0.0, probe=False)
    assert circuit.admit(5.0) == (True, None)  # the probe
    assert circuit.admit(5.1) == (False, 1.0)  # the others wait for it
    circuit.record("failure", now=6.0, probe=True)
    assert circuit.admit(7.0) == (False, 4.0)  # open again, a new cooldown
    assert circuit.admit(11.0) == (True, None)
    circuit.record("success", now=11.5, probe=True)
    assert circuit.admit(11.6) == (False, None)
    assert changes == ["open", "half_open", "open", "half_open", "closed"]


def test_a_probe_without_an_answer_in_its_time_counts_as_failed_and_its_late_answer_is_ignored() -> None:
    changes: list[str] = []
    circuit = Circuit(BreakerSettings(failures=1, window=10, cooldown=5, probe_timeout=2), changed=changes.append)
    circuit.record("failure", now=0.0, probe=False)
    assert circuit.admit(5.0) == (True, None)
    hung = circuit.probe_ticket
    assert circuit.admit(6.0) == (False, 1.0)
    assert circuit.admit(7.5) == (False, 4.5)  # 7 s: the probe's time ran out, open for a cool-down from then
    circuit.record("success", now=8.0, probe=True, ticket=hung)  # too late: it decides nothing
    assert circuit.state == "open"
    assert circuit.admit(12.0) == (True, None)  # the next probe
    circuit.record("success", now=12.5, probe=True, ticket=circuit.probe_ticket)
    assert changes == ["open", "half_open", "open", "half_open", "closed"]


def test_a_failure_that_asks_for_a_longer_wait_keeps_the_circuit_open_that_long() -> None:
    circuit = Circuit(BreakerSettings(failures=1, window=10, cooldown=5))
    circuit.record("failure", now=0.0, probe=False, retry_after=60)
    assert circuit.admit(30.0) == (False, 30.0)


@given(st.lists(st.tuples(st.sampled_from(["failure", "success", "neither"]), st.floats(0, 20)), max_size=60))
def test_a_circuit_opens_exactly_when_a_run_of_failures_falls_within_the_window(
    answers: list[tuple[Verdict, float]],
) -> None:
    settings = BreakerSettings(failures=3, window=10, cooldown=1e9)
    circuit = Circuit(settings)
    now, expected_open = 0.0, False
    run: list[float] = []
    for verdict, gap in answers:
        now += gap
        circuit.record(verdict, now=now, probe=False)
        if expected_open:
            continue
        if verdict == "success":
            run = []
        elif verdict == "failure":
            run = [at for at in [*run, now] if now - at <= settings.window]
            expected_open = len(run) >= settings.failures
    assert (circuit.state == "open") is expected_open


# --- against real upstreams --------------------------------------------------------------------


async def open_half_open_and_close(client: Client, key: str) -> None:
    """Through `client`, of a proxy whose breaker opens after 3 failures for 0.5 s: the circuit of a failing tool."""
    # `flaky_status` declares a 504 4 times for this key, then works.
    call = ("flaky_status", {"key": key, "failures": 4})
    with anyio.fail_after(STARTUP_SECONDS):
        failed = [await client.call_tool(*call) for _ in range(3)]  # the third opens the circuit
        refused = await client.call_tool(*call)
        ran_while_open = await client.call_tool("attempts", {"key": key})
        other_tool = await client.call_tool("echo", {"text": "other tools still work"})
        await anyio.sleep(read_result(refused).retry_after_seconds or 0)  # as a client that honours it
        probe = await client.call_tool(*call)  # the 4th time out: open again
        await anyio.sleep(read_result(await client.call_tool(*call)).retry_after_seconds or 0)
        closing = await client.call_tool(*call)  # the probe that works
        after = await client.call_tool(*call)
        ran = await client.call_tool("attempts", {"key": key})
    assert [read_result(result).code for result in failed] == ["UPSTREAM_BAD_GATEWAY"] * 3
    outcome = read_result(refused)
    assert (outcome.category, outcome.code, outcome.execution_state) == (
        ErrorCategory.TRANSIENT,
        "UPSTREAM_UNAVAILABLE",
        ExecutionState.NOT_EXECUTED,
    )
    assert outcome.retry_after_seconds is not None
    assert 0 < outcome.retry_after_seconds <= 0.5
    assert ran_while_open.structured_content == {"result": 3}  # the refused call never reached it
    assert not other_tool.is_error  # a tool's circuit is its own
    assert read_result(probe).code == "UPSTREAM_BAD_GATEWAY"
    assert (closing.is_error, after.is_error) == (False, False)
    assert ran.structured_content == {"result": 6}


@pytest.fixture(scope="module")
async def breaking_proxy() -> AsyncIterator[FastMCP[Any]]:
    """A proxy whose breaker opens after 3 failures for 0.5 s, for both modes in turn.

    Each run ends with the circuit closed again (its last calls succeed), and the upstream
    counts calls per key: each mode has its own key.
    """
    settings = ProxySettings(breaker_failures=3, breaker_cooldown=0.5)
    async with served_upstream(settings) as server:
        yield server


@pytest.mark.anyio
async def test_the_breaker_opens_answers_at_once_half_opens_and_closes_against_a_failing_tool(
    mode: str, breaking_proxy: FastMCP[Any]
) -> None:
    async with Client(breaking_proxy._mcp_server, mode=mode) as client:
        await open_half_open_and_close(client, f"k-{mode}")


@pytest.mark.anyio
async def test_the_breaker_opens_answers_at_once_half_opens_and_closes_over_stdio() -> None:
    # The command and its options, as a host runs it. One connection mode (the modern one)
    # over the real transport: the test above has both, in memory.
    options = ["--breaker-failures", "3", "--breaker-cooldown", "0.5"]
    async with Client(command_params(*options, "--", sys.executable, UPSTREAM), mode="auto") as client:
        await open_half_open_and_close(client, "k")


@pytest.mark.anyio
async def test_an_unreachable_upstream_opens_the_upstreams_circuit_for_every_tool() -> None:
    settings = ProxySettings(breaker_failures=3, breaker_cooldown=60)
    with anyio.fail_after(STARTUP_SECONDS * 2):  # a stuck stop or call fails here, named, not the run
        async with http_upstream() as (url, process), served(url, settings) as server:
            with recorded() as reader:
                async with front(server) as client:
                    # Killed, not asked to stop: uvicorn's shutdown after SIGTERM waits on the
                    # MCP sessions the proxy keeps, and once in a few loaded runs it outlived the test.
                    process.kill()
                    await process.wait()
                    unreachable = [await client.call_tool("echo", {"text": str(n)}) for n in range(3)]
                    refused = await client.call_tool("forecast", {"city": "Oslo"})
                counted = decisions(reader)
    assert {read_result(result).code for result in unreachable} == {"UPSTREAM_UNAVAILABLE"}
    assert read_result(refused).retry_after_seconds == 60
    assert counted == {("breaker_opened", "upstream"): 1, ("breaker_refused", "upstream"): 1}


@pytest.mark.anyio
async def test_the_default_breaker_never_opens_on_a_healthy_upstream() -> None:
    """Successes, input and policy errors, and now and then a transient failure, some at once."""
    rng = random.Random(7)
    units: list[list[tuple[str, dict[str, Any]]]] = []  # each unit's calls in order, units at once
    for n in range(300):
        choice = rng.random()
        if choice < 0.55:
            units.append([("echo", {"text": f"hello {n}"})])
        elif choice < 0.7:
            units.append([("refuse", {"key": f"bad-{n}"})])  # validation
        elif choice < 0.8:
            units.append([("fail", {"message": f"the ledger broke on {n}"})])  # business
        elif choice < 0.9:
            units.append([("search", {"query": "nothing"})])  # an empty result
        else:  # one timeout now and then, and the resend that works
            units.append([("flaky_read", {"key": f"r-{n}", "failures": 1})] * 2)

    async def run(unit: list[tuple[str, dict[str, Any]]]) -> None:
        for name, arguments in unit:
            await client.call_tool(name, arguments)

    with recorded() as reader:
        async with proxied("legacy", ProxySettings()) as client:
            with anyio.fail_after(STARTUP_SECONDS * 2):
                for start in range(0, len(units), 8):  # eight at once, as parallel agents send them
                    async with anyio.create_task_group() as group:
                        for unit in units[start : start + 8]:
                            group.start_soon(run, unit)
        counted = decisions(reader)
    assert not counted


@pytest.mark.anyio
async def test_a_probe_that_hangs_counts_as_failed_after_its_bound_and_other_callers_get_through() -> None:
    settings = ProxySettings(breaker_failures=2, breaker_cooldown=0.3, breaker_probe_timeout=0.5)
    stalled = anyio.Event()

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        stalled.set()

    async def hung_probe() -> None:
        await alice.call_tool("stall", {"key": "s", "hang": True}, progress_callback=progress)

    child = ChildProcess(sys.executable, [UPSTREAM])
    async with served(child, settings) as server, front(server) as alice, front(server) as bob:
        with anyio.fail_after(STARTUP_SECONDS):
            opened = [await alice.call_tool("stall", {"key": "s"}) for _ in range(2)]
            refused = await bob.call_tool("stall", {"key": "s"})
            await anyio.sleep(read_result(refused).retry_after_seconds or 0)  # the cool-down
        async with anyio.create_task_group() as group:
            group.start_soon(hung_probe)  # the probe: it never answers, and its caller never leaves
            with anyio.fail_after(STARTUP_SECONDS):
                await stalled.wait()
            waited: list[float] = []
            with anyio.fail_after(10):  # the probe's bound and one cool-down, with room for a slow machine
                while (answer := await bob.call_tool("stall", {"key": "s"})).is_error:
                    outcome = read_result(answer)
                    assert (outcome.code, outcome.execution_state) == (
                        "UPSTREAM_UNAVAILABLE",
                        ExecutionState.NOT_EXECUTED,
                    )
                    waited.append(outcome.retry_after_seconds or 0)
                    await anyio.sleep(waited[-1])
            group.cancel_scope.cancel()
        after = await bob.call_tool("stall", {"key": "s"})
    assert [read_result(result).code for result in opened] == ["UPSTREAM_UNAVAILABLE"] * 2
    assert read_result(refused).code == "UPSTREAM_UNAVAILABLE"
    assert not answer.is_error  # Bob's call was the next probe, and it closed the circuit
    assert not after.is_error
    assert sum(waited) < 5


def test_a_failed_answers_words_are_read_only_when_the_breaker_asks_whom_they_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[ToolResult] = []
    words_of = _breaker._words_of

    def counted_words_of(result: ToolResult) -> str:
        read.append(result)
        return words_of(result)

    monkeypatch.setattr(_breaker, "_words_of", counted_words_of)
    failed = ToolResult(
        content=[TextContent(type="text", text="Rate limit exceeded for user 42")],
        structured_content={"error": "quota"},
        is_error=True,
    )
    answer = Answer()
    answer.heard(failed)
    assert read == []  # most failures are not transient: their words are never asked for
    assert answer.said == 'Rate limit exceeded for user 42 {"error": "quota"}'
    assert read == [failed]


@pytest.mark.anyio
async def test_a_per_caller_quota_counts_for_that_caller_and_never_closes_the_tool_for_others() -> None:
    settings = ProxySettings(breaker_failures=3, breaker_cooldown=60)
    child = ChildProcess(sys.executable, [UPSTREAM])
    with recorded() as reader:
        async with served(child, settings) as server, front(server) as mallory, front(server) as bob:
            with anyio.fail_after(STARTUP_SECONDS):
                hers = [await mallory.call_tool("limited", {"user": "mallory"}) for _ in range(5)]
                his = [await bob.call_tool("limited", {"user": "bob"}) for _ in range(3)]
                ran = await bob.call_tool("attempts", {"key": "limited:bob"})
        counted = decisions(reader)
    assert [read_result(result).code for result in hers[:3]] == ["UPSTREAM_RATE_LIMITED"] * 3
    # Her own circuit: the upstream is spared her next calls, which are told nothing ran.
    assert [read_result(result).execution_state for result in hers[3:]] == [ExecutionState.NOT_EXECUTED] * 2
    assert [result.is_error for result in his] == [False] * 3
    assert ran.structured_content == {"result": 3}
    assert counted == {("breaker_opened", "caller"): 1, ("breaker_refused", "caller"): 2}


@pytest.fixture(scope="module")
async def judging_proxy() -> AsyncIterator[FastMCP[Any]]:
    """A proxy whose breaker opens after 2 failures and that judges successes, for the tests of what it never counts.

    They call different tools (a circuit is per tool), and count the decisions made during
    their own calls only.
    """
    settings = ProxySettings(breaker_failures=2, disguised_failures=True)
    async with served_upstream(settings) as server:
        yield server


@pytest.mark.anyio
@pytest.mark.parametrize(
    "call",
    [
        # "upstream read timed out": transient, but only the prose says so (categoryInferred).
        ("flaky_read", {"key": "r", "failures": 9}),
        # A success whose text leads with "Error: connection refused", read as a failure.
        ("echo", {"text": "Error: connection refused"}),
    ],
    ids=["inferred", "disguised"],
)
async def test_inferred_and_disguised_failures_never_open_a_circuit(
    call: tuple[str, dict[str, Any]], judging_proxy: FastMCP[Any]
) -> None:
    with recorded() as reader:
        async with front(judging_proxy) as client:
            with anyio.fail_after(STARTUP_SECONDS):
                results = [await client.call_tool(*call) for _ in range(4)]
        counted = decisions(reader)
    outcomes = [read_result(result) for result in results]
    assert [outcome.category for outcome in outcomes] == [ErrorCategory.TRANSIENT] * 4
    # Each one the upstream's answer read by the proxy (a refusal of an open circuit is not inferred).
    assert all(result.structured_content and result.structured_content["categoryInferred"] for result in results)
    assert not counted
