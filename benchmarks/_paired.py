"""Side-by-side timing for the benchmarks: two variants, interleaved in short batches.

A shared 2-core machine slows down and speeds up from one second to the next. Runs of
hundreds of calls, one variant after the other, catch different moments and give ratios
that swing by +-50%. Here both variants stay open in one process and alternate every few
calls (ABBA), so each pair of batches sees the same moment; the figure is the median of the
per-batch ratios, with their interquartile range as the spread.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Operation = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class Paired:
    """CPU time of variant A and variant B per operation, and B/A."""

    a_seconds: float
    """Median CPU seconds per operation of A."""
    b_seconds: float
    ratio: float
    """Median of the per-batch B/A ratios."""
    q1: float
    """First quartile of the per-batch ratios."""
    q3: float
    """Third quartile of the per-batch ratios."""

    def spread(self) -> str:
        return f"{self.q1:.3f}-{self.q3:.3f}"


async def compare(a: Operation, b: Operation, *, batches: int, per_batch: int, warmup: int = 20) -> Paired:
    """Time `a` and `b` in alternating batches of `per_batch` operations (CPU time)."""
    for _ in range(warmup):  # first-call caches, lazy imports, schema compilation
        await a()
        await b()
    # What exists now (imports, servers, sessions) stays out of the collector's passes, so
    # that a full collection does not land on whichever batch happens to run then.
    gc.collect()
    gc.freeze()
    a_times: list[float] = []
    b_times: list[float] = []
    for index in range(batches):
        order = ((a, a_times), (b, b_times)) if index % 2 == 0 else ((b, b_times), (a, a_times))
        for operation, sink in order:
            start = time.process_time()
            for _ in range(per_batch):
                await operation()
            sink.append((time.process_time() - start) / per_batch)
    ratios = [b_time / a_time for a_time, b_time in zip(a_times, b_times, strict=True) if a_time > 0]
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return Paired(statistics.median(a_times), statistics.median(b_times), statistics.median(ratios), q1, q3)
