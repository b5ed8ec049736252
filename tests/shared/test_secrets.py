"""The secret scanner: what it finds, what it leaves, and that finding and redacting agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_errors._shared.secrets import REDACTED, has_secret, is_secret_name, redact_secrets

CORPORA = Path(__file__).parents[1] / "secret_corpora"
SECRETS = [json.loads(line) for line in (CORPORA / "secrets.jsonl").read_text().splitlines() if line.strip()]
ORDINARY = [line for line in (CORPORA / "ordinary_errors.txt").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----", "MIIEow"),
        ("upstream said: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv rejected", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv"),
        ("cannot reach postgresql://app:Tr0ub4dor@db:5432/shop", "Tr0ub4dor"),
        ("Authorization failed for Bearer abc123def456ghi", "abc123def456ghi"),
        ("login failed: password=hunter2 for ada", "hunter2"),
        ('{"api_key": "k3y-9f8e7d6c"}', "k3y-9f8e7d6c"),
        ("<Password>Winter2024!</Password>", "Winter2024!"),
    ],
)
def test_each_way_a_secret_is_written_is_found_and_redacted(text: str, secret: str) -> None:
    assert has_secret(text)
    redacted = redact_secrets(text)
    assert secret not in redacted
    assert REDACTED in redacted
    assert not has_secret(redacted)


@pytest.mark.parametrize(
    "text",
    [
        "password: required",
        "Invalid token: it expired at 10:42 UTC; sign in again.",
        "api_key=${API_KEY} was not expanded; set the variable.",
        "The Basic subscription cannot export reports.",
        "key=order-17 already exists",
        "see /srv/app/main.py at 10.0.0.7",  # paths and addresses are the sanitiser's, not secrets
    ],
)
def test_prose_placeholders_and_what_only_shares_a_name_with_a_secret_are_left_alone(text: str) -> None:
    assert not has_secret(text)
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("password", True),
        ("DB_PASSWORD", True),
        ("X-Api-Key", True),
        ("accessToken", True),
        ("PGPASSWORD", True),
        ("InvalidTokenError", False),
        ("tokenLimit", False),
        ("author", False),
        ("secretary", False),
    ],
)
def test_a_name_is_secret_when_its_words_name_a_secret_and_not_what_is_said_of_one(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_finding_and_redacting_agree_on_both_corpora() -> None:
    for text in [case["text"] for case in SECRETS] + ORDINARY:
        assert has_secret(text) is (redact_secrets(text) != text), text
