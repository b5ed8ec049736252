"""Keyed calls per second on each idempotency store, against no idempotency and the memory store.

One `MCPServer` per variant, with the same write tool, driven through the in-memory
`mcp.Client` (the whole call path: client, server, contract, replay, store). Every call
carries a new idempotency key, so each one claims its key and finishes it: two store round
trips, the path every first call of a keyed write takes. Variants:

- `none`: `install(server)` without idempotency (the key is sent and ignored);
- `memory`: `MemoryStore`;
- `sqlite`: `SQLiteStore` on a file in a temporary folder (WAL, `synchronous=NORMAL`);
- `postgres`: `PostgresStore` on a throwaway local server started here (durable settings:
  fsync and synchronous_commit on), over TCP on loopback;
- `redis`: `RedisStore` on a throwaway local `redis-server` (no persistence), loopback TCP.

Fair on a shared machine: every variant is connected and warmed up first; then short
windows run in turn (none, memory, sqlite, postgres, redis, then the reverse order, ...),
`--rounds` times, each with `--concurrency` calls in flight. Reported: the median
throughput of each variant, and the median ratio of adjacent windows to `none` and to
`memory` with its spread (min-max over rounds); and the CPU time of this process per call
(client, server and store client: the PostgreSQL and Redis servers' own CPU is not in it),
which other jobs on a shared machine disturb less than throughput.

    uv run python benchmarks/idempotency.py --rounds 10 --seconds 1.5 --concurrency 8
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

from mcp_errors import install
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META
from mcp_errors.stores import IdempotencyStore, MemoryStore, PostgresStore, RedisStore, SQLiteStore

# The throwaway servers are the test suite's (tests/services.py), loaded by path: the
# benchmarks are scripts, not a package.
_spec = importlib.util.spec_from_file_location("services", Path(__file__).parent.parent / "tests" / "services.py")
assert _spec is not None
assert _spec.loader is not None
services = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(services)


def build(store: IdempotencyStore | None) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("bench")
    install(server, idempotency=store)
    count = [0]

    @server.tool()
    def record(n: int) -> str:
        """A write: counts."""
        count[0] += 1
        return f"recorded {n} as #{count[0]}"

    return server


async def window(client: Client, seconds: float, concurrency: int) -> tuple[float, float]:
    """Calls per second over one window (`concurrency` in flight, a new key each), and CPU µs per call."""
    done = 0
    deadline = time.perf_counter() + seconds
    cpu = time.process_time()

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            meta = {IDEMPOTENCY_KEY_META: uuid.uuid4().hex}
            result = await client.call_tool("record", {"n": done}, meta=meta)  # type: ignore[arg-type]
            assert not result.is_error, result
            done += 1

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    return done / (time.perf_counter() - start), (time.process_time() - cpu) / done * 1e6


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


async def run(args: argparse.Namespace, stores: dict[str, Callable[[], IdempotencyStore | None]]) -> None:
    async with AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        for name, make in stores.items():
            store = make()
            if store is not None:
                stack.push_async_callback(store.aclose)
            clients[name] = await stack.enter_async_context(Client(build(store)))
            await window(clients[name], 0.5, args.concurrency)  # warm-up: connections, tables, caches
        names = list(clients)
        rates: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        for round_ in range(args.rounds):
            for name in names if round_ % 2 == 0 else reversed(names):
                rate, cpu_per_call = await window(clients[name], args.seconds, args.concurrency)
                rates[name].append(rate)
                cpu[name].append(cpu_per_call)
    print(f"{args.rounds} rounds x {args.seconds} s per variant, {args.concurrency} calls in flight, new key per call")
    print(
        f"{'store':<9} {'calls/s':>8} {'CPU us/call':>12}  {'vs none: median (min-max)':<27} "
        "vs memory: median (min-max)"
    )
    for name in names:
        vs_none = [rate / base for rate, base in zip(rates[name], rates["none"], strict=True)]
        vs_memory = [rate / base for rate, base in zip(rates[name], rates["memory"], strict=True)]
        print(
            f"{name:<9} {statistics.median(rates[name]):>8.0f} {statistics.median(cpu[name]):>12.0f}  "
            f"{spread(vs_none):<27} {spread(vs_memory)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        postgres_url = stack.enter_context(services.running_postgres(fsync=True))
        redis_url = stack.enter_context(services.running_redis())
        stores: dict[str, Callable[[], IdempotencyStore | None]] = {
            "none": lambda: None,
            "memory": MemoryStore,
            "sqlite": lambda: SQLiteStore(folder / "keys.sqlite3"),
            "postgres": lambda: PostgresStore(postgres_url),
            "redis": lambda: RedisStore(redis_url),
        }
        anyio.run(run, args, stores)


if __name__ == "__main__":
    main()
