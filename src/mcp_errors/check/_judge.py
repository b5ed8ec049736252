"""Judge one tool result against the rules: pure functions, no I/O.

Each function returns `(rule id, message)` pairs. Rules that read the envelope are skipped
when the envelope is missing, so one defect yields one finding (`ME002`), not a cascade.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, Tool

from mcp_errors._contract import ENVELOPE_SCHEMA, REQUIRED_FIELDS
from mcp_errors._head import read_error_text
from mcp_errors._sanitize import find_leaks
from mcp_errors.check._probes import Probe, schema_validator

__all__ = ["Verdict", "judge_call", "judge_output_mismatch"]

Verdict = tuple[str, str]

_ENVELOPE_VALIDATOR: Final = schema_validator(ENVELOPE_SCHEMA)

_GENERIC: Final = frozenset(
    {
        "operation failed",
        "the operation failed",
        "internal error",
        "internal server error",
        "an internal error occurred",
        "error",
        "an error occurred",
        "an error has occurred",
        "error occurred",
        "unknown error",
        "an unknown error occurred",
        "unexpected error",
        "an unexpected error occurred",
        "something went wrong",
        "failed",
        "failure",
        "request failed",
        "tool failed",
        "tool execution failed",
        "execution failed",
        "invalid input",
        "invalid arguments",
        "invalid argument",
        "invalid parameters",
        "invalid request",
        "bad request",
        "validation error",
        "validation failed",
        "please try again",
        "try again later",
        "please try again later",
    }
)
_GENERIC_PREFIX: Final = re.compile(r"^error executing tool\b")
_MIN_DESCRIPTION_WORDS: Final = 4
_EMPTY_WORDS: Final = re.compile(
    r"\b(no (results?|matches|records?|items?|rows?|entries|data)\b|not found|nothing (was )?found|"
    r"(0|zero) (results?|matches|records?|items?|rows?)|no match|empty result|returned nothing|matched nothing|"
    r"found nothing)",
    re.IGNORECASE,
)
_TRIVIAL_TEXT: Final = frozenset({"", "[]", "{}", "null", "none", '""', "''", "0"})


def judge_call(tool: Tool, probe: Probe, outcome: CallToolResult | MCPError) -> list[Verdict]:
    """Judge what one call returned: a result, or a JSON-RPC error.

    Args:
        tool: The tool as listed.
        probe: The call that was made.
        outcome: The `CallToolResult`, or the `MCPError` the server answered with.

    Returns:
        The failed rules with a message each; empty when the call passed.
    """
    if isinstance(outcome, MCPError):
        if probe.is_invalid:
            return [("ME001", f"{probe.detail}: answered with JSON-RPC error {outcome.code}, not an isError result")]
        return [("ME018", f"a valid call failed with JSON-RPC error {outcome.code}; the model never sees it")]
    if outcome.is_error:
        verdicts = judge_error_result(tool, probe, outcome)
        if not probe.is_invalid and not _declared_write(tool) and _says_empty(outcome):
            verdicts.append(
                (
                    "ME012",
                    "a valid call that matched nothing is marked isError; report it as a success"
                    " (if the tool changes data, annotate it readOnlyHint: false)",
                )
            )
        return verdicts
    if probe.is_invalid:
        return [("ME005", f"{probe.detail}: accepted and run instead of rejected")]
    return _judge_success(outcome)


def judge_output_mismatch(probe: Probe, problem: str) -> list[Verdict]:
    """Judge a success whose structuredContent the client rejected against the outputSchema."""
    verdicts: list[Verdict] = [("ME019", _clip(problem))]
    if probe.is_invalid:
        verdicts.append(("ME005", f"{probe.detail}: accepted and run instead of rejected"))
    return verdicts


def judge_error_result(tool: Tool, probe: Probe, result: CallToolResult) -> list[Verdict]:
    """The rules every `isError` result must pass, plus the probe-specific ones."""
    verdicts: list[Verdict] = []
    leak = _find_leak(result)
    if leak is not None:
        verdicts.append(("ME010", f"{_where(probe)}: error text contains {leak}"))

    structured = result.structured_content
    if isinstance(structured, Mapping) and tool.output_schema is not None:
        validator = schema_validator(tool.output_schema)
        error = next(iter(validator.iter_errors(structured)), None)
        if error is not None:
            verdicts.append(("ME011", f"{_where(probe)}: outputSchema rejects the error's structuredContent"))

    if not isinstance(structured, Mapping) or not all(key in structured for key in REQUIRED_FIELDS):
        missing = (
            "no structuredContent"
            if structured is None
            else ("missing " + ", ".join(key for key in REQUIRED_FIELDS if key not in structured))
        )
        verdicts.append(("ME002", f"{_where(probe)}: error result has {missing}"))
        return verdicts

    envelope_errors = sorted(_ENVELOPE_VALIDATOR.iter_errors(dict(structured)), key=lambda e: list(e.path))
    if envelope_errors:
        first = envelope_errors[0]
        location = ".".join(str(part) for part in first.absolute_path) or "envelope"
        verdicts.append(("ME003", f"{_where(probe)}: {location}: {_clip(first.message)}"))

    category = structured.get("errorCategory")
    description = structured.get("description")
    if probe.is_invalid and category != "validation":
        verdicts.append(("ME004", f"{probe.detail}: errorCategory is {category!r}, expected 'validation'"))
    if isinstance(description, str):
        verdicts.extend(_judge_description(probe, result, structured, description))
    return verdicts


def _judge_description(
    probe: Probe, result: CallToolResult, structured: Mapping[str, Any], description: str
) -> Iterator[Verdict]:
    norm = _normalize(description)
    generic = norm in _GENERIC or bool(_GENERIC_PREFIX.match(norm)) or len(norm.split()) < _MIN_DESCRIPTION_WORDS
    if generic:
        yield "ME006", f"{_where(probe)}: description {_clip(description, 60)!r} is generic"
    # A generic description fails already; whether it also names the field adds nothing.
    if probe.is_invalid and probe.fields and not generic:
        lowered = description.lower()
        if not any(field.lower() in lowered for field in probe.fields):
            yield "ME008", f"{probe.detail}: description does not name {', '.join(probe.fields)}"

    first = result.content[0] if result.content else None
    if not isinstance(first, TextContent):
        yield "ME009", f"{_where(probe)}: the first content block is not text"
        return
    text = first.text
    lowered_text = text.lower()
    missing: list[str] = []
    category = structured.get("errorCategory")
    if isinstance(category, str) and category.lower() not in lowered_text:
        missing.append("the category")
    retryable = structured.get("isRetryable")
    negative = any(word in lowered_text for word in ("not retryable", "non-retryable", "do not retry"))
    if retryable is True and (negative or "retryable" not in lowered_text):
        missing.append("the verdict 'retryable'")
    if retryable is False and not negative:
        missing.append("the verdict 'not retryable'")
    contains_description = _squash(description) in _squash(text)
    if not contains_description:
        missing.append("the description")
    if missing:
        yield "ME009", f"{_where(probe)}: first text block lacks {', '.join(missing)}"

    message = structured.get("message")
    if contains_description and not isinstance(message, str):
        message = _message_of(text, description)
    if isinstance(message, str) and message.strip() and _normalize(message) == norm:
        yield "ME007", f"{_where(probe)}: description only repeats the message {_clip(description, 60)!r}"


def _message_of(text: str, description: str) -> str:
    written = read_error_text(text)
    body = written.body if written is not None else text
    squashed_body = _squash(body)
    squashed_description = _squash(description)
    index = squashed_body.find(squashed_description)
    if index < 0:
        return ""
    return (squashed_body[:index] + squashed_body[index + len(squashed_description) :]).strip()


def _judge_success(result: CallToolResult) -> list[Verdict]:
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    meaningful = [text for text in texts if text.strip().lower() not in _TRIVIAL_TEXT]
    structured = result.structured_content
    count = structured.get("resultCount") if isinstance(structured, Mapping) else None
    looks_empty = not meaningful or count == 0
    if not looks_empty:
        return []
    if any(len(text.split()) >= 3 for text in meaningful):  # a sentence, not a bare literal
        return []
    return [("ME013", "a valid call returned an empty success with no text saying the query ran and matched nothing")]


def _declared_write(tool: Tool) -> bool:
    # For a tool that says it changes data, "order not found" is a broken precondition of
    # the change (a refund of no order), not a query that matched nothing.
    return tool.annotations is not None and tool.annotations.read_only_hint is False


def _says_empty(result: CallToolResult) -> bool:
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    structured = result.structured_content
    if isinstance(structured, Mapping) and isinstance(structured.get("description"), str):
        texts.append(structured["description"])
    if not texts:
        return True
    return any(_EMPTY_WORDS.search(text) for text in texts)


def _find_leak(result: CallToolResult) -> str | None:
    for text in _texts(result):
        leaks = find_leaks(text)
        if leaks:
            return _clip(leaks[0], 60)
    return None


def _texts(result: CallToolResult) -> Iterator[str]:
    for block in result.content:
        if isinstance(block, TextContent):
            yield block.text
    if result.structured_content is not None:
        yield from _strings(result.structured_content)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _where(probe: Probe) -> str:
    return probe.detail or "valid call"


def _normalize(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
