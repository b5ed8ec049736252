"""Judging a failure's words: the proxy's chain and the reader, by text size, and the proxy end to end.

Part 1, in this process, the two judgments side by side in one run, each call on a text it has
not seen (a request id in front, so that no cache answers):

- `proxy`: `UpstreamClassifier().classify(UpstreamFailure(tool, text))`, the whole chain of
  `mcp-errors proxy` for an `isError` text result (every step, the words, the description
  with the upstream's sanitised words);
- `reader`: `read_result` of an `isError` result with that text (what a client without the
  proxy does).

Texts of 1 KB, 10 KB, 100 KB and 1 MB, of seven kinds: `ordinary` (a real failure text padded
with prose), `word model` (a failure text no name, code or phrase matches, padded with the same
prose, so that the word model reads the whole window), `model words` (the same text padded with
words that do not repeat, every one known to the word model and none starting a phrase: the
model looks each up, its worst case) and four hostile ones: long whitespace
runs, "retry in " repeated, "error: " repeated, and pydantic's report echoing a huge input.
Each figure is the median CPU time per call over `--runs` interleaved runs, with its spread
(p25-p75 over runs); `x10` is the median of the per-run ratios to the size ten times smaller. A
linear judgment grows at most x10 per x10; one that reads only a bounded window (the judge
reads 4,096 characters, the proxy's words 8,000) goes flat past it. Target (issue 23): linear,
under 1 ms for a 10 KB text.

Part 2 (`--end-to-end`, on by default), over stdio: `mcp-errors proxy` in front of an upstream
(this file, `--serve-upstream`) whose `fail` tool raises a 1 MB text with long whitespace runs,
against the same upstream without the proxy. Per run: the 1 MB failure's answer time, a small
call's time alone, and the longest a small call waited while the 1 MB failure was in flight
(small calls made back to back until it answered). Medians over runs, with min-max.

Run: `uv run python benchmarks/judgment.py [--runs 15] [--e2e-runs 7] [--no-end-to-end]`.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import itertools
import json
import logging
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from importlib import resources
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult, TextContent

from mcp_errors import read_result
from mcp_errors._shared import failure_vocabulary
from mcp_errors.proxy._classify import UpstreamClassifier, UpstreamFailure

SIZES = (1_000, 10_000, 100_000, 1_000_000)
TARGET_SIZE, TARGET_MS = 10_000, 1.0

FAILURE = "Error executing tool query: connect ECONNREFUSED 10.0.0.7:5432 (is the server running?)"
UNNAMED = "The supplied manifest could not be deserialised: unexpected character at line 3"
PROSE = (
    "The nightly export reads the orders table of the reporting replica and writes one file per region. "
    "It was last changed on 3 November to add the Nordic region; the job owner is the data platform team. "
)


def _words_no_phrase_names(count: int) -> str:
    """`count` words the word model knows and no name, code or phrase starts with, drawn at random (seeded).

    Nothing in them repeats as the padding prose does, so the word model looks up every one: its worst case.
    """
    model = json.loads(resources.files("mcp_errors._shared").joinpath("failure_model.json").read_text("utf-8"))
    phrases = failure_vocabulary.phrases_by_first_word()
    known = sorted(
        feature
        for feature in model["weights"]
        if feature.isalpha() and feature not in phrases and feature not in failure_vocabulary.EXACT_CODES
    )
    chosen = random.Random(32).choices(known, k=count)
    return " ".join(chosen) + " "


def _filled(head: str, unit: str, size: int, tail: str = "") -> str:
    body = unit * ((size - len(head) - len(tail)) // len(unit) + 1)
    return (head + body)[: size - len(tail)] + tail


_MODEL_WORDS = functools.cache(lambda: _words_no_phrase_names(2_000))

KINDS: dict[str, Callable[[int], str]] = {
    "ordinary": lambda size: _filled(FAILURE + "\n", PROSE, size),
    # No name, code or phrase matches: the word model reads the whole window (issue 32).
    "word model": lambda size: _filled(UNNAMED + "\n", PROSE, size),
    # The same, padded with words that do not repeat, all known to the model: each is looked up.
    "model words": lambda size: _filled(UNNAMED + "\n", _MODEL_WORDS(), size),
    "whitespace": lambda size: _filled("rate limit exceeded, retry in", " " * 4095 + "\t", size, " 30 seconds"),
    "'retry in '": lambda size: _filled("Too many requests. ", "retry in ", size, "x"),
    "'error: '": lambda size: _filled("", "error: ", size, "!"),
    "pydantic echo": lambda size: _filled(
        "1 validation error for queryArguments\nquery\n  String should have at most 100 characters "
        "[type=string_too_long, input_value='",
        "a b\t ",
        size,
        "', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/string_too_long",
    ),
}


def texts(kind: str, size: int, count: int, ids: Iterator[int]) -> list[str]:
    """`count` texts of `kind` and `size`, each led by its own request id (14 characters)."""
    base = KINDS[kind](size - 14)
    return [f"req {next(ids):08d}: {base}" for _ in range(count)]


def judge_by_proxy(classifier: UpstreamClassifier, items: list[Any]) -> None:
    for text in items:
        classifier.classify(UpstreamFailure(tool="query", text=text), error_id="e")


def judge_by_reader(items: list[Any]) -> None:
    for result in items:
        read_result(result)


def calls_for(size: int) -> int:
    return max(5, 1_000_000 // size)


def part_one(runs: int) -> None:
    ids = itertools.count()
    classifier = UpstreamClassifier()
    # [kind][size][part] -> CPU seconds per call, one per run
    timings: dict[str, dict[int, dict[str, list[float]]]] = {
        kind: {size: {"proxy": [], "reader": []} for size in SIZES} for kind in KINDS
    }
    for kind, size in itertools.product(KINDS, SIZES):  # warm-up: imports, compiled patterns
        judge_by_proxy(classifier, texts(kind, size, 1, ids))
        judge_by_reader([_result(text) for text in texts(kind, size, 1, ids)])
    for run in range(runs):
        for kind, size in itertools.product(KINDS, SIZES):
            count = calls_for(size)
            proxy_items = texts(kind, size, count, ids)
            reader_items = [_result(text) for text in texts(kind, size, count, ids)]
            parts: list[tuple[str, Callable[[], None]]] = [
                ("proxy", functools.partial(judge_by_proxy, classifier, proxy_items)),
                ("reader", functools.partial(judge_by_reader, reader_items)),
            ]
            for name, work in parts if run % 2 == 0 else reversed(parts):
                started = time.process_time()
                work()
                timings[kind][size][name].append((time.process_time() - started) / count)
    print(f"Part 1: CPU ms per call, median over {runs} runs (p25-p75); x10: median per-run ratio to 10x smaller")
    column = f"{'spread':>15} {'x10':>6}"
    print(f"{'text':<14} {'size':>9} | {'proxy ms':>9} {column} | {'reader ms':>9} {column}")
    for kind in KINDS:
        for index, size in enumerate(SIZES):
            cells = []
            for part in ("proxy", "reader"):
                values = timings[kind][size][part]
                q1, _, q3 = statistics.quantiles(values, n=4)
                ratio = ""
                if index:
                    smaller = timings[kind][SIZES[index - 1]][part]
                    ratio = f"{statistics.median(b / a for a, b in zip(smaller, values, strict=True)):.2f}"
                median = statistics.median(values) * 1000
                cells.append(f"{median:>9.4f} {q1 * 1000:>7.4f}-{q3 * 1000:<7.4f} {ratio:>6}")
            print(f"{kind:<14} {_size(size):>9} | {cells[0]} | {cells[1]}")
    ordinary = statistics.median(timings["ordinary"][TARGET_SIZE]["proxy"]) * 1000
    worst_kind = max(KINDS, key=lambda kind: statistics.median(timings[kind][TARGET_SIZE]["proxy"]))
    worst = statistics.median(timings[worst_kind][TARGET_SIZE]["proxy"]) * 1000
    verdict = "met" if ordinary < TARGET_MS else "MISSED"
    print(
        f"Target: the proxy's judgment of a {_size(TARGET_SIZE)} text under {TARGET_MS} ms: ordinary {ordinary:.3f} ms"
        f" ({verdict}); slowest kind {worst_kind} {worst:.3f} ms"
    )


def _result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _size(size: int) -> str:
    return f"{size // 1_000_000} MB" if size >= 1_000_000 else f"{size // 1000} KB"


# --- part 2: end to end over stdio ---------------------------------------------------------------

HOSTILE_BYTES = 1_000_000
UPSTREAM = [sys.executable, os.path.abspath(__file__), "--serve-upstream"]
PROXY = [sys.executable, "-m", "mcp_errors", "proxy", "--"]


def serve_upstream() -> None:
    """The upstream: `fail` raises a hostile text of `size` characters; `echo` answers at once."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server: MCPServer[Any] = MCPServer("judgment-upstream")

    @server.tool()
    def fail(size: int) -> str:
        raise ToolError(KINDS["whitespace"](size))

    @server.tool()
    def echo(text: str) -> str:
        return text

    logging.disable(logging.CRITICAL)  # the SDK logs each failure with rich: its cost is not the proxy's
    server.run()


async def one_run(client: Client) -> tuple[float, float, float, int]:
    """(1 MB failure's answer s, a small call alone s, the longest small call during the failure s, small calls)."""
    started = time.perf_counter()
    await client.call_tool("echo", {"text": "hi"})
    alone = time.perf_counter() - started
    waits: list[float] = []
    answered = anyio.Event()
    big: list[float] = []

    async def big_call() -> None:
        started = time.perf_counter()
        result = await client.call_tool("fail", {"size": HOSTILE_BYTES})
        big.append(time.perf_counter() - started)
        assert result.is_error
        answered.set()

    async with anyio.create_task_group() as group:
        group.start_soon(big_call)
        while not answered.is_set():
            started = time.perf_counter()
            await client.call_tool("echo", {"text": "hi"})
            waits.append(time.perf_counter() - started)
    return big[0], alone, max(waits), len(waits)


async def part_two(runs: int) -> None:
    sides = {"direct": UPSTREAM, "proxy": [*PROXY, *UPSTREAM]}
    results: dict[str, list[tuple[float, float, float, int]]] = {name: [] for name in sides}
    with open(os.devnull, "w") as quiet:  # noqa: ASYNC230 - /dev/null does not block
        async with contextlib.AsyncExitStack() as stack:
            clients = {}
            for name, command in sides.items():
                params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
                transport = stdio_client(params, errlog=quiet)
                clients[name] = await stack.enter_async_context(Client(transport, mode="legacy"))  # type: ignore[arg-type]
            for client in clients.values():  # warm-up: tools/list, first calls, lazy imports
                await client.list_tools()
                await one_run(client)
            for run in range(runs):
                for name in sides if run % 2 == 0 else reversed(list(sides)):
                    results[name].append(await one_run(clients[name]))
    print(f"\nPart 2: a {_size(HOSTILE_BYTES)} failure with long whitespace runs over stdio, {runs} runs")
    print("(median, min-max; 'meanwhile': small calls made back to back while the failure was in flight)")
    print(f"{'side':<7} {'1 MB failure s':>24} {'small call alone ms':>26} {'longest meanwhile ms':>26} {'calls':>6}")
    for name, rows in results.items():
        big, alone, longest, count = zip(*rows, strict=True)
        print(
            f"{name:<7} {_spread(big, 1):>24} {_spread(alone, 1000):>26} {_spread(longest, 1000):>26}"
            f" {statistics.median(count):>6.0f}"
        )


def _spread(values: tuple[float, ...], scale: float) -> str:
    return f"{statistics.median(values) * scale:.3f} ({min(values) * scale:.3f}-{max(values) * scale:.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of part 1")
    parser.add_argument("--e2e-runs", type=int, default=7, help="runs of part 2")
    parser.add_argument("--end-to-end", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        serve_upstream()
        return
    logging.disable(logging.CRITICAL)
    print(f"load average at start: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    part_one(args.runs)
    if args.end_to_end:
        anyio.run(part_two, args.e2e_runs)
    print(f"load average at end: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()
