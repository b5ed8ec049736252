"""The contract's words: one wording per verdict and category, read back by the head's parser."""

from __future__ import annotations

import pytest

from mcp_errors import ErrorCategory
from mcp_errors._shared.advice import (
    ADVICE,
    HEADLINES,
    RESEND_RULE,
    VERDICT_NOT_RETRYABLE,
    VERDICT_RETRYABLE,
    may_have_applied,
    resend_after,
    seconds_in_words,
)
from mcp_errors._shared.error_text import ErrorHead, read_error_text, write_error_text


def test_every_category_has_a_headline_and_an_advice() -> None:
    assert set(HEADLINES) == set(ADVICE) == set(ErrorCategory)
    assert all(text.strip() for text in (*HEADLINES.values(), *ADVICE.values()))


@pytest.mark.parametrize("category", list(ErrorCategory))
def test_the_verdict_words_are_what_the_head_writes_and_reads_back(category: ErrorCategory) -> None:
    head = ErrorHead(category, category.is_retryable)
    text = write_error_text(head, ADVICE[category])
    verdict = VERDICT_RETRYABLE if category.is_retryable else VERDICT_NOT_RETRYABLE
    assert text.startswith(f"[{category.value} error, {verdict}]")
    read = read_error_text(text)
    assert read is not None
    assert (read.head, read.body) == (head, ADVICE[category])


def test_only_the_transient_advice_says_to_resend_the_same_call() -> None:
    resends = {category for category, text in ADVICE.items() if "resend the same call after" in text}
    assert resends == {ErrorCategory.TRANSIENT}
    assert RESEND_RULE in may_have_applied()


@pytest.mark.parametrize(
    ("seconds", "said"),
    [(1, "1 second"), (1.0, "1 second"), (2, "2 seconds"), (0.1861972720000722, "0.187 seconds"),
     (2.5, "2.5 seconds"), (30, "30 seconds"), (0.0001, "0.001 seconds")],
)  # fmt: skip
def test_a_wait_is_said_as_the_head_writes_it_never_sooner_than_asked(seconds: float, said: str) -> None:
    assert seconds_in_words(seconds) == said
    assert resend_after(seconds) == f"Resend after at least {said}."


def test_without_a_wait_the_resend_is_after_a_short_wait() -> None:
    assert resend_after(None) == "Resend after a short wait."
