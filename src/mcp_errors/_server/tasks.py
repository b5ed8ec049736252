"""Tasks (SEP-2663) on a fastmcp server: the contract inside a task's result, and resends of a keyed task.

fastmcp runs a `task=True` tool as a task through the `fastmcp-tasks` package: `tools/call` is
answered at once with the task's id, the tool runs later in a Docket worker, and the client
polls `tasks/get`, which carries the result once the task completed. The worker calls the
tool's function itself, outside the middleware that applies the contract to a `tools/call`,
so the fastmcp adapter (`_server/fastmcp.py`) adds three things from here:

- **The tool's body in the contract** (`TaskBodies`, a fastmcp transform, which is what the
  tasks extension registers the tools it runs through): in the worker, whatever a
  task-enabled function tool raises becomes the contract's error result, classified by
  `_server/classify.py` like any failure, logged under its errorId, its facts set on the
  worker's span. An `isError` result *completes* the task (SEP-2663: `failed` is for JSON-RPC
  errors). A JSON-RPC error the client must act on (-32042, -32021) is raised on, and ends
  the task `failed` with it. The same tool called without a task runs unchanged: the
  contract middleware writes its failures, as before.
- **Task status in the contract** (`task_state_in_contract`, on every `tasks/get`): a task
  that failed in the server around its tool (the worker's time limit, a dependency that
  could not be resolved) ends `failed` in fastmcp-tasks, with the exception's text as the
  error's message. Here it *completes* with the contract instead: `TASK_TIMEOUT` (transient,
  outcome unknown) for Docket's time limit, `INTERNAL_ERROR` otherwise, its text in the log
  under the errorId. A cancelled task gets a `statusMessage` saying what its caller should
  do: its work may have been applied.
- **Resends of a keyed task** (`created_task`, `resend_task`, for `_server/replay.py`): the
  key keeps the task a call created; a resend gets that task as it is now, or, from a client
  that did not ask for a task, its result once it completed (an `IN_PROGRESS` error while it
  runs). A task that ended with an error saying nothing was applied is run anew under the key.

The official SDK's `MCPServer` (mcp 2.3) runs no tasks: it ships no tasks extension and no
background runner. Its extension interface (SEP-2133) could carry one (request methods, a
`tools/call` interceptor, and on 2026-07-28 a result of another `resultType` passes the
runner), but there is nothing there to install on; tasks are fastmcp's only, for now.
"""

from __future__ import annotations

import contextvars
import functools
import hashlib
import importlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import anyio
import pydantic
from fastmcp import FastMCP
from fastmcp.server.transforms import GetToolNext, Transform
from fastmcp.tools import Tool
from fastmcp.tools.function_tool import FunctionTool
from fastmcp.utilities.versions import VersionSpec
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, InputRequiredResult

from mcp_errors._server.classify import classify_failure, log_fields, new_error_id
from mcp_errors._server.replay import is_final_answer
from mcp_errors._server.replay_answers import in_progress, outcome_unknown
from mcp_errors._shared.advice import may_have_applied
from mcp_errors._shared.contract import ErrorCategory, ExecutionState, is_protocol_signal
from mcp_errors._shared.envelope import FailureDetails, error_result
from mcp_errors._shared.telemetry import annotate_tool_result
from mcp_errors._shared.telemetry import enabled as telemetry_enabled
from mcp_errors._shared.tool_failure import with_tool_failure

__all__ = ["TaskBodies", "created_task", "resend_task", "task_state_in_contract"]

logger = logging.getLogger("mcp_errors")


class TaskBodies(Transform):
    """Puts the function of every task-enabled function tool in the contract, for the task worker.

    The tasks extension registers the tools it runs from the server's transformed tool list,
    and the call path finds tools through it too, so one wrapped copy per tool serves both.
    """

    def __init__(self, *, tool_failure_meta: bool) -> None:
        self.tool_failure_meta = tool_failure_meta
        # Keyed on the listed tool object (kept in the entry, so its id is not reused): one
        # wrapped copy each, since fastmcp caches a type adapter per function.
        self._copies: dict[int, tuple[Tool, Tool]] = {}

    async def list_tools(self, tools: Sequence[Tool]) -> Sequence[Tool]:
        return [self._in_contract(tool) for tool in tools]

    async def get_tool(self, name: str, call_next: GetToolNext, *, version: VersionSpec | None = None) -> Tool | None:
        tool = await call_next(name, version=version)
        return None if tool is None else self._in_contract(tool)

    def _in_contract(self, tool: Tool) -> Tool:
        if not (isinstance(tool, FunctionTool) and tool.task_config.supports_tasks()):
            return tool
        hit = self._copies.get(id(tool))
        if hit is not None and hit[0] is tool:
            return hit[1]
        if getattr(tool.fn, _WRAPPED, False) or not inspect.iscoroutinefunction(tool.fn):
            return tool  # already ours; a task tool's function is async (fastmcp checks it)
        copy = tool.model_copy(update={"fn": _body_in_contract(tool, tool_failure_meta=self.tool_failure_meta)})
        if len(self._copies) >= _MAX_COPIES:
            del self._copies[next(iter(self._copies))]
        self._copies[id(tool)] = (tool, copy)
        return copy


_MAX_COPIES: Final = 4096
_WRAPPED: Final = "_mcp_errors_task_body"
_in_task_body: contextvars.ContextVar[bool] = contextvars.ContextVar("mcp_errors_in_task_body", default=False)


def _body_in_contract(tool: FunctionTool, *, tool_failure_meta: bool) -> Callable[..., Awaitable[Any]]:
    body = tool.fn
    name = tool.name

    @functools.wraps(body)
    async def run(*args: Any, **kwargs: Any) -> Any:
        # Only the task's own body, in the worker: a tool it calls in turn runs as a plain
        # call, and the same tool called without a task raises for the contract middleware.
        if _in_task_body.get() or _running_task() is None:
            return await body(*args, **kwargs)
        token = _in_task_body.set(True)
        try:
            result = await body(*args, **kwargs)
        except Exception as exc:
            if is_protocol_signal(exc):
                raise
            error_id = new_error_id()
            failure = error_result(classify_failure(exc, error_id=error_id, tool_name=name), error_id=error_id)
            if tool_failure_meta:
                failure.meta = with_tool_failure(failure.meta, failure.structured_content or {})
            annotate_tool_result(name, failure)
            return failure
        finally:
            _in_task_body.reset(token)
        if telemetry_enabled() and not isinstance(result, InputRequiredResult | type(None)):
            annotate_tool_result(name, tool.convert_result(result))
        return result

    # Docket and fastmcp read the parameters from the signature: the tool's own.
    run.__signature__ = inspect.signature(body)  # type: ignore[attr-defined]  # read by inspect.signature
    setattr(run, _WRAPPED, True)
    return run


@functools.cache
def _execution_context() -> contextvars.ContextVar[Any] | None:
    try:  # Docket comes with fastmcp-tasks, which is optional
        return importlib.import_module("docket.dependencies").current_execution  # type: ignore[no-any-return]
    except (ImportError, AttributeError):
        return None


def _running_task() -> object | None:
    """The Docket execution this code runs in, `None` outside a task worker."""
    execution = _execution_context()
    return None if execution is None else execution.get(None)


def task_state_in_contract(state: Mapping[str, Any], *, tool_failure_meta: bool = False) -> Mapping[str, Any]:
    """A `tasks/get` result as the contract has it (see the module docs); anything else is kept.

    Args:
        state: The result as the tasks extension wrote it (the wire's JSON).
        tool_failure_meta: Also write SEP-3313's `_meta` object on a failure written here.

    Returns:
        `state` itself, or a new one: a task that failed in the server around its tool
        completed with the contract's error, a cancelled task with a `statusMessage`.
    """
    status = state.get("status")
    if status == "cancelled" and not state.get("statusMessage"):
        return {**state, "statusMessage": _CANCELLED}
    if status != "failed":
        return state
    error = state.get("error")
    if not isinstance(error, Mapping) or error.get("code") != INTERNAL_ERROR:
        return state  # a JSON-RPC error the tool raised for its client to act on
    task_id = str(state.get("taskId", ""))
    message = error.get("message")
    text = message[:_MAX_MESSAGE] if isinstance(message, str) else ""
    # One id per task, however often it is polled, and the same on every replica.
    error_id = hashlib.sha256(f"task:{task_id}".encode()).hexdigest()[:12]
    if text.startswith("Docket task ") and " exceeded timeout of " in text:
        details = _TASK_TIMEOUT
        logger.info(
            "task %s: stopped at the worker's time limit, errorId %s",
            task_id,
            error_id,
            extra=log_fields(None, error_id, details.category),
        )
    else:
        details = classify_failure(TaskFailedInServer(text), error_id=error_id, tool_name=f"task:{task_id}")
    failure = error_result(details, error_id=error_id)
    if tool_failure_meta:
        failure.meta = with_tool_failure(failure.meta, failure.structured_content or {})
    written = {key: value for key, value in state.items() if key not in ("error", "statusMessage")}
    result = failure.model_dump(by_alias=True, mode="json", exclude_none=True)
    return {**written, "status": "completed", "result": result}


class TaskFailedInServer(Exception):  # noqa: N818  # named for the log line it makes
    """A task that failed in the server around its tool; its text is the tasks extension's message."""


_MAX_MESSAGE: Final = 2000
_LOOKUP_SECONDS: Final = 10.0

_TASK_TIMEOUT: Final = FailureDetails(
    message="Task timed out",
    category=ErrorCategory.TRANSIENT,
    description="The task ran longer than the time limit the server gives it and was stopped. "
    f"A resend may take as long again. {may_have_applied()}",
    code="TASK_TIMEOUT",
    execution_state=ExecutionState.OUTCOME_UNKNOWN,
)

_CANCELLED: Final = (
    "The task was cancelled before it finished, so whether its work was applied is unknown: find out with a "
    "read-only tool before running it again; a new call (with a new idempotency key) starts it anew."
)


def created_task(result: object) -> Mapping[str, Any] | None:
    """The task a `tools/call` answer is (the tasks extension's result), as JSON; `None` for a tool's result."""
    if isinstance(result, pydantic.BaseModel) and getattr(result, "result_type", None) == "task":
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return None


async def resend_task(
    server: FastMCP[Any], handle: Mapping[str, Any], *, as_task: bool, tool_failure_meta: bool = False
) -> Any:
    """What a resend of the keyed call that created the task `handle` gets (a `TaskResend` of `_server/replay.py`).

    Args:
        server: The server the resend reached (any replica sharing the task backend).
        handle: The task as the first call was answered.
        as_task: Whether the resend asked for a task (the client declared the extension).
        tool_failure_meta: Also write SEP-3313's `_meta` object on a failed task's result.

    Returns:
        The task as it is now (`as_task`), else its result once it completed; an error while
        it runs or after it was cancelled or forgotten; `None` when it ended without applying
        anything, so that the call runs anew.
    """
    task_id = handle.get("taskId")
    if not isinstance(task_id, str):
        return _TASK_FORGOTTEN
    try:
        with anyio.fail_after(_LOOKUP_SECONDS):  # a hung task backend must not hold the resend
            found = await importlib.import_module("fastmcp_tasks.handlers").tasks_get(server, task_id)
    except MCPError as exc:
        if exc.code == INVALID_PARAMS:  # the extension's one answer for an unknown or expired task
            return _TASK_FORGOTTEN
        logger.warning("task %s: could not be looked up for a resend", task_id, exc_info=True)
        return _LOOKUP_FAILED
    except Exception:
        logger.warning("task %s: could not be looked up for a resend", task_id, exc_info=True)
        return _LOOKUP_FAILED
    state = task_state_in_contract(found.model_dump(by_alias=True, mode="json"), tool_failure_meta=tool_failure_meta)
    status = state.get("status")
    if status == "completed":
        try:
            result = CallToolResult.model_validate(state.get("result") or {})
        except pydantic.ValidationError:
            return _TASK_FORGOTTEN
        if not is_final_answer(result):
            return None
        return _as_created(state) if as_task else result
    if as_task:
        return _as_created(state)
    if status == "failed":  # with a JSON-RPC error the tool raised for its client to act on: raised again
        error = state.get("error")
        error = error if isinstance(error, Mapping) else {}
        code = error.get("code")
        raise MCPError(
            code=code if isinstance(code, int) else INTERNAL_ERROR,
            message=str(error.get("message", "Task failed")),
            data=error.get("data"),
        )
    if status == "cancelled":
        return _TASK_CANCELLED
    interval = state.get("pollIntervalMs")
    return in_progress(interval / 1000 if isinstance(interval, int) and interval > 0 else 1.0)


def _as_created(state: Mapping[str, Any]) -> Any:
    """The task as a `tools/call` answer (the extension's own model, which its serializer sends as is)."""
    models = importlib.import_module("fastmcp_tasks.models")
    return models.CreateTaskResult(**{name: state.get(alias) for name, alias in _TASK_FIELDS.items()})


_TASK_FIELDS: Final = {
    "task_id": "taskId",
    "status": "status",
    "created_at": "createdAt",
    "last_updated_at": "lastUpdatedAt",
    "ttl_ms": "ttlMs",
    "status_message": "statusMessage",
    "poll_interval_ms": "pollIntervalMs",
}

_TASK_FORGOTTEN: Final = outcome_unknown(
    "The task the first call with this idempotency key started is no longer known to the server (its record "
    "expired, or its backend lost it)"
)
_TASK_CANCELLED: Final = outcome_unknown(
    "The task the first call with this idempotency key started was cancelled before it finished"
)
_LOOKUP_FAILED: Final = FailureDetails(
    message="Task lookup failed",
    category=ErrorCategory.TRANSIENT,
    description="The server could not look up the task this idempotency key started, so it did not run the call "
    "again. Resend it with the same key in a moment.",
    code="TASK_LOOKUP_FAILED",
    retry_after_seconds=1.0,
    execution_state=ExecutionState.NOT_EXECUTED,
)
