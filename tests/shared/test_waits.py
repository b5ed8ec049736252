"""A wait read as seconds, once, with one cap: every reader of a wait gives the same answer for the same value."""

from __future__ import annotations

import email.utils
import math
import time
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from mcp_errors._client.outcome import read_retry_after
from mcp_errors._server.classify import classify_failure
from mcp_errors._shared.contract import MAX_RETRY_AFTER_SECONDS
from mcp_errors._shared.failure_words import judge_failure
from mcp_errors._shared.waits import capped_wait, retry_after_header, wait_seconds, wait_until
from mcp_errors.proxy._classify import UpstreamClassifier, UpstreamFailure

NUMBERS = st.integers(min_value=-(10**30), max_value=10**30) | st.floats(allow_nan=True, allow_infinity=True)


@given(value=NUMBERS | st.booleans() | st.none() | st.text(max_size=12))
def test_a_wait_is_a_finite_number_from_zero_to_a_day_or_none(value: object) -> None:
    wait = wait_seconds(value)
    if wait is not None:
        assert isinstance(wait, float)
        assert 0 <= wait <= MAX_RETRY_AFTER_SECONDS
        assert math.isfinite(wait)


@given(seconds=st.floats(allow_nan=False))
def test_the_one_cap_keeps_every_wait_within_zero_and_a_day(seconds: float) -> None:
    assert 0 <= capped_wait(seconds) <= MAX_RETRY_AFTER_SECONDS


def test_numbers_and_their_text_are_the_same_wait_and_nothing_else_is_one() -> None:
    assert wait_seconds(30) == wait_seconds("30") == wait_seconds(" 30.0 ") == 30.0
    assert wait_seconds(10**400) == MAX_RETRY_AFTER_SECONDS
    assert wait_seconds("9" * 400) == MAX_RETRY_AFTER_SECONDS
    for nothing in (True, -1, math.nan, math.inf, "soon", "-5", "", None, [3], "1." + "9" * 100):
        assert wait_seconds(nothing) is None


def test_a_retry_after_header_is_seconds_or_an_http_date() -> None:
    assert retry_after_header("120") == 120.0
    assert retry_after_header("99999999") == retry_after_header("9" * 400) == MAX_RETRY_AFTER_SECONDS
    in_two_minutes = retry_after_header(email.utils.formatdate(time.time() + 120, usegmt=True))
    assert in_two_minutes is not None
    assert 100 <= in_two_minutes <= 121
    assert retry_after_header(email.utils.formatdate(time.time() - 600, usegmt=True)) == 0.0
    for nothing in ("²", "soon", "-5", "", None, 30):
        assert retry_after_header(nothing) is None


def test_a_moment_is_the_wait_until_it_capped() -> None:
    assert wait_until(130.0, now=100.0) == 30.0
    assert wait_until(50.0, now=100.0) == 0.0
    assert wait_until(1e12, now=0.0) == MAX_RETRY_AFTER_SECONDS


def _proxy_wait(value: Any) -> float | None:
    details = UpstreamClassifier().classify(
        UpstreamFailure(tool="t", text="", structured={"status": 503, "retryAfter": value}), error_id="e"
    )
    assert details is not None
    return details.retry_after_seconds


def _server_wait(value: str) -> float | None:
    request = httpx.Request("GET", "https://api.example.com/")
    response = httpx.Response(503, headers={"Retry-After": value}, request=request)
    exc = httpx.HTTPStatusError("503", request=request, response=response)
    return classify_failure(exc, error_id="e").retry_after_seconds


def _words_wait(seconds: int) -> float | None:
    judged = judge_failure(f"Service unavailable, retry after {seconds} seconds")
    assert judged is not None
    return judged.retry_after_seconds


def test_every_reader_of_a_wait_caps_it_at_the_same_day() -> None:
    # The client, the proxy, the server's Retry-After and the vocabulary's words: one cap. The
    # proxy used to drop a wait of a day or more where the others capped it.
    too_long = 10**7
    assert read_retry_after(too_long) == MAX_RETRY_AFTER_SECONDS
    assert _proxy_wait(too_long) == MAX_RETRY_AFTER_SECONDS
    assert _server_wait(str(too_long)) == MAX_RETRY_AFTER_SECONDS
    assert _words_wait(too_long) == MAX_RETRY_AFTER_SECONDS


def test_every_reader_of_a_wait_reads_the_same_number_the_same() -> None:
    assert read_retry_after(7) == _proxy_wait(7) == _server_wait("7") == _words_wait(7) == 7.0
    for reader in (read_retry_after, _proxy_wait):
        assert reader(-1) is None
    assert _server_wait("-1") is None
