"""A retry budget shared per server, after gRPC's retry throttling.

Hand-written on purpose: tenacity, stamina and backoff have no retry budget, and gRPC's
throttling lives inside its channel. The rule (gRPC A6 "retry throttling"):

- the bucket starts full at `max_tokens`;
- every transient failure costs 1 token, resent or not: it says the server is struggling;
- every successful attempt returns `token_ratio` tokens (never above `max_tokens`);
- a *retry* is allowed only while the bucket holds more than half of `max_tokens`.

First attempts are never throttled, so during a full outage each logical request costs
one call once the bucket has drained to half: `1 + max_tokens / (2 * requests)` calls
per request on average.
"""

from __future__ import annotations

import threading

__all__ = ["RetryBudget"]


class RetryBudget:
    """A token bucket that stops retries to a server while most of its calls fail.

    Share one instance per server (the recovery policy keeps one per server name by
    default). Thread-safe.

    The defaults differ from gRPC's example (`max_tokens=10`, `token_ratio=0.1`), which
    stops retrying once more than about 9% of calls fail. A ratio of 2.0 keeps retrying
    while up to two thirds of the calls fail, which is what recovers a flaky read-only tool
    (at a 50% failure rate a ratio of 1.0 sits on the threshold and loses about 17 points
    of success: measured in `docs/performance.md`), while a full outage still drains the
    bucket, since nothing refills it without successes.

    Args:
        max_tokens: Size of the bucket; retries stop at or below half of it.
        token_ratio: Tokens a success returns; the failure ratio the budget sustains is
            `token_ratio / (1 + token_ratio)` of all calls.

    Raises:
        ValueError: If `max_tokens` or `token_ratio` is not positive.

    Example:
        ```python
        from mcp_errors import RetryBudget

        budget = RetryBudget(max_tokens=4, token_ratio=1.0)
        budget.record_failure()
        budget.record_failure()
        assert not budget.allows_retry()  # 2 tokens left: at half, no more retries
        budget.record_success()
        assert budget.allows_retry()
        ```
    """

    def __init__(self, *, max_tokens: float = 20.0, token_ratio: float = 2.0) -> None:
        if max_tokens <= 0 or token_ratio <= 0:
            raise ValueError("max_tokens and token_ratio must be positive")
        self.max_tokens = float(max_tokens)
        self.token_ratio = float(token_ratio)
        self._tokens = float(max_tokens)
        self._lock = threading.Lock()

    @property
    def tokens(self) -> float:
        """The tokens left."""
        return self._tokens

    def allows_retry(self) -> bool:
        """Whether a retry may be sent now: the bucket holds more than half its size."""
        return self._tokens > self.max_tokens / 2

    def record_failure(self) -> None:
        """Take one token for a failed attempt (never below zero)."""
        with self._lock:
            self._tokens = max(0.0, self._tokens - 1.0)

    def record_success(self) -> None:
        """Return `token_ratio` tokens for a successful attempt (never above the size)."""
        with self._lock:
            self._tokens = min(self.max_tokens, self._tokens + self.token_ratio)

    def __repr__(self) -> str:
        return f"RetryBudget(tokens={self._tokens:g}/{self.max_tokens:g}, token_ratio={self.token_ratio:g})"
