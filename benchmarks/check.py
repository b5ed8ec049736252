"""Wall time of `mcp-errors check` on a generated 20-tool server (target: under 10 s).

The server is generated as a Python file (MCPServer + install) whose 20 tools mix the
constraints the probes exercise: patterns, enums, ranges, lengths, several required
arguments, output schemas. It is checked over stdio, as CI would, and in process, to
separate the checker's own cost from starting a Python server; runs are interleaved and
each figure is the median. Run: `uv run python benchmarks/check.py [--runs 5]`.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import anyio
from mcp import StdioServerParameters

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
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

    stdio_median = statistics.median(over_stdio)
    print(f"tools: {len(report.tools_checked)}, calls per run: {report.calls}, runs: {args.runs}")
    spread = f"min {min(over_stdio):.2f}, max {max(over_stdio):.2f}"
    print(f"over stdio (incl. server start): median {stdio_median:.2f} s  ({spread})")
    print(
        f"in process:                      median {statistics.median(in_process):.2f} s"
        f"  (min {min(in_process):.2f}, max {max(in_process):.2f})"
    )
    verdict = "met" if stdio_median < 10 else "MISSED"
    print(f"per call over stdio: {1000 * stdio_median / report.calls:.1f} ms; target 10 s: {verdict}")


if __name__ == "__main__":
    main()
