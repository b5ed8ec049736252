"""Instructions per call, raw vs installed, counted by valgrind's callgrind: no machine noise.

CPU time on a shared machine moves with the other jobs (`overhead.py` reports the spread);
the number of instructions a call executes does not. This script runs itself under
`valgrind --tool=callgrind`, makes the calls of `overhead.py`'s paths on both servers (raw and
installed, `MCPServer` and fastmcp, in memory), or with `--listing` the tools/list requests of
`listing.py` (10, 30 and 100 tools), and asks callgrind for a dump
(`callgrind_control --dump`) right before and right after each batch of calls: the dump's
total is the batch's instruction count (Ir), whatever else ran on the machine. Instructions
are not time (cache misses, branch mispredictions), but a ratio of them is stable to about
0.1 point from run to run. Needs valgrind (`apt-get install valgrind`); about five minutes.

Run: `uv run python benchmarks/instructions.py [--calls 100] [--mode auto|legacy] [--listing] [--otel]`.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from listing import build
from overhead import PATHS, build_fastmcp, build_mcpserver, configure_opentelemetry, fastmcp_client, mcp_client

_UNDER_CALLGRIND = "MCP_ERRORS_UNDER_CALLGRIND"


def _dump() -> None:
    subprocess.run(["callgrind_control", "--dump", str(os.getpid())], check=True, capture_output=True)


async def _count(connect: Any, server: Any, operation: str, calls: int, mode: str) -> None:
    async with connect(server, mode) as client:
        if operation == "tools/list":
            run = client.list_tools
        else:
            call = client.call_tool if isinstance(client, Client) else client.call_tool_mcp

            async def run() -> object:
                return await call(operation, {"text": "hi"})

        for _ in range(20):  # warm-up
            await run()
        # Objects made so far (imports, servers) are kept out of the collector's passes: a full
        # collection over them inside one batch would count as that batch's calls.
        gc.collect()
        gc.freeze()
        _dump()  # everything so far: discarded
        for _ in range(calls):
            await run()
        _dump()  # this batch


def _cases(args: argparse.Namespace) -> list[tuple[str, str, Any, Any, Any, str]]:
    """(server, path, connect, raw server, installed server, tool or "tools/list") to count."""
    if args.listing:
        return [
            (
                "MCPServer",
                f"tools/list, {count} tools",
                mcp_client,
                build(count, installed=False),
                build(count, installed=True),
                "tools/list",
            )
            for count in (10, 30, 100)
        ]
    frameworks = [("MCPServer", build_mcpserver, mcp_client), ("fastmcp", build_fastmcp, fastmcp_client)]
    cases = []
    for framework, make, connect in frameworks:
        if args.server in ("both", framework.lower()):
            raw, installed = make(installed=False), make(installed=True)
            cases += [(framework, label, connect, raw, installed, tool) for label, tool in PATHS]
    return cases


def _measure(args: argparse.Namespace) -> None:
    logging.disable(logging.CRITICAL)
    if args.otel:
        configure_opentelemetry()
    labels = []
    for framework, label, connect, raw, installed, operation in _cases(args):
        for side, server in (("raw", raw), ("installed", installed)):
            anyio.run(_count, connect, server, operation, args.calls, args.mode)
            labels.append((framework, label, side))
    Path(os.environ[_UNDER_CALLGRIND]).write_text("\n".join("\t".join(label) for label in labels))


def dump_total(dump: Path) -> int | None:
    """The instructions (Ir) a callgrind dump counts; `None` when it has no total."""
    match = re.search(r"^(?:summary|totals): (\d+)", dump.read_text(), re.MULTILINE)
    return int(match.group(1)) if match else None


def _batch_totals(out_prefix: str) -> list[int]:
    dumps = sorted(Path(out_prefix).parent.glob(Path(out_prefix).name + ".*.*"), key=lambda p: int(p.suffix[1:]))
    totals = [dump_total(dump) or 0 for dump in dumps]
    return totals[1::2]  # warm-up dumps at odd positions, batches at even ones


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--mode", default="auto", choices=["auto", "legacy"])
    parser.add_argument("--server", default="both", choices=["mcpserver", "fastmcp", "both"])
    parser.add_argument("--listing", action="store_true", help="Count tools/list (10, 30, 100 tools) instead.")
    parser.add_argument("--otel", action="store_true", help="Configure the OpenTelemetry SDK (no exporter).")
    args = parser.parse_args(argv)
    if _UNDER_CALLGRIND in os.environ:
        _measure(args)
        return
    with tempfile.TemporaryDirectory(prefix="mcp-errors-callgrind-") as tmp:
        labels_file = Path(tmp) / "labels"
        out_prefix = str(Path(tmp) / "cg")
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out_prefix}.%p",
                sys.executable,
                __file__,
                *(argv if argv is not None else sys.argv[1:]),
            ],
            check=True,
            env={**os.environ, _UNDER_CALLGRIND: str(labels_file)},
            stderr=subprocess.DEVNULL,
        )
        labels = [line.split("\t") for line in labels_file.read_text().splitlines()]
        totals = _batch_totals(out_prefix)
    per_call = {tuple(label): total / args.calls for label, total in zip(labels, totals, strict=True)}
    print(
        f"mode={args.mode} opentelemetry={'sdk' if args.otel else 'none'} operations per batch={args.calls}"
        " (instructions per operation, callgrind Ir)"
    )
    print(f"{'server':<10} {'path':<26} {'raw Ir/op':>12} {'installed Ir/op':>18} {'installed/raw':>14}")
    for framework, label, side in labels:
        if side != "raw":
            continue
        raw, installed = per_call[framework, label, "raw"], per_call[framework, label, "installed"]
        print(f"{framework:<10} {label:<26} {raw:>12.0f} {installed:>18.0f} {installed / raw:>14.3f}")


if __name__ == "__main__":
    main()
