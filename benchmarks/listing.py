"""Tool lists: what `install` adds to tools/list, and what recovery pays for reading them.

1. tools/list, raw `MCPServer` vs the same server after `install` (target: <= 1.10x in bytes
   and time, 10 to 100 tools). Every tool takes two arguments and has a description; half
   return a pydantic model (an outputSchema with its own properties), half a `str` (the
   SDK's `{"result": ...}` wrapper schema). Bytes are the listing's JSON as a client receives
   it; time is CPU time per `client.list_tools()` through `mcp.Client` in memory (client and
   server share the process), median of interleaved runs (ABBA), with the lowest and highest
   paired ratio.
2. A failed logical request through `call_tool_with_recovery` on a tool whose resend safety
   depends on tools/list (transient, outcome unknown, not annotated), on one connection, with
   10 and with 1,000 tools on the server: the cost must not grow with the number of tools.

Run: `uv run python benchmarks/listing.py [--runs 15] [--mode auto|legacy]`.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from mcp_errors import RecoveryPolicy, RetryBudget, TransientError, call_tool_with_recovery, install


class Order(BaseModel):
    order_id: str
    status: str
    total: float


def build(tools: int, *, installed: bool) -> MCPServer:
    server = MCPServer("listing")
    for index in range(tools):
        if index % 2:

            def get_order(order_id: str, include_lines: bool = False) -> Order:
                return Order(order_id=order_id, status="shipped", total=1.0)

            function: Any = get_order
        else:

            def describe(order_id: str, include_lines: bool = False) -> str:
                return order_id

            function = describe
        server.add_tool(function, name=f"tool_{index}", description=f"Tool number {index}: reads one order by its id.")
    return install(server) if installed else server


async def list_cost(server: MCPServer, mode: str, calls: int) -> tuple[int, float]:
    async with Client(server, mode=mode) as client:
        listing = await client.list_tools()
        size = len(listing.model_dump_json(by_alias=True, exclude_none=True))
        for _ in range(3):
            await client.list_tools()
        cpu = time.process_time()
        for _ in range(calls):
            await client.list_tools()
        return size, (time.process_time() - cpu) / calls


def compare_listings(tool_counts: list[int], runs: int, calls: int, mode: str) -> None:
    print(f"1. tools/list, mode={mode}, runs={runs}, listings/run={calls} (medians; ABBA; CPU time)")
    print(
        f"{'tools':>6} {'raw bytes':>10} {'installed bytes':>16} {'bytes ratio':>12} {'time ratio':>11} {'min-max':>12}"
    )
    for count in tool_counts:
        raw_server, installed_server = build(count, installed=False), build(count, installed=True)
        raw: list[tuple[int, float]] = []
        installed: list[tuple[int, float]] = []
        for run in range(runs):
            order = ((raw_server, raw), (installed_server, installed))
            for server, sink in order if run % 2 == 0 else reversed(order):
                sink.append(anyio.run(list_cost, server, mode, calls))
        ratios = [i[1] / r[1] for r, i in zip(raw, installed, strict=True)]
        print(
            f"{count:>6} {raw[0][0]:>10} {installed[0][0]:>16} {installed[0][0] / raw[0][0]:>12.3f}"
            f" {statistics.median(ratios):>11.3f} {f'{min(ratios):.3f}-{max(ratios):.3f}':>12}",
            flush=True,
        )


def build_failing(tools: int) -> MCPServer:
    server = build(tools, installed=True)

    @server.tool()
    def write(order_id: str) -> str:
        raise TransientError("Ledger busy", description="The ledger did not answer; resend after a short wait.")

    return server


async def recovery_cost(server: MCPServer, mode: str, requests: int) -> float:
    policy = RecoveryPolicy(max_attempts=1)
    async with Client(server, mode=mode) as client:
        await call_tool_with_recovery(client, "write", {"order_id": "#1"}, policy=policy, budget=RetryBudget())
        cpu = time.process_time()
        for _ in range(requests):
            report = await call_tool_with_recovery(
                client, "write", {"order_id": "#1"}, policy=policy, budget=RetryBudget()
            )
            assert report.reason == "outcome_unknown"
        return (time.process_time() - cpu) / requests


def compare_recovery(runs: int, requests: int, mode: str) -> None:
    print(f"2. a failed logical request, mode={mode}, runs={runs}, requests/run={requests} (medians; ABBA; CPU time)")
    small, large = build_failing(10), build_failing(1000)
    costs: dict[int, list[float]] = {10: [], 1000: []}
    for run in range(runs):
        order = ((small, costs[10]), (large, costs[1000]))
        for server, sink in order if run % 2 == 0 else reversed(order):
            sink.append(anyio.run(recovery_cost, server, mode, requests))
    ratios = [b / a for a, b in zip(costs[10], costs[1000], strict=True)]
    print(
        f"10 tools {statistics.median(costs[10]) * 1e6:.0f} us,"
        f" 1000 tools {statistics.median(costs[1000]) * 1e6:.0f} us per request;"
        f" 1000/10 = {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    parser.add_argument("--part", choices=["1", "2", "both"], default="both")
    args = parser.parse_args(argv)
    logging.disable(logging.CRITICAL)
    if args.part in ("1", "both"):
        compare_listings([10, 30, 100], args.runs, args.calls, args.mode)
    if args.part in ("2", "both"):
        compare_recovery(args.runs, 50, args.mode)


if __name__ == "__main__":
    main()
