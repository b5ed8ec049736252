"""Task-augmented tool calls (SEP-2663) on the client side: `TaskPolling`, and what a task's end says.

A server with the tasks extension (`io.modelcontextprotocol/tasks`) may answer `tools/call`
with a task instead of a result: its id, its status and how often to poll it. The client polls
`tasks/get` until the task ends; a completed task carries the tool's result (an `isError`
result included: that is how a tool's failure ends a task), a failed one a JSON-RPC error,
and `tasks/cancel` asks a running one to stop (cooperatively: it may end otherwise).

`TaskPolling` is the client half as an `mcp` client extension: pass it to
`mcp.Client(..., extensions=[TaskPolling()])` (or a fastmcp `Client`, where it replaces the
one `fastmcp-tasks` adds), and a server may run that client's calls as tasks. Each one is
finished here:

- polled at the server's `pollIntervalMs` (each answer may change it), but never less often
  than every 30 s (`MAX_POLL_SECONDS`) and, with a deadline, at least once in each half of
  the time left, so that a server asking for days between polls cannot hide a task that
  ended in half a second; never past the time the call has: the attempt's deadline under
  `call_tool_with_recovery`, else the call's `read_timeout_seconds`, else until the task ends;
- cancelled (`tasks/cancel`) when that time runs out, or when the caller is cancelled, so
  that no task is left running for nobody: the call then answers `TASK_DEADLINE`;
- turned into one `CallToolResult` whatever the end: the tool's result for a completed task,
  else an error in the contract, written here from what the client saw (below).

| the task                                   | code                  | category            | executionState    |
|--------------------------------------------|-----------------------|---------------------|-------------------|
| still running when the time ran out        | `TASK_DEADLINE`       | transient           | `outcome_unknown` |
| ended `cancelled` (by someone else)        | `TASK_CANCELLED`      | business            | `outcome_unknown` |
| ended `failed` (a JSON-RPC error)          | `TASK_FAILED`         | business (inferred) | `outcome_unknown` |
| unknown to the server (`tasks/get` -32602) | `TASK_EXPIRED`        | transient           | `outcome_unknown` |
| `tasks/get` failed with another error      | `TASK_POLL_FAILED`    | transient / business | `outcome_unknown` |
| asked for input this client does not give  | `TASK_INPUT_REQUIRED` | business            | `outcome_unknown` |

Every such result, and a completed task's result, carries `_meta["mcp-errors/task"]`
(`taskId`, `status`), which `read_result` reads into `ToolOutcome.task_id`. A task that
started may have applied part of its work, so none of these says `not_executed`: the
recovery policy resends them only when that is safe, as any call whose outcome is unknown.
`read_task_state` reads a `tasks/get` answer the caller polled itself.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal

import anyio
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    REQUEST_TIMEOUT,
    CallToolResult,
    InputRequiredResult,
    Request,
    RequestParams,
    Result,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_errors._shared.advice import may_have_applied
from mcp_errors._shared.contract import TASK_META, TASKS_EXTENSION, ErrorCategory, ExecutionState
from mcp_errors._shared.envelope import FailureDetails, error_result

__all__ = [
    "MAX_POLL_SECONDS",
    "TERMINAL_STATUSES",
    "CreatedTask",
    "TaskPolling",
    "TaskWatch",
    "read_task_state",
    "watching_task",
]

TERMINAL_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})

_DEFAULT_POLL_SECONDS: Final = 1.0
"""When the server says nothing of how often to poll."""
_MIN_POLL_SECONDS: Final = 0.01
"""However often the server asks (0 included): a client must not spin."""
MAX_POLL_SECONDS: Final = 30.0
"""However seldom the server asks (`pollIntervalMs` of 10^9 included): a task that ended is seen
within 30 s, and a call without a deadline never waits days for its first poll."""
_CANCEL_SECONDS: Final = 5.0
"""How long `tasks/cancel` may take once the call's own time is over."""


class TaskPolling(ClientExtension):
    """Lets a server run this client's tool calls as tasks (SEP-2663), and finishes each one.

    Pass it to the client: `mcp.Client(server, extensions=[TaskPolling()])`, or a fastmcp
    `Client(..., extensions=[TaskPolling()])` (it takes the place of the extension
    `fastmcp-tasks` adds). A call the server runs as a task is polled at the server's
    interval and answered with the task's result; within `call_tool_with_recovery` it gets
    the attempt's deadline, at which the task is cancelled (`TASK_DEADLINE`). See
    `mcp_errors._client.task_polling` for every way a task can end.

    Example:
        ```python
        from mcp import Client
        from mcp_errors import TaskPolling, call_tool_with_recovery

        async def build_report(server) -> None:
            async with Client(server, extensions=[TaskPolling()]) as client:
                report = await call_tool_with_recovery(client, "quarterly_report", {"quarter": "Q3"})
        ```
    """

    identifier = TASKS_EXTENSION

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (
            ResultClaim(
                result_type="task",
                model=CreatedTask,
                resolve=self._finish,
                protocol_versions=frozenset(MODERN_PROTOCOL_VERSIONS),
            ),
        )

    async def _finish(self, created: CreatedTask, context: ClaimContext) -> CallToolResult:
        watch = _watch.get()
        if watch is None:
            timeout = context.read_timeout_seconds
            watch = TaskWatch(deadline=None if timeout is None else anyio.current_time() + timeout)
        return await watch.drive(context.session, created)


@dataclass
class TaskWatch:
    """What one call saw of the task it started: what `call_tool_with_recovery` reads after an attempt.

    Args:
        deadline: When the call's time is over (`anyio.current_time()`), `None` for no limit.
    """

    deadline: float | None = None
    task_id: str | None = None
    status: str | None = None
    polls: int = 0
    """`tasks/get` requests answered."""
    started: float = 0.0
    cancel: Literal["not sent", "acknowledged", "not acknowledged"] = "not sent"
    _interval: float = field(default=_DEFAULT_POLL_SECONDS, repr=False)

    @property
    def running(self) -> bool:
        """Whether a task was started and not seen to end."""
        return self.task_id is not None and self.status not in TERMINAL_STATUSES

    async def drive(self, session: ClientSession, created: CreatedTask) -> CallToolResult:
        """Poll the task `created` to its end, or to the deadline, and answer with a result."""
        try:
            state = await self.follow(session, created)
        except MCPError as exc:
            if exc.code == INVALID_PARAMS:  # the extension's answer for a task it does not know
                return self._result(_EXPIRED, "unknown")
            # The server could not say how the task stands: that is what happened, not a deadline.
            # The task may still run, so it is cancelled rather than left running for nobody.
            await self.cancel_task(session)
            return self._result(self._poll_failed(exc.code), self.status or "working")
        if state is None:
            return self.stopped_result()
        if state.status == "input_required":
            await self.cancel_task(session)
            return self._result(_INPUT_REQUIRED, "input_required")
        if state.status == "completed":
            return _with_task(CallToolResult.model_validate(state.result or {}), self.task_id, "completed")
        if state.status == "failed":
            code = (state.error or {}).get("code")
            return self._result(_failed(code if isinstance(code, int) else None), "failed")
        return self._result(_CANCELLED, "cancelled")

    async def answer(self, session: ClientSession, created: CreatedTask) -> CallToolResult | InputRequiredResult:
        """What the server answered once its task ended, as a plain `tools/call` would have had it.

        For a reader that judges the server's own answers (the checker): a completed task's
        result as it came, the ask of a task that wants input (the task is cancelled), and a
        failed task's JSON-RPC error raised as `MCPError`. The caller bounds the time (a
        task still running when it is cancelled is cancelled in turn).
        """
        state = await self.follow(session, created)
        if state is None or state.status == "input_required":
            await self.cancel_task(session)
            asked = state.input_requests if state is not None else None
            return InputRequiredResult.model_validate({"inputRequests": asked or {}, "requestState": "task"})
        if state.status == "completed":
            return CallToolResult.model_validate(state.result or {})
        error = state.error or {"code": INTERNAL_ERROR, "message": f"Task {state.status}"}
        code = error.get("code")
        raise MCPError(
            code if isinstance(code, int) else INTERNAL_ERROR, str(error.get("message", "")), error.get("data")
        )

    async def follow(self, session: ClientSession, created: CreatedTask) -> _TaskState | None:
        """Poll the task `created` until it ends or asks for input, and return that `tasks/get` answer.

        At the deadline the task is cancelled and `None` returned; a caller cancelled while it
        polls cancels the task too. What `tasks/get` raises is raised (-32602: the server does
        not know the task).
        """
        self.task_id, self.started = created.task_id, anyio.current_time()
        self._saw(created)
        state: _TaskState | None = None
        try:
            while True:
                settled = self.status in TERMINAL_STATUSES or self.status == "input_required"
                if settled and state is not None:
                    return state
                # A task that is already done when it is handed over (a resend of a keyed call
                # gets its task as it stands) is read at once.
                wait = 0.0 if settled else self._interval
                if self.deadline is not None:
                    left = self.deadline - anyio.current_time()
                    if left <= 0:
                        await self.cancel_task(session)
                        return None
                    # At least one poll in each half of the time left: a task that ends before
                    # the deadline is seen before it, whatever interval the server asked for.
                    wait = min(wait, max(left / 2, _MIN_POLL_SECONDS), left)
                await anyio.sleep(wait)
                state = await session.send_request(_GetTask.about(created.task_id), _TaskState)
                self.polls += 1
                self._saw(state)
        except anyio.get_cancelled_exc_class():
            if self.running:
                with anyio.CancelScope(shield=True):
                    await self.cancel_task(session)
            raise

    async def cancel_task(self, session: ClientSession) -> None:
        """Ask the server to cancel the task (`tasks/cancel`), within a few seconds; failures are noted, not raised."""
        assert self.task_id is not None
        self.cancel = "not acknowledged"
        with anyio.move_on_after(_CANCEL_SECONDS), contextlib.suppress(Exception):
            await session.send_request(_CancelTask.about(self.task_id), Result)
            self.cancel = "acknowledged"

    def stopped_result(self) -> CallToolResult:
        """The answer of a call whose time ran out while its task ran (`TASK_DEADLINE`)."""
        tried, cancel = self._what_was_seen()
        details = FailureDetails(
            message="Task still running at the deadline",
            category=ErrorCategory.TRANSIENT,
            description=f"The task was still running when this call's time ran out ({tried}); {cancel}. Cancelling "
            f"is cooperative: the task may still finish, and part of its work may have been applied. "
            f"{may_have_applied()}",
            code="TASK_DEADLINE",
            execution_state=ExecutionState.OUTCOME_UNKNOWN,
        )
        return self._result(details, self.status or "working")

    def _saw(self, task: _TaskFields) -> None:
        self.status = task.status
        interval = task.poll_interval_ms
        if interval is not None and math.isfinite(interval):
            self._interval = min(max(interval / 1000, _MIN_POLL_SECONDS), MAX_POLL_SECONDS)

    def _what_was_seen(self) -> tuple[str, str]:
        """How many polls over how long, and what became of the cancel, as the descriptions say them."""
        elapsed = max(anyio.current_time() - self.started, 0.0)
        cancel = {
            "acknowledged": "its cancellation was requested and acknowledged",
            "not acknowledged": "its cancellation was requested but not acknowledged",
            "not sent": "it was not cancelled",
        }[self.cancel]
        return f"after {self.polls} poll{'s' if self.polls != 1 else ''} over {elapsed:.1f} s", cancel

    def _poll_failed(self, code: int) -> FailureDetails:
        """A `tasks/get` answered with an error other than -32602: the task's end is unknown (`TASK_POLL_FAILED`)."""
        seen, cancel = self._what_was_seen()
        transient = code in (INTERNAL_ERROR, REQUEST_TIMEOUT)
        return FailureDetails(
            message="Task status unavailable",
            category=ErrorCategory.TRANSIENT if transient else ErrorCategory.BUSINESS,
            description=f"The server failed to report the task's status (tasks/get answered JSON-RPC error {code} "
            f"{seen}), so how the task ended is unknown; {cancel}. {may_have_applied()}",
            code="TASK_POLL_FAILED",
            execution_state=ExecutionState.OUTCOME_UNKNOWN,
            inferred=True,
        )

    def _result(self, details: FailureDetails, status: str) -> CallToolResult:
        return _with_task(error_result(details), self.task_id, status)


def read_task_state(state: Mapping[str, Any]) -> CallToolResult | None:
    """A `tasks/get` answer as the call's result: the tool's result, or the contract's error for another end.

    Args:
        state: The answer as JSON (`taskId`, `status`, and `result` or `error`).

    Returns:
        The result, or `None` while the task runs (or waits for input).
    """
    task_id = state.get("taskId")
    status = state.get("status")
    task_id = task_id if isinstance(task_id, str) else None
    if status == "completed":
        result = state.get("result")
        return _with_task(CallToolResult.model_validate(result if isinstance(result, Mapping) else {}), task_id, status)
    if status == "failed":
        error = state.get("error")
        code = error.get("code") if isinstance(error, Mapping) else None
        return _with_task(error_result(_failed(code if isinstance(code, int) else None)), task_id, status)
    if status == "cancelled":
        return _with_task(error_result(_CANCELLED), task_id, status)
    return None


@contextlib.contextmanager
def watching_task(deadline: float | None) -> Iterator[TaskWatch]:
    """Within the block, a task a call starts is driven by `TaskPolling` to `deadline`, and watched."""
    watch = TaskWatch(deadline=deadline)
    token = _watch.set(watch)
    try:
        yield watch
    finally:
        _watch.reset(token)


_watch: contextvars.ContextVar[TaskWatch | None] = contextvars.ContextVar("mcp_errors_task_watch", default=None)


def _with_task(result: CallToolResult, task_id: str | None, status: str) -> CallToolResult:
    result.meta = {**(result.meta or {}), TASK_META: {"taskId": task_id, "status": status}}
    return result


def _failed(code: int | None) -> FailureDetails:
    if code == REQUEST_TIMEOUT:
        return FailureDetails(
            message="Task failed",
            category=ErrorCategory.TRANSIENT,
            description=f"The task failed: a request it made timed out (JSON-RPC error {code}). {may_have_applied()}",
            code="TASK_FAILED",
            execution_state=ExecutionState.OUTCOME_UNKNOWN,
            inferred=True,
        )
    return FailureDetails(
        message="Task failed",
        category=ErrorCategory.BUSINESS,
        description=f"The task failed with JSON-RPC error {code if code is not None else '(no code)'}; part of its "
        "work may have been applied. Resending the same call is unlikely to help: check with a read-only tool what "
        "it did, then take another path or escalate.",
        code="TASK_FAILED",
        execution_state=ExecutionState.OUTCOME_UNKNOWN,
        inferred=True,
    )


_CANCELLED: Final = FailureDetails(
    message="Task cancelled",
    category=ErrorCategory.BUSINESS,
    description="The task was cancelled before it finished, not by this call; part of its work may have been "
    "applied. Find out why before running it again, and check with a read-only tool what it did.",
    code="TASK_CANCELLED",
    execution_state=ExecutionState.OUTCOME_UNKNOWN,
)
_EXPIRED: Final = FailureDetails(
    message="Task unknown to the server",
    category=ErrorCategory.TRANSIENT,
    description="The server no longer knows the task this call started (its record expired, or it was lost) "
    f"before the call saw it end. {may_have_applied()}",
    code="TASK_EXPIRED",
    execution_state=ExecutionState.OUTCOME_UNKNOWN,
)
_INPUT_REQUIRED: Final = FailureDetails(
    message="Task needs input",
    category=ErrorCategory.BUSINESS,
    description="The task asked for input (an elicitation) that this client does not answer, so it was cancelled; "
    "part of its work may have been applied. Call the tool from a client that answers a task's input, or take "
    "another path.",
    code="TASK_INPUT_REQUIRED",
    execution_state=ExecutionState.OUTCOME_UNKNOWN,
)


class _TaskFields(Result):
    task_id: str
    status: str
    poll_interval_ms: float | None = None
    status_message: str | None = None


class CreatedTask(_TaskFields):
    """The `tools/call` answer of a call the server runs as a task (the claim's shape)."""

    result_type: Literal["task"]


class _TaskState(_TaskFields):
    """A `tasks/get` answer: the task, and its result or error once it ended, or what it asks for."""

    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None


class _TaskParams(RequestParams):
    task_id: str


class _GetTask(Request[_TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: _TaskParams
    name_param: ClassVar[str | None] = "taskId"  # SEP-2663: mirrored into the `Mcp-Name` header

    @classmethod
    def about(cls, task_id: str) -> _GetTask:
        return cls(params=_TaskParams(task_id=task_id))


class _CancelTask(Request[_TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: _TaskParams
    name_param: ClassVar[str | None] = "taskId"

    @classmethod
    def about(cls, task_id: str) -> _CancelTask:
        return cls(params=_TaskParams(task_id=task_id))
