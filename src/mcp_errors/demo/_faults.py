"""Reproducible fault injection for the demo desk: random transient faults, outages, latency
and commit-then-timeout for refunds.

One seeded random generator decides every fault, so a run with the same `--seed` and the same
sequence of calls fails at the same places.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import anyio

from mcp_errors._server.errors import TransientError
from mcp_errors._shared.contract import ExecutionState

__all__ = ["FaultConfig", "FaultInjector"]


@dataclass(frozen=True, slots=True)
class FaultConfig:
    """Which faults to inject.

    Args:
        fault_rate: Probability that any call fails with a transient fault before it runs.
        outages: Tools that always time out; `search_knowledge:SOURCE` takes down one source.
        latency_ms: Added to every call.
        commit_then_timeout: Probability that a refund commits and then its answer is lost.
        seed: Seeds the generator, so runs are reproducible.
    """

    fault_rate: float = 0.0
    outages: frozenset[str] = field(default_factory=frozenset[str])
    latency_ms: float = 0.0
    commit_then_timeout: float = 0.0
    seed: int = 7

    def __post_init__(self) -> None:
        for name, value in (("fault_rate", self.fault_rate), ("commit_then_timeout", self.commit_then_timeout)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, not {value}")
        if self.latency_ms < 0:
            raise ValueError("latency_ms must not be negative")

    @classmethod
    def build(
        cls,
        *,
        fault_rate: float = 0.0,
        outages: Iterable[str] = (),
        latency_ms: float = 0.0,
        commit_then_timeout: float = 0.0,
        seed: int = 7,
    ) -> FaultConfig:
        """A config from plain values (outages from any iterable)."""
        return cls(fault_rate, frozenset(outages), latency_ms, commit_then_timeout, seed)


class FaultInjector:
    """Decides, call by call, whether a fault happens.

    Example:
        ```python
        from mcp_errors.demo._faults import FaultConfig, FaultInjector

        injector = FaultInjector(FaultConfig.build(outages=["search_knowledge:tickets"]))
        assert injector.in_outage("search_knowledge", "tickets")
        assert not injector.in_outage("search_knowledge", "faq")
        ```
    """

    def __init__(self, config: FaultConfig) -> None:
        self.config = config
        self._rng = random.Random(config.seed)
        self._lock = threading.Lock()

    def in_outage(self, tool: str, source: str | None = None) -> bool:
        """Whether this tool (or this source of it) is down for the whole run."""
        outages = self.config.outages
        return tool in outages or (source is not None and f"{tool}:{source}" in outages)

    def _draw(self) -> float:
        with self._lock:
            return self._rng.random()

    async def before_call(self, tool: str, source: str | None = None) -> None:
        """Wait the configured latency, then raise a transient fault if one is due.

        Raises:
            TransientError: An outage or a random fault; nothing was executed.
        """
        if self.config.latency_ms:
            await anyio.sleep(self.config.latency_ms / 1000)
        if self.in_outage(tool, source):
            where = f"The {source} source" if source is not None else f"The service behind {tool}"
            raise TransientError(
                "Upstream timed out",
                description=(
                    f"{where} did not answer within 5 seconds, so the request did not run there. "
                    "It is down for now: resend in 30 seconds or later, or carry on without this part."
                ),
                code="UPSTREAM_TIMEOUT",
                # An outage lasts: saying so lets a client with a deadline stop resending.
                retry_after_seconds=30.0,
                execution_state=ExecutionState.NOT_EXECUTED,
            )
        if self.config.fault_rate and self._draw() < self.config.fault_rate:
            if self._draw() < 0.5:
                raise TransientError(
                    "Database busy",
                    description="The desk's database is under heavy load. The request is valid and should "
                    "succeed on a resend.",
                    code="DATABASE_BUSY",
                    retry_after_seconds=0.05,
                    execution_state=ExecutionState.NOT_EXECUTED,
                )
            raise TransientError(
                "Request timed out",
                description="The desk's database did not answer in time and the query did not run. "
                "The request is valid and should succeed on a resend.",
                code="TIMEOUT",
                execution_state=ExecutionState.NOT_EXECUTED,
            )

    def lose_reply(self) -> bool:
        """Whether a committed refund's answer should be lost (commit-then-timeout)."""
        return bool(self.config.commit_then_timeout) and self._draw() < self.config.commit_then_timeout
