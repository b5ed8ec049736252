"""Load on the demo desk over streamable HTTP: with the error contract and without it.

Starts `mcp-errors serve --http` twice on 127.0.0.1 (with `install`, and with the hidden
`--no-contract` flag), both with 30% injected transient faults, and drives each with N
concurrent clients for a bounded time, alternating rounds so both see the same machine
state. Prints throughput, p50/p99 latency, malformed responses (must be 0 for the contract
server), CPU per call of the server process and of the clients, and the contract/baseline
ratios.

Each client connects and warms up (one call of each entry of CALLS) before the timed window
opens: the Python client lists the tools and compiles a `jsonschema` validator per tool on
the first success it sees, once per session. That one-off cost is reported apart (median
per client session), since timing it inside a few seconds of load made it look like a
per-call cost of the contract (the widened outputSchemas take ~4x longer to compile).

    uv run python benchmarks/load.py --clients 8 --seconds 6
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
from contextlib import contextmanager
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


async def drive(server: Server, clients: int, seconds: float, contract: bool, stats: Stats) -> None:
    """Connect and warm up every client first, then call for `seconds`: only that window is timed."""
    connected = 0
    finished = 0
    go = anyio.Event()
    window: dict[str, float] = {}

    async def one(index: int) -> None:
        nonlocal connected, finished
        async with Client(server.url) as client:
            started = time.perf_counter()
            for name, arguments in CALLS:
                await client.call_tool(name, arguments)
            stats.warmups.append(time.perf_counter() - started)
            connected += 1
            if connected == clients:
                window["start"] = time.monotonic()
                window["stop"] = window["start"] + seconds
                window["server_cpu"] = process_cpu(server.pid)
                window["client_cpu"] = time.process_time()
                go.set()
            await go.wait()
            n = index
            while time.monotonic() < window["stop"]:
                name, arguments = CALLS[n % len(CALLS)]
                n += 1
                started = time.perf_counter()
                result = await client.call_tool(name, arguments)
                stats.latencies.append(time.perf_counter() - started)
                stats.errors += bool(result.is_error)
                stats.malformed += not well_formed(result, contract)
            window["end"] = max(window.get("end", 0.0), time.monotonic())
            finished += 1
            if finished == clients:  # before the sessions close: closing is not timed either
                stats.server_cpu += process_cpu(server.pid) - window["server_cpu"]
                stats.client_cpu += time.process_time() - window["client_cpu"]

    async with anyio.create_task_group() as group:
        for index in range(clients):
            group.start_soon(one, index)
    stats.seconds += window["end"] - window["start"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=6.0, help="per server, split over the rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fault-rate", type=float, default=0.3)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    results = {"contract": Stats(), "baseline": Stats()}
    ports = {"contract": free_port(), "baseline": free_port()}
    with (
        serve(ports["contract"], contract=True, fault_rate=options.fault_rate) as contract_server,
        serve(ports["baseline"], contract=False, fault_rate=options.fault_rate) as baseline_server,
    ):
        servers = {"contract": contract_server, "baseline": baseline_server}
        for _ in range(options.rounds):
            for name in ("baseline", "contract"):
                slice_seconds = options.seconds / options.rounds
                anyio.run(drive, servers[name], options.clients, slice_seconds, name == "contract", results[name])

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
    ratio = {
        "throughput": round(rows["contract"]["throughput_per_s"] / rows["baseline"]["throughput_per_s"], 3),
        "p50": round(rows["contract"]["p50_ms"] / rows["baseline"]["p50_ms"], 3),
        "p99": round(rows["contract"]["p99_ms"] / rows["baseline"]["p99_ms"], 3),
        "server_cpu": round(rows["contract"]["server_cpu_ms_per_call"] / rows["baseline"]["server_cpu_ms_per_call"], 3),
        "client_cpu": round(rows["contract"]["client_cpu_ms_per_call"] / rows["baseline"]["client_cpu_ms_per_call"], 3),
    }
    if options.json:
        print(json.dumps({"servers": rows, "contract_over_baseline": ratio}, indent=2))
    else:
        print(
            f"{options.clients} clients, {options.seconds:g} s per server in {options.rounds} alternating rounds, "
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
        print("(CPU columns: ms per timed call; warm-up: median per client session, one call of each kind)")
    if rows["contract"]["malformed"]:
        raise SystemExit("malformed responses from the contract server")


if __name__ == "__main__":
    main()
