"""Server overhead of `install`: calls per second through `mcp.Client`, raw MCPServer vs installed.

Both servers have one trivial tool that succeeds and one that fails (raw: the SDK's
ToolError; installed: mcp_errors' ToolError, which becomes a full envelope). Runs are
interleaved (raw, installed, installed, raw, ...) so that machine noise hits both alike; the
figure for each is the median of the runs, in CPU time per call (client and server share the
process), next to the median of the paired per-run ratios and the wall-clock ratio.
Run: `uv run python benchmarks/overhead.py [--mode legacy]`.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

from mcp_errors import BusinessRuleError, install


def build(installed: bool) -> MCPServer:
    server = MCPServer("bench")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def refuse(text: str) -> str:
        if installed:
            raise BusinessRuleError("Refused", description="Take another path.", code="REFUSED")
        raise SDKToolError("Refused")

    return install(server) if installed else server


async def time_calls(server: MCPServer, tool: str, calls: int, mode: str) -> tuple[float, float]:
    """(wall, CPU) seconds per call, over `calls` calls on one open session.

    Client and server share this process, so CPU time (all threads) is the cost of a call;
    unlike wall time it does not count the moments another job on a shared machine held the core.
    """
    async with Client(server, mode=mode) as client:
        for _ in range(20):  # warm-up: first-call caches, lazy imports, the tools/list
            await client.call_tool(tool, {"text": "hi"})
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            await client.call_tool(tool, {"text": "hi"})
        return (time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls


@dataclass
class Figures:
    raw_cpu: float
    wrapped_cpu: float
    paired_ratio: float
    wall_ratio: float


def measure(tool: str, runs: int, calls: int, mode: str) -> Figures:
    raw_server, wrapped_server = build(installed=False), build(installed=True)
    raw: list[tuple[float, float]] = []
    wrapped: list[tuple[float, float]] = []
    for run in range(runs):
        # ABBA order, so that a slow moment of the machine does not always hit the same side.
        order = ((raw_server, raw), (wrapped_server, wrapped))
        for server, sink in order if run % 2 == 0 else reversed(order):
            sink.append(anyio.run(time_calls, server, tool, calls, mode))
    return Figures(
        raw_cpu=statistics.median(cpu for _, cpu in raw),
        wrapped_cpu=statistics.median(cpu for _, cpu in wrapped),
        paired_ratio=statistics.median(w[1] / r[1] for r, w in zip(raw, wrapped, strict=True)),
        wall_ratio=statistics.median(w for w, _ in wrapped) / statistics.median(r for r, _ in raw),
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    args = parser.parse_args(argv)
    # Both servers log one INFO line per failure (the SDK and mcp_errors alike); a server in
    # production keeps its logging, but console rendering would dominate this measurement.
    logging.disable(logging.INFO)
    report: Callable[[str], None] = print
    report(f"mode={args.mode} runs={args.runs} calls/run={args.calls} (medians; ABBA-interleaved; CPU time)")
    report(
        f"{'path':<8} {'raw calls/cpu-s':>16} {'installed calls/cpu-s':>22} {'installed/raw':>14}"
        f" {'paired median':>14} {'wall ratio':>11}"
    )
    for label, tool in (("success", "echo"), ("error", "refuse")):
        f = measure(tool, args.runs, args.calls, args.mode)
        report(
            f"{label:<8} {1 / f.raw_cpu:>16.0f} {1 / f.wrapped_cpu:>22.0f} {f.wrapped_cpu / f.raw_cpu:>14.3f}"
            f" {f.paired_ratio:>14.3f} {f.wall_ratio:>11.3f}"
        )


if __name__ == "__main__":
    main()
