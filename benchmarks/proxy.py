"""`mcp-errors proxy` against a plain fastmcp proxy and a direct connection: per call, over HTTP, at start-up.

One upstream server (an `MCPServer` without the contract) has two tools: `echo` succeeds,
and `fail` answers an `isError` result with the text "Invalid order id: not an order id"
(our proxy classifies it through the whole chain, word rules included, as an inferred
`validation` failure and writes the envelope). Our proxy runs with its default settings,
circuit breaker included: a failure that is not transient never opens it. Three parts, each printing
medians over interleaved runs (the order rotates every run) and the spread (p25-p75) of the
paired per-run ratios:

- `calls`: the upstream over stdio, one child per side, all open at once: `direct` (the SDK's
  client over stdio), `plain` (`fastmcp.server.create_proxy` of a `StdioTransport`) and
  `ours` (`build_proxy` of a `ChildProcess`), both proxies in this process and reached in
  memory by the SDK's client, so what differs is only what each proxy does. Wall time and
  this process's CPU time per call; each run's calls alternate between the sides in batches
  of `--batch` (ABC CBA ...), so that the sides of a run see the same moments of a loaded
  machine, and objects made before the runs are frozen out of the collector's passes.
  Targets: ours/plain <= 1.05 (success), <= 1.10 (errors).
- `http`: the same upstream over streamable HTTP (one uvicorn process, stateful: it gives
  session ids), called `direct` (the SDK's client to its URL), through `plain` and through
  `ours`, each reached in memory. fastmcp's proxy opens an MCP session per call; ours keeps
  one per front session. Target: ours/direct <= 1.5 (wall time per call).
- `startup`: spawn to the first tools/list answered, over stdio as a host starts a server:
  `direct` (the upstream itself), `plain` (a script that runs `create_proxy(...).run()`) and
  `ours` (`python -m mcp_errors proxy -- <upstream>`), one after the other in each run. Then
  where the time goes: each proxy's imports alone (`python -c "import ..."`, the interpreter's
  own start subtracted), and, in this process, our first listing and its schema widening.
  Also each server process's resident memory (VmRSS) once it has answered 20 calls of each
  tool. Targets: ours/plain <= 1.05 (start-up), <= 1.10 (memory). Every module's bytecode is
  cached, as in an installed package (the measured processes get a private PYTHONPYCACHEPREFIX,
  written by a warm-up run of each side); `--no-bytecode-cache` keeps this environment's
  PYTHONDONTWRITEBYTECODE, under which every uncached module is compiled at each start.

With `--instructions` (and `--part calls`), the `calls` part is counted instead of timed: the
script runs itself under valgrind's callgrind (as `instructions.py` does) and counts the
instructions (Ir) of each batch of calls through `plain` and through `ours`, `--runs` batches
of `--calls` calls per proxy and path, whatever else runs on the machine. The upstream children
run outside valgrind: only the proxies' own work (and the client's) is counted.

With `--instructions` and `--part startup`, the start-up is counted: `plain` and `ours` are
each started `--startup-runs` times (alternating) under callgrind as a host starts a server,
and `callgrind_control --dump` is asked for once the first tools/list answer has arrived; that
dump's total is the server process's instructions from its start to its first answer
(interpreter included). `PYTHONHASHSEED=0`, bytecode cached as the timed part has it (a warm-up
run of each side, outside valgrind, writes it); our proxy's upstream child runs outside
valgrind. Two runs a side suffice: a side's counts differ by about 0.1 M in 4,500 M.

Run: `uv run python benchmarks/proxy.py [--part calls|http|startup|all] [--runs 15 --calls 200]`,
`uv run python benchmarks/proxy.py --part calls --instructions [--runs 5 --calls 100]`,
`uv run python benchmarks/proxy.py --part startup --instructions --startup-runs 2` (about 8 minutes).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import logging
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

UPSTREAM = [sys.executable, __file__, "--serve-upstream"]

# The plain proxy a user would write: fastmcp's `create_proxy` of the same upstream, stdio front.
PLAIN_PROXY = (
    "import logging, sys\n"
    "from fastmcp.client.transports import StdioTransport\n"
    "from fastmcp.server import create_proxy\n"
    "logging.getLogger('fastmcp').setLevel(logging.WARNING)\n"
    "create_proxy(StdioTransport(sys.argv[1], sys.argv[2:]), mode='legacy').run(show_banner=False)\n"
)
PLAIN_IMPORTS = "import fastmcp.server, fastmcp.server.providers.proxy, fastmcp.client.transports"
# What our start-up imports (the rules file's module loads with a rules file or the first failure).
OUR_IMPORTS = "import mcp_errors._cli, mcp_errors.proxy._cli, mcp_errors.proxy._server"


def build_upstream() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("bench-upstream")

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def fail(text: str) -> str:
        raise SDKToolError("Invalid order id: not an order id")

    return server


def serve_upstream_http() -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    server = uvicorn.Server(uvicorn.Config(build_upstream().streamable_http_app(), log_level="warning"))
    anyio.run(lambda: server.serve(sockets=[sock]))


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


async def time_calls_paired(sides: list[Side], tool: str, calls: int, batch: int) -> None:
    """One run of `calls` calls per side, made in batches of `batch` that alternate ABC CBA...:
    each side's time in a run comes from the same moments of the machine as the others'."""
    wall = dict.fromkeys((side.name for side in sides), 0.0)
    cpu = dict.fromkeys((side.name for side in sides), 0.0)
    for index in range(max(1, calls // batch)):
        for side in sides if index % 2 == 0 else sides[::-1]:
            started, used = time.perf_counter(), time.process_time()
            for _ in range(batch):
                await side.client.call_tool(tool, {"text": "hi"})
            wall[side.name] += time.perf_counter() - started
            cpu[side.name] += time.process_time() - used
    made = max(1, calls // batch) * batch
    for side in sides:
        side.wall.setdefault(tool, []).append(wall[side.name] / made)
        side.cpu.setdefault(tool, []).append(cpu[side.name] / made)


async def run_interleaved(sides: list[Side], runs: int, calls: int, batch: int | None = None) -> None:
    """`runs` runs of `calls` calls per side and tool: one side after the other (the order
    rotating every run), or with `batch`, each run's calls alternating between the sides in
    batches of that many (`time_calls_paired`)."""
    for side in sides:  # warm-up as a host does (tools/list first), caches, lazy imports
        await side.client.list_tools()
        for tool in ("echo", "fail"):
            for _ in range(20):
                await side.client.call_tool(tool, {"text": "hi"})
        side.wall.clear()
        side.cpu.clear()
    # What exists now (imports, servers, sessions) stays out of the collector's passes, so that
    # a full collection does not land on whichever side's batch happens to run then (as
    # `_paired.compare` and `instructions.py` do).
    gc.collect()
    gc.freeze()
    for run in range(runs):
        if batch is not None:
            for tool in ("echo", "fail"):
                await time_calls_paired(sides[run % len(sides) :] + sides[: run % len(sides)], tool, calls, batch)
            continue
        for index in range(len(sides)):
            side = sides[(run + index) % len(sides)]
            for tool in ("echo", "fail"):
                await time_calls(side, tool, calls)


async def measure_sides(
    direct: Any, plain: Any, ours: Any, *, runs: int, calls: int, mode: str, batch: int | None = None
) -> dict[str, Side]:
    """`direct` (what `mcp.Client` connects to), `plain` and `ours` (fastmcp servers), timed interleaved."""
    async with contextlib.AsyncExitStack() as stack:
        sides = [
            Side("direct", await stack.enter_async_context(Client(direct, mode=mode))),
            # The SDK's client reaches a fastmcp server in memory through its low-level server.
            Side("plain", await stack.enter_async_context(Client(plain._mcp_server, mode=mode))),
            Side("ours", await stack.enter_async_context(Client(ours._mcp_server, mode=mode))),
        ]
        await run_interleaved(sides, runs, calls, batch)
    return {side.name: side for side in sides}


def paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float]:
    """Median of the per-run ratios b/a, and their p25 and p75."""
    ratios = [y / x for x, y in zip(a, b, strict=True)]
    q1, median, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratios[0],) * 3
    return median, q1, q3


# --- calls: the stdio upstream ---------------------------------------------------------------


@contextlib.asynccontextmanager
async def stdio_sides() -> AsyncIterator[tuple[StdioServerParameters, Any, Any]]:
    """`direct` (the upstream's command), `plain` and `ours` (fastmcp servers), each with its own stdio child."""
    from fastmcp.client.transports import StdioTransport
    from fastmcp.server import create_proxy

    from mcp_errors.proxy import ChildProcess, build_proxy
    from mcp_errors.proxy._server import check_upstream

    child = ChildProcess(UPSTREAM[0], UPSTREAM[1:])
    try:
        ours = build_proxy(child)
        await check_upstream(ours, child, seconds=60)
        plain = create_proxy(StdioTransport(UPSTREAM[0], UPSTREAM[1:]), mode="legacy")
        yield StdioServerParameters(command=UPSTREAM[0], args=UPSTREAM[1:]), plain, ours
    finally:
        await child.close()


async def bench_calls(runs: int, calls: int, mode: str, batch: int) -> None:
    async with stdio_sides() as (direct, plain, ours):
        by_name = await measure_sides(direct, plain, ours, runs=runs, calls=calls, mode=mode, batch=batch)
    print(
        f"calls, stdio upstream: mode={mode} runs={runs} calls/run={calls} in alternating batches of {batch}"
        " (medians over runs)"
    )
    print(
        f"{'path':<8} {'direct ms':>10} {'plain ms':>9} {'ours ms':>8} {'ours-plain ms':>14} {'ours/plain wall':>16}"
        f" {'plain cpu ms':>13} {'ours cpu ms':>12} {'ours/plain cpu':>15} {'spread (p25-p75)':>18}"
    )
    for tool, label in (("echo", "success"), ("fail", "error")):
        wall = {name: statistics.median(side.wall[tool]) * 1000 for name, side in by_name.items()}
        cpu = {name: statistics.median(side.cpu[tool]) * 1000 for name, side in by_name.items()}
        wall_ratio = paired(by_name["plain"].wall[tool], by_name["ours"].wall[tool])[0]
        cpu_ratio, q1, q3 = paired(by_name["plain"].cpu[tool], by_name["ours"].cpu[tool])
        print(
            f"{label:<8} {wall['direct']:>10.3f} {wall['plain']:>9.3f} {wall['ours']:>8.3f}"
            f" {wall['ours'] - wall['plain']:>14.3f} {wall_ratio:>16.3f}"
            f" {cpu['plain']:>13.3f} {cpu['ours']:>12.3f} {cpu_ratio:>15.3f} {q1:>8.3f}-{q3:<9.3f}"
        )


# --- calls, counted: instructions per call under callgrind ----------------------------------


async def count_calls(runs: int, calls: int, mode: str) -> list[str]:
    """Under callgrind: `runs` batches of `calls` calls per proxy and tool, a dump around each batch; their labels."""
    from instructions import _dump

    labels: list[str] = []
    async with stdio_sides() as (_, plain, ours), contextlib.AsyncExitStack() as stack:
        clients = {
            "plain": await stack.enter_async_context(Client(plain._mcp_server, mode=mode)),
            "ours": await stack.enter_async_context(Client(ours._mcp_server, mode=mode)),
        }
        for client in clients.values():  # as `run_interleaved` warms up
            await client.list_tools()
            for tool in ("echo", "fail"):
                for _ in range(20):
                    await client.call_tool(tool, {"text": "hi"})
        # What exists now stays out of the collector's passes (as instructions.py does).
        gc.collect()
        gc.freeze()
        for run in range(runs):
            names = list(clients)[run % 2 :] + list(clients)[: run % 2]
            for name in names:
                for tool in ("echo", "fail"):
                    _dump()  # what ran since the last batch: discarded
                    for _ in range(calls):
                        await clients[name].call_tool(tool, {"text": "hi"})
                    _dump()  # this batch
                    labels.append(f"{name}\t{tool}")
    return labels


def bench_call_instructions(argv: list[str], runs: int, calls: int, mode: str) -> None:
    """Run this script under callgrind (`count_calls`), then print instructions per call and ours/plain."""
    from instructions import _UNDER_CALLGRIND, _batch_totals

    with tempfile.TemporaryDirectory(prefix="mcp-errors-callgrind-") as tmp:
        labels_file = Path(tmp) / "labels"
        out_prefix = str(Path(tmp) / "cg")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_prefix}.%p", sys.executable, __file__, *argv],
            check=True,
            env={**os.environ, _UNDER_CALLGRIND: str(labels_file)},
            stderr=subprocess.DEVNULL,
        )
        labels = [tuple(line.split("\t")) for line in labels_file.read_text().splitlines()]
        totals = _batch_totals(out_prefix)
    per_call: dict[tuple[str, ...], list[float]] = {}
    for label, total in zip(labels, totals, strict=True):
        per_call.setdefault(label, []).append(total / calls)
    print(f"calls, stdio upstream, instructions (callgrind Ir): mode={mode} batches={runs} calls/batch={calls}")
    print(
        f"{'path':<8} {'plain Ir/call':>14} {'ours Ir/call':>13} {'ours-plain':>11} {'ours/plain':>11}"
        f" {'spread (p25-p75)':>17}"
    )
    for tool, label in (("echo", "success"), ("fail", "error")):
        plain, ours = per_call["plain", tool], per_call["ours", tool]
        ratio, q1, q3 = paired(plain, ours)
        median_plain, median_ours = statistics.median(plain), statistics.median(ours)
        print(
            f"{label:<8} {median_plain:>14.0f} {median_ours:>13.0f} {median_ours - median_plain:>11.0f}"
            f" {ratio:>11.3f} {q1:>7.3f}-{q3:<7.3f}"
        )


# --- http: the upstream over streamable HTTP --------------------------------------------------


@contextlib.asynccontextmanager
async def http_upstream() -> AsyncIterator[str]:
    async with await anyio.open_process([*UPSTREAM, "--http"]) as process:
        try:
            assert process.stdout is not None
            with anyio.fail_after(60):
                port = int((await process.stdout.receive()).decode().split()[0])
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()


async def bench_http(runs: int, calls: int, mode: str) -> None:
    from fastmcp.server import create_proxy

    from mcp_errors.proxy import build_proxy
    from mcp_errors.proxy._server import check_upstream, close_upstream

    async with http_upstream() as url:
        ours = build_proxy(url)
        try:
            await check_upstream(ours, url, seconds=60)
            plain = create_proxy(url, mode="legacy")
            by_name = await measure_sides(url, plain, ours, runs=runs, calls=calls, mode=mode)
        finally:
            await close_upstream(ours, url)
    print(f"calls, HTTP upstream: mode={mode} runs={runs} calls/run={calls} (medians over interleaved runs)")
    print(
        f"{'path':<8} {'direct ms':>10} {'plain ms':>9} {'ours ms':>8} {'plain/direct':>13} {'ours/direct':>12}"
        f" {'spread (p25-p75)':>18}"
    )
    for tool, label in (("echo", "success"), ("fail", "error")):
        wall = {name: statistics.median(side.wall[tool]) * 1000 for name, side in by_name.items()}
        plain_ratio = paired(by_name["direct"].wall[tool], by_name["plain"].wall[tool])[0]
        ours_ratio, q1, q3 = paired(by_name["direct"].wall[tool], by_name["ours"].wall[tool])
        print(
            f"{label:<8} {wall['direct']:>10.3f} {wall['plain']:>9.3f} {wall['ours']:>8.3f}"
            f" {plain_ratio:>13.2f} {ours_ratio:>12.2f} {q1:>8.2f}-{q3:<9.2f}"
        )


# --- startup: spawn to the first tools/list ---------------------------------------------------


async def spawn_to_first_listing(
    command: list[str], pid_file: Path, env: dict[str, str] | None = None
) -> tuple[float, float, float]:
    """Wall seconds from spawn to the first tools/list answered, the CPU seconds the server
    process itself (not its upstream child) used by then, and its resident memory (MiB) once it
    has answered `MEMORY_CALLS` calls of each tool, read from /proc (Linux)."""
    # `exec` keeps the pid that `sh` writes down.
    wrapped = ["-c", 'echo $$ > "$0"; exec "$@"', str(pid_file), *command]
    params = StdioServerParameters(command="sh", args=wrapped, env=dict(os.environ) if env is None else env)
    started = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        await client.list_tools()
        wall = time.perf_counter() - started
        cpu = process_cpu_seconds(pid_file)
        for _ in range(MEMORY_CALLS):
            await client.call_tool("echo", {"text": "hi"})
            await client.call_tool("fail", {"text": "hi"})
        rss = process_rss_mib(pid_file)
    return wall, cpu, rss


MEMORY_CALLS = 20
"""Calls of each tool (a success and a failure) made before the server's memory is read: a
running proxy's, not one that has only listed."""


def process_rss_mib(pid_file: Path) -> float:
    """Resident memory (VmRSS, MiB) of the live process whose pid `pid_file` holds (Linux `/proc`)."""
    status = Path(f"/proc/{pid_file.read_text().strip()}/status").read_text()
    kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(kib) / 1024


def process_cpu_seconds(pid_file: Path) -> float:
    """User + system CPU seconds of the live process whose pid `pid_file` holds (Linux `/proc`)."""
    fields = Path(f"/proc/{pid_file.read_text().strip()}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def spawn_seconds(code: str, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - started


def import_self_times(code: str, env: dict[str, str] | None = None) -> dict[str, float]:
    """`python -X importtime -c code`: each module's own import time, in seconds."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True, env=env
    )
    times: dict[str, float] = {}
    for line in done.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[0].strip().isdigit():
            times[fields[2].strip()] = int(fields[0]) / 1e6
    return times


def added_imports(top: int = 8, env: dict[str, str] | None = None) -> tuple[float, list[tuple[str, float]]]:
    """What our proxy imports beyond the plain one: the total, and the packages that cost most."""
    plain, ours = import_self_times(PLAIN_IMPORTS, env), import_self_times(OUR_IMPORTS, env)
    packages: dict[str, float] = {}
    for module, seconds in ours.items():
        if module not in plain:
            parts = module.split(".")
            package = ".".join(parts[:2]) if parts[0] == "mcp_errors" else parts[0]
            packages[package] = packages.get(package, 0.0) + seconds
    ranked = sorted(packages.items(), key=lambda item: -item[1])
    return sum(packages.values()), ranked[:top]


async def first_listing_and_widening() -> tuple[float, float]:
    """Our check_upstream's first listing, and widening its schemas, in this process (seconds)."""
    from mcp_errors._server.fastmcp import widen_tools
    from mcp_errors._shared.envelope import WideningCache
    from mcp_errors.proxy import ChildProcess, build_proxy
    from mcp_errors.proxy._server import check_upstream

    child = ChildProcess(UPSTREAM[0], UPSTREAM[1:])
    try:
        proxy = build_proxy(child)
        await check_upstream(proxy, child, seconds=60)  # the child's start, once
        started = time.perf_counter()
        await check_upstream(proxy, child, seconds=60)
        listing = time.perf_counter() - started
        tools = await proxy.list_tools()
        started = time.perf_counter()
        widen_tools(tools, WideningCache())
        return listing, time.perf_counter() - started
    finally:
        await child.close()


def bytecode_env(folder: Path, *, cached: bool) -> dict[str, str]:
    """The measured processes' environment: as installed, each module's bytecode cached (in
    `folder`, written by the warm-up run), or, with `cached=False`, as this process has it
    (where PYTHONDONTWRITEBYTECODE is set, every module without a cached .pyc compiled from
    source at every start)."""
    env = dict(os.environ)
    if cached:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
    return env


async def bench_startup(runs: int, *, bytecode_cache: bool = True) -> None:
    sides: dict[str, list[str]] = {
        "direct": UPSTREAM,
        "plain": [sys.executable, "-c", PLAIN_PROXY, *UPSTREAM],
        "ours": [sys.executable, "-m", "mcp_errors", "proxy", "--", *UPSTREAM],
    }
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    cpu: dict[str, list[float]] = {name: [] for name in sides}
    rss: dict[str, list[float]] = {name: [] for name in sides}
    imports: dict[str, list[float]] = {"python": [], "plain": [], "ours": []}
    codes = {"python": "pass", "plain": PLAIN_IMPORTS, "ours": OUR_IMPORTS}
    with tempfile.TemporaryDirectory() as folder:
        pid_file = Path(folder) / "pid"
        env = bytecode_env(Path(folder), cached=bytecode_cache)
        for command in sides.values():  # file caches (and bytecode caches) warm for every side
            await spawn_to_first_listing(command, pid_file, env)
        for run in range(runs):
            names = list(sides)
            for name in names[run % 3 :] + names[: run % 3]:
                wall, used, resident = await spawn_to_first_listing(sides[name], pid_file, env)
                seconds[name].append(wall)
                cpu[name].append(used)
                rss[name].append(resident)
            keys = list(codes)
            for key in keys[run % 3 :] + keys[: run % 3]:
                imports[key].append(spawn_seconds(codes[key], env))
        added, packages = added_imports(env=env)
    listing, widening = await first_listing_and_widening()
    cache = "cached (as installed)" if bytecode_cache else "as this environment has it (--no-bytecode-cache)"
    print(f"start-up, spawn to the first tools/list over stdio: runs={runs} (medians, p25-p75); bytecode {cache}")
    print(f"  {'side':<7} {'wall s':>7} {'(p25-p75)':>13}   {'server CPU s':>12} {'(p25-p75)':>13}   {'RSS MiB':>7}")
    for name in sides:
        q1, median, q3 = statistics.quantiles(seconds[name], n=4)
        c1, cm, c3 = statistics.quantiles(cpu[name], n=4)
        m1, mm, m3 = statistics.quantiles(rss[name], n=4)
        memory = f"{mm:7.1f} ({m1:.1f}-{m3:.1f})"
        print(f"  {name:<7} {median:7.3f} ({q1:.3f}-{q3:.3f})   {cm:12.3f} ({c1:.3f}-{c3:.3f})   {memory}")
    for label, values, target in (("wall", seconds, 1.05), ("server CPU", cpu, 1.05), ("resident memory", rss, 1.10)):
        ratio, q1, q3 = paired(values["plain"], values["ours"])
        spread = f"p25-p75 of the paired ratios {q1:.3f}-{q3:.3f}"
        print(f"  ours/plain {label}: {ratio:.3f} ({spread}); target <= {target:.2f}")
    python = statistics.median(imports["python"])
    print("where it goes:")
    for key in ("plain", "ours"):
        print(f"  imports, {key:<5} {statistics.median(imports[key]) - python:7.3f} s (interpreter start subtracted)")
    print(f"  modules only ours imports (-X importtime, own times) {added * 1000:7.1f} ms, most:")
    print("    " + ", ".join(f"{package} {seconds * 1000:.1f}" for package, seconds in packages))
    print(f"  our first listing (check_upstream, child running) {listing * 1000:7.2f} ms")
    print(f"  widening its outputSchemas                        {widening * 1000:7.2f} ms")


# --- startup, counted: instructions to the first answer under callgrind ----------------------


async def count_to_first_listing(command: list[str], out_file: Path, env: dict[str, str]) -> int:
    """Run `command` under callgrind as a host starts a server (over stdio), dump its counts once
    the first tools/list answer has arrived (`callgrind_control --dump`), and return that dump's
    instructions (Ir): the process's start, interpreter included, up to its first answer. Its
    children (our proxy's upstream) run outside valgrind: callgrind does not trace them."""
    pid_file = out_file.with_suffix(".pid")
    valgrind = ["valgrind", "--tool=callgrind", "--trace-children=no", f"--callgrind-out-file={out_file}.%p"]
    # `exec` keeps the pid that `sh` writes down: valgrind runs the server in that process.
    wrapped = ["-c", 'echo $$ > "$0"; exec "$@" 2>/dev/null', str(pid_file), *valgrind, *command]
    async with Client(StdioServerParameters(command="sh", args=wrapped, env=env), mode="legacy") as client:
        await client.list_tools()
        pid = await anyio.Path(pid_file).read_text()
        await anyio.run_process(["callgrind_control", "--dump", pid.strip()])
    from instructions import dump_total

    # The first dump (`<file>.<pid>.1`) is the start; the one written at exit is not read.
    dump = Path(f"{out_file}.{pid.strip()}.1")
    total = dump_total(dump)
    if total is None:
        raise RuntimeError(f"no instruction total in {dump}")
    return total


async def bench_startup_instructions(runs: int, *, bytecode_cache: bool = True) -> None:
    """`plain` and `ours` started under callgrind `runs` times each (alternating), instructions to
    the first tools/list answer, with `PYTHONHASHSEED=0` (set iteration, hence the work, the same
    every run) and bytecode cached as `bench_startup` has it (a warm-up run of each side writes it)."""
    sides: dict[str, list[str]] = {
        "plain": [sys.executable, "-c", PLAIN_PROXY, *UPSTREAM],
        "ours": [sys.executable, "-m", "mcp_errors", "proxy", "--", *UPSTREAM],
    }
    counts: dict[str, list[float]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory(prefix="mcp-errors-callgrind-") as folder:
        env = {**bytecode_env(Path(folder), cached=bytecode_cache), "PYTHONHASHSEED": "0"}
        for command in sides.values():  # bytecode (and file caches) written outside valgrind
            await spawn_to_first_listing(command, Path(folder) / "warm.pid", env)
        for run in range(runs):
            names = list(sides)[run % 2 :] + list(sides)[: run % 2]
            for name in names:
                out_file = Path(folder) / f"cg.{name}.{run}"
                counts[name].append(await count_to_first_listing(sides[name], out_file, env))
    cache = "cached (as installed)" if bytecode_cache else "as this environment has it (--no-bytecode-cache)"
    print(
        f"start-up, instructions from spawn to the first tools/list answer (callgrind Ir, the server process"
        f" only): runs={runs}, PYTHONHASHSEED=0, bytecode {cache}"
    )
    print(f"  {'side':<7} {'Ir (M), median':>15} {'min-max':>19}")
    for name, values in counts.items():
        print(
            f"  {name:<7} {statistics.median(values) / 1e6:>15,.1f}"
            f" {min(values) / 1e6:>9,.1f}-{max(values) / 1e6:<9,.1f}"
        )
    ratio, q1, q3 = paired(counts["plain"], counts["ours"])
    gap = (statistics.median(counts["ours"]) - statistics.median(counts["plain"])) / 1e6
    print(
        f"  ours/plain: {ratio:.3f} (p25-p75 of the paired ratios {q1:.3f}-{q3:.3f}), ours-plain {gap:,.1f} M;"
        " target <= 1.05"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--part", default="all", choices=["calls", "http", "startup", "all"])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument(
        "--batch", type=int, default=10, help="With --part calls: calls per side before the next side's batch."
    )
    parser.add_argument("--startup-runs", type=int, default=9)
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="start-up: leave PYTHONDONTWRITEBYTECODE as it is (modules without a .pyc compiled at every start)",
    )
    parser.add_argument("--mode", default="legacy", choices=["auto", "legacy"])
    parser.add_argument(
        "--instructions",
        action="store_true",
        help=(
            "With --part calls: count instructions per call under callgrind (--runs batches) instead of CPU time;"
            " with --part startup: instructions to the first answer (--startup-runs runs per side)."
        ),
    )
    parser.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--http", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_upstream:
        logging.disable(logging.CRITICAL)
        serve_upstream_http() if args.http else build_upstream().run()
        return
    # Both proxies log at INFO on failures; formatting log lines would dominate here.
    logging.disable(logging.CRITICAL)
    if args.instructions:
        from instructions import _UNDER_CALLGRIND

        if args.part == "startup":
            print(f"load average at start: {os.getloadavg()[0]:.2f} (instruction counts do not mind)")
            anyio.run(
                functools.partial(
                    bench_startup_instructions, args.startup_runs, bytecode_cache=not args.no_bytecode_cache
                )
            )
            return
        if args.part != "calls":
            parser.error("--instructions counts --part calls or --part startup")
        if _UNDER_CALLGRIND in os.environ:
            labels = anyio.run(count_calls, args.runs, args.calls, args.mode)
            Path(os.environ[_UNDER_CALLGRIND]).write_text("\n".join(labels))
            return
        print(f"load average at start: {os.getloadavg()[0]:.2f} (instruction counts do not mind)")
        bench_call_instructions(sys.argv[1:] if argv is None else argv, args.runs, args.calls, args.mode)
        return
    parts: dict[str, Callable[[], Any]] = {
        "calls": lambda: anyio.run(bench_calls, args.runs, args.calls, args.mode, args.batch),
        "http": lambda: anyio.run(bench_http, args.runs, max(1, args.calls // 4), args.mode),
        "startup": lambda: anyio.run(
            functools.partial(bench_startup, args.startup_runs, bytecode_cache=not args.no_bytecode_cache)
        ),
    }
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    for name, part in parts.items():
        if args.part in (name, "all"):
            part()
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
