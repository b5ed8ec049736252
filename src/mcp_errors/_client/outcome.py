"""Read any tool result (or failure to get one) into a typed `ToolOutcome`.

The reader is the client half of the contract, and it must work for servers that do not
follow it. Sources are tried from the most to the least trustworthy:

1. our envelope in `structuredContent` (`errorCategory`, `isRetryable`, ...);
2. the proposed `_meta["io.modelcontextprotocol/toolFailure"]` (PR #3312/#3313), read leniently;
3. the contract's first text block, `"[<category> error, retryable|not retryable] ..."`;
4. any other text-only `isError` result: its words are judged with the vocabulary the proxy
   and the checker use (`_shared/failure_words.py`), and the outcome is marked
   `category_inferred=True`. It is retryable only when the words say plainly that the
   failure is transient (a timeout, a refused connection, a rate limit); where they point
   two ways the non-retryable reading wins. Whether a resend is *safe* is still the
   execution state's and the tool's annotations' to say (`call_tool_with_recovery`);
5. exceptions instead of a result (pass the exception to `read_result`): a JSON-RPC error
   (`mcp.shared.exceptions.MCPError`) or a transport failure.

A call a server ran as a task (SEP-2663) is read from the result `TaskPolling` answers it
with (`ToolOutcome.task_id` says which task), or from a `tasks/get` answer the caller polled
itself: a completed task is its result, any other end an error whose outcome is unknown
(`_client/task_polling.py` has the table), and a task still running an error `TASK_RUNNING`
that says to poll it rather than resend the call.

Failures to get an answer:

| what was raised                                           | category    | executionState   |
|-----------------------------------------------------------|-------------|------------------|
| connection refused, httpx `ConnectError`/`ConnectTimeout`  | transient   | `not_executed`   |
| `TimeoutError`, JSON-RPC `REQUEST_TIMEOUT`, httpx read timeout | transient | `outcome_unknown` |
| connection closed/reset/broken stream, JSON-RPC `CONNECTION_CLOSED` | transient | `outcome_unknown` |
| JSON-RPC `INVALID_PARAMS`, `METHOD_NOT_FOUND`, `INVALID_REQUEST`, `PARSE_ERROR` | validation | `not_executed` |
| JSON-RPC `-32021`: a client capability the tool needs (tasks) | business (inferred) | `not_executed` |
| a success the SDK client refuses: it breaks the tool's outputSchema | none | `outcome_unknown` |
| any other JSON-RPC error or exception                     | none        | `outcome_unknown` |

A timeout *after* the request was sent is not "not executed": the server may have applied
the call and only the answer was lost, so a write that timed out is resent only with an
idempotency key (see `mcp_errors.call_tool_with_recovery`).

Every value a server can send becomes an outcome: a field that cannot be read is ignored or
leaves the category unknown, an answer that is no tool result at all is an error whose
outcome is unknown, and nothing unreadable makes a call retryable.

Empty results: `kind == "empty"` when `isError` is false and either `structuredContent`
is an object with `resultCount == 0`, or the result carries no content at all (`content`
is empty and `structuredContent` is absent, empty, or the SDKs' wrapping of an empty return
value, `{"result": []}`). An empty result is a success that found nothing; it is never resent.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import anyio
import pydantic
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    REQUEST_TIMEOUT,
    CallToolResult,
    Result,
)

from mcp_errors._client.task_polling import read_task_state
from mcp_errors._shared.advice import RESEND_RULE
from mcp_errors._shared.contract import (
    CATEGORY_VALUES,
    TASK_META,
    ErrorCategory,
    ExecutionState,
    FieldError,
    asks_for_tasks,
)
from mcp_errors._shared.envelope import CATEGORY_INFERRED, is_empty_result
from mcp_errors._shared.error_text import read_error_text
from mcp_errors._shared.failure_words import judge_failure, strip_sdk_wrappers
from mcp_errors._shared.optional_types import is_httpx
from mcp_errors._shared.signals import JSONRPC_CODES
from mcp_errors._shared.tool_failure import TOOL_FAILURE_META, read_tool_failure
from mcp_errors._shared.waits import wait_seconds

__all__ = [
    "TOOL_FAILURE_META",
    "OutcomeKind",
    "OutcomeSource",
    "ToolOutcome",
    "is_call_failure",
    "read_result",
    "read_retry_after",
]


OutcomeKind = Literal["success", "empty", "error"]
OutcomeSource = Literal["envelope", "tool_failure_meta", "contract_text", "text", "jsonrpc", "transport", "result"]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call produced, read into the fields a recovery decision needs.

    Build it with `read_result`; every server's answer (and every failure to get one)
    maps to one of these.
    """

    kind: OutcomeKind
    """`"success"`, `"empty"` (the call ran and matched nothing) or `"error"`."""
    category: ErrorCategory | None = None
    """The error category, `None` for a success or an error that could not be classified."""
    is_retryable: bool = False
    """Whether resending the exact same call can succeed. From prose, only when its words say
    plainly that the failure is transient (`category_inferred` is then `True`)."""
    description: str = ""
    """What happened and what to do next (for errors), or the first text block."""
    message: str = ""
    """The first text block of the result, or a short text for a failure without result."""
    code: str | None = None
    retry_after_seconds: float | None = None
    field_errors: tuple[FieldError, ...] = ()
    execution_state: ExecutionState | None = None
    """Whether the operation ran: `not_executed`, `outcome_unknown`, or `None` (not said)."""
    error_id: str | None = None
    category_inferred: bool = False
    """`True` when the category was guessed (keywords, JSON-RPC codes), not declared."""
    source: OutcomeSource = "result"
    """Where the facts came from, e.g. `"envelope"` or `"text"`."""
    structured: Any = None
    """The result's `structuredContent`, as sent."""
    result: CallToolResult | None = None
    """The raw result, `None` when no result arrived (JSON-RPC error, transport failure)."""
    task_id: str | None = None
    """The task the server ran the call as (SEP-2663), `None` for a call answered directly."""

    @property
    def ok(self) -> bool:
        """Whether the call succeeded (an empty result is a success)."""
        return self.kind != "error"

    @property
    def not_executed(self) -> bool:
        """Whether the failure says nothing was applied, so a resend cannot duplicate it."""
        return self.execution_state is ExecutionState.NOT_EXECUTED


def read_result(
    result: Result | Mapping[str, Any] | BaseException, *, arguments: Mapping[str, Any] | None = None
) -> ToolOutcome:
    """Read a tool result, from any MCP server, into a `ToolOutcome`.

    Args:
        result: A `CallToolResult` (from `mcp.Client.call_tool` or fastmcp's
            `call_tool_mcp`), the same as a JSON object (wire field names), the
            exception raised instead of a result (an `MCPError` or a transport error), or
            a task's state (a `tasks/get` answer, as JSON or as a model) for a call the
            server ran as a task.
        arguments: The call's arguments, when known. Only an error without the contract uses
            them: a "does not exist" that names none of them is about the server's own files
            or data (`SERVER_MISCONFIGURED`: escalate), not about the call's input.

    Returns:
        The outcome. Errors that do not follow the contract get the category their words
        say, with `category_inferred=True`, retryable only when they plainly say transient;
        failures to reach the server are transient (see the module docs for the table).

    Example:
        ```python
        from mcp_types import CallToolResult, TextContent
        from mcp_errors import read_result

        outcome = read_result(CallToolResult(content=[TextContent(type="text", text="boom")], is_error=True))
        assert outcome.kind == "error" and not outcome.is_retryable
        ```
    """
    if isinstance(result, BaseException):
        return _read_exception(result)
    if isinstance(result, Result) and not isinstance(result, CallToolResult):
        # Another result model: a task's state (fastmcp-tasks' `tasks/get` answer, say).
        result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if isinstance(result, Mapping):
        if _is_task_state(result):
            return _read_task_state(result, arguments)
        try:
            result = CallToolResult.model_validate(result)
        except pydantic.ValidationError as exc:
            return _read_exception(exc)
    outcome = _read_call_tool_result(result, arguments)
    task = (getattr(result, "meta", None) or {}).get(TASK_META)
    if isinstance(task, Mapping) and isinstance(task.get("taskId"), str):
        return dataclasses.replace(outcome, task_id=task["taskId"])
    return outcome


def _is_task_state(data: Mapping[str, Any]) -> bool:
    return "taskId" in data and "status" in data and "content" not in data


def _read_task_state(state: Mapping[str, Any], arguments: Mapping[str, Any] | None) -> ToolOutcome:
    try:
        ended = read_task_state(state)
    except pydantic.ValidationError as exc:  # a completed task whose result is no tool result
        return _read_exception(exc)
    if ended is not None:
        return read_result(ended, arguments=arguments)
    task_id = state.get("taskId") if isinstance(state.get("taskId"), str) else None
    if state.get("status") == "input_required":
        description = (
            "The task waits for input (an elicitation): answer it (tasks/update), or cancel the task. Do not "
            "resend the call, which would start the work again."
        )
        code = "TASK_INPUT_REQUIRED"
    else:
        description = (
            "The task is still running: poll it again (tasks/get) for its result. Do not resend the call, which "
            "would start the work again."
        )
        code = "TASK_RUNNING"
    return ToolOutcome(
        kind="error",
        description=description,
        message="Task not finished",
        code=code,
        execution_state=ExecutionState.OUTCOME_UNKNOWN,
        task_id=task_id,
    )


def _read_call_tool_result(result: CallToolResult, arguments: Mapping[str, Any] | None) -> ToolOutcome:
    text = _first_text(result)
    structured = result.structured_content
    if not result.is_error:
        kind: OutcomeKind = "empty" if is_empty_result(result) else "success"
        return ToolOutcome(kind=kind, description=text, message=text, structured=structured, result=result)
    category = _category(structured.get("errorCategory")) if isinstance(structured, Mapping) else None
    if category is not None:
        return _from_envelope(category, structured, text, result)
    failure = (result.meta or {}).get(TOOL_FAILURE_META)
    if isinstance(failure, Mapping):
        return _from_tool_failure(failure, text, result)
    written = read_error_text(text)
    if written is not None and written.head.category is not None:
        # Our text head without the envelope (a host or proxy dropped structuredContent, or
        # a server imitates the format): the category is worth reading, but retryability is
        # never concluded from prose.
        head = written.head
        return ToolOutcome(
            kind="error",
            category=head.category,
            is_retryable=False,
            category_inferred=True,
            # The text after the head: the head's own verdict is not the reader's.
            description=written.body,
            message=text,
            retry_after_seconds=head.retry_after_seconds if head.retryable else None,
            error_id=written.error_id,
            source="contract_text",
            structured=structured,
            result=result,
        )
    judged = judge_failure(strip_sdk_wrappers(text), arguments=arguments)
    if judged is None:
        return ToolOutcome(
            kind="error",
            description=text,
            message=text,
            category_inferred=True,
            source="text",
            structured=structured,
            result=result,
        )
    return ToolOutcome(
        kind="error",
        category=judged.category,
        is_retryable=judged.retryable,
        description=text,
        message=text,
        code=judged.code,
        retry_after_seconds=judged.retry_after_seconds,
        execution_state=judged.execution_state,
        category_inferred=True,
        source="text",
        structured=structured,
        result=result,
    )


def _first_text(result: CallToolResult) -> str:
    for block in result.content:
        text = getattr(block, "text", None)
        if isinstance(text, str):
            return text
    return ""


def _from_envelope(category: ErrorCategory, data: Mapping[str, Any], text: str, result: CallToolResult) -> ToolOutcome:
    description = data.get("description")
    return ToolOutcome(
        kind="error",
        category=category,
        # Both the category and the flag must agree before a resend is considered.
        is_retryable=category.is_retryable and data.get("isRetryable") is not False,
        description=description if isinstance(description, str) else text,
        message=text,
        code=_str_or_none(data.get("code")),
        retry_after_seconds=read_retry_after(data.get("retryAfterSeconds")),
        field_errors=_field_errors(data.get("fieldErrors")),
        execution_state=_execution_state(data.get("executionState")),
        error_id=_str_or_none(data.get("errorId")),
        # A proxy that read the category from the upstream's words says so.
        category_inferred=data.get(CATEGORY_INFERRED) is True,
        source="envelope",
        structured=data,
        result=result,
    )


def _from_tool_failure(data: Mapping[str, Any], text: str, result: CallToolResult) -> ToolOutcome:
    failure = read_tool_failure(data)
    return ToolOutcome(
        kind="error",
        category=failure.category,
        is_retryable=failure.retryable,
        description=failure.guidance if failure.guidance is not None else text,
        message=text,
        code=failure.code,
        retry_after_seconds=failure.retry_after_seconds,
        error_id=failure.correlation_id,
        category_inferred=failure.inferred or failure.category is None,
        source="tool_failure_meta",
        structured=result.structured_content,
        result=result,
    )


_NO_ANSWER_IN_TIME: Final = f"The server did not answer in time. The call may or may not have run: {RESEND_RULE}."


def _read_exception(exc: BaseException) -> ToolOutcome:
    if isinstance(exc, MCPError):
        return _read_jsonrpc_error(exc)
    if isinstance(exc, pydantic.ValidationError):
        return ToolOutcome(
            kind="error",
            description="The server's answer could not be read as a tool result; whether the call ran is unknown.",
            message="Unreadable answer",
            execution_state=ExecutionState.OUTCOME_UNKNOWN,
            category_inferred=True,
            source="result",
        )
    if _breaks_output_schema(exc):
        return ToolOutcome(
            kind="error",
            description="The tool ran, but the server's answer does not match the tool's outputSchema, so it "
            "cannot be used. Do not resend it blindly: check what the call did, or take another path.",
            message="Answer does not match the outputSchema",
            execution_state=ExecutionState.OUTCOME_UNKNOWN,
            category_inferred=True,
            source="result",
        )
    name = type(exc).__name__
    if isinstance(exc, ConnectionRefusedError) or is_httpx(exc, "ConnectError", "ConnectTimeout"):
        return _transport(
            "Could not reach the server",
            "The server could not be reached, so the call did not run. Resend it after a short wait.",
            ExecutionState.NOT_EXECUTED,
        )
    if isinstance(exc, TimeoutError) or is_httpx(exc, "TimeoutException"):
        return _transport(
            "No answer before the timeout",
            _NO_ANSWER_IN_TIME,
            ExecutionState.OUTCOME_UNKNOWN,
        )
    if isinstance(exc, ConnectionError | EOFError) or _is_transport_error(exc):
        return _transport(
            "Connection lost",
            "The connection to the server broke before an answer arrived. The call may or may not have run.",
            ExecutionState.OUTCOME_UNKNOWN,
        )
    return ToolOutcome(
        kind="error",
        description=f"The call failed with {name} before a result arrived; whether it ran is unknown.",
        message=name,
        execution_state=ExecutionState.OUTCOME_UNKNOWN,
        category_inferred=True,
        source="transport",
    )


def _read_jsonrpc_error(exc: MCPError) -> ToolOutcome:
    code = exc.code
    if code == MISSING_REQUIRED_CLIENT_CAPABILITY:
        needs_tasks = asks_for_tasks(exc)
        return ToolOutcome(
            kind="error",
            category=ErrorCategory.BUSINESS,
            description="The server refused the call before running it: the tool needs a client capability this "
            "client did not declare ("
            + (
                "the tasks extension: call it from a client built with `mcp_errors.TaskPolling`"
                if needs_tasks
                else "see the error's data.requiredCapabilities"
            )
            + "). Resending the same call from this client cannot help.",
            message=f"JSON-RPC error {code}",
            code="CLIENT_CAPABILITY_REQUIRED",
            execution_state=ExecutionState.NOT_EXECUTED,
            category_inferred=True,
            source="jsonrpc",
        )
    signal = JSONRPC_CODES.get(code)
    if signal is None:
        return ToolOutcome(
            kind="error",
            description=f"The server answered with JSON-RPC error {code}; whether the call ran is unknown.",
            message=f"JSON-RPC error {code}",
            execution_state=ExecutionState.OUTCOME_UNKNOWN,
            category_inferred=True,
            source="jsonrpc",
        )
    if code == REQUEST_TIMEOUT:
        message, description = "No answer before the timeout", _NO_ANSWER_IN_TIME
    elif code == CONNECTION_CLOSED:
        message = "Connection closed"
        description = "The connection to the server closed before an answer arrived. The call may or may not have run."
    else:
        message = f"JSON-RPC error {code}"
        description = (
            f"The server rejected the request as malformed (JSON-RPC error {code}). Check the tool name and "
            "arguments against tools/list and call again."
        )
    # What the code says is the signal table's (`_shared/signals.py`), as the proxy and the server read it.
    return ToolOutcome(
        kind="error",
        category=signal.category,
        is_retryable=signal.retryable,
        description=description,
        message=message,
        code=signal.code,
        execution_state=signal.execution_state,
        category_inferred=True,
        source="jsonrpc",
    )


def _transport(
    message: str, description: str, state: ExecutionState, *, source: OutcomeSource = "transport"
) -> ToolOutcome:
    # Not reaching the server is transient by definition; the execution state says
    # whether resending is safe for a tool that writes.
    return ToolOutcome(
        kind="error",
        category=ErrorCategory.TRANSIENT,
        is_retryable=True,
        description=description,
        message=message,
        execution_state=state,
        category_inferred=True,
        source=source,
    )


def is_call_failure(exc: BaseException) -> bool:
    """Whether `exc` is a failure to get an answer, which `read_result` reads as an outcome.

    The one list of such failures: a JSON-RPC error, a transport failure (connection, stream,
    timeout, HTTP), an answer the client could not parse, or a success the SDK client refused
    because it breaks the tool's outputSchema. Anything else raised around a call is a bug of
    the caller and propagates.
    """
    return isinstance(exc, _CALL_FAILURES) or is_httpx(exc, "HTTPError") or _breaks_output_schema(exc)


_STREAM_FAILURES: Final = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream)
_CALL_FAILURES: Final = (MCPError, OSError, EOFError, pydantic.ValidationError, *_STREAM_FAILURES)


def _breaks_output_schema(exc: BaseException) -> bool:
    """Whether `exc` is the `RuntimeError` of `ClientSession.validate_tool_result` (mcp 2.3): a
    success whose structuredContent is missing or does not match the tool's outputSchema.

    Told by its exact type and text, and for a mismatch by the jsonschema error behind it, so
    that no other `RuntimeError` (an unentered client, the SDK's other refusals) passes.
    """
    if type(exc) is not RuntimeError:
        return False
    text = str(exc)
    if text.startswith("Invalid structured content returned by tool "):
        # The SDK validated with jsonschema, so it is imported (this package imports it only when needed).
        jsonschema = sys.modules.get("jsonschema")
        return jsonschema is not None and isinstance(exc.__cause__, jsonschema.ValidationError)
    return _NO_STRUCTURED_CONTENT.fullmatch(text) is not None


_NO_STRUCTURED_CONTENT: Final = re.compile(r"Tool .+ has an output schema but did not return structured content", re.S)


def _is_transport_error(exc: BaseException) -> bool:
    return isinstance(exc, _STREAM_FAILURES) or is_httpx(exc, "TransportError")


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _category(value: object) -> ErrorCategory | None:
    return ErrorCategory(value) if isinstance(value, str) and value in CATEGORY_VALUES else None


def read_retry_after(value: object) -> float | None:
    """A `retryAfterSeconds` someone sent, as seconds: `None` unless a finite number >= 0;
    capped at a day (`_shared/waits.py`'s `wait_seconds`, for a JSON number only)."""
    return None if isinstance(value, str) else wait_seconds(value)


def _execution_state(value: object) -> ExecutionState | None:
    try:
        return ExecutionState(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _field_errors(value: object) -> tuple[FieldError, ...]:
    if not isinstance(value, list):
        return ()
    errors = []
    for item in value:
        if isinstance(item, Mapping) and isinstance(item.get("field"), str):
            errors.append(
                FieldError(
                    field=item["field"],
                    problem=_json_text(item.get("problem", "")) or "",
                    expected=_str_or_none(item.get("expected")),
                    received=None if item.get("received") is None else _json_text(item["received"]),
                )
            )
    return tuple(errors)


def _json_text(value: object) -> str | None:
    """A value a server sent, as text: a string as it is, anything else as JSON; `None` when
    it cannot be written (nested too deep, an integer past Python's digit limit)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, default=repr)
    except (ValueError, TypeError, RecursionError):
        return None
