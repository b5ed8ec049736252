"""The failure-words vocabulary: plain signals decide, ties go to the non-retryable reading, a bounded start read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_errors import ErrorCategory, ExecutionState
from mcp_errors._shared import failure_words
from mcp_errors._shared.failure_vocabulary import KINDS, phrases_by_first_word
from mcp_errors._shared.failure_words import (
    MAX_JUDGED_CHARS,
    judge_code,
    judge_failure,
    judge_status,
    judge_success,
    names_its_caller,
    strip_sdk_wrappers,
)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("ReadTimeout('')", "UPSTREAM_TIMEOUT"),
        ("[Errno -3] Temporary failure in name resolution", "UPSTREAM_UNAVAILABLE"),
        ("[Errno 24] Too many open files", "SERVER_RESOURCES_EXHAUSTED"),
        ("502 Bad Gateway", "UPSTREAM_BAD_GATEWAY"),
        ("ERROR: deadlock detected", "DATABASE_BUSY"),
        ("Resource not accessible by integration", "ACCESS_DENIED"),
        ("The security token included in the request is expired", "NOT_AUTHENTICATED"),
        ("division by zero", "INVALID_QUERY"),
        ('relation "users" does not exist', "INVALID_QUERY"),
        ("'XYZ' is not valid for currency", "INVALID_ARGUMENTS"),
        ("duplicate key value violates unique constraint", "CONFLICT"),
        ("Your card was declined.", "POLICY_REFUSED"),
        ("attempt to write a readonly database", "SERVER_MISCONFIGURED"),
    ],
)
def test_a_plain_signal_names_its_kind(text: str, code: str) -> None:
    judged = judge_failure(text)
    assert judged is not None
    assert judged.code == code
    assert judged.retryable is (KINDS[code].category is ErrorCategory.TRANSIENT)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Invalid timezone 'Mars/Olympus'. Please try again later", ErrorCategory.VALIDATION),
        ("timeout must be a positive integer", ErrorCategory.VALIDATION),
        ("Conflict: the order is locked, try again later", ErrorCategory.BUSINESS),
        ("403 Forbidden: API rate limit exceeded for 1.2.3.4", ErrorCategory.TRANSIENT),  # the plainer signal
    ],
)
def test_words_that_point_two_ways_take_the_stronger_and_else_the_non_retryable_reading(
    text: str, category: ErrorCategory
) -> None:
    judged = judge_failure(text)
    assert judged is not None
    assert judged.category is category


def test_a_read_only_tool_applied_nothing_whatever_the_words() -> None:
    assert judge_failure("connection reset by peer") is not None
    judged = judge_failure("connection reset by peer", read_only=True)
    assert judged is not None
    assert judged.execution_state is ExecutionState.NOT_EXECUTED
    assert judge_failure("connection reset by peer").execution_state is ExecutionState.OUTCOME_UNKNOWN  # type: ignore[union-attr]


def test_a_missing_file_the_call_did_not_name_is_the_servers_own_problem() -> None:
    text = "ENOENT: no such file or directory, open '/var/lib/notes/index.db'"
    assert judge_failure(text, arguments={"query": "rivers"}).code == "SERVER_MISCONFIGURED"  # type: ignore[union-attr]
    named = judge_failure(text, arguments={"path": "/var/lib/notes/index.db"})
    assert named is not None
    assert named.code == "NOT_FOUND"
    assert judge_failure(text).code == "NOT_FOUND"  # type: ignore[union-attr]  # without the arguments: as said


def test_a_quota_used_up_for_the_month_is_no_rate_limit_a_wait_fixes() -> None:
    assert judge_failure("Rate limit exceeded, retry after 20s").code == "UPSTREAM_RATE_LIMITED"  # type: ignore[union-attr]
    monthly = judge_failure("Quota exceeded: your monthly plan allows 1000 requests")
    assert monthly is not None
    assert (monthly.category, monthly.retryable) == (ErrorCategory.BUSINESS, False)
    today = judge_failure("quota exceeded for today")  # refilled tomorrow: no wait an agent should sit out
    assert today is not None
    assert (today.category, today.retryable) == (ErrorCategory.BUSINESS, False)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("Rate limited. Retry after 30 seconds", 30),
        ("429 Too Many Requests; Retry-After: 120", 120),
        ("rate limit exceeded, try again in 5s", 5),
        ("throttled: please wait 2 minutes", 120),
        ("rate limit exceeded, retry after 500ms", 0.5),
        ("rate limit: retry after 9 days", 86_400),
    ],
)
def test_the_wait_a_transient_failure_asks_for_is_read(text: str, seconds: float) -> None:
    judged = judge_failure(text)
    assert judged is not None
    assert judged.retry_after_seconds == seconds


def test_pydantics_echo_of_the_input_and_the_sdks_masked_crash_say_nothing() -> None:
    echo = "q\n  Value error [type=value_error, input_value='access denied, timed out', input_type=str]"
    judged = judge_failure(echo)  # the word model reads pydantic's own "Value error", never the echoed input
    assert judged is not None
    assert judged.category is ErrorCategory.VALIDATION
    assert "denied" not in judged.evidence
    assert "timed" not in judged.evidence
    assert strip_sdk_wrappers("Error executing tool delete_permissions") == ""
    assert strip_sdk_wrappers("Error calling tool 'x': MCP error -32602: bad") == "bad"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("RESOURCE_EXHAUSTED", "UPSTREAM_RATE_LIMITED"),
        ("UNAVAILABLE", "UPSTREAM_UNAVAILABLE"),
        ("ECONNREFUSED", "UPSTREAM_UNAVAILABLE"),
        ("40P01", "DATABASE_BUSY"),
        ("rate_limit_error", "UPSTREAM_RATE_LIMITED"),
        ("card_declined", "POLICY_REFUSED"),
        ("ThrottlingException", "UPSTREAM_RATE_LIMITED"),
        ("PERMISSION_DENIED", "ACCESS_DENIED"),
        ("not_found_error", "NOT_FOUND"),
        ("bad-date", None),
    ],
)
def test_a_declared_code_counts_only_as_a_whole_name(code: str, expected: str | None) -> None:
    judged = judge_code(code)
    assert (judged.code if judged is not None else None) == expected


def test_an_http_status_given_as_data_reads_as_rfc_9110_says() -> None:
    assert [judge_status(status).code for status in (429, 503, 404, 409)] == [  # type: ignore[union-attr]
        "UPSTREAM_RATE_LIMITED",
        "UPSTREAM_UNAVAILABLE",
        "NOT_FOUND",
        "CONFLICT",
    ]
    assert judge_status(299) is None


@pytest.mark.parametrize(
    ("text", "structured", "code"),
    [
        ("Database error: no such table: users", None, "INVALID_QUERY"),
        ("", {"error": "connection refused"}, "UPSTREAM_UNAVAILABLE"),
        ('{"error": {"message": "rate limit exceeded"}}', None, "UPSTREAM_RATE_LIMITED"),
        ("", {"result": '{"error": "boom"}'}, "TOOL_ERROR"),
        ("", {"ok": False, "message": "permission denied"}, "ACCESS_DENIED"),
    ],
)
def test_a_success_that_leads_with_a_failure_is_one(text: str, structured: object, code: str) -> None:
    judged = judge_success(text, structured)
    assert judged is not None
    assert judged.code == code


@pytest.mark.parametrize(
    ("text", "structured"),
    [
        ("No errors found", None),
        ("Standard error: 0.051", None),
        ("Jobs failed: 3", None),
        ("0 issues matching 'timeout'", None),
        ("2024-05-01 12:00:01 ERROR worker restarted", None),
        ('{"error": null, "rows": 3}', None),
        ("", {"errors": [], "data": {"id": 1}}),
        ("How to fix 'connection refused' in nginx: check the upstream block.", None),
        ('Traceback (most recent call last):\n  File "/srv/app/sync.py", line 41', None),  # a log a user asked for
    ],
)
def test_a_success_that_only_mentions_failure_words_stays_a_success(text: str, structured: object) -> None:
    assert judge_success(text, structured) is None


@given(st.text(alphabet=" \t\n(x_-:'\"/.", max_size=20_000))
def test_only_the_start_of_any_text_is_read(noise: str) -> None:
    # Past MAX_JUDGED_CHARS nothing is read: a megabyte costs what its start costs.
    assert judge_failure(noise + " connection refused") == judge_failure(
        (noise + " connection refused")[:MAX_JUDGED_CHARS]
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("429 Too Many Requests: per-user rate limit exceeded for user mallory", True),
        ("API rate limit exceeded for user ID 123.", True),  # GitHub's wording
        ("You have exceeded your quota for this month", True),
        ("Rate limit reached for gpt-4 in organization org-1 on tokens per min", True),  # OpenAI's
        ("Rate limit exceeded, slow down", False),  # whose limit is not said: every caller's
        ("password authentication failed for user app", False),  # a caller, but no limit
        ("upstream read timed out", False),
    ],
)
def test_a_limit_names_its_caller_only_when_it_says_whose_it_is(text: str, expected: bool) -> None:
    assert names_its_caller(text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Unsupported output format: .docx", "INVALID_ARGUMENTS"),
        ("Image encoding not supported: webp", "INVALID_ARGUMENTS"),
        ("Extra properties are not allowed in the payload", "INVALID_ARGUMENTS"),
        ("This feature is not supported on your plan", "POLICY_REFUSED"),
        ("Saving to the archive is not supported for this workspace", "POLICY_REFUSED"),
        ("Scraping this page is not allowed", "ACCESS_DENIED"),
    ],
)
def test_a_refusal_of_a_form_of_the_input_is_validation_and_of_anything_else_is_not(text: str, expected: str) -> None:
    judged = judge_failure(text)
    assert judged is not None
    assert judged.code == expected


_PHRASES = sorted({phrase for entries in phrases_by_first_word().values() for phrase, _, _ in entries})
_SOME_WORDS = sorted({word for phrase in _PHRASES[::7] for word in phrase})


def _match_walking_every_phrase(words: list[str]) -> tuple[str, int] | None:
    """The phrase read at the first word as before the second-word index: every phrase of that word, longest first."""
    for phrase, _kind, strength in phrases_by_first_word().get(words[0], ()):
        if tuple(words[: len(phrase)]) == phrase:
            return " ".join(phrase), strength
    return None


@given(
    st.sampled_from(_PHRASES),
    st.integers(min_value=1, max_value=8),
    st.lists(st.sampled_from([*_SOME_WORDS, "zzz", "503"]), max_size=4),
)
def test_the_phrase_index_finds_the_phrase_walking_every_phrase_finds(
    phrase: tuple[str, ...], kept: int, more: list[str]
) -> None:
    words = [*phrase[:kept], *more]  # a phrase, cut short or not, and words after it
    found = failure_words._longest_phrase_at(failure_words._by_second_word(phrases_by_first_word()), words, 0)
    assert (None if found is None else (found[1], found[2])) == _match_walking_every_phrase(words)


@pytest.mark.parametrize("text", ["The request failed.", "An error occurred.", "Operation failed: error"])
def test_words_every_failure_says_name_no_kind(text: str) -> None:
    # "failed" and "error" tell a failure from a success, not one category from another: the
    # word model must not guess a category from them (issue 32).
    assert judge_failure(text) is None


def test_a_status_no_table_knows_is_not_guessed_from_the_clients_template() -> None:
    # httpx writes every status alike ("Client error '403 Forbidden' for url ..."): the words
    # around an unknown status are the template's, so they say nothing of the failure.
    assert judge_failure("Client error '418 I'm a teapot' for url 'http://orders.invalid/'") is None
    judged = judge_failure("Client error '403 Forbidden' for url 'http://orders.invalid/'")
    assert judged is not None
    assert judged.kind.category is ErrorCategory.PERMISSION


def test_the_fragments_of_a_secret_in_a_failure_are_not_read_as_its_kind() -> None:
    # "sk" is the start of a key, not a word: the model reads no two-letter words (issue 32).
    assert judge_failure("Error executing tool fail: the ledger broke, key sk-live-9f8e7d6c5b4a39281706") is None
