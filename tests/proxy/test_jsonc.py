"""Reading JSON with comments and the spans of its values, for edits in place."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_errors.proxy._jsonc import MAX_DEPTH, Edit, JsoncError, apply_edits, parse_jsonc

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES, st.sampled_from([None, 2, "\t"]))
def test_any_json_document_reads_as_json_loads_reads_it(value: object, indent: int | str | None) -> None:
    text = json.dumps(value, indent=indent)
    assert parse_jsonc(text).value == json.loads(text)


def test_comments_and_trailing_commas_are_read_as_vs_code_allows() -> None:
    text = '{\n  // a line comment\n  "a": [1, 2,], /* a block\n comment */ "b": {"c": "d",},\n}\n'
    assert parse_jsonc(text).value == {"a": [1, 2], "b": {"c": "d"}}


def test_each_value_knows_its_span_so_an_edit_touches_nothing_else() -> None:
    text = '{ "command": "uvx" , // keep me\n "args": ["x"] }'
    root = parse_jsonc(text)
    command = root.member("command")
    assert command is not None
    assert text[command.value.start : command.value.end] == '"uvx"'
    edited = apply_edits(text, [Edit(command.value.start, command.value.end, '"uv"')])
    assert edited == '{ "command": "uv" , // keep me\n "args": ["x"] }'


def test_escaped_strings_keep_their_whole_span() -> None:
    text = '{"k": "a \\"quoted\\" \\u00e9 word", "n": 1}'
    member = parse_jsonc(text).member("k")
    assert member is not None
    assert member.value.value == 'a "quoted" é word'
    assert text[member.value.end :] == ', "n": 1}'


@pytest.mark.parametrize(
    "text",
    ['{"a": }', '{"a" 1}', "{'a': 1}", '{"a": 1} x', '{"a": /* open', "[1 2]", '"\\x"', ""],
)
def test_text_that_is_not_json_is_refused_with_its_line_and_column(text: str) -> None:
    with pytest.raises(JsoncError, match=r"line \d+, column \d+|end of file|open"):
        parse_jsonc(text)


def test_nesting_is_bounded() -> None:
    with pytest.raises(JsoncError, match="nesting"):
        parse_jsonc("[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2))


def test_overlapping_edits_are_refused() -> None:
    with pytest.raises(ValueError, match="overlapping"):
        apply_edits("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])
