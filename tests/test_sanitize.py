"""Sanitising: no secret, path, traceback or control character crosses to the agent, and text stays short."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from leak_strategies import FILLER, a_traceback, texts_with_a_path, texts_with_a_secret
from mcp_errors._sanitize import REDACTED, is_secret_name, sanitize_text


@given(texts_with_a_secret(), st.integers(min_value=20, max_value=400))
@example(("retry with password=hunter2-Sup3r later", "hunter2-Sup3r"), 200)
def test_no_secret_survives(case: tuple[str, str], limit: int) -> None:
    text, secret = case
    assume(secret not in text.replace(secret, "", 1))  # the filler did not repeat it
    assert secret not in sanitize_text(text, limit=limit)


@given(texts_with_a_path())
def test_no_absolute_path_survives(case: tuple[str, str]) -> None:
    text, path = case
    assume(text.count(path) == 1)
    assert path not in sanitize_text(text, limit=1000)


@given(FILLER, FILLER)
def test_no_traceback_survives(before: str, message: str) -> None:
    out = sanitize_text(before + "\n" + a_traceback(message), limit=2000)
    assert "Traceback" not in out
    assert 'File "' not in out
    assert __file__ not in out


@given(st.text(), st.integers(min_value=1, max_value=300))
def test_output_is_bounded_single_line_and_free_of_control_characters(text: str, limit: int) -> None:
    out = sanitize_text(text, limit=limit)
    assert len(out) <= limit
    assert out == out.strip()
    assert not any(unicodedata.category(char) == "Cc" for char in out)
    assert not any(char in out for char in "\u202e\u200b\u2066\ufeff")


@given(st.text(st.characters(categories=("L", "N")), max_size=200))
def test_ordinary_words_pass_through_unchanged(text: str) -> None:
    assert sanitize_text(text, limit=1000) == text


@pytest.mark.parametrize(
    "text",
    [
        "Order #12345 not found; try the email address instead.",
        "author: Bob, tokens: 5",
        "See https://docs.example.com/errors/refunds for the policy.",
    ],
)
def test_harmless_text_is_kept(text: str) -> None:
    assert sanitize_text(text, limit=200) == text


def test_redaction_keeps_the_label_so_the_reader_knows_what_was_there() -> None:
    assert sanitize_text("login failed: password=hunter2", limit=200) == f"login failed: password={REDACTED}"
    assert sanitize_text("postgres://app:pw@db/x", limit=200) == f"postgres://app:{REDACTED}@db/x"


def test_long_text_ends_with_an_ellipsis() -> None:
    out = sanitize_text("word " * 100, limit=20)
    assert len(out) == 20
    assert out.endswith("…")


@pytest.mark.parametrize(
    "name",
    ["password", "db_password", "API_KEY", "x-api-key", "access_token", "secret", "accessToken", "PGPASSWORD"],
)
def test_secret_names_are_recognised(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["author", "email", "order_id", "tokens_count", "tokenizer", "secretary"])
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("accessToken=abc123secretXYZ", "abc123secretXYZ"),
        ('{"clientSecret": "q1w2e3r4t5y6"}', "q1w2e3r4t5y6"),
        ("PGPASSWORD=s3cretpw1", "s3cretpw1"),
        ("refreshToken: abc9def8ghi", "abc9def8ghi"),
    ],
)
def test_secrets_under_camel_case_or_glued_names_are_redacted(text: str, secret: str) -> None:
    assert secret not in sanitize_text(text, limit=200)


def test_windows_network_paths_are_redacted() -> None:
    assert sanitize_text(r"cannot open \\fileserver\finance\salaries.xlsx now", limit=200) == "cannot open [path] now"


@pytest.mark.parametrize(
    "text",
    [
        "connect failed: ANALYTICS_WAREHOUSE_REPLICA_READONLY_PASSWORD=hunter2x",
        "PASSWORD_FOR_THE_MAIN_REPLICA_DB=hunter2x",
    ],
)
def test_secrets_under_long_names_are_redacted(text: str) -> None:
    assert "hunter2x" not in sanitize_text(text, limit=200)


@pytest.mark.parametrize(
    "text",
    [
        "InvalidTokenError: Signature has expired",
        "AuthError: user disabled",
        "SessionIdMismatch: retry login",
        "tokenLimit=4096",
    ],
)
def test_names_about_a_secret_are_not_taken_for_one(text: str) -> None:
    assert sanitize_text(text, limit=200) == text


def test_a_secret_cut_in_two_by_the_length_cap_is_dropped_not_shown() -> None:
    text = "x" + " " * 1052 + "ghp_" + "A" * 30
    assert "ghp_" not in sanitize_text(text, limit=200)
