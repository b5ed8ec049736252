"""What the structured agent did, per category, read from the OpenTelemetry metrics of its run.

The recovery policy records its calls with the OpenTelemetry API (`mcp_errors._shared.telemetry`);
the demo gives it a meter provider of its own with an in-memory reader for the length of the
run, and tabulates what was recorded: the figures are the metrics, not a second count. The
framework-default agent does not use the policy and records nothing. Needs the OpenTelemetry SDK
(`opentelemetry-sdk`, a development dependency); without it the table is left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_errors._shared.telemetry import recording_metrics

__all__ = ["CategoryFigures", "RunMetrics", "metrics_of_run"]

ANSWERED: Final = "answered"
"""The row of logical calls that ended in an answer (after resends, maybe)."""


@dataclass(frozen=True)
class CategoryFigures:
    """The structured agent's logical calls whose final outcome was of one category."""

    category: str
    """An error category, or `answered` for calls that ended in an answer."""
    calls: int
    attempts: int
    waited_seconds: float
    decisions: dict[str, int] = field(default_factory=dict)
    budget_refusals: int = 0

    @property
    def resends(self) -> int:
        """Calls made after the first of each logical call."""
        return self.attempts - self.calls

    def to_json(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "logicalCalls": self.calls,
            "attempts": self.attempts,
            "resends": self.resends,
            "waitedSeconds": round(self.waited_seconds, 3),
            "decisions": dict(sorted(self.decisions.items())),
            "retryBudgetRefusals": self.budget_refusals,
        }


class RunMetrics:
    """The metrics of one run: available only when the OpenTelemetry SDK is installed."""

    def __init__(self, reader: Any | None) -> None:
        self._reader = reader

    @property
    def available(self) -> bool:
        return self._reader is not None

    def by_category(self) -> list[CategoryFigures]:
        """One row per final category (answered first), from the recorded histograms."""
        if self._reader is None:
            return []
        tallies: dict[str, dict[str, Any]] = {}
        refusals = 0
        for name, labels, point in _points(self._reader.get_metrics_data()):
            if name == "mcp_errors.client.retry_budget.refusals":
                refusals += int(point.value)
                continue
            category = str(labels.get("mcp_errors.error.category", ANSWERED))
            tally = tallies.setdefault(category, {"calls": 0, "attempts": 0, "waited": 0.0, "decisions": Counter()})
            if name == "mcp_errors.client.call.attempts":
                tally["calls"] += point.count
                tally["attempts"] += int(point.sum)
                tally["decisions"][str(labels.get("mcp_errors.decision", "?"))] += point.count
            elif name == "mcp_errors.client.call.retry_delay":
                tally["waited"] += point.sum
        categories = sorted(tallies, key=lambda each: _ORDER.index(each) if each in _ORDER else len(_ORDER))
        # Refusals are counted per tool and server, not per category: they belong to the
        # transient row when there is one (a refused resend leaves a transient failure).
        refused_row = "transient" if "transient" in tallies else categories[-1] if categories else None
        return [
            CategoryFigures(
                category=category,
                calls=tallies[category]["calls"],
                attempts=tallies[category]["attempts"],
                waited_seconds=tallies[category]["waited"],
                decisions=dict(tallies[category]["decisions"]),
                budget_refusals=refusals if category == refused_row else 0,
            )
            for category in categories
        ]


_ORDER: Final = (ANSWERED, "transient", "validation", "business", "permission")


def _points(data: Any) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """Every data point the reader collected: its metric's name, its attributes, the point."""
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    yield metric.name, dict(point.attributes or {}), point


@contextmanager
def metrics_of_run() -> Iterator[RunMetrics]:
    """Record the recovery policy's metrics in memory while the block runs."""
    try:
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    except ImportError:
        yield RunMetrics(None)
        return
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    try:
        with recording_metrics(provider):
            yield RunMetrics(reader)
    finally:
        provider.shutdown()
