"""The error's first text line: what the writer writes, the parser reads back."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from mcp_types import CallToolResult

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors._shared.advice import seconds_in_words, to_milliseconds
from mcp_errors._shared.envelope import FailureDetails, error_result
from mcp_errors._shared.error_text import ErrorHead, read_error_text, write_error_text

texts = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)
error_ids = st.from_regex(r"[0-9a-f]{12}", fullmatch=True)
codes = st.none() | st.from_regex(r"[A-Z][A-Z0-9_]{0,30}", fullmatch=True)
waits = st.none() | st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)


@st.composite
def failures(draw: st.DrawFn) -> FailureDetails:
    category = draw(st.sampled_from(ErrorCategory))
    return FailureDetails(
        message=draw(texts),
        category=category,
        description=draw(texts),
        code=draw(codes),
        retry_after_seconds=draw(waits) if category is ErrorCategory.TRANSIENT else None,
        execution_state=draw(st.none() | st.sampled_from(ExecutionState)),
    )


@given(failures(), st.none() | error_ids)
def test_every_written_error_reads_back_to_its_category_verdict_and_code(
    details: FailureDetails, error_id: str | None
) -> None:
    outcome = read_result(error_result(details, error_id=error_id))

    assert (outcome.kind, outcome.source) == ("error", "envelope")
    assert outcome.category is details.category
    assert outcome.is_retryable is details.category.is_retryable
    assert outcome.code == details.code
    assert outcome.error_id == error_id


@given(failures(), st.none() | error_ids)
def test_the_text_block_alone_reads_back_to_the_same_category_and_wait(
    details: FailureDetails, error_id: str | None
) -> None:
    # What a host that drops structuredContent passes on: only the first text block.
    text_only = error_result(details, error_id=error_id).model_copy(update={"structured_content": None})

    outcome = read_result(text_only)

    assert (outcome.kind, outcome.source) == ("error", "contract_text")
    assert outcome.category is details.category
    assert outcome.category_inferred
    assert not outcome.is_retryable  # prose is never a promise that a resend is safe
    assert outcome.error_id == error_id
    if details.retry_after_seconds is None:
        assert outcome.retry_after_seconds is None
    else:
        assert outcome.retry_after_seconds == details.retry_after_seconds  # already to the millisecond


@given(
    st.none() | st.sampled_from(ErrorCategory),
    st.booleans(),
    waits,
    st.booleans(),
    texts,
    st.none() | error_ids,
)
def test_every_head_form_reads_back_as_written(
    category: ErrorCategory | None,
    retryable: bool,
    wait: float | None,
    inferred: bool,
    body: str,
    error_id: str | None,
) -> None:
    assume("(errorId: " not in body)
    head = ErrorHead(category, retryable, wait if retryable else None, inferred and category is not None)

    read = read_error_text(write_error_text(head, body, error_id=error_id))

    assert read is not None
    assert read.head == ErrorHead(
        category,
        retryable,
        None if head.retry_after_seconds is None else to_milliseconds(head.retry_after_seconds),
        head.inferred,
    )
    assert read.error_id == error_id
    assert read.body == body.strip()


def test_a_text_without_the_head_is_not_read_as_one() -> None:
    for text in ("Error: boom", " [transient error, retryable] leading space", "[fatal error, retryable] x", ""):
        assert read_error_text(text) is None


def test_a_text_that_only_imitates_the_errorid_keeps_it_in_the_body() -> None:
    read = read_error_text("[business error, not retryable] Refused (errorId: not an id!)")

    assert read is not None
    assert read.error_id is None
    assert read.body == "Refused (errorId: not an id!)"


def test_a_large_wait_is_written_without_an_exponent_so_the_head_stays_readable() -> None:
    details = FailureDetails(
        message="Quota", category=ErrorCategory.TRANSIENT, description="Come back later.", retry_after_seconds=1e6
    )
    text = error_result(details).content[0]

    assert getattr(text, "text", "").startswith("[transient error, retryable after 1000000s]")


def test_an_all_failed_partial_report_is_written_by_the_same_writer() -> None:
    from mcp_errors import FailedCall, PartialReport

    report = PartialReport(
        succeeded={},
        failed={"a": FailedCall(category=ErrorCategory.PERMISSION, is_retryable=False, attempts=1, description="no")},
    )
    result: CallToolResult = report.to_tool_result()
    read = read_error_text(getattr(result.content[0], "text", ""))

    assert read is not None
    assert read.head == ErrorHead(ErrorCategory.PERMISSION, retryable=False)
    assert read_result(result).code == "ALL_SOURCES_FAILED"


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (1, "1 second"),
        (0.9996, "1 second"),
        (0.1861972720000722, "0.187 seconds"),
        (4.35, "4.35 seconds"),
        (30, "30 seconds"),
    ],
)
def test_a_wait_in_a_sentence_agrees_in_number_and_is_rounded_up_to_the_millisecond(seconds: float, words: str) -> None:
    assert seconds_in_words(seconds) == words
