"""The contract's vocabulary: the four categories, execution states, field errors, the schema.

This is the bottom layer: the server side writes these values, the client side reads them,
and neither needs the other to do so. How a failure is written as a result is in
`envelope.py` (structuredContent) and `error_text.py` (the first text line); the taxonomy with
the exception each category is raised with is drawn in `_server/errors.py`.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY, URL_ELICITATION_REQUIRED

__all__ = [
    "CATEGORY_VALUES",
    "CONTRACT_FIELDS",
    "ENVELOPE_SCHEMA",
    "HONOURS_IDEMPOTENCY_META",
    "IDEMPOTENCY_KEY_META",
    "MAX_RETRY_AFTER_SECONDS",
    "PROTOCOL_SIGNAL_CODES",
    "REPEAT_OF_META",
    "REPLAYED_META",
    "REQUIRED_FIELDS",
    "RETIRED_RESOURCE_NOT_FOUND",
    "TASKS_EXTENSION",
    "TASK_META",
    "TOOL_FAILURE_META",
    "WRITTEN_CODES",
    "ErrorCategory",
    "ExecutionState",
    "FieldError",
    "asks_for_tasks",
    "is_error_envelope",
    "is_protocol_signal",
]


class ErrorCategory(enum.StrEnum):
    """What kind of failure a tool hit, which decides how an agent recovers.

    The taxonomy, with the recovery for each category and the exception a tool raises for
    it, is drawn at the top of `mcp_errors._server.errors` and in docs/wire-format.md.
    """

    TRANSIENT = "transient"
    VALIDATION = "validation"
    BUSINESS = "business"
    PERMISSION = "permission"

    @property
    def is_retryable(self) -> bool:
        """Whether resending the exact same call can succeed: only for transient failures."""
        return self is ErrorCategory.TRANSIENT


class ExecutionState(enum.StrEnum):
    """Whether the failed operation changed anything, so a client knows if a resend is safe."""

    NOT_EXECUTED = "not_executed"
    """Nothing was applied: resending cannot duplicate a side effect."""
    OUTCOME_UNKNOWN = "outcome_unknown"
    """The operation may or may not have been applied (for example a write that timed out)."""


@dataclass(frozen=True, slots=True)
class FieldError:
    """One bad argument of a `validation` failure."""

    field: str
    """Dotted path of the argument, e.g. `order_id` or `items.0.qty`."""
    problem: str
    """What is wrong with it."""
    expected: str | None = None
    """What would be accepted, e.g. `a string matching #NNNNN`."""
    received: str | None = None
    """A truncated, redacted rendering of the value that was sent."""

    def to_sentence(self) -> str:
        """`field: problem (expected ...; received ...)`, for the text block."""
        details = []
        if self.expected is not None:
            details.append(f"expected {self.expected}")
        if self.received is not None:
            details.append(f"received {self.received}")
        return f"{self.field}: {self.problem}" + (f" ({'; '.join(details)})" if details else "")

    def to_json(self) -> dict[str, str]:
        data = {"field": self.field, "problem": self.problem}
        if self.expected is not None:
            data["expected"] = self.expected
        if self.received is not None:
            data["received"] = self.received
        return data


ENVELOPE_SCHEMA: Final[dict[str, Any]] = json.loads(
    resources.files("mcp_errors").joinpath("error-envelope.schema.json").read_text(encoding="utf-8")
)
"""JSON Schema of the error envelope (`structuredContent` of an error result)."""

REQUIRED_FIELDS: Final[tuple[str, ...]] = tuple(ENVELOPE_SCHEMA["required"])
"""The envelope's required fields, in the schema's order."""
CATEGORY_VALUES: Final = frozenset(category.value for category in ErrorCategory)
"""The four `errorCategory` strings, for checking untrusted input."""
CONTRACT_FIELDS: Final = frozenset(ENVELOPE_SCHEMA["properties"])
"""The envelope's field names, which `extra` fields may not use."""

WRITTEN_CODES: Final = frozenset(
    {
        "ACCESS_DENIED",
        "ALL_SOURCES_FAILED",
        "ANSWER_NOT_KEPT",
        "CLIENT_CAPABILITY_REQUIRED",
        "DATABASE_BUSY",
        "IDEMPOTENCY_KEY_INVALID",
        "IDEMPOTENCY_KEY_REUSED",
        "IDEMPOTENCY_KEY_USED_UP",
        "IDEMPOTENCY_STORE_UNAVAILABLE",
        "IDEMPOTENCY_STORE_UNWRITABLE",
        "IN_PROGRESS",
        "INTERNAL_ERROR",
        "INVALID_ARGUMENTS",
        "INVALID_REQUEST",
        "NOT_FOUND",
        "OUTCOME_UNKNOWN",
        "TASK_CANCELLED",
        "TASK_DEADLINE",
        "TASK_EXPIRED",
        "TASK_FAILED",
        "TASK_INPUT_REQUIRED",
        "TASK_LOOKUP_FAILED",
        "TASK_NOT_RELAYED",
        "TASK_POLL_FAILED",
        "TASK_RUNNING",
        "TASK_TIMEOUT",
        "TOOL_ERROR",
        "TOOL_TIMEOUT",
        "UNKNOWN_TOOL",
        "UPSTREAM_BUSY",
        # Written for an HTTP 409/412, 403, 400/422 and 401 before the signal tables (0.1.0's
        # development versions), and by shipped rules files (UPSTREAM_FORBIDDEN): kept as labels.
        "UPSTREAM_CONFLICT",
        "UPSTREAM_CONNECTION_LOST",
        "UPSTREAM_EXITED",
        "UPSTREAM_FORBIDDEN",
        "UPSTREAM_RATE_LIMITED",
        "UPSTREAM_REJECTED_INPUT",
        "UPSTREAM_TIMEOUT",
        "UPSTREAM_UNAUTHORIZED",
        "UPSTREAM_UNAVAILABLE",
    }
)
"""The codes mcp-errors writes by name (the server side, replay, the proxy and partial reports).

With the codes of the vocabulary and of the signal tables they make `CONTRACT_CODES`
(`_shared/signals.py`), which `tests/shared/test_contract.py` derives from the source too.
"""
MAX_RETRY_AFTER_SECONDS: Final = 86_400.0
"""The longest wait either side reads or writes (a day): a longer one is no retry an agent
will sit out, and capped, any wait a peer sends stays a finite number."""


def is_error_envelope(value: object) -> bool:
    """Whether `value` has the envelope's required fields with consistent values."""
    if not isinstance(value, Mapping) or not value.keys() >= _REQUIRED:
        return False
    category = value.get("errorCategory")
    retryable = value.get("isRetryable")
    return (
        category in CATEGORY_VALUES
        and isinstance(retryable, bool)
        and retryable == (category == ErrorCategory.TRANSIENT.value)
        and isinstance(description := value.get("description"), str)
        and description != ""  # the schema's `minLength: 1`
    )


_REQUIRED: Final = frozenset(REQUIRED_FIELDS)


def is_protocol_signal(exc: BaseException) -> bool:
    """Whether `exc` is a JSON-RPC error the protocol needs on the wire, not a tool failure.

    Two codes ask something of the client rather than report a failure, and a client acts
    on them only as JSON-RPC errors: `-32042` (complete a URL elicitation, then call again)
    and `-32021` (the client lacks a capability the tool needs, SEP-2575; fastmcp keeps it
    too). Every other exception a tool raises, `MCPError` included, is a tool failure.
    """
    return isinstance(exc, MCPError) and exc.code in PROTOCOL_SIGNAL_CODES


PROTOCOL_SIGNAL_CODES: Final = frozenset({URL_ELICITATION_REQUIRED, MISSING_REQUIRED_CLIENT_CAPABILITY})
"""The JSON-RPC error codes that stay JSON-RPC errors on every path (`is_protocol_signal`)."""

RETIRED_RESOURCE_NOT_FOUND: Final = -32002
"""Resource not found up to 2025-11-25. 2026-07-28 answers -32602 instead and forbids emitting it
(clients should still accept it); -32042, URL elicitation required, is retired likewise."""


# -- where idempotency keys travel (`_meta` keys shared by the client policy and the servers) --

IDEMPOTENCY_KEY_META: Final = "mcp-errors/idempotencyKey"
"""Key in the `tools/call` request's `params._meta` that carries the idempotency key.

The client policy creates one key per logical operation and sends the same key on every
resend of it."""

REPLAYED_META: Final = "mcp-errors/replayed"
"""Key in a `tools/call` result's `_meta`, `true` when the server answered a repeated
idempotency key from its store instead of running the tool (the first answer, or what the
key holds instead: an unknown outcome, an answer too large to keep): resending the same key
again gets the same answer."""

REPEAT_OF_META: Final = "mcp-errors/repeatOf"
"""`_meta` key of the proxy's guarded repeat (`proxy/_guard.py`): which answer it repeats, and
how long ago that was; one of the keys only the proxy writes (an upstream's own is dropped)."""

HONOURS_IDEMPOTENCY_META: Final = "mcp-errors/honoursIdempotencyKey"
"""Key in a tool's `_meta` (from `tools/list`), `true` when the server replays the first
result for a repeated idempotency key, so a resend of a write cannot apply it twice."""


# -- tasks (SEP-2663, the `io.modelcontextprotocol/tasks` extension) --

TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"
"""The identifier of the tasks extension, under which a client declares that it drives tasks
and a server runs a `tools/call` as a task (answering it with the task's id, then `tasks/get`)."""

TASK_META: Final = "mcp-errors/task"
"""Key in a `tools/call` result's `_meta` that the client side writes when the call ran as a
task: `{"taskId": ..., "status": ...}`, so that a reader knows which task answered."""


TOOL_FAILURE_META: Final = "io.modelcontextprotocol/toolFailure"
"""Key of the proposed (not yet standard) SEP-3313 tool-failure object in a result's `_meta`
(`_shared/tool_failure.py` writes and reads it; the proxy sanitises an upstream's own)."""


def asks_for_tasks(exc: BaseException) -> bool:
    """Whether `exc` is the -32021 of a tool that runs only as a task, for a caller that did not ask for one.

    The error's `data.requiredCapabilities.extensions` (SEP-2575) names the tasks extension.
    """
    if not (isinstance(exc, MCPError) and exc.code == MISSING_REQUIRED_CLIENT_CAPABILITY):
        return False
    data = exc.error.data
    required = data.get("requiredCapabilities") if isinstance(data, Mapping) else None
    extensions = required.get("extensions") if isinstance(required, Mapping) else None
    return isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions
