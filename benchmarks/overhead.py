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

Both sessions stay open in one process and their calls alternate in batches of 10 (ABBA,
`_paired.py`), in CPU time per call (client and server share the process); the ratio is the
median of the per-batch ratios, with their interquartile range. Logging is off on both sides
unless `--logging` (see docs/performance.md for what default logging costs).

Run: `uv run python benchmarks/overhead.py [--server mcpserver|fastmcp|both] [--mode auto|legacy] [--otel]`.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

from _paired import Paired, compare
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


async def measure(
    connect: Callable[[Any, str], Any], raw_server: Any, installed_server: Any, tool: str, mode: str, batches: int
) -> Paired:
    """Raw (A) against installed (B), both sessions open, calls alternating in batches of 10."""
    async with connect(raw_server, mode) as raw, connect(installed_server, mode) as installed:
        # Both clients return the result without raising on `isError` this way.
        raw_call = raw.call_tool if isinstance(raw, Client) else raw.call_tool_mcp
        installed_call = installed.call_tool if isinstance(installed, Client) else installed.call_tool_mcp
        arguments = {"text": "hi"}
        return await compare(
            lambda: raw_call(tool, arguments), lambda: installed_call(tool, arguments), batches=batches, per_batch=10
        )


def configure_opentelemetry() -> None:
    """The OpenTelemetry SDK as an application sets it up, minus exporting: what recording costs.

    Spans are recorded (attributes, events) and dropped at the end; metrics are aggregated in
    memory. Both sides pay for the SDK's own `tools/call` spans; installed/raw is what
    mcp-errors adds to them.
    """
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider

    trace.set_tracer_provider(TracerProvider())
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--batches", type=int, default=300, help="Pairs of 10-call batches per path.")
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    parser.add_argument("--server", default="both", choices=["mcpserver", "fastmcp", "both"])
    parser.add_argument("--only", help="Measure only paths whose label contains this text.")
    parser.add_argument("--logging", action="store_true", help="Keep each framework's default logging on.")
    parser.add_argument("--otel", action="store_true", help="Configure the OpenTelemetry SDK (no exporter).")
    args = parser.parse_args(argv)
    if args.otel:
        configure_opentelemetry()
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
        f"mode={args.mode} batches={args.batches}x10 calls per side and path, logging={'on' if args.logging else 'off'}"
        f" opentelemetry={'sdk' if args.otel else 'none'}"
        " (CPU time; medians of per-batch ratios, interquartile range)"
    )
    print(
        f"{'server':<10} {'path':<26} {'raw calls/cpu-s':>16} {'installed calls/cpu-s':>22} {'installed/raw':>14}"
        f" {'IQR':>12}"
    )
    for framework, build, connect in frameworks:
        raw, installed = build(installed=False), build(installed=True)
        for label, tool in PATHS:
            if args.only and args.only not in label:
                continue
            f = anyio.run(measure, connect, raw, installed, tool, args.mode, args.batches)
            print(
                f"{framework:<10} {label:<26} {1 / f.a_seconds:>16.0f} {1 / f.b_seconds:>22.0f}"
                f" {f.ratio:>14.3f} {f.spread():>12}",
                flush=True,
            )


if __name__ == "__main__":
    main()
