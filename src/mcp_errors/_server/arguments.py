"""A call's arguments judged: the `validation` failures of arguments and of unknown tool names.

Three ways a call can be wrong before its tool does anything, each a `validation` failure
with `executionState: not_executed` whose `fieldErrors` name what to fix:

- arguments that failed the tool's own validation (pydantic, in `MCPServer` and fastmcp):
  `classify_arguments`;
- arguments that break a JSON Schema nobody checked (a proxied server's inputSchema):
  `classify_schema_violations`;
- a tool name the server does not have: `unknown_tool`.

Field values are shown truncated and redacted, never as pydantic or jsonschema quote them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

import pydantic

from mcp_errors._server.classify import classify_failure, log_fields, logger
from mcp_errors._shared.causes import cause_or_context, causes
from mcp_errors._shared.contract import ErrorCategory, ExecutionState, FieldError
from mcp_errors._shared.envelope import FailureDetails
from mcp_errors._shared.sanitize import (
    MAX_DESCRIPTION_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_RECEIVED_CHARS,
    REDACTED,
    escape_surrogates,
    is_secret_name,
    sanitize_text,
)

if TYPE_CHECKING:
    import jsonschema

__all__ = ["classify_arguments", "classify_schema_violations", "unknown_tool"]


def classify_arguments(
    error: pydantic.ValidationError,
    *,
    error_id: str,
    tool_name: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
) -> FailureDetails:
    """Classify arguments that failed the tool's input schema as a `validation` failure.

    Args:
        error: pydantic's error from validating the arguments.
        error_id: This failure's id, for the log line.
        tool_name: For the description and the log line.
        input_schema: The tool's inputSchema, to say what each field expects.

    Returns:
        A validation failure whose `fieldErrors` name each bad argument; or, when a
        validator failed itself (see `_failure_inside_a_validator`), that failure.
    """
    items = error.errors(include_url=False)
    inner = _failure_inside_a_validator(items)
    if inner is not None:
        return classify_failure(inner, error_id=error_id, tool_name=tool_name)
    properties = (input_schema or {}).get("properties", {})
    field_errors: list[FieldError] = []
    for item in items:
        location = [str(part) for part in item["loc"]]
        name = ".".join(location) or "(arguments)"
        if item["type"] == "missing":
            received = None
        elif location and is_secret_name(location[-1]):
            # The value of `password` is a secret even though no label in it says so.
            received = REDACTED
        else:
            received = _render_received(item.get("input"))
        top = properties.get(location[0]) if location else None
        field_errors.append(
            FieldError(
                field=sanitize_text(name, limit=MAX_MESSAGE_CHARS),
                problem=_problem_text(item),
                expected=_describe_schema(top) if isinstance(top, Mapping) and len(location) == 1 else None,
                received=received,
            )
        )
    names = ", ".join(sorted({fe.field for fe in field_errors}))
    logger.info(
        "tool %r rejected arguments %s, errorId %s",
        tool_name,
        names,
        error_id,
        extra=log_fields(tool_name, error_id, ErrorCategory.VALIDATION),
    )
    return _invalid_arguments(field_errors)


def _invalid_arguments(field_errors: Sequence[FieldError]) -> FailureDetails:
    names = ", ".join(sorted({fe.field for fe in field_errors}))
    return FailureDetails(
        message="Invalid arguments",
        category=ErrorCategory.VALIDATION,
        description=f"These arguments do not match the tool's input schema: {names}. "
        "Correct each one as described and call again.",
        code="INVALID_ARGUMENTS",
        field_errors=tuple(field_errors),
        execution_state=ExecutionState.NOT_EXECUTED,
    )


def classify_schema_violations(
    arguments: Mapping[str, Any], input_schema: Mapping[str, Any], *, error_id: str, tool_name: str | None = None
) -> FailureDetails | None:
    """The `validation` failure for arguments that break a JSON Schema, or `None` when they fit it.

    For a server that did not check its arguments itself (or said only "invalid"): a proxy
    holds the tool's inputSchema and can name each bad argument.

    Args:
        arguments: The call's arguments.
        input_schema: The tool's inputSchema.
        error_id: This failure's id, for the log line.
        tool_name: For the log line.

    Returns:
        A validation failure whose `fieldErrors` name each bad argument, or `None`.
    """
    import jsonschema  # on a failure's first use: start-up does without it

    try:
        validator_class = jsonschema.validators.validator_for(input_schema, default=jsonschema.Draft202012Validator)
        violations = list(validator_class(dict(input_schema)).iter_errors(dict(arguments)))
    except Exception:
        # An upstream's schema is untrusted: one that cannot be applied (invalid, a `$ref`
        # that does not resolve) says nothing about the arguments.
        return None
    if not violations:
        return None
    properties = input_schema.get("properties", {})
    field_errors: dict[str, FieldError] = {}
    for violation in violations:
        for error in _field_errors_of(violation, properties if isinstance(properties, Mapping) else {}):
            field_errors.setdefault(error.field, error)
    if not field_errors:
        return None
    logger.info(
        "tool %r was called with arguments that break its input schema: %s, errorId %s",
        tool_name,
        ", ".join(sorted(field_errors)),
        error_id,
        extra=log_fields(tool_name, error_id, ErrorCategory.VALIDATION),
    )
    return _invalid_arguments(list(field_errors.values()))


def _field_errors_of(violation: jsonschema.ValidationError, properties: Mapping[str, Any]) -> list[FieldError]:
    path = [str(part) for part in violation.absolute_path]
    required = violation.validator_value
    if violation.validator == "required" and isinstance(violation.instance, Mapping) and isinstance(required, list):
        missing = [str(name) for name in required if name not in violation.instance]
        return [
            FieldError(
                field=_field_name(path, name),
                problem="required argument is missing",
                expected=_expected(properties.get(name)) if not path else None,
            )
            for name in missing
        ]
    if violation.validator == "additionalProperties" and isinstance(violation.instance, Mapping):
        allowed = violation.schema.get("properties", {}) if isinstance(violation.schema, Mapping) else {}
        patterns = violation.schema.get("patternProperties", {}) if isinstance(violation.schema, Mapping) else {}
        return [
            FieldError(field=_field_name(path, str(name)), problem="unknown argument")
            for name in violation.instance
            if name not in allowed and not patterns
        ]
    name = ".".join(path) or "(arguments)"
    received = REDACTED if path and is_secret_name(path[-1]) else _render_received(violation.instance)
    schema = violation.schema if isinstance(violation.schema, Mapping) else {}
    return [
        FieldError(
            field=sanitize_text(name, limit=MAX_MESSAGE_CHARS),
            problem=_SCHEMA_PROBLEMS.get(str(violation.validator), "does not match the input schema"),
            expected=_expected(properties.get(path[0]) if len(path) == 1 else schema),
            received=received,
        )
    ]


def _field_name(path: Sequence[str], name: str) -> str:
    return sanitize_text(".".join([*path, name]), limit=MAX_MESSAGE_CHARS)


def _expected(schema: object) -> str | None:
    return _describe_schema(schema) if isinstance(schema, Mapping) else None


# Problems said without the value (jsonschema's own messages quote it, secrets included).
_SCHEMA_PROBLEMS: Final = {
    "type": "wrong type",
    "enum": "not one of the allowed values",
    "const": "not the required value",
    "pattern": "does not match the required pattern",
    "format": "not in the required format",
    "minLength": "too short",
    "maxLength": "too long",
    "minimum": "too small",
    "exclusiveMinimum": "too small",
    "maximum": "too large",
    "exclusiveMaximum": "too large",
    "minItems": "too few items",
    "maxItems": "too many items",
    "uniqueItems": "has duplicate items",
    "multipleOf": "not a multiple of the required step",
}


def _failure_inside_a_validator(items: Sequence[Mapping[str, Any]]) -> BaseException | None:
    """The failure a validator hit and reported as a `ValueError`, if any.

    What a validator raises on purpose is about the value: pydantic's own errors, and a
    `ValueError` or `AssertionError` it raised, also while handling another value problem
    (`except KeyError: raise ValueError("unknown currency")`). One it raised while handling any
    other failure (`except OSError: raise ValueError(f"could not connect to {host}")`) is about
    the server: its text (hosts, addresses, users, keys) is not the caller's to read, and fixing
    the arguments will not help. That failure is what the call reports.
    """
    for item in items:
        raised = (item.get("ctx") or {}).get("error")
        if isinstance(raised, BaseException):
            behind = next(
                (link for link in causes(cause_or_context(raised)) if not isinstance(link, _VALUE_PROBLEMS)), None
            )
            if behind is not None:
                return behind
    return None


# What a validator meets while reading a value: the problems of the value itself.
_VALUE_PROBLEMS: Final = (ValueError, TypeError, LookupError, ArithmeticError, AssertionError)


def unknown_tool(name: str, *, error_id: str, known: Sequence[str] = ()) -> FailureDetails:
    """The failure for a call that names no tool of this server (`error_id` for the log line).

    `known` are the names the server does have; the description lists them (capped), so that
    the agent can pick one without listing the tools again.
    """
    shown = sanitize_text(name, limit=MAX_RECEIVED_CHARS)
    logger.info(
        "call named unknown tool %r, errorId %s",
        shown,
        error_id,
        extra=log_fields(shown, error_id, ErrorCategory.VALIDATION),
    )
    return FailureDetails(
        message="Unknown tool",
        category=ErrorCategory.VALIDATION,
        description=f"This server has no tool named {shown!r}. "
        + (
            sanitize_text(f"Call one of these: {', '.join(sorted(known))}.", limit=MAX_DESCRIPTION_CHARS // 2)
            if known
            else "List the tools and call one of those names."
        ),
        code="UNKNOWN_TOOL",
        execution_state=ExecutionState.NOT_EXECUTED,
    )


def _render_received(value: object) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    # Written as its JSON escape, a lone surrogate still shows what was sent.
    return sanitize_text(escape_surrogates(text), limit=MAX_RECEIVED_CHARS)


def _problem_text(item: Mapping[str, Any]) -> str:
    if item["type"] == "missing":
        return "required argument is missing"
    if item["type"] == "extra_forbidden":
        return "unknown argument"
    # pydantic's own message never contains the input value itself.
    return sanitize_text(str(item.get("msg", "invalid value")), limit=MAX_MESSAGE_CHARS)


def _describe_schema(schema: Mapping[str, Any]) -> str | None:
    options: Sequence[Any] = schema.get("anyOf") or [schema]
    parts = [part for option in options if isinstance(option, Mapping) and (part := _describe_one(option))]
    return sanitize_text(" or ".join(parts), limit=MAX_MESSAGE_CHARS) if parts else None


def _describe_one(schema: Mapping[str, Any]) -> str | None:
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return f"exactly {json.dumps(schema['const'])}"
    kind = schema.get("type")
    if not isinstance(kind, str):
        return None
    words = {
        "string": "a string",
        "integer": "an integer",
        "number": "a number",
        "boolean": "true or false",
        "array": "an array",
        "object": "an object",
        "null": "null",
    }
    text = words.get(kind, kind)
    constraints = []
    for key, label in (
        ("pattern", "matching {}"),
        ("format", "in {} format"),
        ("minimum", ">= {}"),
        ("exclusiveMinimum", "> {}"),
        ("maximum", "<= {}"),
        ("exclusiveMaximum", "< {}"),
        ("minLength", "at least {} characters"),
        ("maxLength", "at most {} characters"),
    ):
        if key in schema:
            constraints.append(label.format(schema[key]))
    return f"{text} {', '.join(constraints)}" if constraints else text
