"""Server overhead of `install`: calls per CPU second through a real client, raw vs installed.

Both sides run the same server code, once as it is and once after `install` (the target:
installed/raw <= 1.05 on every path), on `MCPServer` (through `mcp.Client`) and on fastmcp's
`FastMCP` (through fastmcp's `Client`), in memory, with trivial tools:

- `echo` succeeds (the success path);
- `refuse_sdk` raises the framework's own `ToolError` (the SDK's on `MCPServer`, fastmcp's on
  `FastMCP`): what most existing servers raise. Raw, the framework's text result;
  installed, a `business` envelope that keeps the message (code `TOOL_ERROR`);
- `refuse` raises our `BusinessRuleError` (the raw SDK shows its message, since our
  `ToolError` subclasses the SDK's; installed, it becomes the full envelope);
- `time_out` raises `TimeoutError`, which the tool did not classify (raw: the framework's
  generic text; installed: a classified `transient` envelope);
- `crash` raises `ValueError`, a bug nobody classifies (raw: the framework's generic text;
  installed: the fixed `INTERNAL_ERROR` envelope; both log the traceback).

Runs are interleaved (raw, installed, installed, raw, ...) so that machine noise hits both
alike; the figure for each side is the median of the runs, in CPU time per call (client and
server share the process), next to the median of the paired per-run ratios, their spread
(lowest and highest paired ratio) and the wall-clock ratio. Logging is off on both sides
unless `--logging` (see docs/performance.md for what default logging costs).

Run: `uv run python benchmarks/overhead.py [--server mcpserver|fastmcp|both] [--mode auto|legacy]`.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

from mcp_errors import BusinessRuleError, install

PATHS = (
    ("success", "echo"),
    ("error: SDK ToolError", "refuse_sdk"),
    ("error: BusinessRuleError", "refuse"),
    ("error: unclassified", "time_out"),
    ("error: crash", "crash"),
)


def build_mcpserver(*, installed: bool) -> MCPServer:
    server = MCPServer("bench")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def refuse_sdk(text: str) -> str:
        raise SDKToolError("Refused: the order is archived")

    @server.tool()
    async def refuse(text: str) -> str:
        raise BusinessRuleError("Refused", description="Take another path.", code="REFUSED")

    @server.tool()
    async def time_out(text: str) -> str:
        raise TimeoutError("upstream did not answer")

    @server.tool()
    async def crash(text: str) -> str:
        raise ValueError("a bug")

    return install(server) if installed else server


def build_fastmcp(*, installed: bool) -> Any:
    from fastmcp import FastMCP
    from fastmcp.exceptions import ToolError as FastMCPToolError

    server = FastMCP("bench")

    @server.tool
    async def echo(text: str) -> str:
        return text

    @server.tool
    async def refuse_sdk(text: str) -> str:
        raise FastMCPToolError("Refused: the order is archived")

    @server.tool
    async def refuse(text: str) -> str:
        raise BusinessRuleError("Refused", description="Take another path.", code="REFUSED")

    @server.tool
    async def time_out(text: str) -> str:
        raise TimeoutError("upstream did not answer")

    @server.tool
    async def crash(text: str) -> str:
        raise ValueError("a bug")

    return install(server) if installed else server


def mcp_client(server: Any, mode: str) -> Any:
    return Client(server, mode=mode)


def fastmcp_client(server: Any, mode: str) -> Any:
    from fastmcp import Client as FastMCPClient

    return FastMCPClient(server, mode=mode)


async def time_calls(
    connect: Callable[[Any, str], Any], server: Any, tool: str, calls: int, mode: str
) -> tuple[float, float]:
    """(wall, CPU) seconds per call, over `calls` calls on one open session.

    Client and server share this process, so CPU time (all threads) is the cost of a call;
    unlike wall time it does not count the moments another job on a shared machine held the core.
    """
    async with connect(server, mode) as client:
        # Both clients return the result without raising on `isError` this way.
        call = client.call_tool if isinstance(client, Client) else client.call_tool_mcp
        for _ in range(20):  # warm-up: first-call caches, lazy imports, the tools/list
            await call(tool, {"text": "hi"})
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(calls):
            await call(tool, {"text": "hi"})
        return (time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls


@dataclass
class Figures:
    raw_cpu: float
    installed_cpu: float
    paired_ratio: float
    paired_low: float
    paired_high: float
    wall_ratio: float


def measure(
    connect: Callable[[Any, str], Any],
    raw_server: Any,
    installed_server: Any,
    tool: str,
    runs: int,
    calls: int,
    mode: str,
) -> Figures:
    raw: list[tuple[float, float]] = []
    installed: list[tuple[float, float]] = []
    for run in range(runs):
        # ABBA order, so that a slow moment of the machine does not always hit the same side.
        order = ((raw_server, raw), (installed_server, installed))
        for server, sink in order if run % 2 == 0 else reversed(order):
            sink.append(anyio.run(time_calls, connect, server, tool, calls, mode))
    ratios = [i[1] / r[1] for r, i in zip(raw, installed, strict=True)]
    return Figures(
        raw_cpu=statistics.median(cpu for _, cpu in raw),
        installed_cpu=statistics.median(cpu for _, cpu in installed),
        paired_ratio=statistics.median(ratios),
        paired_low=min(ratios),
        paired_high=max(ratios),
        wall_ratio=statistics.median(w for w, _ in installed) / statistics.median(w for w, _ in raw),
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    parser.add_argument("--server", default="both", choices=["mcpserver", "fastmcp", "both"])
    parser.add_argument("--only", help="Measure only paths whose label contains this text.")
    parser.add_argument("--logging", action="store_true", help="Keep each framework's default logging on.")
    args = parser.parse_args(argv)
    if not args.logging:
        # Both sides log each failure; a server in production keeps its logging, but its
        # formatting would dominate here (docs/performance.md measures it apart).
        logging.disable(logging.CRITICAL)
    frameworks = [
        ("MCPServer", build_mcpserver, mcp_client),
        ("fastmcp", build_fastmcp, fastmcp_client),
    ]
    if args.server != "both":
        frameworks = [f for f in frameworks if f[0].lower() == args.server]
    print(
        f"mode={args.mode} runs={args.runs} calls/run={args.calls} logging={'on' if args.logging else 'off'}"
        " (medians; ABBA-interleaved; CPU time)"
    )
    print(
        f"{'server':<10} {'path':<26} {'raw calls/cpu-s':>16} {'installed calls/cpu-s':>22} {'installed/raw':>14}"
        f" {'paired median':>14} {'paired min-max':>15} {'wall ratio':>11}"
    )
    for framework, build, connect in frameworks:
        raw, installed = build(installed=False), build(installed=True)
        for label, tool in PATHS:
            if args.only and args.only not in label:
                continue
            f = measure(connect, raw, installed, tool, args.runs, args.calls, args.mode)
            print(
                f"{framework:<10} {label:<26} {1 / f.raw_cpu:>16.0f} {1 / f.installed_cpu:>22.0f}"
                f" {f.installed_cpu / f.raw_cpu:>14.3f} {f.paired_ratio:>14.3f}"
                f" {f'{f.paired_low:.3f}-{f.paired_high:.3f}':>15} {f.wall_ratio:>11.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
