"""Valid values from inputSchemas: what the schema says before anything is made up; paths
and waits chosen for the server; every call the schema accepts."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mcp_errors.check._probes import invalid_probes
from mcp_errors.check._values import SCRATCH_NAME, ArgumentHints, valid_arguments, waits_seconds

SHIPMENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tracking": {"type": "string", "pattern": r"^TR-\d{6}$"},
        "boxes": {"type": "integer", "minimum": 2, "maximum": 9},
        "weight": {"type": "number", "exclusiveMinimum": 0.5},
        "ship_on": {"type": "string", "format": "date"},
    },
    "required": ["tracking", "boxes", "weight", "ship_on"],
}


def test_valid_arguments_satisfy_patterns_formats_and_ranges() -> None:
    arguments = valid_arguments(SHIPMENT_SCHEMA)

    assert arguments is not None
    assert Draft202012Validator(SHIPMENT_SCHEMA).is_valid(arguments)
    assert re.fullmatch(r"TR-\d{6}", arguments["tracking"])
    assert arguments["ship_on"] == "2024-01-31"


def test_examples_in_the_schema_win_over_generated_values() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "examples": ["Hanoi"]}},
        "required": ["city"],
        "examples": [{"city": "Da Nang"}],
    }

    assert valid_arguments(schema) == {"city": "Da Nang"}


@pytest.mark.parametrize(
    "pattern",
    [
        r"^[A-Z]{3}-\d{2,4}$",
        r"^(?:foo|bar)_[a-z]+$",
        r"^C-\d{4}$",
        r"[^@\s]+@[^@\s]+\.[a-z]{2,}",
        r"^\w+\s\w+$",
        r"^[^@]+@[^@]+$",  # a negated single character compiles to its own node
        r"^[^A-Za-z]+$",
        r"^#[^a-z\s]\d{4}$",
    ],
)
def test_valid_strings_are_generated_for_common_patterns(pattern: str) -> None:
    schema = {"type": "object", "properties": {"value": {"type": "string", "pattern": pattern}}, "required": ["value"]}

    arguments = valid_arguments(schema)

    assert arguments is not None
    assert re.search(pattern, arguments["value"])


_simple_property = st.one_of(
    st.builds(
        lambda lo, span: {"type": "integer", "minimum": lo, "maximum": lo + span},
        st.integers(-50, 50),
        st.integers(0, 20),
    ),
    st.builds(
        lambda lo, span: {"type": "string", "minLength": lo, "maxLength": lo + span},
        st.integers(0, 5),
        st.integers(0, 5),
    ),
    st.builds(
        lambda values: {"enum": values}, st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=4, unique=True)
    ),
    st.just({"type": "boolean"}),
    st.just({"type": "number", "exclusiveMinimum": 0}),
)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.from_regex(r"[a-z]{1,8}", fullmatch=True), _simple_property, min_size=1, max_size=5),
    st.data(),
)
def test_generated_schemas_give_a_valid_call_and_only_rejected_probes(
    properties: dict[str, Any], data: st.DataObject
) -> None:
    required = data.draw(st.lists(st.sampled_from(sorted(properties)), unique=True))
    schema = {"type": "object", "properties": properties, "required": required}
    validator = Draft202012Validator(schema)

    arguments = valid_arguments(schema)

    assert arguments is not None
    assert validator.is_valid(arguments)
    for probe in invalid_probes(schema, limit=100):
        assert not validator.is_valid(probe.arguments), probe


def one(prop: dict[str, Any], name: str = "value", hints: ArgumentHints | None = None) -> Any:
    """The generated value of one required property."""
    arguments = valid_arguments({"type": "object", "properties": {name: prop}, "required": [name]}, hints)
    assert arguments is not None
    return arguments[name]


@pytest.mark.parametrize(
    ("name", "prop", "expected"),
    [
        # An example quoted in the description (mcp-server-time's schema).
        (
            "timezone",
            {"type": "string", "description": "IANA timezone name (e.g., 'America/New_York')."},
            "America/New_York",
        ),
        ("time", {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"}, "12:00"),
        ("branch_type", {"type": "string", "description": "List local branches ('local') or all ('all')."}, "local"),
        ("source_timezone", {"type": "string"}, "UTC"),
        ("customer_email", {"type": "string"}, "someone@example.com"),
        ("link", {"type": "string", "format": "uri"}, "https://example.com/"),
        ("when", {"type": "string", "format": "date"}, "2024-01-31"),
    ],
)
def test_a_valid_value_comes_from_what_the_schema_says_before_anything_is_made_up(
    name: str, prop: dict[str, Any], expected: str
) -> None:
    assert one(prop, name) == expected


def test_a_suggested_value_that_breaks_the_schema_gives_way() -> None:
    prop = {"type": "string", "pattern": r"^[A-Z]{3}$", "description": "e.g. 'euro'"}

    assert one(prop, "currency") == "EUR"  # the name's value; the description's breaks the pattern
    assert one(prop, "code") == "AAA"  # generated from the pattern


def test_an_enum_value_that_asks_for_a_failure_is_not_the_valid_call() -> None:
    assert one({"type": "string", "enum": ["error", "success", "debug"]}, "messageType") == "success"
    assert one({"type": "string", "enum": ["error"]}, "messageType") == "error"


def test_a_wait_stays_far_below_the_call_timeout_even_when_its_default_is_long() -> None:
    """server-everything's `trigger-long-running-operation`: `duration` defaults to 10 s."""
    schema = {
        "type": "object",
        "properties": {
            "duration": {"type": "number", "default": 10, "description": "Duration of the operation in seconds"},
            "steps": {"type": "number", "default": 5},
        },
    }

    arguments = valid_arguments(schema)

    assert arguments is not None
    assert waits_seconds(schema, arguments) <= 1
    assert "steps" not in arguments  # only an optional wait is sent explicitly


@pytest.mark.parametrize(
    ("prop", "name", "seconds"),
    [
        ({"type": "integer", "minimum": 500}, "delay_ms", 0.5),
        ({"type": "integer", "minimum": 5, "maximum": 60}, "timeout", 5),
        ({"type": "integer"}, "sleep_seconds", 1),
    ],
)
def test_a_wait_respects_the_schemas_own_bounds(prop: dict[str, Any], name: str, seconds: float) -> None:
    schema = {"type": "object", "properties": {name: prop}, "required": [name]}

    arguments = valid_arguments(schema)

    assert arguments is not None
    assert waits_seconds(schema, arguments) == seconds


def test_a_path_names_a_known_root_for_a_tool_that_only_reads() -> None:
    hints = ArgumentHints(roots=("/srv/notes",), read_only=True)

    assert one({"type": "string"}, "path", hints) == "/srv/notes"
    assert one({"type": "array", "items": {"type": "string"}}, "paths", hints) == ["/srv/notes"]


def test_a_path_for_a_tool_that_may_write_is_a_new_place_named_after_the_checker() -> None:
    assert one({"type": "string"}, "path", ArgumentHints(roots=("/srv/notes",))) == f"/srv/notes/{SCRATCH_NAME}"
    assert one({"type": "string"}, "repo_path", ArgumentHints()) == SCRATCH_NAME
    assert one({"type": "string"}, "path", ArgumentHints(read_only=True)) == "."
