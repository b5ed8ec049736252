"""Wall time of `mcp-errors check` on a generated 20-tool server (target: under 10 s), and how
long a real server takes to start and list its tools (what the start-up deadline must fit).

The server is generated as a Python file (MCPServer + install) whose 20 tools mix the
constraints the probes exercise: patterns, enums, ranges, lengths, several required
arguments, output schemas. It is checked over stdio, as CI would, and in process, to
separate the checker's own cost from starting a Python server; runs are interleaved and
each figure is the median. Run: `uv run python benchmarks/check.py [--runs 5]`.

`--startup` instead times, from spawn to the answer of the first `tools/list`, the command
after `--` (by default `uv run mcp-errors proxy -- uv run mcp-server-time`, the start-up that
once failed a default check), and prints the machine's load average beside it:
`uv run --extra proxy python benchmarks/check.py --startup --runs 5`.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import anyio
from jsonschema.validators import validator_for
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_errors.check import CheckOptions, CheckReport, check_server

TOOLS = 20

_TOOL_SHAPES = [
    '''
@server.tool()
def lookup_{n}(
    order_id: Annotated[str, Field(pattern=r"^#\\d{{5}}$")], limit: Annotated[int, Field(ge=1, le=50)] = 10
) -> Lookup:
    """Look orders up."""
    return empty_result(
        "No order matches; the search ran and found nothing.", {{"resultCount": 0, "items": []}}
    )
''',
    '''
@server.tool()
def update_{n}(sku: Annotated[str, Field(min_length=3, max_length=12)], quantity: Annotated[int, Field(ge=0, le=999)],
               unit: Literal["box", "pallet", "each"]) -> str:
    """Update stock."""
    return f"Stock of {{sku}} set to {{quantity}} {{unit}}."
''',
    '''
@server.tool()
def quote_{n}(
    amount: Annotated[float, Field(gt=0, lt=10000)], currency: Literal["EUR", "USD", "VND"], note: str = ""
) -> str:
    """Quote a price."""
    raise BusinessRuleError(
        "Quotes are closed", description="Quotes are closed today: ask a human for a manual quote."
    )
''',
    '''
@server.tool()
def notify_{n}(
    email: Annotated[str, Field(pattern=r"^[^@\\s]+@[^@\\s]+\\.[a-z]{{2,}}$")],
    subject: Annotated[str, Field(max_length=80)],
    urgent: bool = False,
) -> str:
    """Send a notification."""
    return "Queued."
''',
]

_HEADER = """
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from mcp_errors import BusinessRuleError, empty_result, install


class Lookup(BaseModel):
    resultCount: int
    items: list[str]


server = install(MCPServer("generated-20"))
"""


def generate(path: Path) -> None:
    body = "".join(_TOOL_SHAPES[n % len(_TOOL_SHAPES)].format(n=n) for n in range(TOOLS))
    path.write_text(_HEADER + body + '\n\nif __name__ == "__main__":\n    server.run()\n', encoding="utf-8")


def load(path: Path) -> ModuleType:
    module = ModuleType("generated_server")
    module.__file__ = str(path)
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), module.__dict__)
    return module


async def timed(target: object, options: CheckOptions) -> tuple[float, CheckReport]:
    started = time.perf_counter()
    report = await check_server(target, options)  # type: ignore[arg-type]
    return time.perf_counter() - started, report


async def schemas_of(server: object) -> list[dict[str, object]]:
    async with Client(server) as client:  # type: ignore[arg-type]
        tools = (await client.list_tools()).tools
    return [schema for tool in tools for schema in (tool.input_schema, tool.output_schema) if schema]


def metaschema_seconds(schemas: list[dict[str, object]], runs: int) -> list[float]:
    """What checking every schema against its metaschema costs, once per schema (no cache)."""
    seconds: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        for schema in schemas:
            validator_for(schema).check_schema(schema)
        seconds.append(time.perf_counter() - started)
    return seconds


PROXIED_TIME_SERVER = ["uv", "run", "mcp-errors", "proxy", "--", "uv", "run", "mcp-server-time"]


async def first_listing_seconds(command: list[str]) -> float:
    """Seconds from spawning `command` to the answer of its first `tools/list`."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ), cwd=os.getcwd())
    started = time.perf_counter()
    with tempfile.TemporaryFile("w+", encoding="utf-8") as stderr:  # kept off the benchmark's output
        async with Client(stdio_client(params, errlog=stderr), cache=None) as client:
            await client.list_tools()
            return time.perf_counter() - started


def startup(command: list[str], runs: int) -> None:
    load_before = os.getloadavg()[0]
    seconds = [anyio.run(first_listing_seconds, command) for _ in range(runs)]
    load_after = os.getloadavg()[0]
    print(f"start-up to first tools/list of {' '.join(command)!r}, {runs} runs")
    print(f"median {statistics.median(seconds):.2f} s  (min {min(seconds):.2f}, max {max(seconds):.2f})")
    print(f"load average (1 min) on {os.cpu_count()} cores: {load_before:.2f} before, {load_after:.2f} after")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--startup", action="store_true", help="time a server's start-up instead")
    parser.add_argument("command", nargs="*", help="with --startup: the server command (after --)")
    args = parser.parse_args()
    if args.startup:
        startup(args.command or PROXIED_TIME_SERVER, args.runs)
        return
    logging.disable(logging.INFO)  # the generated tools log every rejected call

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "generated_server.py"
        generate(path)
        stdio = StdioServerParameters(command=sys.executable, args=[str(path)])
        options = CheckOptions(call_valid=True, connect_timeout=60)
        over_stdio: list[float] = []
        in_process: list[float] = []
        report: CheckReport | None = None
        for _ in range(args.runs):
            seconds, report = anyio.run(timed, stdio, options)
            assert report.findings == [], report.to_json()
            over_stdio.append(seconds)
            seconds, _ = anyio.run(timed, load(path).server, options)
            in_process.append(seconds)
        assert report is not None
        schemas = anyio.run(schemas_of, load(path).server)
        checks = metaschema_seconds(schemas, args.runs)

    stdio_median = statistics.median(over_stdio)
    succeeded = sum(1 for record in report.valid_calls.values() if record.succeeded)
    print(f"tools: {len(report.tools_checked)}, calls per run: {report.calls}, runs: {args.runs}")
    print(f"valid calls that succeeded: {succeeded} of {len(report.valid_calls)}")
    spread = f"min {min(over_stdio):.2f}, max {max(over_stdio):.2f}"
    print(f"over stdio (incl. server start): median {stdio_median:.2f} s  ({spread})")
    spread = f"min {min(in_process):.2f}, max {max(in_process):.2f}"
    print(f"in process:                      median {statistics.median(in_process):.2f} s  ({spread})")
    spread = f"min {1000 * min(checks):.0f}, max {1000 * max(checks):.0f}"
    print(
        f"metaschema checks of its {len(schemas)} schemas: median {1000 * statistics.median(checks):.0f} ms  ({spread})"
    )
    verdict = "met" if stdio_median < 10 else "MISSED"
    print(f"per call over stdio: {1000 * stdio_median / report.calls:.1f} ms; target 10 s: {verdict}")


if __name__ == "__main__":
    main()
