"""Load on the demo desk over streamable HTTP: with the error contract and without it.

Starts `mcp-errors serve --http` twice on 127.0.0.1 (with `install`, and with the hidden
`--no-contract` flag), both with 30% injected transient faults, and drives each with N
concurrent clients for a bounded time, alternating rounds so both see the same machine
state. Prints throughput, p50/p99 latency, malformed responses (must be 0 for the contract
server) and the contract/baseline ratios.

    uv run python benchmarks/load.py --clients 8 --seconds 6
"""

from __future__ import annotations

import argparse
import json
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


@contextmanager
def serve(port: int, *, contract: bool, fault_rate: float) -> Iterator[str]:
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
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


async def drive(url: str, clients: int, seconds: float, contract: bool, stats: Stats) -> None:
    """Connect every client first, then call for `seconds`: session setup is not measured."""
    connected = 0
    go = anyio.Event()
    window: dict[str, float] = {}

    async def one(index: int) -> None:
        nonlocal connected
        async with Client(url) as client:
            connected += 1
            if connected == clients:
                window["start"] = time.monotonic()
                window["stop"] = window["start"] + seconds
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
        serve(ports["contract"], contract=True, fault_rate=options.fault_rate) as contract_url,
        serve(ports["baseline"], contract=False, fault_rate=options.fault_rate) as baseline_url,
    ):
        urls = {"contract": contract_url, "baseline": baseline_url}
        for _ in range(options.rounds):
            for name in ("baseline", "contract"):
                slice_seconds = options.seconds / options.rounds
                anyio.run(drive, urls[name], options.clients, slice_seconds, name == "contract", results[name])

    rows = {}
    for name, stats in results.items():
        rows[name] = {
            "calls": stats.calls,
            "throughput_per_s": round(stats.calls / stats.seconds, 1),
            "p50_ms": round(stats.quantile(0.5), 2),
            "p99_ms": round(stats.quantile(0.99), 2),
            "error_results": stats.errors,
            "malformed": stats.malformed,
        }
    ratio = {
        "throughput": round(rows["contract"]["throughput_per_s"] / rows["baseline"]["throughput_per_s"], 3),
        "p50": round(rows["contract"]["p50_ms"] / rows["baseline"]["p50_ms"], 3),
        "p99": round(rows["contract"]["p99_ms"] / rows["baseline"]["p99_ms"], 3),
    }
    if options.json:
        print(json.dumps({"servers": rows, "contract_over_baseline": ratio}, indent=2))
    else:
        print(
            f"{options.clients} clients, {options.seconds:g} s per server in {options.rounds} alternating rounds, "
            f"{options.fault_rate:.0%} injected transient faults, streamable HTTP on 127.0.0.1"
        )
        print(f"{'server':<10}{'calls':>8}{'calls/s':>10}{'p50 ms':>9}{'p99 ms':>9}{'errors':>8}{'malformed':>11}")
        for name, row in rows.items():
            print(
                f"{name:<10}{row['calls']:>8}{row['throughput_per_s']:>10}{row['p50_ms']:>9}{row['p99_ms']:>9}"
                f"{row['error_results']:>8}{row['malformed']:>11}"
            )
        print(f"contract / baseline: throughput x{ratio['throughput']}, p50 x{ratio['p50']}, p99 x{ratio['p99']}")
        print(f"median latency both: {statistics.median(results['contract'].latencies) * 1000:.2f} ms (contract)")
    if rows["contract"]["malformed"]:
        raise SystemExit("malformed responses from the contract server")


if __name__ == "__main__":
    main()
