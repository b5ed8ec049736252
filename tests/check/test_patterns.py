"""Matching a server's patterns within a time bound: a backtracking pattern is cut short, never hangs."""

from __future__ import annotations

import time

import pytest

from mcp_errors.check._patterns import (
    MATCH_SECONDS,
    NotBoundedError,
    OutOfTimeError,
    SlowPatternError,
    example_matching,
    search,
    time_limit,
    validator_for_schema,
)

BACKTRACKING = r"^(a|a)+$"
"""Exponential in the length of a run of `a`s that fails to match, in `re` and in `regex`."""
HOSTILE = "a" * 40 + "!"


def test_a_pattern_matches_as_json_schema_asks_anywhere_in_the_string() -> None:
    assert search(r"\d{3}", "order 123 shipped")
    assert not search(r"^\d{3}$", "order 123 shipped")


def test_a_backtracking_pattern_is_cut_short_at_the_match_bound() -> None:
    started = time.perf_counter()

    with pytest.raises(SlowPatternError, match="41-character string"):
        search(BACKTRACKING, HOSTILE)

    assert time.perf_counter() - started < 10 * MATCH_SECONDS


def test_the_pattern_from_the_report_gets_through_the_bounded_matcher() -> None:
    """`^([!a-z]+)+Z$` with a minLength ran the checker past 90 s in Python's `re`."""
    assert not search(r"^([!a-z]+)+Z$", "!invalid!".ljust(30, "!"))


def test_a_time_limit_stops_matching_when_it_runs_out() -> None:
    with time_limit(0.0), pytest.raises(OutOfTimeError):
        search("a", "a")


def test_validation_goes_through_the_bounded_matcher() -> None:
    validator = validator_for_schema(
        {"type": "object", "properties": {"code": {"type": "string", "pattern": BACKTRACKING}}}
    )

    assert validator.is_valid({"code": "aaa"})
    with pytest.raises(SlowPatternError):
        validator.is_valid({"code": HOSTILE})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "patternProperties": {BACKTRACKING: {"type": "integer"}}},
        {"type": "object", "properties": {}, "patternProperties": {BACKTRACKING: {}}, "additionalProperties": False},
        {"type": "object", "propertyNames": {"pattern": BACKTRACKING}},
    ],
)
def test_property_names_are_matched_within_the_bound_too(schema: dict[str, object]) -> None:
    with pytest.raises(SlowPatternError):
        validator_for_schema(schema).is_valid({HOSTILE: 1})


def test_additional_properties_beside_pattern_properties_still_validate() -> None:
    schema = {"type": "object", "patternProperties": {"^x-": {}}, "additionalProperties": False}
    validator = validator_for_schema(schema)

    assert validator.is_valid({"x-trace": 1})
    assert [error.message for error in validator.iter_errors({"x-trace": 1, "other": 2})] == [
        "Additional properties are not allowed ('other' unexpected)"
    ]


def test_a_check_the_checker_cannot_bound_is_refused_not_run() -> None:
    schema = {"type": "object", "patternProperties": {"^x-": {}}, "unevaluatedProperties": False}

    with pytest.raises(NotBoundedError):
        validator_for_schema(schema).is_valid({"other": 1})


def test_a_remote_ref_is_never_fetched() -> None:
    validator = validator_for_schema({"$ref": "https://example.invalid/schema.json"})

    with pytest.raises(Exception, match=r"example\.invalid"):
        validator.is_valid({})


@pytest.mark.parametrize(
    "pattern",
    [r"^#\d{5}$", r"^[A-Z]{3}-\d{2,4}$", r"^(?:foo|bar)_[a-z]+$", r"^[^@]+@[^@]+$", r"^#[^a-z\s]\d{4}$"],
)
def test_an_example_is_a_string_the_pattern_matches(pattern: str) -> None:
    example = example_matching(pattern)

    assert example is not None
    assert search(pattern, example)


@pytest.mark.parametrize("pattern", [r"^(ab)\1$", "(unclosed", r"^(?=a)b$"])
def test_no_example_is_made_up_for_a_pattern_the_builder_cannot_satisfy(pattern: str) -> None:
    assert example_matching(pattern) is None
