"""Server overhead of `install`: calls per second through `mcp.Client`, raw MCPServer vs installed.

Both sides run the same server code, once as it is and once after `install` (the target:
installed/raw <= 1.05 on every path), with three trivial tools:

- `echo` succeeds (the success path);
- `refuse` raises `BusinessRuleError` (a classified failure: the raw SDK shows its message,
  since our `ToolError` subclasses the SDK's; installed, it becomes the full envelope);
- `time_out` raises `TimeoutError`, which the tool did not classify (raw: the SDK's generic
  text; installed: a classified `transient` envelope).

A last row is not install's overhead but what adopting the contract costs end to end: the raw
server's tool raises the SDK's plain `ToolError`, the installed one `BusinessRuleError`.

Runs are interleaved (raw, installed, installed, raw, ...) so that machine noise hits both
alike; the figure for each is the median of the runs, in CPU time per call (client and server
share the process), next to the median of the paired per-run ratios and the wall-clock ratio.
Run: `uv run python benchmarks/overhead.py [--mode legacy]`.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from dataclasses import dataclass

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

from mcp_errors import BusinessRuleError, install


def build(*, installed: bool, plain_sdk_error: bool = False) -> MCPServer:
    server = MCPServer("bench")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def refuse(text: str) -> str:
        if plain_sdk_error:
            raise SDKToolError("Refused")
        raise BusinessRuleError("Refused", description="Take another path.", code="REFUSED")

    @server.tool()
    async def time_out(text: str) -> str:
        raise TimeoutError("upstream did not answer")

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
    installed_cpu: float
    paired_ratio: float
    wall_ratio: float


def measure(raw_server: MCPServer, installed_server: MCPServer, tool: str, runs: int, calls: int, mode: str) -> Figures:
    raw: list[tuple[float, float]] = []
    installed: list[tuple[float, float]] = []
    for run in range(runs):
        # ABBA order, so that a slow moment of the machine does not always hit the same side.
        order = ((raw_server, raw), (installed_server, installed))
        for server, sink in order if run % 2 == 0 else reversed(order):
            sink.append(anyio.run(time_calls, server, tool, calls, mode))
    return Figures(
        raw_cpu=statistics.median(cpu for _, cpu in raw),
        installed_cpu=statistics.median(cpu for _, cpu in installed),
        paired_ratio=statistics.median(i[1] / r[1] for r, i in zip(raw, installed, strict=True)),
        wall_ratio=statistics.median(w for w, _ in installed) / statistics.median(w for w, _ in raw),
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    args = parser.parse_args(argv)
    # Both sides log each failure (the raw SDK logs an unexpected exception with its traceback
    # at ERROR); a server in production keeps its logging, but formatting would dominate here.
    logging.disable(logging.CRITICAL)
    raw, installed = build(installed=False), build(installed=True)
    rows = (
        ("success", raw, installed, "echo"),
        ("error: ToolError", raw, installed, "refuse"),
        ("error: unclassified", raw, installed, "time_out"),
        (
            "adoption: SDK ToolError -> BusinessRuleError",
            build(installed=False, plain_sdk_error=True),
            installed,
            "refuse",
        ),
    )
    print(f"mode={args.mode} runs={args.runs} calls/run={args.calls} (medians; ABBA-interleaved; CPU time)")
    print(
        f"{'path':<46} {'raw calls/cpu-s':>16} {'installed calls/cpu-s':>22} {'installed/raw':>14}"
        f" {'paired median':>14} {'wall ratio':>11}"
    )
    for label, raw_server, installed_server, tool in rows:
        f = measure(raw_server, installed_server, tool, args.runs, args.calls, args.mode)
        print(
            f"{label:<46} {1 / f.raw_cpu:>16.0f} {1 / f.installed_cpu:>22.0f} {f.installed_cpu / f.raw_cpu:>14.3f}"
            f" {f.paired_ratio:>14.3f} {f.wall_ratio:>11.3f}"
        )


if __name__ == "__main__":
    main()
