"""Invalid-argument probes derived from inputSchemas: each breaks exactly what it says."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcp_errors.check._patterns import CutShortError
from mcp_errors.check._probes import UNKNOWN_FIELD, invalid_probes
from mcp_errors.check._values import valid_arguments

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


def test_invalid_probes_start_from_given_arguments_when_the_schema_accepts_them() -> None:
    base = {**valid_arguments(ORDER_SCHEMA), "order_id": "#54321"}  # type: ignore[dict-item]

    probes = invalid_probes(ORDER_SCHEMA, limit=100, base=base)

    assert all(p.arguments.get("order_id") == "#54321" for p in probes if "order_id" not in p.fields)


def test_invalid_probes_ignore_given_arguments_the_schema_rejects() -> None:
    probes = invalid_probes(ORDER_SCHEMA, limit=100, base={"order_id": "not an id"})

    assert all(Draft202012Validator(ORDER_SCHEMA).iter_errors(p.arguments) for p in probes)
    assert all(p.arguments.get("order_id") != "not an id" for p in probes)


def test_a_pattern_that_backtracks_on_a_probe_cuts_the_probes_short_instead_of_hanging() -> None:
    schema = {
        "type": "object",
        "properties": {"code": {"type": "string", "pattern": "^!invalid(!|!)+Z$", "minLength": 40}},
    }

    with pytest.raises(CutShortError, match="took over"):
        invalid_probes(schema)


def test_the_pattern_that_made_the_checker_overrun_now_gives_probes() -> None:
    schema = {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": "^([!a-z]+)+Z$", "minLength": 30},
            "name": {"type": "string"},
        },
        "required": ["name"],
    }

    probes = invalid_probes(schema, limit=100)

    assert "pattern" in {p.kind for p in probes}


def test_a_probe_is_named_first_in_findings() -> None:
    probe = next(p for p in invalid_probes(ORDER_SCHEMA, limit=100) if p.kind == "missing-required")

    assert probe.label == "probe 'required order_id missing'"
