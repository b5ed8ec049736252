"""The proxy's rules file: validated whole at start-up, matched in a predictable order."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_errors import ErrorCategory
from mcp_errors.proxy import RulesError, load_rules
from mcp_errors.proxy._classify import UpstreamClassifier, UpstreamFailure
from mcp_errors.proxy._rules import parse_rules

DOCS_RULES = Path(__file__).parents[1] / "docs" / "proxy-rules"


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

    def code(**failure: object) -> str | None:
        hit = rules.first_match(
            "t", code=failure.get("code"), text=str(failure.get("text", "")), structured=failure.get("structured")
        )  # type: ignore[arg-type]
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
]


@pytest.mark.parametrize(("file", "tool", "text", "code"), SHIPPED, ids=[case[3] + "-" + case[1] for case in SHIPPED])
def test_every_shipped_rule_matches_what_its_server_says(file: str, tool: str, text: str, code: str) -> None:
    rules = load_rules(DOCS_RULES / file)
    details = UpstreamClassifier(rules).classify(UpstreamFailure(tool=tool, text=text), error_id="e")
    assert details is not None
    assert details.code == code
    assert "/srv/data" not in details.description
    assert "/tmp" not in details.description


def test_every_shipped_rule_is_exercised() -> None:
    exercised = {(file, code) for file, _, _, code in SHIPPED}
    for path in DOCS_RULES.glob("*.toml"):
        for rule in load_rules(path).rules:
            assert (path.name, rule.code) in exercised, rule.label
