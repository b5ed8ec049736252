"""The proxy's rules file: validated whole at start-up, matched in a predictable order."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_errors import ErrorCategory
from mcp_errors.proxy import RulesError, load_rules
from mcp_errors.proxy._classify import UpstreamClassifier, UpstreamFailure
from mcp_errors.proxy._rules import parse_rules

DOCS_RULES = Path(__file__).parents[2] / "docs" / "proxy-rules"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ('[[rule]]\nname = "x"\nmatch = { text = "(" }\ncategory = "transient"', "rule 1 (x): match.text", "regular"),
        ('[[rule]]\nmatch = { txt = "x" }\ncategory = "business"', "rule 1: match.txt", "unknown key"),
        ('[[rule]]\nmatch = { text = "x" }\ncategory = "temporary"', "rule 1: category", "transient"),
        ('[[rule]]\nmatch = { text = "x" }\ncategory = "business"\ncode = "lower"', "rule 1: code", "pattern"),
        ('[[rule]]\nmatch = {}\ncategory = "business"', "rule 1: match", "at least one"),
        ('[[rule]]\nmatch = { equals = 3 }\ncategory = "business"', "rule 1: match", "need a field"),
        (
            '[[rule]]\nmatch = { text = "x" }\ncategory = "business"\nretry_after = 3',
            "rule 1: retry_after",
            "transient",
        ),
        (
            '[[rule]]\nmatch = { text = "x" }\ncategory = "business"\ndescription = "{nope}"',
            "rule 1: description",
            "{nope}",
        ),
        ('[[rule]]\nmatch = { text = "x" }\ncategory = "business"\ndescription = "{"', "rule 1: description", "brace"),
        ('[[rule]]\nmatch = { text = "x" }', "rule 1: category", "required"),
        ("rules = []", "the file: rules", "unknown key"),
        ("[[rule]\n", "not valid TOML", ""),
    ],
)
def test_a_wrong_rules_file_names_the_file_the_rule_and_the_problem(
    tmp_path: Path, text: str, where: str, problem: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(RulesError) as raised:
        load_rules(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: ")
    assert where in message
    assert problem in message


def test_a_missing_rules_file_is_a_rules_error(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="cannot read"):
        load_rules(tmp_path / "absent.toml")


def test_a_tools_own_rules_come_before_the_rules_for_every_tool_each_in_file_order() -> None:
    rules = parse_rules(
        {
            "rule": [
                {"name": "global", "match": {"text": "boom"}, "category": "business"},
                {"name": "first own", "tool": "a", "match": {"text": "boom"}, "category": "validation"},
                {"name": "second own", "tool": ["a", "b"], "match": {"text": "boom"}, "category": "permission"},
            ]
        },
        source="test",
    )
    assert [rules.first_match(tool, code=None, text="boom", structured=None).rule.name for tool in "abc"] == [  # type: ignore[union-attr]
        "first own",
        "second own",
        "global",
    ]


def test_all_conditions_of_a_rule_must_hold_and_booleans_match_only_booleans() -> None:
    rules = parse_rules(
        {
            "rule": [
                {"match": {"code": [-32001, -32002], "text": "quota"}, "category": "transient"},
                {"match": {"field": "error.retry", "equals": True}, "category": "transient", "code": "RETRY"},
                {"match": {"field": "items.0.kind", "pattern": "^lock"}, "category": "transient", "code": "LOCKED"},
            ]
        },
        source="test",
    )

    def code(**failure: Any) -> str | None:
        hit = rules.first_match(
            "t", code=failure.get("code"), text=str(failure.get("text", "")), structured=failure.get("structured")
        )
        return None if hit is None else hit.rule.code or "matched"

    assert code(code=-32002, text="quota exceeded") == "matched"
    assert code(code=-32002, text="other") is None
    assert code(code=-32603, text="quota") is None
    assert code(structured={"error": {"retry": True}}) == "RETRY"
    assert code(structured={"error": {"retry": 1}}) is None
    assert code(structured={"items": [{"kind": "locked row"}]}) == "LOCKED"
    assert code(structured={"items": []}) is None


def test_a_rules_description_fills_its_placeholders_with_sanitised_text() -> None:
    rules = parse_rules(
        {
            "rule": [
                {
                    "match": {"text": "no station for (?P<city>\\S+)"},
                    "category": "validation",
                    "code": "NO_STATION",
                    "description": "{tool}: there is no station for {city}; pick another city.",
                    "retry_after": None,
                }
            ]
        },
        source="test",
    )
    failure = UpstreamFailure(tool="forecast", text="no station for /srv/secret/path token=abc123def456")
    details = UpstreamClassifier(rules).classify(failure, error_id="e")
    assert details is not None
    assert (details.category, details.code) == (ErrorCategory.VALIDATION, "NO_STATION")
    assert details.description.startswith("forecast: there is no station for [path]; pick another city.")
    assert "/srv/secret" not in details.description
    assert "abc123def456" not in details.description


def test_a_transient_rule_takes_its_wait_from_a_named_group() -> None:
    rules = parse_rules(
        {"rule": [{"match": {"text": "slow down for (?P<s>\\d+)s"}, "category": "transient", "retry_after": "{s}"}]},
        source="test",
    )
    details = UpstreamClassifier(rules).classify(
        UpstreamFailure(tool="t", text="please slow down for 12s"), error_id="e"
    )
    assert details is not None
    assert details.retry_after_seconds == 12


@given(st.text(max_size=200))
def test_matching_any_text_never_raises(text: str) -> None:
    for path in DOCS_RULES.glob("*.toml"):
        load_rules(path).first_match("git_status", code=None, text=text, structured={"x": text})


# Texts the real servers send (captured through the proxy), one per shipped rule.
SHIPPED = [
    ("mcp-server-git.toml", "git_status", "Error executing tool git_status: /tmp/no-such-repo", "NOT_A_GIT_REPOSITORY"),
    (
        "mcp-server-git.toml",
        "git_show",
        "Error executing tool git_show: Ref 'deadbeef' did not resolve to an object",
        "UNKNOWN_REVISION",
    ),
    (
        "mcp-server-git.toml",
        "git_log",
        "Error executing tool git_log: Reference at 'refs/heads/main' does not exist",
        "NO_COMMITS",
    ),
    (
        "mcp-server-git.toml",
        "git_create_branch",
        "Error executing tool git_create_branch: a branch named 'x' already exists",
        "BRANCH_EXISTS",
    ),
    (
        "server-filesystem.toml",
        "read_text_file",
        "Access denied - path outside allowed directories: /etc/passwd not in /srv/data",
        "PATH_NOT_ALLOWED",
    ),
    (
        "server-filesystem.toml",
        "read_text_file",
        "ENOENT: no such file or directory, open '/srv/data/missing.txt'",
        "PATH_NOT_FOUND",
    ),
    ("server-filesystem.toml", "read_text_file", "EISDIR: illegal operation on a directory, read", "IS_A_DIRECTORY"),
    (
        "server-filesystem.toml",
        "list_directory",
        "ENOTDIR: not a directory, scandir '/srv/data/a.txt'",
        "NOT_A_DIRECTORY",
    ),
    (
        "server-filesystem.toml",
        "create_directory",
        "EEXIST: file already exists, mkdir '/srv/data/a.txt'",
        "ALREADY_EXISTS",
    ),
    ("server-filesystem.toml", "move_file", "Destination already exists: /srv/data/sub", "ALREADY_EXISTS"),
    ("server-filesystem.toml", "edit_file", "Could not find exact match for edit:\nzzz", "EDIT_TEXT_NOT_FOUND"),
    (
        "server-filesystem.toml",
        "write_file",
        "EACCES: permission denied, open '/srv/data/locked.txt'",
        "FILE_PERMISSION_DENIED",
    ),
    # mcp-server-sqlite answers its failures as successes: these are matched as successes.
    ("mcp-server-sqlite.toml", "write_query", "Database error: database is locked", "DATABASE_BUSY"),
    ("mcp-server-sqlite.toml", "read_query", 'Database error: near "FORM": syntax error', "SQL_SYNTAX_ERROR"),
    ("mcp-server-sqlite.toml", "read_query", "Database error: incomplete input", "SQL_SYNTAX_ERROR"),
    ("mcp-server-sqlite.toml", "read_query", "Database error: no such table: orders", "UNKNOWN_TABLE"),
    ("mcp-server-sqlite.toml", "read_query", "Database error: no such column: nme", "UNKNOWN_COLUMN"),
    (
        "mcp-server-sqlite.toml",
        "write_query",
        "Database error: NOT NULL constraint failed: users.email",
        "INVALID_VALUE",
    ),
    ("mcp-server-sqlite.toml", "write_query", "Database error: CHECK constraint failed: balance >= 0", "CHECK_FAILED"),
    (
        "mcp-server-sqlite.toml",
        "write_query",
        "Database error: UNIQUE constraint failed: users.email",
        "DUPLICATE_VALUE",
    ),
    ("mcp-server-sqlite.toml", "create_table", "Database error: table users already exists", "ALREADY_EXISTS"),
    (
        "mcp-server-sqlite.toml",
        "write_query",
        "Database error: attempt to write a readonly database",
        "DATABASE_READ_ONLY",
    ),
    ("mcp-server-sqlite.toml", "read_query", "Database error: file is not a database", "DATABASE_FILE_UNUSABLE"),
    (
        "mcp-server-sqlite.toml",
        "read_query",
        "Error: Only SELECT queries are allowed for read_query",
        "WRONG_TOOL",
    ),
    ("mcp-server-sqlite.toml", "write_query", "Database error: too many SQL variables", "DATABASE_ERROR"),
    ("mcp-server-sqlite.toml", "write_query", "Error: Missing arguments", "TOOL_ERROR"),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Refused to fetch http://10.0.0.7/robots.txt: 10.0.0.7 resolves to 10.0.0.7, "
        "which is not a public address. Start the server with --allow-private-ips to allow private, loopback and "
        "link-local addresses.",
        "PRIVATE_ADDRESS_REFUSED",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: When fetching robots.txt (https://example.com/robots.txt), received status 403 "
        "so assuming that autonomous fetching is not allowed, the user can try manually fetching by using the fetch "
        "prompt",
        "ROBOTS_DISALLOWED",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to set up the HTTP client, check the proxy configuration (--proxy-url or "
        "the HTTP_PROXY, HTTPS_PROXY and ALL_PROXY environment variables): Unknown scheme for proxy URL "
        "URL('ftp://127.0.0.1:9')",
        "SERVER_MISCONFIGURED",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch https://example.com/a: ReadTimeout('')",
        "UPSTREAM_TIMEOUT",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch http://docs.example.invalid/guide: "
        "ConnectError('[Errno -3] Temporary failure in name resolution')",
        "DNS_UNAVAILABLE",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch http://docs.example.invalid/guide: "
        "ConnectError('[Errno -2] Name or service not known')",
        "UNKNOWN_HOST",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch robots.txt https://example.com/robots.txt due to a connection "
        "issue",
        "UPSTREAM_UNREACHABLE",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch https://example.com/a - status code 429",
        "UPSTREAM_RATE_LIMITED",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch https://example.com/a - status code 503",
        "UPSTREAM_UNAVAILABLE",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch https://example.com/a - status code 504",
        "UPSTREAM_BAD_GATEWAY",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch https://example.com/a - status code 401",
        "UPSTREAM_FORBIDDEN",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch https://example.com/a - status code 404",
        "PAGE_NOT_FOUND",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch https://example.com/a - status code 410",
        "UPSTREAM_REFUSED",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: Failed to fetch https://example.com/a - status code 500",
        "UPSTREAM_ERROR",
    ),
    (
        "mcp-server-fetch.toml",
        "fetch",
        "Error executing tool fetch: 1 validation error for fetchArguments\nurl\n  Input should be a valid URL, "
        "relative URL without a base [type=url_parsing, input_value='not a url', input_type=str]",
        "INVALID_ARGUMENTS",
    ),
]

ANSWERED_AS_SUCCESSES = {"mcp-server-sqlite.toml"}
"""Packs for servers that answer their failures as successes: their rules match successes."""


@pytest.mark.parametrize(("file", "tool", "text", "code"), SHIPPED, ids=[case[3] + "-" + case[1] for case in SHIPPED])
def test_every_shipped_rule_matches_what_its_server_says(file: str, tool: str, text: str, code: str) -> None:
    classifier = UpstreamClassifier(load_rules(DOCS_RULES / file))
    failure = UpstreamFailure(tool=tool, text=text)
    if file in ANSWERED_AS_SUCCESSES:
        details = classifier.classify_success(failure, error_id="e", judge_words=False)
    else:
        details = classifier.classify(failure, error_id="e")
    assert details is not None
    assert details.code == code
    assert "/srv/data" not in details.description
    assert "/tmp" not in details.description


def test_every_shipped_rule_is_exercised() -> None:
    exercised = {(file, code) for file, _, _, code in SHIPPED}
    for path in DOCS_RULES.glob("*.toml"):
        for rule in load_rules(path).rules:
            assert (path.name, rule.code) in exercised, rule.label


CORPUS = Path(__file__).parents[1] / "corpus"
PACK_SERVERS = {"mcp-server-sqlite.toml": "mcp-server-sqlite==", "mcp-server-fetch.toml": "mcp-server-fetch=="}


def corpus_entries(kind: str, file: str) -> list[dict[str, Any]]:
    """The corpus's `failure` or `success` entries of the server a pack is for."""
    name = {"failure": "failures.toml", "success": "successes.toml"}[kind]
    entries = tomllib.loads((CORPUS / name).read_text(encoding="utf-8"))[kind]
    return [entry for entry in entries if entry["source"].startswith(PACK_SERVERS[file])]


def tool_of(entry: dict[str, Any]) -> str:
    found = re.search(r"\btool (\w+)", entry["source"])
    assert found is not None, entry["source"]
    return found.group(1)


@pytest.mark.parametrize("file", sorted(PACK_SERVERS))
def test_a_pack_gives_every_failure_of_its_server_in_the_corpus_its_category_exactly(file: str) -> None:
    classifier = UpstreamClassifier(load_rules(DOCS_RULES / file))
    entries = corpus_entries("failure", file)
    assert len(entries) >= 15
    for entry in entries:
        failure = UpstreamFailure(tool=tool_of(entry), text=entry["text"], read_only=tool_of(entry) == "fetch")
        if entry["shape"] == "disguised":
            details = classifier.classify_success(failure, error_id="e", judge_words=False)
        else:
            details = classifier.classify(failure, error_id="e")
        assert details is not None, entry["text"]
        assert (details.category.value, details.category.is_retryable) == (entry["category"], entry["retryable"]), (
            entry["text"]
        )
        # A rule's judgment is the user's, not inferred; only the SDK's own argument check is left to the chain.
        assert details.inferred is entry["text"].startswith("Input validation error"), entry["text"]


@pytest.mark.parametrize("file", sorted(PACK_SERVERS))
def test_a_pack_leaves_every_true_success_of_its_server_in_the_corpus_a_success(file: str) -> None:
    classifier = UpstreamClassifier(load_rules(DOCS_RULES / file))
    entries = corpus_entries("success", file)
    assert entries
    for entry in entries:
        failure = UpstreamFailure(tool=tool_of(entry), text=entry["text"])
        assert classifier.classify_success(failure, error_id="e", judge_words=False) is None, entry["text"]
