"""`--args` files: TOML or JSON, per tool a valid and an empty-result call, and roots; clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_errors.check import CallArguments, ToolArguments, load_call_arguments

TOML = """
roots = ["/srv/notes"]

[tools.search_orders]
valid = { customer = "ada@example.com" }
empty = { customer = "nobody@example.com" }

[tools.get-sum]
valid = { a = 1, b = 2 }
"""


def test_a_toml_file_gives_the_calls_and_roots(tmp_path: Path) -> None:
    path = tmp_path / "calls.toml"
    path.write_text(TOML, encoding="utf-8")

    assert load_call_arguments(path) == CallArguments(
        tools={
            "search_orders": ToolArguments(
                valid={"customer": "ada@example.com"}, empty={"customer": "nobody@example.com"}
            ),
            "get-sum": ToolArguments(valid={"a": 1, "b": 2}),
        },
        roots=("/srv/notes",),
    )


def test_a_json_file_says_the_same(tmp_path: Path) -> None:
    toml_path = tmp_path / "calls.toml"
    toml_path.write_text(TOML, encoding="utf-8")
    json_path = tmp_path / "calls.json"
    document = {
        "roots": ["/srv/notes"],
        "tools": {
            "search_orders": {"valid": {"customer": "ada@example.com"}, "empty": {"customer": "nobody@example.com"}},
            "get-sum": {"valid": {"a": 1, "b": 2}},
        },
    }
    json_path.write_text(json.dumps(document), encoding="utf-8")

    assert load_call_arguments(json_path) == load_call_arguments(toml_path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[tools.x]\nvalid = 3\n", "tools.x.valid must be a table"),
        ("[tools.x]\nvalids = {}\n", "unknown key"),
        ("tool = {}\n", "unknown key"),
        ("roots = '/srv'\n", "'roots' must be a list"),
        ("tools = 3\n", "'tools' must map"),
        ("[tools.x\n", "not valid TOML"),
    ],
)
def test_a_malformed_file_is_refused_with_where_it_is_wrong(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "calls.toml"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(ValueError, match=problem):
        load_call_arguments(path)


def test_json_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "calls.json"
    path.write_text("[1, 2]", encoding="utf-8")

    with pytest.raises(ValueError, match="must be a table"):
        load_call_arguments(path)
