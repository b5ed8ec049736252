"""Added time per call of `mcp-errors proxy`: ours vs a plain fastmcp proxy vs a direct connection.

One upstream server (an `MCPServer` without the contract, over stdio, a child process of its
own for each side) has two tools:

- `echo` succeeds (the success path: both proxies relay the result);
- `fail` answers an `isError` result with the text "upstream timed out" (the error path: the
  plain proxy relays it; ours classifies it through the whole chain, schema check and word
  rules included, and writes the envelope).

Three sides, each with its own upstream child, all open at once: `direct` (the SDK's client
over stdio to the upstream), `plain` (`fastmcp.server.create_proxy` of a `StdioTransport`,
in this process) and `ours` (`mcp_errors.proxy.build_proxy` of a `ChildProcess`, in this
process). Both proxies are reached in memory by the SDK's client, so what differs between
them is only what the proxy itself does. Runs are interleaved (the order rotates every run);
each figure is the median over runs, of wall time per call and of this process's CPU time per
call (the proxy's work; the upstream child's is the same on both proxy sides), next to the
median of the paired per-run ratios ours/plain. Target: ours/plain <= 1.10 on both paths.
Run: `uv run python benchmarks/proxy.py [--runs 15 --calls 200 --mode legacy]`.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

from mcp_errors.proxy import ChildProcess, build_proxy
from mcp_errors.proxy._server import check_upstream

UPSTREAM = [sys.executable, __file__, "--serve-upstream"]


def serve_upstream() -> None:
    server: MCPServer[Any] = MCPServer("bench-upstream")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def fail(text: str) -> str:
        raise SDKToolError("upstream timed out")

    logging.disable(logging.CRITICAL)
    server.run()


@dataclass
class Side:
    name: str
    client: Client
    wall: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)


async def time_calls(side: Side, tool: str, calls: int) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        await side.client.call_tool(tool, {"text": "hi"})
    side.wall.setdefault(tool, []).append((time.perf_counter() - wall) / calls)
    side.cpu.setdefault(tool, []).append((time.process_time() - cpu) / calls)


async def bench(runs: int, calls: int, mode: str) -> list[Side]:
    async with contextlib.AsyncExitStack() as stack:
        direct = StdioServerParameters(command=UPSTREAM[0], args=UPSTREAM[1:])
        plain = create_proxy(StdioTransport(UPSTREAM[0], UPSTREAM[1:]), mode="legacy")
        child = ChildProcess(UPSTREAM[0], UPSTREAM[1:])
        stack.push_async_callback(child.close)
        ours = build_proxy(child)
        await check_upstream(ours, child, seconds=60)
        sides = [
            Side("direct", await stack.enter_async_context(Client(direct, mode=mode))),
            # The SDK's client reaches a fastmcp server in memory through its low-level server.
            Side("plain", await stack.enter_async_context(Client(plain._mcp_server, mode=mode))),  # type: ignore[arg-type]
            Side("ours", await stack.enter_async_context(Client(ours._mcp_server, mode=mode))),  # type: ignore[arg-type]
        ]
        for side in sides:  # warm-up as a host does (tools/list first), caches, lazy imports
            await side.client.list_tools()
            for tool in ("echo", "fail"):
                for _ in range(20):
                    await side.client.call_tool(tool, {"text": "hi"})
            side.wall.clear()
            side.cpu.clear()
        for run in range(runs):
            for index in range(len(sides)):
                side = sides[(run + index) % len(sides)]
                for tool in ("echo", "fail"):
                    await time_calls(side, tool, calls)
        return sides


def paired(sides: dict[str, Side], tool: str, metric: Callable[[Side], dict[str, list[float]]]) -> float:
    return statistics.median(
        o / p for o, p in zip(metric(sides["ours"])[tool], metric(sides["plain"])[tool], strict=True)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--mode", default="legacy", choices=["auto", "legacy"])
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_upstream:
        serve_upstream()
        return
    # Both proxies log at INFO on failures; formatting log lines would dominate here.
    logging.disable(logging.CRITICAL)
    sides = {side.name: side for side in anyio.run(bench, args.runs, args.calls, args.mode)}
    print(f"mode={args.mode} runs={args.runs} calls/run={args.calls} (medians over interleaved runs)")
    print(
        f"{'path':<8} {'direct ms':>10} {'plain ms':>9} {'ours ms':>8} {'ours-plain ms':>14} {'ours/plain wall':>16}"
        f" {'plain cpu ms':>13} {'ours cpu ms':>12} {'ours/plain cpu':>15} {'spread (p25-p75)':>18}"
    )
    for tool, label in (("echo", "success"), ("fail", "error")):
        wall = {name: statistics.median(side.wall[tool]) * 1000 for name, side in sides.items()}
        cpu = {name: statistics.median(side.cpu[tool]) * 1000 for name, side in sides.items()}
        ratios = [o / p for o, p in zip(sides["ours"].cpu[tool], sides["plain"].cpu[tool], strict=True)]
        quartiles = statistics.quantiles(ratios, n=4)
        print(
            f"{label:<8} {wall['direct']:>10.3f} {wall['plain']:>9.3f} {wall['ours']:>8.3f}"
            f" {wall['ours'] - wall['plain']:>14.3f} {paired(sides, tool, lambda s: s.wall):>16.3f}"
            f" {cpu['plain']:>13.3f} {cpu['ours']:>12.3f} {paired(sides, tool, lambda s: s.cpu):>15.3f}"
            f" {quartiles[0]:>8.3f}-{quartiles[2]:<9.3f}"
        )


if __name__ == "__main__":
    main()
