"""Judge one tool result against the rules: pure functions, no I/O.

Each function returns `(rule id, message)` pairs, the message naming the call first
(`probe 'count': minimum 1 broken: ...`, `valid call: ...`). Rules that read the envelope are
skipped when the envelope is missing, so one defect yields one contract finding (`ME002`), not
a cascade; the rules any server must pass (the text of an error, leaks, failures disguised as
successes) judge every result, envelope or not.

Schemas are the server's: results are validated through `_patterns` (bounded in time), which
raises a `CutShortError` rather than hang on a backtracking pattern.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any, Final

from jsonschema.exceptions import best_match
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, Tool

from mcp_errors._shared.contract import ENVELOPE_SCHEMA, REQUIRED_FIELDS
from mcp_errors._shared.error_text import read_error_text
from mcp_errors._shared.failure_words import judge_failure, judge_success, strip_sdk_wrappers
from mcp_errors._shared.sanitize import find_leaks
from mcp_errors._shared.text import one_line
from mcp_errors._shared.tool_failure import TOOL_FAILURE_META
from mcp_errors.check._paths import argument_paths, mask_known_paths
from mcp_errors.check._probes import Probe, schema_validator

__all__ = ["ENVELOPE_FIX", "RAW_DUMP_ADVICE", "Verdict", "judge_call", "raw_dump", "reads_as_failure"]

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
    r"\b(no (results?|matches|records?|items?|rows?|entries|data|hits)\b|not found|nothing (was )?found|"
    r"(0|zero) (results?|matches|records?|items?|rows?|hits)|no match|empty result|returned nothing|matched nothing|"
    r"found nothing|no \w+ (?:match(?:es|ed)?|found)\b)",
    re.IGNORECASE,
)
# A thing the caller named is not there: "404 Not Found", "ENOENT", "Note 'x' does not exist".
_MISSING: Final = re.compile(
    r"\b(?:not found|does not exist|doesn't exist|no such|(?:could|can)(?:not|n't) find|cannot find|unknown)\b",
    re.IGNORECASE,
)
_MISSING_ADDRESS: Final = re.compile(r"\b(?:404|410|ENOENT)\b")
# An argument that addresses one thing (a URL, a file, a note), not a query or a record's key.
_ADDRESS_WORDS: Final = frozenset(
    {"url", "uri", "link", "href", "path", "file", "filename", "filepath", "folder", "directory", "dir"}
    | {"note", "page", "document", "doc", "resource", "repo", "repository", "name", "title"}
)
_URL: Final = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# The whole answer being one of these (any case, blank around it) says nothing; `0` is a value.
_TRIVIAL_TEXT: Final = frozenset({"", "[]", "{}", "null", "none", '""', "''"})
_TEXT_CHARS: Final = 20_000
"""Server text is judged on its start: enough for any message, bounded for a hostile one."""
_SHOWN_CHARS: Final = 160
"""How much of a schema error a verdict quotes."""
_FIRST_LINE_CHARS: Final = 200

# A bare label before the real message ("Error: ", "Failure - "), removed (after the SDKs'
# wrappers, `strip_sdk_wrappers`) before judging whether the message is generic.
_BARE_LABEL: Final = re.compile(r"^\s{0,8}(?:error|exception|failure)\s{0,3}[:\-–—]\s{0,8}", re.IGNORECASE)
_MIN_TEXT_WORDS: Final = 3
_RAW_DUMPS: Final = (
    (re.compile(r"errors\.pydantic\.dev|\[type=\w+, input_value="), "a raw pydantic validation report"),
    (
        re.compile(r"\bCmd\('[^']*'\) failed|\bcmdline: |returned non-zero exit status \d+"),
        "a subprocess command line and its exit status",
    ),
    (re.compile(r'"code":\s*"invalid_(?:type|union|enum_value|string|literal)"'), "a raw zod issue list"),
)
RAW_DUMP_ADVICE: Final = "say in words what is wrong and how to fix it"
ENVELOPE_FIX: Final = (
    "fix: `install(server)` from mcp_errors on an MCPServer or fastmcp server, or `mcp-errors proxy` in front of"
    " any server; `--contract off` checks only what any MCP server owes"
)
"""How a server gets the envelope (ME002): what its author can do today, in one sentence."""
# A word no prose has: camelCase, snake_case or with digits (`statusArguments`, `git_log`, `128`).
_IDENTIFIER: Final = re.compile(r"\b\w*(?:[a-z][A-Z]|[_\d])\w*")
_QUOTED_VALUE: Final = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"")
_PLURAL_ERRORS: Final = re.compile(r"\berrors\b")
# Words that tell an agent what kind of failure it met or whether resending can work.
_RECOVERY_HINT: Final = re.compile(
    r"\b(?:retry|retryable|retriable|try again|later|temporar\w*|transient|timed out|time ?out|unavailable"
    r"|rate[- ]limit\w*|too many|busy|locked|overloaded|invalid|must|expected|required|missing|not found|no such"
    r"|does not exist|doesn't exist|not allowed|outside|denied|forbidden|permission|unauthori[sz]ed|illegal"
    r"|unsupported|unknown|syntax|too (?:large|long|big|small|short)|exceeds?|conflict|already exists"
    r"|malformed|cannot|can't|refused|unreachable|escalate|approval|not an?|no changes|nothing to"
    # ... or what to do next: "Use git_add to stage changes first", "pass a path instead".
    r"|use|call|pass|provide|specify|first|instead|ask)\b",
    re.IGNORECASE,
)
_SIGNAL_KEYS: Final = frozenset(
    {"isRetryable", "retryable", "retriable", "is_retryable", "errorCategory", "category", "errorType", "code"}
)


def judge_call(
    tool: Tool, probe: Probe, outcome: CallToolResult | MCPError, *, domain: Collection[str] = ()
) -> list[Verdict]:
    """Judge what one call returned: a result, or a JSON-RPC error.

    Args:
        tool: The tool as listed.
        probe: The call that was made.
        outcome: The `CallToolResult`, or the `MCPError` the server answered with.
        domain: Paths in the server's own domain (roots it allows, the user's `--args`): an
            error that names them informs the agent, it does not leak.

    Returns:
        The failed rules with a message each; empty when the call passed.

    Raises:
        CutShortError: Validating against the tool's outputSchema took too long.
    """
    if isinstance(outcome, MCPError):
        if probe.is_invalid:
            return [("ME001", f"{probe.label}: answered with JSON-RPC error {outcome.code}, not an isError result")]
        return [("ME018", f"{probe.label}: failed with JSON-RPC error {outcome.code}; the model never sees it")]
    if outcome.is_error:
        verdicts = judge_error_result(tool, probe, outcome, domain=domain)
        if _empty_result_as_error(tool, probe, outcome):
            verdicts.append(
                (
                    "ME012",
                    f"{probe.label}: matched nothing and is marked isError; report it as a success"
                    " (if the tool changes data, annotate it readOnlyHint: false)",
                )
            )
        return verdicts
    disguised = reads_as_failure(outcome, probe.arguments)
    if disguised is not None:
        return [("ME022", f"{probe.label}: marked a success (isError false) but reads as a failure: {disguised}")]
    verdicts = _judge_output(tool, probe, outcome)
    if probe.is_invalid:
        return [("ME005", f"{probe.label}: accepted and run instead of rejected"), *verdicts]
    return verdicts + ([] if _declared_write(tool) else _judge_success(probe, outcome))


def _judge_output(tool: Tool, probe: Probe, result: CallToolResult) -> list[Verdict]:
    if tool.output_schema is None:
        return []
    structured = result.structured_content
    if structured is None:
        return [("ME019", f"{probe.label}: the tool has an outputSchema but the success has no structuredContent")]
    error = best_match(schema_validator(tool.output_schema).iter_errors(structured))
    if error is None:
        return []
    return [
        ("ME019", f"{probe.label}: structuredContent breaks the outputSchema: {one_line(error.message, _SHOWN_CHARS)}")
    ]


def judge_error_result(
    tool: Tool, probe: Probe, result: CallToolResult, *, domain: Collection[str] = ()
) -> list[Verdict]:
    """The rules every `isError` result must pass, plus the probe-specific ones."""
    verdicts: list[Verdict] = []
    leak = _find_leak(result, [*domain, *argument_paths(probe.arguments)])
    if leak is not None:
        verdicts.append(("ME010", f"{probe.label}: error text contains {leak}"))
    verdicts.extend(_judge_error_text(probe, result))

    structured = result.structured_content
    if isinstance(structured, Mapping) and tool.output_schema is not None:
        validator = schema_validator(tool.output_schema)
        error = next(iter(validator.iter_errors(structured)), None)
        if error is not None:
            verdicts.append(("ME011", f"{probe.label}: outputSchema rejects the error's structuredContent"))

    if not isinstance(structured, Mapping) or not all(key in structured for key in REQUIRED_FIELDS):
        missing = (
            "no structuredContent"
            if structured is None
            else ("a structuredContent without " + ", ".join(key for key in REQUIRED_FIELDS if key not in structured))
        )
        verdicts.append(
            (
                "ME002",
                f"{probe.label}: the error result has {missing}: the agent gets no category and no retry verdict"
                f" ({ENVELOPE_FIX})",
            )
        )
        return verdicts

    envelope_errors = sorted(_ENVELOPE_VALIDATOR.iter_errors(dict(structured)), key=lambda e: list(e.path))
    if envelope_errors:
        first = envelope_errors[0]
        location = ".".join(str(part) for part in first.absolute_path) or "envelope"
        verdicts.append(("ME003", f"{probe.label}: {location}: {one_line(first.message, _SHOWN_CHARS)}"))

    category = structured.get("errorCategory")
    description = structured.get("description")
    if probe.is_invalid and category != "validation":
        verdicts.append(("ME004", f"{probe.label}: errorCategory is {category!r}, expected 'validation'"))
    if isinstance(description, str):
        verdicts.extend(_judge_description(probe, result, structured, description))
    return verdicts


def _judge_error_text(probe: Probe, result: CallToolResult) -> Iterator[Verdict]:
    """What any agent needs from an error's text, with or without an envelope (ME023-ME025)."""
    text = _first_text(result)
    core = _unwrapped(text)
    if core is None:
        shown = repr(one_line(text, 60)) if text.strip() else "no text at all"
        yield "ME023", f"{probe.label}: the error says only {shown}: say what went wrong and what to do next"
        return
    kind = _raw_dump_kind(text)
    if kind is not None:
        yield "ME024", f"{probe.label}: the error text is {kind}: {RAW_DUMP_ADVICE}"
    if not _has_recovery_signal(probe, result, text):
        yield (
            "ME025",
            f"{probe.label}: the error gives no category and no retry signal: nothing structured (an envelope,"
            " toolFailure metadata) and its text says neither what kind of failure it is nor whether resending"
            " can work; an agent can only guess",
        )


def raw_dump(tool_name: str, result: CallToolResult) -> tuple[str, str] | None:
    """The kind of raw dump an error's text is (ME024) and the shape of its first line, or `None`.

    The shape is the first line with the tool's own name, identifiers (`statusArguments`,
    `git_status`), numbers and quoted values taken out: MCPServer answers bad arguments on every
    tool with `Error executing tool <name>: 1 validation error for <function>Arguments`, one
    shape, so one cause (the framework's), however many tools.
    """
    text = _first_text(result)
    kind = _raw_dump_kind(text)
    if kind is None:
        return None
    first_line = text.lstrip().split("\n", 1)[0][:_FIRST_LINE_CHARS]
    if tool_name:
        first_line = first_line.replace(tool_name, "<tool>")
    shape = _QUOTED_VALUE.sub("''", _IDENTIFIER.sub("<id>", first_line)).lower()
    return kind, " ".join(_PLURAL_ERRORS.sub("error", shape).split())


def _raw_dump_kind(text: str) -> str | None:
    for pattern, kind in _RAW_DUMPS:
        if pattern.search(text[:_TEXT_CHARS]):
            return kind
    return None


def _judge_description(
    probe: Probe, result: CallToolResult, structured: Mapping[str, Any], description: str
) -> Iterator[Verdict]:
    norm = _normalize(description)
    generic = norm in _GENERIC or bool(_GENERIC_PREFIX.match(norm)) or len(norm.split()) < _MIN_DESCRIPTION_WORDS
    if generic:
        yield "ME006", f"{probe.label}: description {one_line(description, 60)!r} is generic"
    # A generic description fails already; whether it also names the field adds nothing.
    if probe.is_invalid and probe.fields and not generic:
        lowered = description.lower()
        if not any(field.lower() in lowered for field in probe.fields):
            yield "ME008", f"{probe.label}: description does not name {', '.join(probe.fields)}"

    first = result.content[0] if result.content else None
    if not isinstance(first, TextContent):
        yield "ME009", f"{probe.label}: the first content block is not text"
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
        yield "ME009", f"{probe.label}: first text block lacks {', '.join(missing)}"

    message = structured.get("message")
    if contains_description and not isinstance(message, str):
        message = _message_of(text, description)
    if isinstance(message, str) and message.strip() and _normalize(message) == norm:
        yield "ME007", f"{probe.label}: description only repeats the message {one_line(description, 60)!r}"


def _message_of(text: str, description: str) -> str:
    written = read_error_text(text)
    body = written.body if written is not None else text
    squashed_body = _squash(body)
    squashed_description = _squash(description)
    index = squashed_body.find(squashed_description)
    if index < 0:
        return ""
    return (squashed_body[:index] + squashed_body[index + len(squashed_description) :]).strip()


def _judge_success(probe: Probe, result: CallToolResult) -> list[Verdict]:
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    meaningful = [text for text in texts if text.strip().lower() not in _TRIVIAL_TEXT]
    structured = result.structured_content
    count = structured.get("resultCount") if isinstance(structured, Mapping) else None
    looks_empty = (not meaningful and len(result.content) == len(texts)) or count == 0
    if not looks_empty:
        return []
    if any(len(text.split()) >= 3 for text in meaningful):  # a sentence, not a bare literal
        return []
    shown = "no content" if not result.content else repr(one_line(" ".join(texts), 40))
    return [
        (
            "ME013",
            f"{probe.label}: the whole answer is {shown}, with no text saying the query ran and matched nothing",
        )
    ]


def reads_as_failure(result: CallToolResult, arguments: Mapping[str, Any] | None = None) -> str | None:
    """What makes a result marked a success read as a failure, or `None` when it reads as one.

    For ME022 and for whether a valid call "succeeded": the shared judge of failures disguised
    as successes (`_shared/failure_words.py`), the one `mcp-errors proxy --disguised-failures`
    uses: a text that leads with an error label, a JSON object or `structuredContent` that
    reports an error.
    """
    judged = judge_success(_first_text(result), result.structured_content, arguments=arguments)
    return None if judged is None else judged.evidence


def _declared_write(tool: Tool) -> bool:
    # For a tool that says it changes data, "order not found" is a broken precondition of
    # the change (a refund of no order), not a query that matched nothing.
    return tool.annotations is not None and tool.annotations.read_only_hint is False


def _empty_result_as_error(tool: Tool, probe: Probe, result: CallToolResult) -> bool:
    """Whether an error answered a query or listing that ran and matched nothing (ME012).

    An `empty` call from `--args` is such a query whatever the error says; a valid call is when
    its error says so ("no results", "not found", or no text at all). Neither is when the error
    says that the one thing the caller addressed (a URL, a file, a note) is not there: that is
    a missing resource, and an error. A tool that declares a write ran no query at all.
    """
    if _declared_write(tool) or probe.kind not in ("valid", "empty"):
        return False
    texts = [block.text[:_TEXT_CHARS] for block in result.content if isinstance(block, TextContent)]
    structured = result.structured_content
    if isinstance(structured, Mapping) and isinstance(structured.get("description"), str):
        texts.append(structured["description"][:_TEXT_CHARS])
    if _names_missing_resource(probe, texts):
        return False
    return probe.kind == "empty" or not texts or any(_EMPTY_WORDS.search(text) for text in texts)


def _names_missing_resource(probe: Probe, texts: list[str]) -> bool:
    addressed = [
        value
        for name, value in probe.arguments.items()
        if isinstance(value, str) and value and (_addresses(name) or _URL.match(value) or "/" in value)
    ]
    if not addressed:
        return False
    for text in texts:
        if _MISSING_ADDRESS.search(text):
            return True
        if _MISSING.search(text):
            lowered = text.lower()
            if any(_last_part(value).lower() in lowered for value in addressed):
                return True
    return False


def _addresses(name: str) -> bool:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().replace("-", "_").split("_")
    return bool(words) and words[-1] in _ADDRESS_WORDS


def _last_part(value: str) -> str:
    """`https://x.org/a/page` -> `page`, `/srv/notes/x.md` -> `x.md`: what a message may quote."""
    part = value.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
    return part if len(part) >= 2 else value


def _find_leak(result: CallToolResult, domain: Collection[str]) -> str | None:
    for text in _texts(result):
        leaks = find_leaks(mask_known_paths(text[:_TEXT_CHARS], domain))
        if leaks:
            return one_line(leaks[0], 60)
    return None


def _first_text(result: CallToolResult) -> str:
    first = next((block.text for block in result.content if isinstance(block, TextContent)), "")
    return first[:_TEXT_CHARS]


def _unwrapped(text: str) -> str | None:
    """The message inside the wrappers SDKs put around it, or `None` when it is generic."""
    core = strip_sdk_wrappers(text)
    for _ in range(3):
        core = _BARE_LABEL.sub("", core, count=1)
    norm = _normalize(core)
    if not norm or norm in _GENERIC or len(norm.split()) < _MIN_TEXT_WORDS:
        return None
    return core


def _has_recovery_signal(probe: Probe, result: CallToolResult, text: str) -> bool:
    structured = result.structured_content
    if isinstance(structured, Mapping) and _SIGNAL_KEYS & set(structured):
        return True
    if isinstance(result.meta, Mapping) and TOOL_FAILURE_META in result.meta:
        return True
    if _RECOVERY_HINT.search(text) or judge_failure(text, arguments=probe.arguments) is not None:
        # Words an agent can act on: the shared vocabulary names a kind of failure.
        return True
    # Naming the argument (or quoting the value) that is wrong says what to fix.
    lowered = text.lower()
    for name, value in probe.arguments.items():
        spoken = " ".join(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").split()).lower()
        if name.lower() in lowered or (spoken and spoken in lowered):
            return True
        if isinstance(value, str) and len(value) >= 3 and value.lower() in lowered:
            return True
    return any(field.lower() in lowered for field in probe.fields)


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


def _normalize(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()
