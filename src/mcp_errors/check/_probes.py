"""Invalid-argument probes derived from a tool's inputSchema.

An invalid-argument probe starts from a schema-valid set of arguments (`_values`) and breaks
exactly one thing (drops a required field, sends the wrong type, leaves an enum, breaks a
pattern, a range or a length, adds an unknown field). Every probe is checked with `jsonschema`
before it is sent: a probe the schema would accept is never sent as "invalid", and one that
breaks more than it means to is dropped, so a finding always points at one known field.

A server's patterns are matched only through `_patterns` (bounded in time): a backtracking
pattern raises a `CutShortError` instead of hanging.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from jsonschema.protocols import Validator

from mcp_errors.check._patterns import search, validator_for_schema
from mcp_errors.check._values import ArgumentHints, ValueGenerator, integer_keyword, types_of, valid_arguments

__all__ = ["Probe", "invalid_probes", "schema_validator"]

UNKNOWN_FIELD: Final = "mcpErrorsUnexpectedField"


ProbeKind = Literal[
    "missing-required", "wrong-type", "enum", "pattern", "range", "length", "unknown-field", "valid", "empty"
]


@dataclass(frozen=True, slots=True)
class Probe:
    """One call to make and what it breaks."""

    kind: ProbeKind
    """What the call breaks; `valid` breaks nothing, `empty` is a valid call expected to match nothing."""
    arguments: dict[str, Any]
    fields: tuple[str, ...] = ()
    """The arguments the probe breaks; a validation error should name one of them."""
    detail: str = ""
    """Human summary for the report, e.g. `count: minimum 1 broken`."""
    source: Literal["schema", "--args"] = "schema"
    """Where the arguments come from: built from the inputSchema, or given in the `--args` file."""
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any])

    @property
    def is_invalid(self) -> bool:
        return self.kind not in ("valid", "empty")

    @property
    def label(self) -> str:
        """How a finding names the call: `probe 'count': minimum 1 broken`, `valid call`, ..."""
        if self.is_invalid:
            return f"probe '{self.detail}'"
        name = "valid call" if self.kind == "valid" else "empty-result call"
        return f"{name} (from --args)" if self.source == "--args" else name


def schema_validator(schema: Mapping[str, Any]) -> Validator:
    """A validator for `schema` (its `$schema` draft, 2020-12 when it names none), bounded in time."""
    return validator_for_schema(schema)


def invalid_probes(
    schema: Mapping[str, Any],
    *,
    limit: int = 12,
    base: Mapping[str, Any] | None = None,
    hints: ArgumentHints | None = None,
) -> list[Probe]:
    """Invalid-argument probes for a tool's inputSchema, each breaking one thing.

    Args:
        schema: The tool's inputSchema (a JSON object schema).
        limit: The most probes to return; kinds are interleaved so a cap keeps variety.
        base: The valid arguments each probe starts from (e.g. from `--args`); built from the
            schema when `None` or when the schema rejects them.
        hints: What the checker knows about the server (roots, whether the tool only reads).

    Returns:
        Probes that the schema rejects, for the reason each one names.

    Raises:
        CutShortError: A pattern of the schema backtracks, or the time ran out.
    """
    hints = hints or ArgumentHints()
    validator = schema_validator(schema)
    base = dict(base) if base is not None and validator.is_valid(dict(base)) else valid_arguments(schema, hints)
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = [name for name in schema.get("required", []) if isinstance(name, str)]
    probes: list[Probe] = []

    if base is None:
        # Without a valid base only "nothing at all" still breaks one known thing.
        if required and not validator.is_valid({}):
            probes.append(Probe("missing-required", {}, tuple(required), "no arguments at all"))
        return probes

    for name in required:
        arguments = {key: value for key, value in base.items() if key != name}
        probes.append(Probe("missing-required", arguments, (name,), f"required {name} missing"))

    generator = ValueGenerator(schema, hints)
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            continue
        resolved = generator.resolve(prop)
        for kind, value, detail in _violations(resolved, generator):
            probes.append(Probe(kind, {**base, name: value}, (name,), f"{name}: {detail}"))

    if schema.get("additionalProperties") is False:
        probes.append(
            Probe("unknown-field", {**base, UNKNOWN_FIELD: "x"}, (UNKNOWN_FIELD,), f"unknown field {UNKNOWN_FIELD}")
        )

    checked = [probe for probe in probes if _breaks_only(validator, probe)]
    return _interleave(checked, limit)


_KIND_VALIDATORS: Final[dict[str, frozenset[str]]] = {
    "missing-required": frozenset({"required"}),
    "wrong-type": frozenset({"type", "anyOf", "oneOf"}),
    "enum": frozenset({"enum", "const", "anyOf", "oneOf"}),
    "pattern": frozenset({"pattern"}),
    "range": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}),
    "length": frozenset({"minLength", "maxLength"}),
    "unknown-field": frozenset({"additionalProperties", "unevaluatedProperties"}),
}


def _breaks_only(validator: Validator, probe: Probe) -> bool:
    errors = list(validator.iter_errors(probe.arguments))
    return bool(errors) and all(error.validator in _KIND_VALIDATORS[probe.kind] for error in errors)


def _interleave(probes: list[Probe], limit: int) -> list[Probe]:
    by_kind: dict[str, list[Probe]] = {}
    for probe in probes:
        by_kind.setdefault(probe.kind, []).append(probe)
    out: list[Probe] = []
    queues = list(by_kind.values())
    while queues and len(out) < limit:
        for queue in queues:
            if queue and len(out) < limit:
                out.append(queue.pop(0))
        queues = [queue for queue in queues if queue]
    return out


_WRONG_TYPE_VALUES: Final[dict[str, Any]] = {
    "string": 12345,
    "integer": "not-a-number",
    "number": "not-a-number",
    "boolean": "not-a-boolean",
    "array": "not-a-list",
    "object": "not-an-object",
    "null": "not-null",
}


def _violations(prop: Mapping[str, Any], generator: ValueGenerator) -> Iterator[tuple[ProbeKind, Any, str]]:
    types = types_of(prop)
    wrong = next((value for kind, value in _WRONG_TYPE_VALUES.items() if kind in types), None)
    if wrong is None:
        wrong = 12345 if "string" not in types else {"unexpected": True}
    yield "wrong-type", wrong, f"wrong type {type(wrong).__name__}"

    if isinstance(prop.get("enum"), list) and prop["enum"]:
        outside = "not-a-valid-choice" if any(isinstance(c, str) for c in prop["enum"]) else 987654321
        yield "enum", outside, "value outside the enum"
    if isinstance(prop.get("pattern"), str):
        for candidate in _non_matching(prop):
            yield "pattern", candidate, f"does not match {prop['pattern']!r}"
            break

    number_type = "integer" if "integer" in types else "number"
    step: float = 1 if number_type == "integer" else 0.5
    for key, sign, inclusive in (
        ("minimum", -1, True),
        ("exclusiveMinimum", -1, False),
        ("maximum", 1, True),
        ("exclusiveMaximum", 1, False),
    ):
        bound = prop.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            broken: float = bound + sign * step if inclusive else bound
            if number_type == "integer":
                broken = math.floor(broken) if sign < 0 else math.ceil(broken)
            yield "range", broken, f"{key} {bound} broken"

    min_length = integer_keyword(prop, "minLength")
    if min_length is not None and min_length > 0:
        yield "length", generator.string_of(prop, min_length - 1), f"shorter than minLength {min_length}"
    max_length = integer_keyword(prop, "maxLength")
    if max_length is not None:
        yield "length", generator.string_of(prop, max_length + 1), f"oversized: longer than maxLength {max_length}"


def _non_matching(prop: Mapping[str, Any]) -> Iterator[str]:
    pattern = prop["pattern"]
    length = integer_keyword(prop, "minLength") or 0
    for candidate in ("!invalid!", "?", "not valid value", "0", "a", " ", ""):
        candidate = candidate.ljust(length, "!")
        if not search(pattern, candidate):
            yield candidate
