"""Probes derived from inputSchemas: each breaks exactly what it says, and valid calls are valid."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from mcp_errors.check._probes import UNKNOWN_FIELD, invalid_probes, valid_arguments

ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": r"^#\d{5}$"},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 10},
        "unit": {"enum": ["box", "pallet"]},
        "note": {"type": "string", "minLength": 2, "maxLength": 20},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "tags": {"type": "array", "items": {"type": "string"}},
        "when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}], "default": None},
    },
    "required": ["order_id", "quantity", "unit", "note", "ratio"],
    "additionalProperties": False,
}


def test_every_probe_is_rejected_by_the_schema_and_breaks_one_named_field() -> None:
    validator = Draft202012Validator(ORDER_SCHEMA)
    probes = invalid_probes(ORDER_SCHEMA, limit=100)

    assert probes
    for probe in probes:
        errors = list(validator.iter_errors(probe.arguments))
        assert errors, probe
        assert len(probe.fields) == 1
    kinds = {probe.kind for probe in probes}
    assert kinds == {"missing-required", "wrong-type", "enum", "pattern", "range", "length", "unknown-field"}


def test_range_probes_cover_each_bound() -> None:
    probes = [p for p in invalid_probes(ORDER_SCHEMA, limit=100) if p.kind == "range"]

    assert {(p.fields[0], p.arguments[p.fields[0]]) for p in probes} == {
        ("quantity", 0),
        ("quantity", 11),
        ("ratio", 0),
        ("ratio", 1),
    }


def test_an_oversized_string_probe_exceeds_max_length() -> None:
    probes = [p for p in invalid_probes(ORDER_SCHEMA, limit=100) if p.kind == "length"]

    assert sorted(len(p.arguments["note"]) for p in probes) == [1, 21]


def test_the_unknown_field_probe_is_sent_only_when_the_schema_forbids_extra_fields() -> None:
    open_schema = {**ORDER_SCHEMA, "additionalProperties": True}

    assert any(UNKNOWN_FIELD in p.arguments for p in invalid_probes(ORDER_SCHEMA, limit=100))
    assert not any(UNKNOWN_FIELD in p.arguments for p in invalid_probes(open_schema, limit=100))


def test_the_limit_keeps_every_kind_of_probe() -> None:
    probes = invalid_probes(ORDER_SCHEMA, limit=7)

    assert len(probes) == 7
    assert len({p.kind for p in probes}) == 7


def test_valid_arguments_satisfy_patterns_formats_and_ranges() -> None:
    arguments = valid_arguments(ORDER_SCHEMA)

    assert arguments is not None
    assert Draft202012Validator(ORDER_SCHEMA).is_valid(arguments)
    assert re.fullmatch(r"#\d{5}", arguments["order_id"])


def test_examples_in_the_schema_win_over_generated_values() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string", "examples": ["Hanoi"]}},
        "required": ["city"],
        "examples": [{"city": "Da Nang"}],
    }

    assert valid_arguments(schema) == {"city": "Da Nang"}


def test_local_refs_are_followed() -> None:
    schema = {
        "type": "object",
        "$defs": {"Unit": {"enum": ["box", "pallet"]}},
        "properties": {"unit": {"$ref": "#/$defs/Unit"}},
        "required": ["unit"],
    }

    assert valid_arguments(schema) == {"unit": "box"}
    assert {p.kind for p in invalid_probes(schema)} == {"missing-required", "enum"}


def test_a_schema_without_arguments_gets_no_invalid_probes() -> None:
    assert invalid_probes({"type": "object", "properties": {}}) == []


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
