"""Regular expressions from a server's schemas, matched within a time bound.

A schema's `pattern` is the server's: one with catastrophic backtracking (`^([!a-z]+)+Z$`)
makes Python's `re` run for minutes on a 30-character string, and a running `re` match cannot
be interrupted, not even by the check's deadline. The checker therefore never matches a
server's pattern with `re`: it uses `regex` (a well-kept drop-in whose matcher takes a
timeout), and validates with jsonschema validators whose pattern keywords go through it.
Every match is bounded by `MATCH_SECONDS` and by the deadline set with `time_limit`.

The checker also needs strings a pattern accepts (a valid call's values): `example_matching`
builds one from the pattern's parse tree, and confirms it through the same bounded matcher.
"""

from __future__ import annotations

import functools
import re
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

import regex
from jsonschema import Draft202012Validator, ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend, validator_for
from referencing import Registry

with warnings.catch_warnings():
    # `re._parser` is the same module without a stub; `sre_parse` only warns that it moved.
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_parse

__all__ = [
    "MATCH_SECONDS",
    "CutShortError",
    "NotBoundedError",
    "OutOfTimeError",
    "SlowPatternError",
    "example_matching",
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


def example_matching(pattern: str) -> str | None:
    """A short string `pattern` matches (`^#\\d{5}$` -> `#11111`), or `None` when none is found.

    Built from the pattern's parse tree: the first branch, the fewest repetitions (at least
    one), the first member of a class; then checked with `search`.

    Raises:
        CutShortError: Checking the example took too long (a backtracking pattern).
    """
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, RecursionError):
        return None
    try:
        text = _emit(list(parsed.data), 0)
    except (ValueError, IndexError, RecursionError):
        return None
    return text if search(pattern, text) else None


_MAX_NESTING: Final = 20


def _emit(items: list[tuple[Any, Any]], depth: int) -> str:
    if depth > _MAX_NESTING:
        raise ValueError("pattern too deep")
    out: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":  # `[^@]`
            out.append(next(c for c in _CANDIDATES if ord(c) != arg))
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_from_class(arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            count = max(low, min(1, high))
            out.extend(_emit(list(sub), depth + 1) for _ in range(count))
        elif name == "SUBPATTERN":
            out.append(_emit(list(arg[-1]), depth + 1))
        elif name == "BRANCH":
            out.append(_emit(list(arg[1][0]), depth + 1))
        elif name in ("AT", "ASSERT", "ASSERT_NOT", "GROUPREF"):
            continue
        elif name == "CATEGORY":
            out.append(_CATEGORY_CHARS.get(str(arg), "a"))
        else:
            raise ValueError(f"unsupported regex node {name}")
    return "".join(out)


def _from_class(items: list[tuple[Any, Any]]) -> str:
    if any(str(op) == "NEGATE" for op, _ in items):
        members = [item for item in items if str(item[0]) != "NEGATE"]
        return next(c for c in _CANDIDATES if not _in_class(members, c))
    op, arg = items[0]
    name = str(op)
    if name == "LITERAL":
        return chr(arg)
    if name == "RANGE":
        return chr(arg[0])
    if name == "CATEGORY":
        return _CATEGORY_CHARS.get(str(arg), "a")
    raise ValueError(f"unsupported class node {name}")


def _in_class(items: list[tuple[Any, Any]], char: str) -> bool:
    for op, arg in items:
        name = str(op)
        if name == "LITERAL" and ord(char) == arg:
            return True
        if name == "RANGE" and arg[0] <= ord(char) <= arg[1]:
            return True
        if name == "CATEGORY" and re.fullmatch(_CATEGORY_PATTERNS.get(str(arg), "(?!)"), char):
            return True
    return False


# Characters tried, in order, where a pattern says "anything but ...".
_CANDIDATES: Final = "aZ0_-x .@#~"
_CATEGORY_PATTERNS: Final = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
}
# One character each category stands for in a generated value.
_CATEGORY_CHARS: Final = {
    name: next(char for char in "a1- " if re.fullmatch(pattern, char)) for name, pattern in _CATEGORY_PATTERNS.items()
}
