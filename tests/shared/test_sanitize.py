"""Sanitising: no secret, path, traceback or control character crosses to the agent, and text stays short."""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from leak_strategies import FILLER, a_traceback, texts_with_a_path, texts_with_a_secret
from mcp_errors._shared.sanitize import (
    REDACTED,
    find_leaks,
    is_secret_name,
    known_to_the_agent,
    redact_url,
    redact_urls,
    roots_announced,
    sanitize_json,
    sanitize_text,
)


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
        # E-mail addresses, public and loopback addresses are kept on purpose (docs/wire-format.md).
        "No customer matches ada@example.com; the lookup ran and found nothing.",
        "The resolver at 8.8.8.8 did not answer; resend later.",
        "Listening on 127.0.0.1 only.",
        "Upgrade to 10.4 or later.",
    ],
)
def test_harmless_text_is_kept(text: str) -> None:
    assert sanitize_text(text, limit=200) == text
    assert find_leaks(text) == []


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


# What the wire format promises to redact, and what a serious redactor catches besides
# (docs/wire-format.md, "Sanitising"): each is redacted, and the checker's leak finder,
# which uses the same list, flags it before and not after.
LEAKS = [
    pytest.param("connect to postgres://admin:p@ssW0rd99@db.example.com/prod", "ssW0rd99", id="password-with-at"),
    pytest.param("login: password: correct horse battery staple9", "battery staple9", id="multi-word-password"),
    pytest.param("cannot open C:/Users/alice/Documents/q3.xlsx", "alice", id="windows-forward-slashes"),
    pytest.param(
        "GET https://s3.amazonaws.com/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=fe5f80f77d5fa3beca038a2",
        "fe5f80f77d5fa3beca038a2",
        id="sigv4-query",
    ),
    pytest.param(
        "Authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
        "SignedHeaders=host, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
        "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
        id="sigv4-header",
    ),
    pytest.param("Authorization: Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b", "9944b091", id="token-scheme"),
    pytest.param("authorization=Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b", "9944b091", id="token-scheme-equals"),
    pytest.param("Authorization:token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b", "9944b091", id="token-scheme-glued"),
    pytest.param('{"Authorization": "Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"}', "9944b091", id="token-json"),
    pytest.param("token github_pat_11ABCDEFG0_abcdefghijklmnopqrstuvwxyz0123", "abcdefghijklmnop", id="github-pat"),
    pytest.param("gitlab said glpat-Xy12abcdefghijklmnop34", "Xy12abcdefghijklmnop34", id="gitlab"),
    pytest.param("maps key AIzaSyA-1234567890abcdefghijklmnopqrstu", "1234567890abcdefghij", id="google"),
    pytest.param("stripe rejected rk_live_51H8abcdefghijklmnopqrst", "51H8abcdefghijkl", id="stripe-restricted"),
    pytest.param(
        "key was -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x9\nq2w3e4r5\n-----END RSA PRIVATE KEY----- done",
        "MIIEpAIBAAKCAQEA7x9",
        id="pem",
    ),
    pytest.param("key was -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA", "b3BlbnNzaC1r", id="pem-cut"),
    pytest.param(
        "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=Eby8vdM02xNOcqFlq/UwJPLlmEtlCD==;EndpointSuffix=x",
        "Eby8vdM02xNOcqFlq",
        id="azure-account-key",
    ),
    pytest.param("gpg: passphrase=Hunter2Hunter2 rejected", "Hunter2Hunter2", id="passphrase"),
    pytest.param("webhook signing_key=abcd1234efgh5678 expired", "abcd1234efgh5678", id="signing-key"),
    # Shapes that passed before (issue 24, item 6).
    pytest.param(r"upstream said {\"password\":\"escaped-Pa55\"}", "escaped-Pa55", id="json-escaped"),
    pytest.param('ArgumentError: {:password => "ruby-s3cret"}', "ruby-s3cret", id="ruby-hash-rocket"),
    pytest.param("PDOException: ['password' => 'php-s3cret']", "php-s3cret", id="php-array"),
    pytest.param("SOAP fault: <password>xmlPass123</password>", "xmlPass123", id="xml-element"),
    pytest.param("invalid credentials <ApiKey>9f8e7d6c5b4a</ApiKey>", "9f8e7d6c5b4a", id="xml-api-key"),
    pytest.param("auth failed pass=opensesame42", "opensesame42", id="pass"),
    pytest.param("device login pw=Qwerty123 refused", "Qwerty123", id="pw"),
    pytest.param("GET https://maps.example.com/geocode?address=Paris&key=mapsKey12345", "mapsKey12345", id="url-key"),
    pytest.param("https://example.com/callback?code=4/0AX4XfWhAbCdEf&state=xyz", "4/0AX4XfWhAbCdEf", id="oauth-code"),
    pytest.param(
        "https://hooks.slack.com/services/T01ABCDEF12/B01ABCDEF34/abcdefghijklmnopqrstuvwx",
        "abcdefghijklmnopqrstuvwx",
        id="slack-webhook",
    ),
    pytest.param(
        "https://discord.com/api/webhooks/123456789012345678/" + "AbCd0123_-" * 7,
        "AbCd0123_-AbCd0123_-",
        id="discord-webhook",
    ),
    pytest.param("socket mode rejected xapp-1-A0123456789-1234567890123-abc123def456", "abc123def456", id="slack-xapp"),
    pytest.param(
        "alg none refused: eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJhZG1pbiJ9.",
        "eyJzdWIiOiJhZG1pbiJ9",
        id="jwt-unsigned",
    ),
    pytest.param(
        "fatal: https://deploy:pa/ss+w0rd@git.example.com/repo.git", "pa/ss+w0rd", id="url-password-with-slash"
    ),
    pytest.param(
        "token exchange failed: client_secret=abcdefghijklmnopqrstuv", "abcdefghijklmnopqrstuv", id="letters-only"
    ),
    pytest.param("command failed: deploy --password SuperSecret2 --env prod", "SuperSecret2", id="cli-flag"),
    pytest.param("Invalid API key: ak_live_9f8e7d6c5b4a", "ak_live_9f8e7d6c5b4a", id="api-key-in-two-words"),
    pytest.param("The password: hunter22 was rejected", "hunter22", id="credential-then-prose"),
]


@pytest.mark.parametrize(("text", "secret"), LEAKS)
def test_every_documented_secret_shape_is_redacted(text: str, secret: str) -> None:
    assert secret not in sanitize_text(text, limit=1000)


@pytest.mark.parametrize(("text", "secret"), LEAKS)
def test_the_leak_finder_flags_what_the_sanitiser_redacts_and_nothing_after(text: str, secret: str) -> None:
    assert find_leaks(text)
    assert find_leaks(sanitize_text(text, limit=1000)) == []


@given(texts_with_a_secret())
def test_the_leak_finder_clears_every_sanitised_secret(case: tuple[str, str]) -> None:
    text, _ = case
    assert "a secret" not in find_leaks(sanitize_text(text, limit=1000))


@pytest.mark.parametrize(
    "text",
    ["cannot read file:///home/alice/notes.txt", "cannot read file:///C:/Users/alice/notes.txt"],
)
def test_file_urls_are_paths(text: str) -> None:
    assert sanitize_text(text, limit=200) == "cannot read [path]"


@pytest.mark.parametrize(
    "address", ["10.20.30.40", "172.16.5.4", "192.168.1.2", "169.254.169.254", "100.64.0.7", "fd12:3456::1", "fe80::1"]
)
def test_internal_network_addresses_are_redacted(address: str) -> None:
    text = f"could not connect to db-7 ({address}); resend later"
    assert sanitize_text(text, limit=200) == "could not connect to db-7 ([internal address]); resend later"
    assert find_leaks(text) == [f"an internal address ({address})"]


# `st.text` leaves surrogates out of a mixed alphabet; a list of characters keeps them.
WITH_SURROGATES = st.lists(st.one_of(st.characters(), st.characters(categories=["Cs"]))).map("".join)


@given(WITH_SURROGATES, st.integers(1, 300))
def test_output_can_always_be_encoded_as_utf8(text: str, limit: int) -> None:
    sanitize_text(text, limit=limit).encode("utf-8")


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    assert sanitize_text("report-\udcff.csv is unreadable", limit=200) == "report-\ufffd.csv is unreadable"


HOSTILE_UNITS = [
    "password: x is ",
    "password: a b ",
    "<password>",
    "<password>a</",
    '\\"password\\":\\"',
    ":password => ",
    "--password ",
    "API key: ",
    "sk-a-",
    "sk-",
    "a://b:c/",
    "a://b:1/",
    "?key=",
    "v10.0.0.1 ",
    "GET /v1/a ",
    "/v1/a",
    "T00000000/B",
    "Bearer abc ",
    "a=",
    "a=a",
    "password=",
    "password: ",
    'password:"',
    "a://b:",
    "x://:@",
    "Bearer ",
    "-----BEGIN PRIVATE KEY-----",
    "C:/",
    "C:\\a b ",
    "/a",
    "\\\\a\\",
    "eyJ-",
    "eyJaaaaaaaaaaaa.",
    "1.1.",
    "fd00:",
    "file:",
    "authorization=Token ",
    'File "',
    "a:a:",
    '"a": ',
]


@pytest.mark.anyio
@pytest.mark.parametrize("unit", HOSTILE_UNITS)
async def test_scanning_hostile_text_does_not_hang(unit: str) -> None:
    # A hang guard, not a speed target: 400,000 characters of a quadratic case took minutes.
    text = unit * (400_000 // len(unit))
    with anyio.fail_after(30):
        await anyio.to_thread.run_sync(find_leaks, text, abandon_on_cancel=True)
        await anyio.to_thread.run_sync(functools.partial(sanitize_text, text, limit=len(text)), abandon_on_cancel=True)


# What the sanitiser must find and what it must leave alone, measured on two corpora of
# error texts (tests/secret_corpora/): secrets written the ways real errors carry them (recall), and
# ordinary error texts with ids, versions, routes, plans and prose (precision). The figures
# are in docs/wire-format.md; the few shapes still missed are listed there.
CORPORA = Path(__file__).parents[1] / "secret_corpora"
SECRETS = [json.loads(line) for line in (CORPORA / "secrets.jsonl").read_text().splitlines() if line.strip()]
ORDINARY = [line for line in (CORPORA / "ordinary_errors.txt").read_text().splitlines() if line.strip()]


def test_the_sanitiser_removes_at_least_94_percent_of_the_secret_corpus() -> None:
    missed = [case["text"] for case in SECRETS if case["secret"] in sanitize_text(case["text"], limit=1000)]
    assert len(SECRETS) >= 140
    assert 1 - len(missed) / len(SECRETS) >= 0.94, missed


def test_the_sanitiser_leaves_at_least_98_percent_of_ordinary_error_texts_unchanged() -> None:
    changed = [text for text in ORDINARY if sanitize_text(text, limit=1000) != " ".join(text.split())]
    assert len(ORDINARY) >= 200
    assert 1 - len(changed) / len(ORDINARY) >= 0.98, changed


def test_the_leak_finder_agrees_with_the_sanitiser_on_both_corpora() -> None:
    for case in SECRETS:
        redacted = case["secret"] not in sanitize_text(case["text"], limit=1000)
        assert bool(find_leaks(case["text"])) is redacted, case["text"]
    for text in ORDINARY:
        assert bool(find_leaks(text)) is (sanitize_text(text, limit=1000) != " ".join(text.split())), text


@pytest.mark.parametrize(
    "text",
    [
        # Words that share a name with a credential, and values that are not one (item 7).
        "The Basic subscription cannot export reports.",
        "api_token: must be 20+ characters; you sent 8",
        "Invalid token: it expired at 10:42 UTC; sign in again.",
        "SKU sk-2024-01-15-blue-widget is out of stock.",
        "Requires agent version 10.2.3.4 or later.",
        "GET /v1/orders/ord-123 returned 404 Not Found.",
        "Bearer instruments are not supported by this account.",
        "basic validation failed: quantity must be positive",
        '{"errors": {"password": "is too short (minimum is 8 characters)"}}',
        "api_key=${API_KEY} was not expanded; set the variable.",
        "secret: Rotation pending",
        "key=order-17 already exists",
    ],
)
def test_what_only_shares_a_name_with_a_credential_is_kept(text: str) -> None:
    assert sanitize_text(text, limit=1000) == text
    assert find_leaks(text) == []


def test_json_data_keeps_its_shape_with_every_string_sanitised_keys_included() -> None:
    data = {"note": "see /srv/app/x.py", "password=hunter2-Sup3r": [1, True, None, {"token": "Bearer abc123def456"}]}
    assert sanitize_json(data) == {
        "note": "see [path]",
        f"password={REDACTED}": [1, True, None, {"token": "Bearer [REDACTED]"}],
    }


def test_json_data_is_cut_past_eight_levels() -> None:
    nested: object = "deep"
    for _ in range(12):
        nested = [nested]
    assert "deep" not in str(sanitize_json(nested))


# --- what the agent already knows is kept ----------------------------------------------------


def test_a_path_the_call_carries_is_kept_whatever_its_depth_and_other_paths_are_not() -> None:
    keep = known_to_the_agent({"path": "/srv/data/no/such/file.txt", "mode": "r"})
    text = "ENOENT: no such file or directory, open '/srv/data/no/such/file.txt' (from /opt/app/lib/fs.js)"

    said = sanitize_text(text, limit=1000, keep=keep)

    assert "'/srv/data/no/such/file.txt'" in said
    assert "/opt/app/lib/fs.js" not in said
    assert sanitize_text(text, limit=1000) == sanitize_text(text, limit=1000, keep=known_to_the_agent({}))


def test_the_roots_a_server_announces_are_kept_with_the_paths_beneath_them() -> None:
    roots = roots_announced("list_allowed_directories", "Allowed directories:\n/srv/data\n/home/ada/notes")
    keep = known_to_the_agent({"path": "/etc/passwd"}, roots)
    text = "Access denied - path outside allowed directories: /etc/passwd not in /srv/data, /home/ada/notes"

    assert roots == ["/srv/data", "/home/ada/notes"]
    assert sanitize_text(text, limit=1000, keep=keep) == text
    assert sanitize_text("wrote /srv/data/a/b.txt, not /srv/other/c.txt", limit=1000, keep=keep) == (
        "wrote /srv/data/a/b.txt, not [path]"
    )
    assert roots_announced("read_file", "Allowed directories:\n/srv/data") == []


def test_a_path_that_only_begins_like_a_kept_one_is_still_redacted() -> None:
    keep = known_to_the_agent({"path": "/srv/data/a"})

    assert sanitize_text("open /srv/data/a/secret.key failed", limit=1000, keep=keep) == "open [path] failed"
    assert sanitize_text("open /srv/data/ab failed", limit=1000, keep=keep) == "open [path] failed"


@pytest.mark.parametrize(
    "arguments",
    [
        {"api_key": "/srv/keys/prod.pem"},  # a secret-named argument, whatever its value looks like
        {"path": "/tmp/ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8/x"},  # a value that holds a credential
    ],
)
def test_a_credential_the_agent_sent_is_never_echoed(arguments: dict[str, str]) -> None:
    (value,) = arguments.values()
    keep = known_to_the_agent(arguments)

    assert value not in sanitize_text(f"could not open {value}", limit=1000, keep=keep)


def test_the_corpus_figures_hold_when_the_agent_sent_every_secret_and_path_itself() -> None:
    # The worst case for keeping: the call carried each text's secret and every path in it.
    def kept(text: str, secret: str) -> str:
        paths = {match.group() for match in re.finditer(r"(?:[A-Za-z]:)?[/\\][^\s'\",;]+", text)}
        arguments = {"value": secret, **{f"path{index}": path for index, path in enumerate(paths)}}
        return sanitize_text(text, limit=1000, keep=known_to_the_agent(arguments))

    missed_before = [case for case in SECRETS if case["secret"] in sanitize_text(case["text"], limit=1000)]
    missed_now = [case for case in SECRETS if case["secret"] in kept(case["text"], case["secret"])]
    changed_before = [text for text in ORDINARY if sanitize_text(text, limit=1000) != " ".join(text.split())]
    changed_now = [text for text in ORDINARY if kept(text, "") != " ".join(text.split())]

    assert missed_now == missed_before
    assert len(changed_now) <= len(changed_before)


@pytest.mark.anyio
@pytest.mark.parametrize("unit", ["/srv/data/a", "/srv/data", "/srv/data/", "x/srv/data/a/", "/srv/data/a."])
async def test_keeping_known_paths_in_hostile_text_does_not_hang(unit: str) -> None:
    keep = known_to_the_agent({"path": "/srv/data/a"}, ["/srv/data"])
    text = unit * (400_000 // len(unit))
    with anyio.fail_after(30):
        await anyio.to_thread.run_sync(
            functools.partial(sanitize_text, text, limit=len(text), keep=keep), abandon_on_cancel=True
        )


# -- URLs in log lines (`redact_url`, `redact_urls`) --


@pytest.mark.parametrize(
    ("url", "logged"),
    [
        ("https://bot:s3cret@api.example.com/mcp", "https://[REDACTED]@api.example.com/mcp"),
        ("https://ghp_token@github.example/mcp", "https://[REDACTED]@github.example/mcp"),
        ("http://127.0.0.1:8000/mcp?api_key=k3y&x", "http://127.0.0.1:8000/mcp?api_key=[REDACTED]&[REDACTED]"),
        ("postgresql://app:p@ss%zz@db:5432/keys", "postgresql://[REDACTED]@db:5432/keys"),
        ("app:s3cret@db:5432/keys", "[REDACTED]@db:5432/keys"),
        ("//app:s3cret@db/keys?password=x", "//[REDACTED]@db/keys?password=[REDACTED]"),
        ("https://idp.example/cb#access_token=t0k", "https://idp.example/cb#[REDACTED]"),
        ("redis://cache:6379/0", "redis://cache:6379/0"),
    ],
)
def test_a_url_in_a_log_line_keeps_where_it_points_and_loses_its_credentials(url: str, logged: str) -> None:
    assert redact_url(url) == logged


@given(
    secret=st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zs")), min_size=6).filter(
        lambda s: not set(s) & set("/?#@&= \"'<>`")
    )
)
def test_no_credential_of_a_url_survives_its_redaction_in_prose(secret: str) -> None:
    def line_with(credential: str) -> str:
        return (
            f"The upstream server https://user:{credential}@example.com/mcp?token={credential} and "
            f"postgresql://{credential}@example.com/db are gone."
        )

    # A "secret" the line says anyway ("postgr", "[REDACTED]") is not a credential that survived.
    assume(secret not in redact_urls(line_with("s3cret")))
    assert secret not in redact_urls(line_with(secret))
    assert "example.com/mcp" in redact_urls(line_with(secret))
