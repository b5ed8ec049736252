"""Where the test suite's CPU goes: `uv run pytest` with every process it starts counted.

The suite is CPU-bound on two cores, and most of its CPU is spent in processes it starts
(servers, proxies, Node peers), which `--durations` does not see. This script runs the
command given (default: `uv run pytest`, as the README prints it) in a folder (default: this
checkout; give a fresh clone to measure what a newcomer's first run costs) and, while it runs,
reads `/proc` every `--interval` seconds: each process descended from the command, its
command line and its CPU time (user + system) when last seen. A process that lives less than
one interval may be missed; the total of the command and all its children, from the kernel
(`resource.getrusage(RUSAGE_CHILDREN)`), is printed beside the sum of what was seen.

The processes are grouped by what they run (a script's path under the folder, `-m module`,
a Node package, the pytest workers), with how many were started, their CPU in all, and the
median per process.

Run: `uv run python benchmarks/suite.py [--folder /tmp/fresh-clone] [--top 25] [-- command...]`;
`--tests N` also lists the N tests whose processes cost the most, and `--output FILE` keeps the
command's whole output (`-- uv run pytest --durations=50`).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _read(pid: str) -> tuple[int, float, int] | None:
    """(parent pid, CPU seconds, start tick) of a process, or `None` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            fields = file.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICKS, int(fields[19])


def _test_of(pid: str) -> str | None:
    """The test that started this process (pytest's `PYTEST_CURRENT_TEST` in its environment), as its node id."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            environment = file.read()
    except OSError:
        return None
    found = re.search(rb"(?:^|\0)PYTEST_CURRENT_TEST=([^\0]+?)(?: \((?:setup|call|teardown)\))?(?:\0|$)", environment)
    return found.group(1).decode(errors="replace") if found else None


def _command_line(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            return file.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


class Watch:
    """The processes descended from `root`, each with its command line and last-seen CPU time."""

    def __init__(self, root: int, interval: float) -> None:
        self.root = root
        self.interval = interval
        self.commands: dict[tuple[int, int], str] = {}  # by (pid, start tick): a pid is reused
        self.cpu: dict[tuple[int, int], float] = {}
        self.tests: dict[tuple[int, int], str] = {}
        self._test_of_pid: dict[int, str] = {}
        self._ours: set[int] = {root}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in filter(str.isdigit, os.listdir("/proc")):
                found = _read(pid)
                if found is None:
                    continue
                parent, cpu, start = found
                key = (int(pid), start)
                if key not in self.commands:
                    # Ours if its parent is, when first seen (an orphan is adopted by init later).
                    if parent not in self._ours and int(pid) != self.root:
                        continue
                    self._ours.add(int(pid))
                    self.commands[key] = _command_line(pid)
                    # A server started with a trimmed environment (the SDK's default) has its parent's test.
                    test = _test_of(pid) or self._test_of_pid.get(parent)
                    if test is not None:
                        self.tests[key] = self._test_of_pid[int(pid)] = test
                self.cpu[key] = cpu
            self._stop.wait(self.interval)


def kind(command: str, folder: Path) -> str:
    """What a process runs, told by its command line."""
    if re.match(r"(\S*/)?(ba|da)?sh -c ", command):
        return "sh -c (a wrapper, such as the proxy's around its upstream)"
    if "tasks-env" in command:
        return "tasks-env: " + ("pytest" if "pytest" in command or "exec(eval(" in command else "its servers")
    if "exec(eval(" in command:
        return "pytest-xdist worker"
    node = re.search(r"node_modules/(@[\w.-]+/[\w.-]+|[\w.-]+)", command)
    if node and re.search(r"(^|/)node\s", command):
        return f"node {node.group(1)}"
    module = re.search(r"\s-m\s+(mcp_errors\s+\w+|\S+)", command)
    if module:
        return f"python -m {module.group(1)}"
    script = re.search(rf"{re.escape(str(folder))}/(\S+\.py)", command)
    if script:
        return script.group(1)
    if re.search(r"\s-c\s", command):
        return "python -c ..."
    program, _, rest = command.partition(" ")
    return f"{program.rsplit('/', 1)[-1]} {rest.split(' ', 1)[0]}".strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--folder", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--output", type=Path, help="write the command's whole output to this file")
    parser.add_argument("--tests", type=int, default=0, help="also list this many tests that started the most CPU")
    parser.add_argument("command", nargs="*", default=["uv", "run", "pytest"])
    args = parser.parse_args()
    folder = args.folder.resolve()
    started = time.monotonic()
    process = subprocess.Popen(args.command, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with Watch(process.pid, args.interval) as watch:
        assert process.stdout is not None
        lines = list(process.stdout)
        tail = lines[-3:]
        status = process.wait()
    wall = time.monotonic() - started
    if args.output is not None:
        args.output.write_text("".join(lines))
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = children.ru_utime + children.ru_stime
    groups: dict[str, list[float]] = defaultdict(list)
    for key, command in watch.commands.items():
        groups[kind(command, folder)].append(watch.cpu[key])
    seen = sum(sum(cpus) for cpus in groups.values())
    print("".join(tail).rstrip())
    print(f"exit {status}; wall {wall:.0f} s; CPU {total:.0f} s (kernel's count of every child), {seen:.0f} s seen")
    print(f"{len(watch.commands)} processes seen, {args.interval} s apart; CPU by what they run:")
    print(f"{'CPU s':>8} {'share':>6} {'count':>6} {'median s':>9}  what")
    for name, cpus in sorted(groups.items(), key=lambda item: -sum(item[1]))[: args.top]:
        print(f"{sum(cpus):8.1f} {sum(cpus) / total:6.1%} {len(cpus):6d} {statistics.median(cpus):9.2f}  {name}")
    by_file: dict[str, list[float]] = defaultdict(list)
    by_test: dict[str, list[float]] = defaultdict(list)
    for key, test in watch.tests.items():
        by_file[test.partition("::")[0]].append(watch.cpu[key])
        by_test[test].append(watch.cpu[key])
    print("\nCPU of the processes tests started, by test file (a worker's own CPU not included):")
    print(f"{'CPU s':>8} {'count':>6}  file")
    for name, cpus in sorted(by_file.items(), key=lambda item: -sum(item[1]))[: args.top]:
        print(f"{sum(cpus):8.1f} {len(cpus):6d}  {name}")
    if args.tests:
        print("\nCPU of the processes tests started, by test:")
        print(f"{'CPU s':>8} {'count':>6}  test")
        for name, cpus in sorted(by_test.items(), key=lambda item: -sum(item[1]))[: args.tests]:
            print(f"{sum(cpus):8.1f} {len(cpus):6d}  {name}")
    sys.exit(0)


if __name__ == "__main__":
    main()
