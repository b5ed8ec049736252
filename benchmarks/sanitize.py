"""Cost of the sanitiser and the leak finder: linear growth on hostile text, and per-text cost.

Two measurements, runs interleaved, medians with the spread (min-max over runs):

1. Growth: `find_leaks` and `sanitize_text` (uncached, no length cap) on hostile repeats
   (`a=a=...`, `password: ...`) and on realistic error text, at 16 Ki and 64 Ki characters.
   A linear scan grows x4 for 4x the text; a quadratic one x16.
2. Per text: one uncached `sanitize_text` of a typical tool error message and description
   (the path of every text not already in the cache), in microseconds.

`--baseline FILE` loads another version of the sanitiser (`_shared/sanitize.py`, `_sanitize.py` before 0.2) (for example
`git show <commit>:src/mcp_errors/_sanitize.py > /tmp/old_sanitize.py`) and measures it side
by side, interleaved with this one. Run: `uv run python benchmarks/sanitize.py [--runs 5]`.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from mcp_errors._shared import sanitize as _sanitize

SIZES = (16 * 1024, 64 * 1024)
REALISTIC = (
    "Refund of order #12345 failed: upstream https://payments.example.com/v2/refunds answered 409 "
    "(Conflict) for customer ada@example.com; retry_after=3, attempt 2 of 3. "
)
TEXTS = {
    "a=a=...": "a=",
    "password: ...": "password: ",
    "scheme://u:...": "a://b:",
    "eyJ-eyJ-...": "eyJ-",
    "C:\\a b ...": "C:\\a b ",
    "password: x is ...": "password: x is ",
    "sk-a-sk-a-...": "sk-a-",
    "a://b:c/...": "a://b:c/@",
    "<password>a</...": "<password>a</",
    "realistic": REALISTIC,
}
TYPICAL = (
    "Inventory service busy: the warehouse API at https://inventory.example.com/v1/stock timed out after 5 s",
    "The inventory service is under load; the request is valid. Resend it in a few seconds, "
    "or check the stock of SKU-4411 in the nightly report instead.",
)


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("baseline_sanitize", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses reads a class's module from sys.modules while the class is made.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def timed(work: Callable[[], object], repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        work()
    return (time.perf_counter() - start) / repeat


def scan(module: ModuleType, text: str) -> None:
    module.find_leaks(text)
    module._sanitize(text, len(text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another sanitize module to measure side by side")
    args = parser.parse_args()
    variants = {"this": _sanitize}
    if args.baseline is not None:
        variants["baseline"] = load(args.baseline)

    growth: dict[tuple[str, str], list[float]] = {}
    large_times: dict[tuple[str, str], list[float]] = {}
    per_text: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.runs):
        for label, unit in TEXTS.items():
            for name, module in variants.items():
                small, large = (unit * (size // len(unit)) for size in SIZES)
                large_time = timed(lambda m=module, t=large: scan(m, t))
                ratio = large_time / timed(lambda m=module, t=small: scan(m, t))
                growth.setdefault((label, name), []).append(ratio)
                large_times.setdefault((label, name), []).append(large_time)
        for name, module in variants.items():
            cost = timed(lambda m=module: [m._sanitize(text, 1000) for text in TYPICAL], repeat=2000)
            per_text[name].append(cost / len(TYPICAL) * 1e6)

    print(f"Growth for 4x the text ({SIZES[0] // 1024} Ki -> {SIZES[1] // 1024} Ki characters); linear is x4")
    print(f"{'text':<18} {'variant':<9} {'median':>7}  {'spread':<13} {'at ' + str(SIZES[1] // 1024) + ' Ki':>9}")
    for (label, name), ratios in sorted(growth.items()):
        spread = f"x{min(ratios):.1f}-x{max(ratios):.1f}"
        seconds = statistics.median(large_times[label, name])
        print(f"{label:<18} {name:<9} x{statistics.median(ratios):>6.1f}  {spread:<13} {seconds:>8.3f}s")
    print("\nOne uncached sanitize_text of a typical message or description")
    for name, costs in per_text.items():
        print(f"{name:<9} {statistics.median(costs):6.1f} us  ({min(costs):.1f}-{max(costs):.1f})")
    if "baseline" in per_text:
        ratios = [new / old for new, old in zip(per_text["this"], per_text["baseline"], strict=True)]
        print(f"this/baseline {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
