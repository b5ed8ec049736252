"""The failures replay answers with: each one's category, code and execution state, as the contract reads them."""

from __future__ import annotations

import pytest

from mcp_errors._server.replay_answers import (
    ABANDONED,
    KEY_INVALID,
    KEY_REUSED,
    STOPPED,
    STORE_UNAVAILABLE,
    STORE_UNWRITABLE,
    TASK_NOT_READABLE,
    TOO_MANY_RUNS,
    in_progress,
    not_kept,
    outcome_unknown,
)
from mcp_errors._shared.contract import ErrorCategory, ExecutionState
from mcp_errors._shared.envelope import FailureDetails
from mcp_errors._shared.signals import CONTRACT_CODES

NOT_RUN = [KEY_INVALID, KEY_REUSED, TOO_MANY_RUNS, STORE_UNAVAILABLE, STORE_UNWRITABLE, in_progress(1.0)]


@pytest.mark.parametrize("answer", NOT_RUN, ids=[answer.code or "" for answer in NOT_RUN])
def test_an_answer_for_a_call_that_did_not_run_says_it_was_not_executed(answer: FailureDetails) -> None:
    assert answer.execution_state is ExecutionState.NOT_EXECUTED
    assert answer.code in CONTRACT_CODES


@pytest.mark.parametrize("answer", [ABANDONED, STOPPED, TASK_NOT_READABLE, outcome_unknown("It was stopped")])
def test_a_call_that_may_have_run_is_an_unknown_outcome_never_run_again_under_its_key(answer: FailureDetails) -> None:
    assert (answer.category, answer.code) == (ErrorCategory.TRANSIENT, "OUTCOME_UNKNOWN")
    assert answer.execution_state is ExecutionState.OUTCOME_UNKNOWN


def test_only_a_store_that_cannot_be_reached_asks_for_a_resend_one_that_cannot_be_written_for_a_human() -> None:
    assert (STORE_UNAVAILABLE.category, STORE_UNAVAILABLE.retry_after_seconds) == (ErrorCategory.TRANSIENT, 1.0)
    assert (STORE_UNWRITABLE.category, STORE_UNWRITABLE.retry_after_seconds) == (ErrorCategory.BUSINESS, None)


@pytest.mark.parametrize(("seconds_left", "wait"), [(0.0, 0.1), (0.74, 0.7), (30.0, 2.0)])
def test_a_duplicate_waits_at_most_two_seconds_and_never_past_the_running_calls_lease(
    seconds_left: float, wait: float
) -> None:
    assert in_progress(seconds_left).retry_after_seconds == wait


def test_a_key_used_up_by_task_runs_wants_a_new_key_and_an_answer_too_large_to_keep_wants_a_look() -> None:
    assert (TOO_MANY_RUNS.category, TOO_MANY_RUNS.code) == (ErrorCategory.VALIDATION, "IDEMPOTENCY_KEY_USED_UP")
    assert TOO_MANY_RUNS.field_errors[0].field.startswith("_meta.")
    kept = not_kept(300_000, 262_144)
    assert (kept.category, kept.code) == (ErrorCategory.BUSINESS, "ANSWER_NOT_KEPT")
