"""Writing a failure as a result: the `structuredContent` envelope and the whole `CallToolResult`.

MCP's `CallToolResult` has only `content`, `structuredContent` and `isError`. This module
builds results whose `structuredContent` carries the application-level error envelope
(`errorCategory`, `isRetryable`, `description` and the optional fields) and whose first
text block (`error_text.py`) repeats the same facts for hosts that show the model only text. It
also widens outputSchemas so that strict clients accept those results.

Nothing here knows about exceptions: `_server/classify.py` decides *what* a failure is, this module
decides *how it is written*. The envelope is hand-written on purpose: no library ships it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from mcp_types import CallToolResult, TextContent

from mcp_errors._shared.advice import EMPTY_ANSWER, to_milliseconds
from mcp_errors._shared.contract import CONTRACT_FIELDS, ErrorCategory, ExecutionState, FieldError
from mcp_errors._shared.error_text import ErrorHead, with_error_id, write_error_text
from mcp_errors._shared.sanitize import encodable
from mcp_errors._shared.widening import admit_error_envelope

__all__ = [
    "CATEGORY_INFERRED",
    "FailureDetails",
    "ResultLike",
    "WideningCache",
    "admit_error_envelope",
    "as_sentence",
    "empty_result",
    "error_result",
    "is_empty_result",
    "marked_empty",
]


CATEGORY_INFERRED: Final = "categoryInferred"
"""Envelope field, `true` when the category was inferred from an upstream's words, not declared."""


@dataclass(frozen=True, slots=True)
class FailureDetails:
    """A fully classified failure, ready to be written as an error result.

    It says *what* failed, not *which occurrence*: the `errorId` of each failing call is
    given to `error_result`. That lets the classifier share one instance among all the
    failures of the same kind (docs/performance.md), so instances are frozen. Texts here are
    already safe for the agent: the server side sanitises them.
    """

    message: str
    category: ErrorCategory
    description: str
    code: str | None = None
    retry_after_seconds: float | None = None
    field_errors: tuple[FieldError, ...] = ()
    execution_state: ExecutionState | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    inferred: bool = False
    """Whether the category was guessed (a proxy reading an upstream's prose) rather than
    declared: the head then says `(inferred)` and the envelope has `categoryInferred: true`."""
    _written: tuple[str, dict[str, Any]] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.retry_after_seconds is not None:
            # One value for the head, the envelope and telemetry, as a person reads it: a
            # computed backoff is no 0.1861972720000722 (`to_milliseconds`).
            object.__setattr__(self, "retry_after_seconds", to_milliseconds(self.retry_after_seconds))

    def to_structured(self, error_id: str | None = None) -> dict[str, Any]:
        """The `structuredContent` object of the error result (a new dict on each call)."""
        return self.write(error_id)[1]

    def to_text(self, error_id: str | None = None) -> str:
        """The first text block: enough on its own for hosts that show only text."""
        return self.write(error_id)[0]

    def write(self, error_id: str | None = None) -> tuple[str, dict[str, Any]]:
        """The first text block and the `structuredContent` of one occurrence."""
        # Written once per instance, and shared instances fail over and over: what is left
        # per call is adding the errorId.
        written = self._written
        if written is None:
            written = (self._text(), self._structured())
            object.__setattr__(self, "_written", written)
        text, structured = written
        # A new dict per result, nested lists and objects too when there are any: a caller
        # changing one result must not change the next.
        fresh = copy.deepcopy(structured) if self.field_errors or self.extra else dict(structured)
        if error_id is None:
            return text, fresh
        fresh["errorId"] = error_id
        return with_error_id(text, error_id), fresh

    def _structured(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "errorCategory": self.category.value,
            "isRetryable": self.category.is_retryable,
            "description": self.description,
        }
        if self.code is not None:
            data["code"] = self.code
        if self.retry_after_seconds is not None:
            data["retryAfterSeconds"] = self.retry_after_seconds
        if self.field_errors:
            data["fieldErrors"] = [error.to_json() for error in self.field_errors]
        if self.execution_state is not None:
            data["executionState"] = self.execution_state.value
        if self.inferred:
            data[CATEGORY_INFERRED] = True
        for key, value in self.extra.items():
            # The contract's fields are the contract's alone, even those this failure leaves
            # out: an extra `retryAfterSeconds` on a business error would break the envelope.
            if key not in CONTRACT_FIELDS:
                data.setdefault(key, value)
        return data

    def _text(self) -> str:
        head = ErrorHead(self.category, self.category.is_retryable, self.retry_after_seconds, inferred=self.inferred)
        # A failure whose description already says everything has no message of its own.
        body = f"{as_sentence(self.message)} {self.description}" if self.message else self.description
        if self.field_errors:
            # Hosts that show only text never see `fieldErrors`: spell each one out.
            body += " Fields: " + "; ".join(error.to_sentence() for error in self.field_errors) + "."
        return write_error_text(head, body)


def as_sentence(text: str) -> str:
    """`text` stripped, ending with a full stop unless it already ends a sentence."""
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else f"{text}."


class ResultLike(Protocol):
    """What a tool result has, whichever library built it (`CallToolResult`, fastmcp's `ToolResult`)."""

    @property
    def content(self) -> Sequence[Any]: ...
    @property
    def structured_content(self) -> Any: ...


def error_result(
    details: FailureDetails, *, error_id: str | None = None, meta: Mapping[str, Any] | None = None
) -> CallToolResult:
    """Write a classified failure as an `isError` result.

    Args:
        details: The failure, already classified and sanitised.
        error_id: This occurrence's id, also in the server's log line for it.
        meta: An existing `_meta` to keep; the result's `_meta` is merged into it, never
            replacing it.

    Returns:
        A `CallToolResult` with `isError: true`, one self-sufficient text block and the
        envelope as `structuredContent`.
    """
    text, structured = details.write(error_id)
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=True,
        _meta=dict(meta) if meta else None,
    )


def empty_result(summary: str, structured: Mapping[str, Any] | None = None) -> CallToolResult:
    """Build a valid empty result: the query ran and matched nothing.

    This is a success, not an error: an agent must not resend it. Say in `summary` what
    was searched, e.g. `"No customer matches email 'a@b.c'; the lookup ran and found
    nothing."`, so that text-only hosts see the difference from a failure.

    Args:
        summary: The text block the model reads.
        structured: The `structuredContent`, shaped like the tool's successful output;
            `resultCount: 0` is added when missing. Defaults to `{"resultCount": 0}`.

    Returns:
        A `CallToolResult` with `isError: false`.

    Example:
        ```python
        from mcp.server.mcpserver import MCPServer
        from mcp_types import CallToolResult
        from mcp_errors import empty_result, install

        server = install(MCPServer("crm"))
        customers: dict[str, list[str]] = {}


        @server.tool()
        def lookup_customer(email: str) -> CallToolResult:
            rows = customers.get(email, [])
            if not rows:
                return empty_result(
                    f"No customer matches email {email!r}; the lookup ran and found nothing.",
                    {"resultCount": 0, "customers": []},
                )
            return CallToolResult(content=[], structured_content={"resultCount": len(rows), "customers": rows})


        assert not lookup_customer("ada@example.com").is_error
        ```
    """
    data: dict[str, Any] = dict(structured) if structured is not None else {}
    data.setdefault("resultCount", 0)
    # The summary often names what was searched, as the caller or the file system spelled it.
    text = encodable(summary)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data, is_error=False)


def marked_empty(content: Sequence[object], structured: object) -> CallToolResult | None:
    """A tool's bare empty answer as the valid empty result, or `None` for any other answer.

    A tool that returns `[]` or `None` gives `content: []` (and, with an outputSchema, the SDKs'
    `{"result": []}` or `{"result": null}`): to a model that looks like a failure swallowed.
    `install` sends instead `empty_result`'s shape: a text that says the call ran and found
    nothing, and `resultCount: 0` beside what the tool returned (the SDKs' wrapping object
    admits it, so the outputSchema still holds). Anything with content, or any other
    structuredContent, is the tool's own answer and is left as it is.

    Args:
        content: The answer's content blocks.
        structured: Its structuredContent.

    Returns:
        The result to send instead, or `None` when the answer is not a bare empty one.
    """
    if content:
        return None
    if structured is None or (isinstance(structured, Mapping) and not structured):
        data: dict[str, Any] = {}
    elif (
        isinstance(structured, Mapping)
        and structured.keys() == {"result"}
        and (structured["result"] is None or structured["result"] == [])
    ):
        data = dict(structured)
    else:
        return None
    return empty_result(EMPTY_ANSWER, data)


def is_empty_result(result: ResultLike) -> bool:
    """Whether a successful result is a valid empty result: the call ran and matched nothing.

    That is `structuredContent.resultCount == 0`, or no content at all (`content` empty and
    `structuredContent` absent, empty, or the SDKs' wrapping of an empty return value,
    `{"result": []}`). A partial report (`partial: true`) is never empty: the sources that
    failed may hold what the others did not find.
    """
    structured = result.structured_content
    if isinstance(structured, Mapping) and structured.get("partial") is True:
        # A partial report whose answers found nothing still misses the failed sources'.
        return False
    if (
        isinstance(structured, Mapping)
        and type(structured.get("resultCount")) is int
        and structured["resultCount"] == 0
    ):
        return True
    if isinstance(structured, Mapping) and structured.keys() == {"result"}:
        # The SDKs wrap a non-object return value as `{"result": value}`.
        structured = structured["result"]
    return not result.content and structured in (None, {}, [], "")


class WideningCache:
    """`admit_error_envelope` per tool, redone only when a tool's outputSchema changes.

    tools/list is asked for on every new session, and MCPServer builds a new schema dict for
    each listing: an equal schema (compared in C, a small fraction of widening it again)
    gets the widened copy made the first time.
    """

    def __init__(self) -> None:
        self._by_name: dict[str, tuple[object, dict[str, Any] | None]] = {}

    def widen(self, tool: Any) -> dict[str, Any] | None:
        """The widened outputSchema of `tool` (an MCP or fastmcp `Tool`)."""
        schema = tool.output_schema
        hit = self._by_name.get(tool.name)
        if hit is None or (hit[0] is not schema and hit[0] != schema):
            # A copy is kept: the tool's own dict may be changed in place later.
            hit = (copy.deepcopy(schema), admit_error_envelope(schema))
            self._by_name[tool.name] = hit
        return hit[1]
