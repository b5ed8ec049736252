"""`RetryBudget`: gRPC-style throttling of retries per server."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_errors import RetryBudget


def test_retries_stop_at_half_the_bucket_and_resume_after_successes() -> None:
    budget = RetryBudget(max_tokens=10, token_ratio=0.5)
    for _ in range(4):
        budget.record_failure()
    assert budget.allows_retry()
    budget.record_failure()
    assert not budget.allows_retry()  # 5 of 10: at half
    budget.record_success()
    assert budget.allows_retry()


@given(st.lists(st.booleans(), max_size=200))
def test_tokens_stay_between_zero_and_the_size(events: list[bool]) -> None:
    budget = RetryBudget(max_tokens=6, token_ratio=0.7)
    for success in events:
        budget.record_success() if success else budget.record_failure()
        assert 0 <= budget.tokens <= 6


def test_a_full_outage_allows_only_half_the_bucket_in_retries() -> None:
    budget = RetryBudget(max_tokens=20, token_ratio=2)
    retries = 0
    for _ in range(1000):
        budget.record_failure()  # the first attempt of each request
        while budget.allows_retry():
            retries += 1
            budget.record_failure()
    assert retries == 9


@pytest.mark.parametrize(("tokens", "ratio"), [(0, 1), (10, 0), (-1, 1)])
def test_a_budget_needs_positive_settings(tokens: float, ratio: float) -> None:
    with pytest.raises(ValueError, match="positive"):
        RetryBudget(max_tokens=tokens, token_ratio=ratio)
