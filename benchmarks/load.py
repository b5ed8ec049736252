"""Load on the demo desk over streamable HTTP: with the error contract and without it.

Starts `mcp-errors serve --http` twice on 127.0.0.1 (with `install`, and with the hidden
`--no-contract` flag), both with the same injected transient faults (30% by default, same
seed), and drives each with N concurrent clients. Prints throughput, p50/p99 latency,
malformed responses (must be 0 for the contract server), CPU per call of the server process
and of the clients, and the contract/baseline ratios.

How it stays fair on a shared machine:

- Both sets of clients connect and warm up (one call of each entry of CALLS) before any
  window is timed, and stay connected. The Python client lists the tools and compiles a
  `jsonschema` validator per tool on the first success it sees, once per session; the
  contract's widened outputSchemas take ~4x longer to compile, and timing that inside a few
  seconds of load made a one-off cost look like a per-call one. It is reported apart
  (median per client session).
- The timed load is cut into many short windows, alternated ABBA (baseline, contract,
  contract, baseline, ...), so both servers see the same machine state; the ratio of each
  adjacent pair is reported too, and its median is the figure least disturbed by other jobs.

    uv run python benchmarks/load.py --clients 8 --seconds 6 --rounds 12
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import Client
from mcp_types import CallToolResult, TextContent

from mcp_errors import is_error_envelope

_HEAD = re.compile(r"^\[(transient|validation|business|permission) error, (retryable|not retryable)")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_order", {"order_id": "#10007"}),
    ("get_order", {"order_id": "order-abc"}),
    ("lookup_customer", {"email": "ana.silva@example.com"}),
    ("lookup_customer", {"email": "john@example.com"}),
    ("search_knowledge", {"query": "refund", "source": "policies"}),
    ("get_financial_records", {"customer_id": "C-1001"}),
]


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    malformed: int = 0
    seconds: float = 0.0
    server_cpu: float = 0.0
    client_cpu: float = 0.0
    warmups: list[float] = field(default_factory=list)
    windows: list[float] = field(default_factory=list)
    """Throughput of each timed window, in calls per second."""

    @property
    def calls(self) -> int:
        return len(self.latencies)

    def quantile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")


def well_formed(result: CallToolResult, contract: bool) -> bool:
    """Whether a result follows the contract (errors) or carries its data (successes)."""
    structured = result.structured_content
    text = next((b.text for b in result.content if isinstance(b, TextContent)), "")
    if result.is_error:
        if not contract:
            return bool(text)  # the baseline promises only a text
        head = _HEAD.match(text)
        return (
            is_error_envelope(structured)
            and head is not None
            and isinstance(structured, dict)
            and head.group(1) == structured["errorCategory"]
        )
    return isinstance(structured, dict) and structured.get("resultCount", -1) >= 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process `pid`; 0 where /proc is missing."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Server:
    url: str
    pid: int


@contextmanager
def serve(port: int, *, contract: bool, fault_rate: float) -> Iterator[Server]:
    args = [sys.executable, "-m", "mcp_errors", "serve", "--http", str(port), "--db", ":memory:"]
    args += ["--fault-rate", str(fault_rate), "--seed", "1"]
    if not contract:
        args.append("--no-contract")
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the desk did not start") from None
                time.sleep(0.1)
        yield Server(f"http://127.0.0.1:{port}/mcp", process.pid)
    finally:
        process.terminate()
        process.wait(10)


async def warm_up(client: Client, stats: Stats) -> None:
    started = time.perf_counter()
    for name, arguments in CALLS:
        await client.call_tool(name, arguments)
    stats.warmups.append(time.perf_counter() - started)


async def window(server: Server, clients: list[Client], seconds: float, contract: bool, stats: Stats) -> None:
    """Every client of one server calls for `seconds`; latencies, results and CPU are recorded."""
    stop = time.monotonic() + seconds
    calls_before = stats.calls
    server_cpu, client_cpu = process_cpu(server.pid), time.process_time()
    started = time.monotonic()

    async def one(index: int, client: Client) -> None:
        n = index + stats.calls  # rotate the mix so every window starts elsewhere in it
        while time.monotonic() < stop:
            name, arguments = CALLS[n % len(CALLS)]
            n += 1
            began = time.perf_counter()
            result = await client.call_tool(name, arguments)
            stats.latencies.append(time.perf_counter() - began)
            stats.errors += bool(result.is_error)
            stats.malformed += not well_formed(result, contract)

    async with anyio.create_task_group() as group:
        for index, client in enumerate(clients):
            group.start_soon(one, index, client)
    elapsed = time.monotonic() - started
    stats.server_cpu += process_cpu(server.pid) - server_cpu
    stats.client_cpu += time.process_time() - client_cpu
    stats.seconds += elapsed
    stats.windows.append((stats.calls - calls_before) / elapsed)


async def drive(
    servers: dict[str, Server], clients: int, seconds: float, rounds: int, results: dict[str, Stats]
) -> None:
    """Connect and warm up all clients of both servers, then alternate timed windows ABBA."""
    async with AsyncExitStack() as stack:
        pools: dict[str, list[Client]] = {}
        for name, server in servers.items():
            pools[name] = [await stack.enter_async_context(Client(server.url)) for _ in range(clients)]
            async with anyio.create_task_group() as group:
                for client in pools[name]:
                    group.start_soon(warm_up, client, results[name])
        slice_seconds = seconds / rounds
        for index in range(rounds):
            order = ("baseline", "contract") if index % 2 == 0 else ("contract", "baseline")
            for name in order:
                await window(servers[name], pools[name], slice_seconds, name == "contract", results[name])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=6.0, help="per server, split over the rounds")
    parser.add_argument("--rounds", type=int, default=12, help="timed windows per server, alternated ABBA")
    parser.add_argument("--fault-rate", type=float, default=0.3)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    results = {"contract": Stats(), "baseline": Stats()}
    ports = {"contract": free_port(), "baseline": free_port()}
    with (
        serve(ports["contract"], contract=True, fault_rate=options.fault_rate) as contract_server,
        serve(ports["baseline"], contract=False, fault_rate=options.fault_rate) as baseline_server,
    ):
        servers = {"baseline": baseline_server, "contract": contract_server}
        anyio.run(drive, servers, options.clients, options.seconds, options.rounds, results)

    rows = {}
    for name, stats in results.items():
        rows[name] = {
            "calls": stats.calls,
            "throughput_per_s": round(stats.calls / stats.seconds, 1),
            "p50_ms": round(stats.quantile(0.5), 2),
            "p99_ms": round(stats.quantile(0.99), 2),
            "error_results": stats.errors,
            "malformed": stats.malformed,
            "server_cpu_ms_per_call": round(stats.server_cpu / stats.calls * 1000, 2),
            "client_cpu_ms_per_call": round(stats.client_cpu / stats.calls * 1000, 2),
            "warmup_ms_per_session": round(statistics.median(stats.warmups) * 1000, 1),
        }
    pairs = [c / b for c, b in zip(results["contract"].windows, results["baseline"].windows, strict=True)]
    ratio = {
        "throughput": round(rows["contract"]["throughput_per_s"] / rows["baseline"]["throughput_per_s"], 3),
        "p50": round(rows["contract"]["p50_ms"] / rows["baseline"]["p50_ms"], 3),
        "p99": round(rows["contract"]["p99_ms"] / rows["baseline"]["p99_ms"], 3),
        "server_cpu": round(rows["contract"]["server_cpu_ms_per_call"] / rows["baseline"]["server_cpu_ms_per_call"], 3),
        "client_cpu": round(rows["contract"]["client_cpu_ms_per_call"] / rows["baseline"]["client_cpu_ms_per_call"], 3),
        "throughput_median_of_pairs": round(statistics.median(pairs), 3),
    }
    if options.json:
        print(json.dumps({"servers": rows, "contract_over_baseline": ratio}, indent=2))
    else:
        print(
            f"{options.clients} clients, {options.seconds:g} s per server in {options.rounds} ABBA windows, "
            f"{options.fault_rate:.0%} injected transient faults, streamable HTTP on 127.0.0.1"
        )
        print(
            f"{'server':<10}{'calls':>8}{'calls/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'malformed':>11}"
            f"{'srv cpu ms':>12}{'cli cpu ms':>12}{'warm-up ms':>12}"
        )
        for name, row in rows.items():
            print(
                f"{name:<10}{row['calls']:>8}{row['throughput_per_s']:>10}{row['p50_ms']:>9}{row['p99_ms']:>9}"
                f"{row['error_results']:>8}{row['malformed']:>11}{row['server_cpu_ms_per_call']:>12}"
                f"{row['client_cpu_ms_per_call']:>12}{row['warmup_ms_per_session']:>12}"
            )
        print(
            f"contract / baseline: throughput x{ratio['throughput']}, p50 x{ratio['p50']}, p99 x{ratio['p99']}, "
            f"server CPU per call x{ratio['server_cpu']}, client CPU per call x{ratio['client_cpu']}"
        )
        print(f"median of the per-window throughput ratios: x{ratio['throughput_median_of_pairs']}")
        print("(CPU columns: ms per timed call; warm-up: median per client session, one call of each kind)")
    if rows["contract"]["malformed"]:
        raise SystemExit("malformed responses from the contract server")


if __name__ == "__main__":
    main()
