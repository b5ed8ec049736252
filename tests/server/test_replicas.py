"""Exactly once across replicas, crashes and restarts: real replica processes over HTTP.

Each replica is `tests/servers/replica_app.py` under `uvicorn --factory`, installed with a
shared store; its write tool appends a line to a file, so the effect is counted outside
every server process. PostgreSQL and Redis are real servers (`tests/services.py`).

The many-writes run sends 200 keyed writes per shared store, each to two replicas at once:
about 200 races for one key and, at a 5% commit-then-timeout rate, some 20 late answers
resent to another replica, on every test run. A scheduled run can ask for the 1,000 writes
this proof used to send: `MCP_ERRORS_REPLICA_WRITES=1000 uv run pytest tests/server/test_replicas.py`
(docs/performance.md has what each costs).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult

from mcp_errors import Decision, RecoveryPolicy, RecoveryReport, RetryBudget, call_tool_with_recovery
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META, REPLAYED_META
from servers import SERVERS_DIR
from services import free_port, listening, wait_for_port

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

WRITES = int(os.environ.get("MCP_ERRORS_REPLICA_WRITES", "200"))
SHARED_STORES = ["sqlite", "postgres", "redis"]


@dataclass
class Replica:
    process: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@contextlib.contextmanager
def replicas(count: int, *, store: str, lines: Path, **settings: str) -> Iterator[list[Replica]]:
    """`count` replica processes sharing `store`, each appending its writes to `lines`."""
    env = {**os.environ, "REPLICA_STORE": store, "REPLICA_LINES": str(lines), **settings}
    with contextlib.ExitStack() as stack:
        started = []
        for _ in range(count):
            port = free_port()
            command = [sys.executable, "-m", "uvicorn", "--factory", "replica_app:make_app"]
            command += ["--app-dir", str(SERVERS_DIR), "--port", str(port), "--log-level", "warning"]
            # Longer than any pause of the clients' pooled connections: uvicorn's 5 s default
            # can close one just as a client reuses it (what a load balancer's idle timeout needs too).
            command += ["--timeout-keep-alive", "75"]
            started.append(Replica(stack.enter_context(listening(command, port, env=env, wait=False)), port))
        for replica in started:  # started together, so their imports overlap
            wait_for_port(replica.port, process=replica.process)
        yield started


def store_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path}/keys.sqlite3"
    # Keys are random per test, so tests can share the server's default table or prefix.
    url: str = request.getfixturevalue("postgres_url" if backend == "postgres" else "redis_url")
    return url


def written(lines: Path) -> Counter[int]:
    """How many times each write was applied, from the file the replicas append to."""
    text = lines.read_text(encoding="utf-8") if lines.exists() else ""
    return Counter(int(line.split()[0]) for line in text.splitlines())


@pytest.mark.anyio
@pytest.mark.parametrize("backend", SHARED_STORES)
async def test_many_keyed_writes_through_three_replicas_run_once_and_all_get_their_answer(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Commit-then-timeout faults; every write sent to two replicas at once, resends to the next one."""
    lines = tmp_path / "lines.txt"
    # Timeouts sized for a shared, loaded 2-core machine: an attempt that times out only
    # because the machine is slow is resent too, which is fine, but 8 in a row are not.
    policy = RecoveryPolicy(
        attempt_timeout=1.5,
        max_attempts=12,
        deadline=120,
        initial_wait=0.05,
        max_wait=0.3,
        budget_factory=lambda: RetryBudget(max_tokens=100_000),
    )
    reports: dict[int, list[RecoveryReport]] = {n: [] for n in range(WRITES)}
    store = store_url(backend, request, tmp_path)
    with replicas(3, store=store, lines=lines, REPLICA_LATE_ANSWERS="0.05", REPLICA_LATE_SECONDS="2") as servers:
        async with AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(Client(replica.url)) for replica in servers]
            tools = (await clients[0].list_tools()).tools

            async def racer(n: int, key: str, first: int) -> None:
                replica = itertools.count(first)

                async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
                    # Each resend goes to the next replica.
                    return await clients[next(replica) % len(clients)].call_tool(name, arguments, meta=meta)  # type: ignore[arg-type]

                reports[n].append(
                    await call_tool_with_recovery(
                        call, "append", {"n": n}, policy=policy, idempotency_key=key, tools=tools
                    )
                )

            limiter = anyio.Semaphore(16)

            async def write(n: int) -> None:
                async with limiter, anyio.create_task_group() as tg:
                    key = uuid.uuid4().hex
                    # The same keyed write reaches two replicas at the same moment.
                    tg.start_soon(racer, n, key, n % 3)
                    tg.start_soon(racer, n, key, (n + 1) % 3)

            with anyio.fail_after(600):
                async with anyio.create_task_group() as tg:
                    for n in range(WRITES):
                        tg.start_soon(write, n)

    counts = written(lines)
    assert [n for n, count in counts.items() if count > 1] == [], "double executions"
    assert sorted(counts) == list(range(WRITES)), "every write applied"
    by_line = {int(line.split()[0]): line for line in lines.read_text(encoding="utf-8").splitlines()}
    lost = [
        n
        for n, pair in reports.items()
        if [report.decision for report in pair] != [Decision.DONE] * 2
        or {report.outcome.message for report in pair} != {by_line[n]}
    ]
    assert lost == [], [
        (
            n,
            [
                (report.decision.value, report.reason, report.outcome.code, len(report.attempts))
                for report in reports[n]
            ],
        )
        for n in lost[:5]
    ]
    calls = [attempt for pair in reports.values() for report in pair for attempt in report.attempts]
    timed_out = [attempt for attempt in calls if attempt.outcome.kind == "error"]
    replayed = [
        attempt
        for attempt in calls
        if ((attempt.outcome.result and attempt.outcome.result.meta) or {}).get(REPLAYED_META)
    ]
    assert len(timed_out) >= WRITES * 0.02, "the commit-then-timeout faults happened"
    assert len(replayed) >= WRITES, "duplicates got the first answer"


@pytest.mark.anyio
@pytest.mark.parametrize("backend", SHARED_STORES)
async def test_a_replica_killed_mid_write_never_applies_it_twice_and_the_resend_says_the_outcome_is_unknown(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    lines = tmp_path / "lines.txt"
    store = store_url(backend, request, tmp_path)
    key = uuid.uuid4().hex
    with replicas(2, store=store, lines=lines, REPLICA_LEASE_SECONDS="1") as (doomed, survivor):

        async def hang() -> None:
            # The doomed replica's connection breaks when it is killed: that is the point.
            with contextlib.suppress(Exception):
                async with Client(doomed.url) as doomed_client:
                    await doomed_client.call_tool("append_and_hang", {"n": 7}, meta={IDEMPOTENCY_KEY_META: key})  # type: ignore[arg-type]

        async with anyio.create_task_group() as tg:
            tg.start_soon(hang)
            with anyio.fail_after(20):
                while not written(lines):  # noqa: ASYNC110  # the effect is in a file another process writes
                    await anyio.sleep(0.01)
            doomed.process.send_signal(signal.SIGKILL)
            doomed.process.wait()
            tg.cancel_scope.cancel()
        policy = RecoveryPolicy(max_attempts=10, deadline=30, budget_factory=lambda: RetryBudget(max_tokens=100))
        async with Client(survivor.url) as client:
            with anyio.fail_after(30):
                report = await call_tool_with_recovery(
                    client, "append_and_hang", {"n": 7}, policy=policy, idempotency_key=key
                )
    assert written(lines) == Counter({7: 1})
    codes = [attempt.outcome.code for attempt in report.attempts]
    assert set(codes[:-1]) <= {"IN_PROGRESS"}, "while the dead replica's lease runs"
    assert (report.decision, report.reason) == (Decision.ESCALATE, "outcome_unknown")
    assert (report.outcome.code, report.outcome.execution_state) == ("OUTCOME_UNKNOWN", "outcome_unknown")


@pytest.mark.anyio
async def test_a_restart_between_a_committed_write_and_its_resend_replays_the_first_answer(tmp_path: Path) -> None:
    lines = tmp_path / "lines.txt"
    store = f"sqlite:///{tmp_path}/keys.sqlite3"
    meta = {IDEMPOTENCY_KEY_META: "after-restart"}
    with replicas(1, store=store, lines=lines) as (server,):
        async with Client(server.url) as client:
            first = await client.call_tool("append", {"n": 1}, meta=meta)  # type: ignore[arg-type]
    with replicas(1, store=store, lines=lines) as (restarted,):
        async with Client(restarted.url) as client:
            resend = await client.call_tool("append", {"n": 1}, meta=meta)  # type: ignore[arg-type]
    assert not first.is_error
    assert resend.content == first.content
    assert (resend.meta or {}).get(REPLAYED_META) is True
    assert written(lines) == Counter({1: 1})
