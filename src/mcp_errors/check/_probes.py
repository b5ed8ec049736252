"""Arguments to call a tool with, derived from its inputSchema.

A valid call should reach the tool's real work, so its values come from what the schema says
before anything is made up: `const`, `default`, `examples`, an `enum` value that does not ask
for a failure, an example quoted in the description ("e.g. 'America/New_York'"), the property's
name (`timezone`, `email`), its `format` and its `pattern`. Paths use the roots the server
allows when the checker knows them; waits (`duration`, `delay_ms`) stay far below the call
timeout, even when the schema's default is long.

An invalid-argument probe starts from a schema-valid set of arguments and breaks exactly one
thing (drops a required field, sends the wrong type, leaves an enum, breaks a pattern, a
range or a length, adds an unknown field). Every probe is checked with `jsonschema` before
it is sent: a probe the schema would accept is never sent as "invalid", and one that breaks
more than it means to is dropped, so a finding always points at one known field.

A server's patterns are matched only through `_patterns` (bounded in time): generating from a
backtracking pattern raises a `CutShortError` instead of hanging.
"""

from __future__ import annotations

import math
import posixpath
import re
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from jsonschema.protocols import Validator

from mcp_errors.check._patterns import search, validator_for_schema

with warnings.catch_warnings():
    # `re._parser` is the same module without a stub; `sre_parse` only warns that it moved.
    warnings.simplefilter("ignore", DeprecationWarning)
    import sre_parse

__all__ = ["ArgumentHints", "Probe", "invalid_probes", "schema_validator", "valid_arguments", "waits_seconds"]

UNKNOWN_FIELD: Final = "mcpErrorsUnexpectedField"
_MAX_DEPTH: Final = 6


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


@dataclass(frozen=True, slots=True)
class ArgumentHints:
    """What the checker knows about the server beyond one tool's schema."""

    roots: tuple[str, ...] = ()
    """Absolute paths the server says it may use (from a tool such as `list_allowed_directories`)."""
    read_only: bool = False
    """The tool declares it only reads (`readOnlyHint: true`): a path argument may then name a real
    place. Any other tool gets a path that does not exist yet, named after the checker."""


SCRATCH_NAME: Final = "mcp-errors-check"
"""The path a tool that may write is given, so anything it leaves behind names its cause."""


def schema_validator(schema: Mapping[str, Any]) -> Validator:
    """A validator for `schema` (its `$schema` draft, 2020-12 when it names none), bounded in time."""
    return validator_for_schema(schema)


def valid_arguments(schema: Mapping[str, Any], hints: ArgumentHints | None = None) -> dict[str, Any] | None:
    """One set of arguments that `schema` accepts, or `None` when none could be built.

    Examples and defaults declared in the schema win over generated values; then values the
    schema suggests (descriptions, names, formats); plain generated values last.

    Raises:
        CutShortError: A pattern of the schema backtracks, or the time set with
            `_patterns.time_limit` ran out.
    """
    hints = hints or ArgumentHints()
    validator = schema_validator(schema)
    candidates: list[Any] = []
    for example in schema.get("examples", []) if isinstance(schema.get("examples"), list) else []:
        candidates.append(example)
    informed = _Generator(schema, hints)
    plain = _Generator(schema, hints, informed=False)
    candidates.append(informed.value(schema, required_only=True))
    candidates.append(informed.value(schema, required_only=False))
    candidates.append(plain.value(schema, required_only=True))
    candidates.append(plain.value(schema, required_only=False))
    for candidate in candidates:
        if isinstance(candidate, dict) and validator.is_valid(candidate):
            return candidate
    return None


def waits_seconds(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> float:
    """How long `arguments` ask the tool to wait, in seconds, by its duration-like properties."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return 0.0
    total = 0.0
    for name, value in arguments.items():
        prop = properties.get(name)
        if isinstance(prop, Mapping) and isinstance(value, int | float) and not isinstance(value, bool):
            unit = _duration_unit(name, prop)
            if unit is not None and value > 0:
                total += value / 1000 if unit == "ms" else value
    return total


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

    generator = _Generator(schema, hints)
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


def _violations(prop: Mapping[str, Any], generator: _Generator) -> Iterator[tuple[ProbeKind, Any, str]]:
    types = _types(prop)
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

    min_length = _int(prop, "minLength")
    if min_length is not None and min_length > 0:
        yield "length", generator.string_of(prop, min_length - 1), f"shorter than minLength {min_length}"
    max_length = _int(prop, "maxLength")
    if max_length is not None:
        yield "length", generator.string_of(prop, max_length + 1), f"oversized: longer than maxLength {max_length}"


def _non_matching(prop: Mapping[str, Any]) -> Iterator[str]:
    pattern = prop["pattern"]
    length = _int(prop, "minLength") or 0
    for candidate in ("!invalid!", "?", "not valid value", "0", "a", " ", ""):
        candidate = candidate.ljust(length, "!")
        if not search(pattern, candidate):
            yield candidate


def _int(schema: Mapping[str, Any], key: str) -> int | None:
    value = schema.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _types(schema: Mapping[str, Any]) -> list[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            return [t for branch in branches if isinstance(branch, Mapping) for t in _types(branch)]
    if "enum" in schema and isinstance(schema["enum"], list):
        return sorted({_json_type(value) for value in schema["enum"]})
    return []


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


_FORMAT_VALUES: Final[dict[str, str]] = {
    "date": "2024-01-31",
    "date-time": "2024-01-31T12:00:00Z",
    "time": "12:00:00Z",
    "email": "someone@example.com",
    "idn-email": "someone@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "duration": "P1D",
}

# A value for a property named like the key (its last word: `source_timezone` -> `timezone`).
_NAME_VALUES: Final[dict[str, str]] = {
    "timezone": "UTC",
    "tz": "UTC",
    "email": "someone@example.com",
    "url": "https://example.com/",
    "uri": "https://example.com/",
    "link": "https://example.com/",
    "date": "2024-01-31",
    "time": "12:00",
    "datetime": "2024-01-31T12:00:00Z",
    "timestamp": "2024-01-31T12:00:00Z",
    "language": "en",
    "lang": "en",
    "locale": "en-US",
    "country": "US",
    "currency": "EUR",
}

# Formats a description spells out instead of declaring `format`.
_DESCRIBED_FORMATS: Final = (
    (re.compile(r"\bHH:MM:SS\b"), "12:00:00"),
    (re.compile(r"\bHH:MM\b"), "12:00"),
    (re.compile(r"\bYYYY-MM-DD\b"), "2024-01-31"),
    (re.compile(r"\bISO[ -]?8601\b", re.IGNORECASE), "2024-01-31T12:00:00Z"),
)
_QUOTE: Final = "'\"‘’“”`"
# "e.g. 'America/New_York'", "for example: `#12345`", "such as \"EUR\"".
_DESCRIBED_EXAMPLE: Final = re.compile(
    r"(?:\be\.g\.|\bfor example\b|\bsuch as\b|\bexample:)[\s,:(]{0,4}"
    rf"[{_QUOTE}](?P<value>[^{_QUOTE}\n]{{1,80}})[{_QUOTE}]",
    re.IGNORECASE,
)
_QUOTED: Final = re.compile(rf"[{_QUOTE}](?P<value>[^{_QUOTE}\n\s]{{1,40}})[{_QUOTE}]")
_DESCRIPTION_CHARS: Final = 1000
"""Descriptions are the server's text: only their start is searched."""

_PATH_WORDS: Final = frozenset(
    {"path", "paths", "file", "files", "filename", "filepath", "dir", "dirs", "directory", "directories", "folder"}
)
_DURATION_WORDS: Final = frozenset({"duration", "delay", "sleep", "wait", "pause", "interval", "timeout"})
_MILLISECOND_WORDS: Final = frozenset({"ms", "millis", "milliseconds"})
_SECOND_WORDS: Final = frozenset({"seconds", "secs", "sec"})
_GENERATED_WAIT: Final = {"s": 1, "ms": 100}
"""What a generated wait asks for (a tenth of it where fractions are allowed): far below any
sensible call timeout."""
# An enum value that asks the tool to fail is not the call that reaches its real work.
_ASKS_FOR_FAILURE: Final = re.compile(r"error|fail|invalid|exception|crash|reject|denied|deny", re.IGNORECASE)


def _words(name: str) -> list[str]:
    """`sourceTimezone`, `source_timezone` and `source-timezone` -> `["source", "timezone"]`."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return [word for word in re.split(r"[_\-\s.]+", spaced.lower()) if word]


def _description(schema: Mapping[str, Any]) -> str:
    text = schema.get("description")
    return text[:_DESCRIPTION_CHARS] if isinstance(text, str) else ""


def _is_path(name: str, schema: Mapping[str, Any]) -> bool:
    words = _words(name)
    return bool(words) and words[-1] in _PATH_WORDS


def _duration_unit(name: str, schema: Mapping[str, Any]) -> Literal["s", "ms"] | None:
    """`s` or `ms` for a property that tells the tool how long to wait, else `None`."""
    words = _words(name)
    described = _description(schema).lower()
    about_waiting = any(word in _DURATION_WORDS for word in words) or any(
        re.search(rf"\b{word}\b", described) for word in _DURATION_WORDS
    )
    if words and words[-1] in _MILLISECOND_WORDS and about_waiting:
        return "ms"
    if not about_waiting or not set(_types(schema)) & {"integer", "number"}:
        return None
    if "millisecond" in described:
        return "ms"
    return "s"


class _Generator:
    """Builds schema-valid values; deterministic so runs and baselines are reproducible.

    An `informed` generator also reads descriptions, names and hints; a plain one only the
    schema's constraints (the fallback when the informed values break the schema).
    """

    def __init__(self, root: Mapping[str, Any], hints: ArgumentHints | None = None, *, informed: bool = True) -> None:
        self._root = root
        self._hints = hints or ArgumentHints()
        self._informed = informed

    def resolve(self, schema: Mapping[str, Any]) -> Mapping[str, Any]:
        seen = 0
        while isinstance(schema.get("$ref"), str) and seen < _MAX_DEPTH:
            target = self._lookup(schema["$ref"])
            if target is None:
                return schema
            merged = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            schema = merged
            seen += 1
        return schema

    def _lookup(self, ref: str) -> Mapping[str, Any] | None:
        if not ref.startswith("#/"):
            return None
        node: Any = self._root
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
        return node if isinstance(node, Mapping) else None

    def value(self, schema: Mapping[str, Any], *, required_only: bool = True, depth: int = 0, name: str = "") -> Any:
        schema = self.resolve(schema)
        if depth > _MAX_DEPTH:
            return None
        if "const" in schema:
            return schema["const"]
        if self._informed and name:
            informed = self._informed_value(name, schema)
            if informed is not None:
                return informed
        if "default" in schema:
            return schema["default"]
        examples = schema.get("examples")
        if isinstance(examples, list) and examples:
            return examples[0]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            choices = schema["enum"]
            if self._informed:
                return next((c for c in choices if not _ASKS_FOR_FAILURE.search(str(c))), choices[0])
            return choices[0]
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list):
                usable = [b for b in branches if isinstance(b, Mapping) and _types(self.resolve(b)) != ["null"]]
                if usable:
                    merged = {**{k: v for k, v in schema.items() if k not in (key, "default")}, **usable[0]}
                    return self.value(merged, required_only=required_only, depth=depth + 1, name=name)
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and all_of:
            merged_all: dict[str, Any] = {}
            for branch in all_of:
                if isinstance(branch, Mapping):
                    merged_all.update(self.resolve(branch))
            merged_all.update({k: v for k, v in schema.items() if k != "allOf"})
            return self.value(merged_all, required_only=required_only, depth=depth + 1, name=name)
        types = [t for t in _types(schema) if t != "null"] or _types(schema) or ["object"]
        kind = types[0]
        if kind == "object" or (kind not in _WRONG_TYPE_VALUES and "properties" in schema):
            return self._object(schema, required_only, depth)
        if kind == "array":
            items = schema.get("items")
            count = _int(schema, "minItems") or 0
            item_schema = items if isinstance(items, Mapping) else {}
            item_name = name if self._informed and name and _is_path(name, schema) else ""
            if item_name and count == 0 and "string" in _types(item_schema):
                count = 1  # `paths: []` reaches no file
            return [
                self.value(item_schema, required_only=required_only, depth=depth + 1, name=item_name)
                for _ in range(count)
            ]
        if kind == "string":
            return self.string_of(schema, None)
        if kind in ("integer", "number"):
            return self._number(schema, integer=kind == "integer")
        if kind == "boolean":
            return True
        return None

    def _informed_value(self, name: str, schema: Mapping[str, Any]) -> Any:
        """A value the property's name or description suggests, when it fits the schema."""
        types = _types(schema)
        unit = _duration_unit(name, schema)
        if unit is not None:
            integer = "number" not in types
            wait = _GENERATED_WAIT[unit] * (1 if integer else 0.1)
            floor = schema.get("minimum")
            floor = max(floor, wait) if isinstance(floor, int | float) and not isinstance(floor, bool) else wait
            return self._number({**schema, "minimum": floor}, integer=integer)
        if "string" not in types or "enum" in schema:
            return None
        for candidate in self._string_candidates(name, schema):
            if self._fits(schema, candidate):
                return candidate
        return None

    def _string_candidates(self, name: str, schema: Mapping[str, Any]) -> Iterator[str]:
        if "default" in schema or "examples" in schema:
            return
        if _is_path(name, schema):
            yield self._path()
        described = _description(schema)
        example = _DESCRIBED_EXAMPLE.search(described)
        if example:
            yield example.group("value").strip()
        for pattern, value in _DESCRIBED_FORMATS:
            if pattern.search(described):
                yield value
        words = _words(name)
        if words and words[-1] in _NAME_VALUES:
            yield _NAME_VALUES[words[-1]]
        quoted = _QUOTED.search(described)
        if quoted:
            yield quoted.group("value")

    def _path(self) -> str:
        roots = self._hints.roots
        if self._hints.read_only:
            return roots[0] if roots else "."
        return posixpath.join(roots[0], SCRATCH_NAME) if roots else SCRATCH_NAME

    def _fits(self, schema: Mapping[str, Any], text: str) -> bool:
        min_length = _int(schema, "minLength") or 0
        max_length = _int(schema, "maxLength")
        if len(text) < min_length or (max_length is not None and len(text) > max_length):
            return False
        pattern = schema.get("pattern")
        return not isinstance(pattern, str) or search(pattern, text)

    def _object(self, schema: Mapping[str, Any], required_only: bool, depth: int) -> dict[str, Any]:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = [name for name in schema.get("required", []) if isinstance(name, str)]
        names = required if required_only else list(properties)
        if self._informed and required_only:
            # An optional wait left out gets the server's default, which may outlast the call.
            names += [
                name
                for name, prop in properties.items()
                if name not in names and isinstance(prop, Mapping) and _duration_unit(name, self.resolve(prop))
            ]
        out: dict[str, Any] = {}
        for name in names:
            prop = properties.get(name, {})
            out[name] = self.value(
                prop if isinstance(prop, Mapping) else {}, required_only=True, depth=depth + 1, name=name
            )
        return out

    def _number(self, schema: Mapping[str, Any], *, integer: bool) -> float:
        low: float | None = None
        high: float | None = None
        if isinstance(schema.get("minimum"), int | float):
            low = schema["minimum"]
        if isinstance(schema.get("exclusiveMinimum"), int | float):
            low = schema["exclusiveMinimum"] + (1 if integer else 0.5)
        if isinstance(schema.get("maximum"), int | float):
            high = schema["maximum"]
        if isinstance(schema.get("exclusiveMaximum"), int | float):
            high = schema["exclusiveMaximum"] - (1 if integer else 0.5)
        value: float = low if low is not None else (min(high, 1) if high is not None else 1)
        multiple = schema.get("multipleOf")
        if isinstance(multiple, int | float) and multiple > 0:
            value = math.ceil(value / multiple) * multiple
        return math.ceil(value) if integer else value

    def string_of(self, schema: Mapping[str, Any], length: int | None) -> str:
        """A string for `schema`, of exactly `length` characters when given."""
        pattern = schema.get("pattern")
        fmt = schema.get("format")
        text = "example"
        if isinstance(pattern, str):
            text = self._from_pattern(pattern) or text
        elif isinstance(fmt, str) and fmt in _FORMAT_VALUES:
            text = _FORMAT_VALUES[fmt]
        min_length = _int(schema, "minLength") or 0
        max_length = _int(schema, "maxLength")
        if length is None:
            if len(text) < min_length:
                text = text + "x" * (min_length - len(text))
            if max_length is not None and len(text) > max_length:
                text = text[:max_length]
            return text
        return (text * (length // max(len(text), 1) + 1))[:length] if text else "x" * length

    def _from_pattern(self, pattern: str) -> str | None:
        try:
            parsed = sre_parse.parse(pattern)
        except (re.error, RecursionError):
            return None
        try:
            text = self._emit(list(parsed.data), 0)
        except (ValueError, IndexError, RecursionError):
            return None
        return text if search(pattern, text) else None

    def _emit(self, items: list[tuple[Any, Any]], depth: int) -> str:
        if depth > 20:
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
                out.append(self._from_class(arg))
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, high, sub = arg
                count = max(low, min(1, high))
                out.extend(self._emit(list(sub), depth + 1) for _ in range(count))
            elif name == "SUBPATTERN":
                out.append(self._emit(list(arg[-1]), depth + 1))
            elif name == "BRANCH":
                out.append(self._emit(list(arg[1][0]), depth + 1))
            elif name in ("AT", "ASSERT", "ASSERT_NOT", "GROUPREF"):
                continue
            elif name == "CATEGORY":
                out.append(_CATEGORY_CHARS.get(str(arg), "a"))
            else:
                raise ValueError(f"unsupported regex node {name}")
        return "".join(out)

    def _from_class(self, items: list[tuple[Any, Any]]) -> str:
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
