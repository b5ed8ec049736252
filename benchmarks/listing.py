"""Tool lists: what `install` adds to tools/list, and what recovery pays for reading them.

1. tools/list, raw `MCPServer` vs the same server after `install` (target: <= 1.10x in bytes
   and time, 10 to 100 tools). Every tool takes two arguments and has a description; half
   return a pydantic model (an outputSchema with its own properties), half a `str` (the
   SDK's `{"result": ...}` wrapper schema). Bytes are the listing's JSON as a client receives
   it; time is CPU time per `client.list_tools()` through `mcp.Client` in memory (client and
   server share the process), both sessions open and alternating in short batches
   (`_paired.py`): the median of the per-batch ratios, with their interquartile range.
2. A failed logical request through `call_tool_with_recovery` on a tool whose resend safety
   depends on tools/list (transient, outcome unknown, not annotated), on one connection, with
   10 and with 1,000 tools on the server: the cost must not grow with the number of tools.

Run: `uv run python benchmarks/listing.py [--batches 100] [--mode auto|legacy]`.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from _paired import Paired, compare
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


async def listing_bytes(server: MCPServer, mode: str) -> int:
    async with Client(server, mode=mode) as client:
        listing = await client.list_tools()
    return len(listing.model_dump_json(by_alias=True, exclude_none=True))


async def compare_listing(raw_server: MCPServer, installed_server: MCPServer, mode: str, batches: int) -> Paired:
    async with Client(raw_server, mode=mode) as raw, Client(installed_server, mode=mode) as installed:
        return await compare(raw.list_tools, installed.list_tools, batches=batches, per_batch=3, warmup=3)


def compare_listings(tool_counts: list[int], batches: int, mode: str) -> None:
    print(f"1. tools/list, mode={mode}, {batches}x3 listings per side (CPU time; median of batch ratios, IQR)")
    print(
        f"{'tools':>6} {'raw bytes':>10} {'installed bytes':>16} {'bytes ratio':>12} {'raw ms':>8} {'installed ms':>13}"
        f" {'time ratio':>11} {'IQR':>12}"
    )
    for count in tool_counts:
        raw_server, installed_server = build(count, installed=False), build(count, installed=True)
        raw_bytes = anyio.run(listing_bytes, raw_server, mode)
        installed_bytes = anyio.run(listing_bytes, installed_server, mode)
        f = anyio.run(compare_listing, raw_server, installed_server, mode, batches)
        print(
            f"{count:>6} {raw_bytes:>10} {installed_bytes:>16} {installed_bytes / raw_bytes:>12.3f}"
            f" {f.a_seconds * 1e3:>8.2f} {f.b_seconds * 1e3:>13.2f} {f.ratio:>11.3f} {f.spread():>12}",
            flush=True,
        )


def build_failing(tools: int) -> MCPServer:
    server = build(tools, installed=True)

    @server.tool()
    def write(order_id: str) -> str:
        raise TransientError("Ledger busy", description="The ledger did not answer; resend after a short wait.")

    return server


async def compare_recovery_cost(mode: str, batches: int) -> Paired:
    policy = RecoveryPolicy(max_attempts=1)
    async with Client(build_failing(10), mode=mode) as small, Client(build_failing(1000), mode=mode) as large:

        def failed_request(client: Client) -> Callable[[], Awaitable[object]]:
            async def run() -> object:
                report = await call_tool_with_recovery(
                    client, "write", {"order_id": "#1"}, policy=policy, budget=RetryBudget()
                )
                assert report.reason == "outcome_unknown"  # the tool list was read: not annotated
                return report

            return run

        return await compare(failed_request(small), failed_request(large), batches=batches, per_batch=5)


def compare_recovery(batches: int, mode: str) -> None:
    print(f"2. a failed logical request, mode={mode}, {batches}x5 requests per side (CPU time)")
    f = anyio.run(compare_recovery_cost, mode, batches)
    print(
        f"10 tools {f.a_seconds * 1e6:.0f} us, 1000 tools {f.b_seconds * 1e6:.0f} us per request;"
        f" 1000/10 = {f.ratio:.3f} (IQR {f.spread()})"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    parser.add_argument("--part", choices=["1", "2", "both"], default="both")
    args = parser.parse_args(argv)
    logging.disable(logging.CRITICAL)
    if args.part in ("1", "both"):
        compare_listings([10, 30, 100], args.batches, args.mode)
    if args.part in ("2", "both"):
        compare_recovery(args.batches, args.mode)


if __name__ == "__main__":
    main()
