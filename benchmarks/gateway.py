"""The gateway against N separate proxies and N bare servers: memory, processes, start-up, per-call CPU.

N real servers (`python -m mcp_server_time` and `python -m mcp_server_git`, alternating: what a
host's configuration holds) are started three ways, as a host starts them, over stdio:

- `bare`: the N servers themselves;
- `proxies`: N `mcp-errors proxy -- <server>` processes (what `mcp-errors wrap` makes);
- `gateway`: one `mcp-errors proxy --config FILE` of the N servers.

For each N (1, 3, 6, 10) and each of `--runs` rounds (the variants' order rotates every round):

- start-up: spawn of all N (or the one gateway) at once to every tool listed;
- first call: spawn to the answer of a first call (`get_current_time` of the first server),
  once every tool is listed (the gateway's stdio front lists the tools before it imports
  fastmcp, so its first call waits for those imports);
- memory once that call is answered: RSS and PSS (`/proc/<pid>/smaps_rollup`) summed over the
  whole process trees this benchmark started, and how many processes those trees hold.

Then per call, at the largest N: `time0_get_current_time` through a gateway against
`get_current_time` through one proxy, both built in this process and reached in memory, called
in alternating batches (ABBA, `_paired.py`): this process's CPU time per call. Medians over
rounds (over batches for calls), spread p25-p75 of the paired ratios.

Targets (6 upstreams): gateway memory <= 1.3x the bare servers' total; start-up <= 1.2x the
slowest bare server (also printed: against the N bare servers started together, in the same
round); per call within 1.10x of a single proxy.

Run: `uv run python benchmarks/gateway.py [--sizes 1,3,6,10] [--runs 5] [--batches 30 --per-batch 10] [--calls-only]`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

PROXY = [sys.executable, "-m", "mcp_errors", "proxy"]
SERVERS = ([sys.executable, "-m", "mcp_server_time"], [sys.executable, "-m", "mcp_server_git"])
NAMES = ("time", "git")


def servers(count: int) -> dict[str, list[str]]:
    return {f"{NAMES[i % 2]}{i}": SERVERS[i % 2] for i in range(count)}


def params(line: Sequence[str]) -> StdioServerParameters:
    return StdioServerParameters(command=line[0], args=list(line[1:]), env=dict(os.environ))


def commands(variant: str, count: int, config: Path) -> list[list[str]]:
    if variant == "bare":
        return list(servers(count).values())
    if variant == "proxies":
        return [[*PROXY, "--", *line] for line in servers(count).values()]
    return [[*PROXY, "--config", str(config)]]


# --- process trees, from /proc ----------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
                tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(root: int) -> list[int]:
    tree, found, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(tree.get(pid, []))
    return found


def my_trees() -> list[list[int]]:
    """Each process tree this benchmark started: one per direct child."""
    tree = _children()
    return [descendants(child) for child in tree.get(os.getpid(), [])]


@dataclass
class Memory:
    rss_mib: float
    pss_mib: float
    processes: int


def memory(pids: Sequence[int]) -> Memory:
    rss = pss = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
    return Memory(rss / 1024, pss / 1024, len(pids))


# --- one round -----------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def started(lines: list[list[str]]) -> AsyncIterator[tuple[list[Client], float, float]]:
    """Start every command at once and list each one's tools; yields the clients, seconds to all listed and
    seconds from the start to the time `stamp` is read (call it when the first call is answered).

    Each client lives in a task of its own (its context is entered and left there), as a host
    keeps one connection per server.
    """
    clients = [Client(params(line), mode="legacy") for line in lines]
    ready = [anyio.Event() for _ in clients]
    stop = anyio.Event()

    async def hold(client: Client, listed: anyio.Event) -> None:
        async with client:
            await client.list_tools()
            listed.set()
            await stop.wait()

    async with anyio.create_task_group() as group:
        begin = time.perf_counter()
        for client, listed in zip(clients, ready, strict=True):
            group.start_soon(hold, client, listed)
        for listed in ready:
            await listed.wait()
        elapsed = time.perf_counter() - begin
        try:
            yield clients, elapsed, begin
        finally:
            stop.set()


@dataclass
class Round:
    seconds: float
    memory: Memory
    first_call: float


async def one_round(variant: str, count: int, config: Path) -> Round:
    lines = commands(variant, count, config)
    async with started(lines) as (clients, seconds, begin):
        tool = "time0_get_current_time" if variant == "gateway" else "get_current_time"
        assert not (await clients[0].call_tool(tool, {"timezone": "UTC"})).is_error
        first_call = time.perf_counter() - begin
        if variant == "gateway":
            names = {tool.name for tool in (await clients[0].list_tools()).tools}
            assert all(any(name.startswith(f"{server}_") for name in names) for server in servers(count)), names
        await anyio.sleep(0.5)  # let start-up garbage settle before reading memory
        trees = my_trees()
        used = memory([pid for tree in trees for pid in tree])
    return Round(seconds, used, first_call)


async def slowest_bare(count: int) -> float:
    """Each bare server alone, one after the other: the slowest spawn to tools listed."""
    times = []
    for line in servers(count).values():
        async with started([line]) as (_, seconds, _begin):
            times.append(seconds)
    return max(times)


# --- per call ------------------------------------------------------------------------------------


async def per_call(count: int, *, batches: int, per_batch: int) -> dict[str, float]:
    """One proxy against a gateway of `count` servers, both built in this process and reached in memory.

    What differs is only what each does with a call, so this process's CPU time is the figure
    (`_paired.compare`: ABBA batches, median of the per-batch ratios); the upstream's own work is
    the same on both sides.
    """
    from _paired import compare
    from mcp_errors.proxy import ChildProcess, build_proxy
    from mcp_errors.proxy._gateway import Gateway, GatewayServer
    from mcp_errors.proxy._server import check_upstream, close_upstream

    child = ChildProcess(SERVERS[0][0], SERVERS[0][1:])
    single = build_proxy(child)
    await check_upstream(single, child, seconds=120)
    gateway = Gateway(
        [GatewayServer(name, ChildProcess(line[0], line[1:])) for name, line in servers(count).items()],
        startup_seconds=120,
    )
    await gateway.start()
    args = {"timezone": "UTC"}
    try:
        async with (
            Client(single._mcp_server, mode="legacy") as proxy,  # type: ignore[arg-type]  # fastmcp's low-level server
            Client(gateway.server._mcp_server, mode="legacy") as front,  # type: ignore[arg-type]
        ):

            async def call_proxy() -> None:
                assert not (await proxy.call_tool("get_current_time", args)).is_error

            async def call_gateway() -> None:
                assert not (await front.call_tool("time0_get_current_time", args)).is_error

            paired = await compare(call_proxy, call_gateway, batches=batches, per_batch=per_batch)
    finally:
        await gateway.aclose()
        await close_upstream(single, child)
    return {
        "proxy_cpu_ms": paired.a_seconds * 1000,
        "gateway_cpu_ms": paired.b_seconds * 1000,
        "cpu_ratio": paired.ratio,
        "cpu_q1": paired.q1,
        "cpu_q3": paired.q3,
    }


# --- report ----------------------------------------------------------------------------------------


def spread(values: Sequence[float]) -> str:
    if len(values) < 2:
        return "-"
    q1, _, q3 = statistics.quantiles(values, n=4)
    return f"{q1:.2f}-{q3:.2f}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,3,6,10")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batches", type=int, default=30)
    parser.add_argument("--per-batch", type=int, default=10)
    parser.add_argument("--calls-only", action="store_true", help="Only the per-call part, at the largest size.")
    parser.add_argument("--json", type=Path, help="Also write the figures here.")
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    load_before = os.getloadavg()
    print(
        f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}; cores: {os.cpu_count()}"
    )
    figures: dict[str, Any] = {"load_before": load_before, "sizes": {}}
    with tempfile.TemporaryDirectory() as folder:
        for count in [] if options.calls_only else sizes:
            config = Path(folder) / f"servers-{count}.json"
            entries = {name: {"command": line[0], "args": line[1:]} for name, line in servers(count).items()}
            config.write_text(json.dumps({"mcpServers": entries}))
            variants = ["bare", "proxies", "gateway"]
            rounds: dict[str, list[Round]] = {variant: [] for variant in variants}
            slowest: list[float] = []
            for run in range(options.runs):
                order = variants[run % 3 :] + variants[: run % 3]
                for variant in order:
                    rounds[variant].append(await one_round(variant, count, config))
                slowest.append(await slowest_bare(count))
            row: dict[str, Any] = {}
            bare_pss = [r.memory.pss_mib for r in rounds["bare"]]
            bare_rss = [r.memory.rss_mib for r in rounds["bare"]]
            print(f"\nN = {count} upstreams ({options.runs} rounds; medians, spread p25-p75)")
            print(
                f"{'variant':<9} {'processes':>9} {'RSS MiB':>9} {'PSS MiB':>9} {'PSS/bare':>9} {'start s':>8} "
                f"{'spread':>11} {'1st call s':>10} {'spread':>11}"
            )
            for variant in variants:
                got = rounds[variant]
                pss = [r.memory.pss_mib for r in got]
                rss = [r.memory.rss_mib for r in got]
                secs = [r.seconds for r in got]
                first = [r.first_call for r in got]
                ratio = [p / b for p, b in zip(pss, bare_pss, strict=True)]
                row[variant] = {
                    "processes": statistics.median(r.memory.processes for r in got),
                    "rss_mib": statistics.median(rss),
                    "pss_mib": statistics.median(pss),
                    "pss_over_bare": statistics.median(ratio),
                    "rss_over_bare": statistics.median([r / b for r, b in zip(rss, bare_rss, strict=True)]),
                    "start_seconds": statistics.median(secs),
                    "start_spread": spread(secs),
                    "first_call_seconds": statistics.median(first),
                    "first_call_spread": spread(first),
                }
                print(
                    f"{variant:<9} {row[variant]['processes']:>9.0f} {statistics.median(rss):>9.0f} "
                    f"{statistics.median(pss):>9.0f} {statistics.median(ratio):>9.2f} {statistics.median(secs):>8.2f} "
                    f"{spread(secs):>11} {statistics.median(first):>10.2f} {spread(first):>11}"
                )
            start_ratio = [r.seconds / s for r, s in zip(rounds["gateway"], slowest, strict=True)]
            together = [g.seconds / b.seconds for g, b in zip(rounds["gateway"], rounds["bare"], strict=True)]
            first_calls = [g.first_call / b.first_call for g, b in zip(rounds["gateway"], rounds["bare"], strict=True)]
            row["slowest_bare_alone_seconds"] = statistics.median(slowest)
            row["gateway_start_over_slowest_bare"] = statistics.median(start_ratio)
            row["gateway_start_over_slowest_bare_spread"] = spread(start_ratio)
            row["gateway_start_over_bare_together"] = statistics.median(together)
            row["gateway_start_over_bare_together_spread"] = spread(together)
            row["gateway_first_call_over_bare_together"] = statistics.median(first_calls)
            row["gateway_first_call_over_bare_together_spread"] = spread(first_calls)
            print(
                f"slowest bare server alone: {statistics.median(slowest):.2f} s; gateway start / slowest bare "
                f"{statistics.median(start_ratio):.2f} (spread {spread(start_ratio)}); gateway start / the N bare "
                f"servers together {statistics.median(together):.2f} (spread {spread(together)}); first call answered, "
                f"gateway / bare together {statistics.median(first_calls):.2f} (spread {spread(first_calls)})"
            )
            figures["sizes"][count] = row
        count = max(sizes)
        calls = await per_call(count, batches=options.batches, per_batch=options.per_batch)
        figures["per_call"] = {"upstreams": count, **calls}
        print(
            f"\nper call, gateway of {count} vs one proxy (this process's CPU, in memory): "
            f"{calls['gateway_cpu_ms']:.3f} vs {calls['proxy_cpu_ms']:.3f} ms, ratio {calls['cpu_ratio']:.3f} "
            f"(spread {calls['cpu_q1']:.3f}-{calls['cpu_q3']:.3f})"
        )
    load_after = os.getloadavg()
    figures["load_after"] = load_after
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    if options.json is not None:
        options.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    anyio.run(main)
