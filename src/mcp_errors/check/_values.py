"""Values a tool's inputSchema accepts: the arguments of a valid call.

A valid call should reach the tool's real work, so its values come from what the schema says
before anything is made up: `const`, `default`, `examples`, an `enum` value that does not ask
for a failure, an example quoted in the description ("e.g. 'America/New_York'"), the property's
name (`timezone`, `email`), its `format` and its `pattern` (through `_patterns.example_matching`).
Paths use the roots the server allows when the checker knows them; waits (`duration`,
`delay_ms`) stay far below the call timeout, even when the schema's default is long.

Generation is deterministic, so runs and baselines are reproducible.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from mcp_errors.check._patterns import example_matching, search, validator_for_schema

__all__ = [
    "SCRATCH_NAME",
    "ArgumentHints",
    "ValueGenerator",
    "integer_keyword",
    "types_of",
    "valid_arguments",
    "waits_seconds",
]

_MAX_DEPTH: Final = 6
_JSON_TYPES: Final = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})


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


def valid_arguments(schema: Mapping[str, Any], hints: ArgumentHints | None = None) -> dict[str, Any] | None:
    """One set of arguments that `schema` accepts, or `None` when none could be built.

    Examples and defaults declared in the schema win over generated values; then values the
    schema suggests (descriptions, names, formats); plain generated values last.

    Raises:
        CutShortError: A pattern of the schema backtracks, or the time set with
            `_patterns.time_limit` ran out.
    """
    hints = hints or ArgumentHints()
    validator = validator_for_schema(schema)
    candidates: list[Any] = []
    for example in schema.get("examples", []) if isinstance(schema.get("examples"), list) else []:
        candidates.append(example)
    informed = ValueGenerator(schema, hints)
    plain = ValueGenerator(schema, hints, informed=False)
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


def integer_keyword(schema: Mapping[str, Any], key: str) -> int | None:
    """`schema[key]` when it is an integer (`minLength`, `maxItems`), else `None`."""
    value = schema.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def types_of(schema: Mapping[str, Any]) -> list[str]:
    """The JSON types `schema` allows, from `type`, its `anyOf`/`oneOf` branches or its `enum`."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            return [t for branch in branches if isinstance(branch, Mapping) for t in types_of(branch)]
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
    if not about_waiting or not set(types_of(schema)) & {"integer", "number"}:
        return None
    if "millisecond" in described:
        return "ms"
    return "s"


class ValueGenerator:
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
                usable = [b for b in branches if isinstance(b, Mapping) and types_of(self.resolve(b)) != ["null"]]
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
        types = [t for t in types_of(schema) if t != "null"] or types_of(schema) or ["object"]
        kind = types[0]
        if kind == "object" or (kind not in _JSON_TYPES and "properties" in schema):
            return self._object(schema, required_only, depth)
        if kind == "array":
            items = schema.get("items")
            count = integer_keyword(schema, "minItems") or 0
            item_schema = items if isinstance(items, Mapping) else {}
            item_name = name if self._informed and name and _is_path(name, schema) else ""
            if item_name and count == 0 and "string" in types_of(item_schema):
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
        types = types_of(schema)
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
        min_length = integer_keyword(schema, "minLength") or 0
        max_length = integer_keyword(schema, "maxLength")
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
            text = example_matching(pattern) or text
        elif isinstance(fmt, str) and fmt in _FORMAT_VALUES:
            text = _FORMAT_VALUES[fmt]
        min_length = integer_keyword(schema, "minLength") or 0
        max_length = integer_keyword(schema, "maxLength")
        if length is None:
            if len(text) < min_length:
                text = text + "x" * (min_length - len(text))
            if max_length is not None and len(text) > max_length:
                text = text[:max_length]
            return text
        return (text * (length // max(len(text), 1) + 1))[:length] if text else "x" * length
