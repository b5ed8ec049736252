"""Regular expressions from a server's schemas, matched within a time bound.

A schema's `pattern` is the server's: one with catastrophic backtracking (`^([!a-z]+)+Z$`)
makes Python's `re` run for minutes on a 30-character string, and a running `re` match cannot
be interrupted, not even by the check's deadline. The checker therefore never matches a
server's pattern with `re`: it uses `regex` (a well-kept drop-in whose matcher takes a
timeout), and validates with jsonschema validators whose pattern keywords go through it.
Every match is bounded by `MATCH_SECONDS` and by the deadline set with `time_limit`.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

import regex
from jsonschema import Draft202012Validator, ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for
from referencing import Registry

__all__ = [
    "MATCH_SECONDS",
    "CutShortError",
    "NotBoundedError",
    "OutOfTimeError",
    "SlowPatternError",
    "search",
    "time_limit",
    "validator_for_schema",
]

MATCH_SECONDS: Final = 0.1
"""The longest one match of a server's pattern may take before it counts as backtracking."""


class CutShortError(Exception):
    """Matching or validating stopped before it finished; the text says what stopped it."""


class SlowPatternError(CutShortError):
    """A pattern took longer than `MATCH_SECONDS` on one string: catastrophic backtracking."""

    def __init__(self, pattern: str, length: int) -> None:
        super().__init__(f"pattern {pattern!r} took over {MATCH_SECONDS:g}s on a {length}-character string")
        self.pattern = pattern
        self.length = length


class OutOfTimeError(CutShortError):
    """The deadline set with `time_limit` passed while matching or validating."""

    def __init__(self) -> None:
        super().__init__("the time for it ran out")


Keyword = Callable[[Any, Any, Any, Mapping[str, Any]], Iterator[ValidationError]]
"""A jsonschema keyword function: (validator, keyword value, instance, schema) -> errors. The
validator is `Any`: `descend`, which keywords use, is not on jsonschema's `Validator` protocol."""

_deadline: Final[ContextVar[float | None]] = ContextVar("mcp_errors_check_pattern_deadline", default=None)


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Bound every `search` (and every validation through `validator_for_schema`) inside."""
    token = _deadline.set(time.monotonic() + max(seconds, 0.0))
    try:
        yield
    finally:
        _deadline.reset(token)


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


def search(pattern: str, text: str) -> bool:
    """Whether `pattern` matches somewhere in `text`, as JSON Schema's `pattern` asks.

    Raises:
        SlowPatternError: The match took longer than `MATCH_SECONDS`.
        OutOfTimeError: The deadline of the enclosing `time_limit` passed.
        regex.error: The pattern does not compile.
    """
    limit = MATCH_SECONDS
    deadline = _deadline.get()
    if deadline is not None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise OutOfTimeError
        limit = min(limit, left)
    try:
        return _compiled(pattern).search(text, timeout=limit) is not None
    except TimeoutError:
        if limit < MATCH_SECONDS:
            raise OutOfTimeError from None
        raise SlowPatternError(pattern, len(text)) from None


def _pattern(
    validator: Validator, pattern: str, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, extra_schema: Any, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not isinstance(instance, dict):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [key for key in instance if key not in properties and not any(search(p, key) for p in patterns)]
    if isinstance(extra_schema, dict):
        for extra in extras:
            yield from validator.descend(instance[extra], extra_schema, path=extra)
    elif extra_schema is False and extras:
        unexpected = ", ".join(repr(key) for key in sorted(extras))
        yield ValidationError(f"Additional properties are not allowed ({unexpected} unexpected)")


def _unevaluated_properties(original: Keyword) -> Keyword:
    def check(
        validator: Validator, unevaluated: Any, instance: object, schema: Mapping[str, Any]
    ) -> Iterator[ValidationError]:
        # jsonschema matches patternProperties with `re` while it works out which keys were
        # evaluated; with no patternProperties anywhere its own keyword matches nothing.
        if _mentions(validator.schema, "patternProperties"):
            raise NotBoundedError("unevaluatedProperties beside patternProperties: jsonschema matches those with `re`")
        yield from original(validator, unevaluated, instance, schema)

    return check


class NotBoundedError(CutShortError):
    """A schema needs a check whose time the checker cannot bound; it was not validated."""


def _mentions(node: object, keyword: str) -> bool:
    if isinstance(node, dict):
        return keyword in node or any(_mentions(value, keyword) for value in node.values())
    if isinstance(node, list):
        return any(_mentions(item, keyword) for item in node)
    return False


@functools.lru_cache(maxsize=16)
def _bounded(base: type[Validator]) -> type[Validator]:
    keywords: dict[str, Keyword] = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    if "unevaluatedProperties" in base.VALIDATORS:
        keywords["unevaluatedProperties"] = _unevaluated_properties(base.VALIDATORS["unevaluatedProperties"])
    kept = {name: check for name, check in keywords.items() if name in base.VALIDATORS}
    bounded: type[Validator] = extend(base, kept)  # type: ignore[no-untyped-call]  # jsonschema's extend is untyped
    return bounded


def validator_for_schema(schema: Mapping[str, Any]) -> Validator:
    """A validator for `schema` (its `$schema` draft, 2020-12 by default) that matches patterns
    within the bound and resolves `$ref`s only inside the schema, never over the network.

    Raises (while validating): a `CutShortError`.
    """
    base: type[Validator] = validator_for(schema, default=Draft202012Validator)
    return _bounded(base)(schema, registry=Registry())
