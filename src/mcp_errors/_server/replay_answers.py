"""The failures idempotency replay answers with, each in one wording.

A key that is not one, a key reused with other arguments, a first call still running or
whose outcome is unknown, a store that cannot be reached or written, an answer too large to
keep: what the agent reads for each, its category, code and execution state. The claim
protocol that decides which one a call gets is `_server/replay.py`'s.

Example:
    ```python
    from mcp_errors._server.replay_answers import in_progress

    busy = in_progress(seconds_left=30.0)
    assert (busy.code, busy.retry_after_seconds) == ("IN_PROGRESS", 2.0)
    ```
"""

from __future__ import annotations

from typing import Final

from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META, ErrorCategory, ExecutionState, FieldError
from mcp_errors._shared.envelope import FailureDetails

__all__ = [
    "ABANDONED",
    "KEY_INVALID",
    "KEY_REUSED",
    "MAX_KEY_LENGTH",
    "MAX_TASK_RUNS",
    "STOPPED",
    "STORE_UNAVAILABLE",
    "STORE_UNWRITABLE",
    "TASK_NOT_READABLE",
    "TOO_MANY_RUNS",
    "in_progress",
    "not_kept",
    "outcome_unknown",
]

MAX_KEY_LENGTH: Final = 255
"""The longest idempotency key a call may carry."""
MAX_TASK_RUNS: Final = 8
"""Runs of a task tool under one key: each ended without applying anything before the next began."""


KEY_INVALID: Final = FailureDetails(
    message="Invalid idempotency key",
    category=ErrorCategory.VALIDATION,
    description=f"The idempotency key must be a string of 1 to {MAX_KEY_LENGTH} characters. The call did not run: "
    "send it again with a valid key (one per operation), or without a key.",
    code="IDEMPOTENCY_KEY_INVALID",
    field_errors=(
        FieldError(
            field=f"_meta.{IDEMPOTENCY_KEY_META}",
            problem="not a string of 1 to 255 characters",
            expected="a string of 1 to 255 characters, e.g. a UUID",
        ),
    ),
    execution_state=ExecutionState.NOT_EXECUTED,
)

KEY_REUSED: Final = FailureDetails(
    message="Idempotency key reused",
    category=ErrorCategory.VALIDATION,
    description="This idempotency key was already used for a call with other arguments. "
    "Send a new key for a new operation, or the original arguments to get the first result again.",
    code="IDEMPOTENCY_KEY_REUSED",
    field_errors=(
        FieldError(
            field=f"_meta.{IDEMPOTENCY_KEY_META}",
            problem="already used with different arguments",
            expected="a new key, or the arguments of the first call",
        ),
    ),
    execution_state=ExecutionState.NOT_EXECUTED,
)


def outcome_unknown(what_happened: str) -> FailureDetails:
    """The failure a key answers when its first call may have been applied: `what_happened` says why."""
    return FailureDetails(
        message="Outcome unknown",
        category=ErrorCategory.TRANSIENT,
        description=f"{what_happened}, so whether the call was applied is unknown. It is not run again under this "
        "key, so resending it gets this answer again: find out with a read-only tool whether it took effect, or ask "
        "a human; to run it anew, send a new key.",
        code="OUTCOME_UNKNOWN",
        execution_state=ExecutionState.OUTCOME_UNKNOWN,
    )


ABANDONED: Final = outcome_unknown(
    "The server that ran the first call with this idempotency key stopped before it answered"
)
STOPPED: Final = outcome_unknown(
    "The first call with this idempotency key ended without an answer (it was stopped after its caller left, the "
    "server shut down, or it failed unexpectedly)"
)

TASK_NOT_READABLE: Final = outcome_unknown(
    "The first call with this idempotency key started a task that this server cannot look up"
)

TOO_MANY_RUNS: Final = FailureDetails(
    message="Idempotency key used up",
    category=ErrorCategory.VALIDATION,
    description=f"This idempotency key already started {MAX_TASK_RUNS} runs of the task, each of which ended "
    "without applying anything, so this call was not run. Send it with a new key to run it again.",
    code="IDEMPOTENCY_KEY_USED_UP",
    field_errors=(
        FieldError(
            field=f"_meta.{IDEMPOTENCY_KEY_META}",
            problem=f"already started {MAX_TASK_RUNS} runs",
            expected="a new key",
        ),
    ),
    execution_state=ExecutionState.NOT_EXECUTED,
)

STORE_UNAVAILABLE: Final = FailureDetails(
    message="Idempotency store unavailable",
    category=ErrorCategory.TRANSIENT,
    description="The server could not reach the store that keeps idempotency keys, so it did not run the call. "
    "Resend it with the same key in a moment.",
    code="IDEMPOTENCY_STORE_UNAVAILABLE",
    retry_after_seconds=1.0,
    execution_state=ExecutionState.NOT_EXECUTED,
)


# A store that cannot be written (a read-only folder or database, a full disk, no permission)
# is a configuration failure: no resend fixes it, someone must. Its category is `business`,
# whose recovery is the one that fits (take another path or escalate), not `transient`
# ("resend in a moment", which would loop) nor `permission` (another principal would not help:
# it is the server that may not write).
STORE_UNWRITABLE: Final = FailureDetails(
    message="Idempotency store cannot be written",
    category=ErrorCategory.BUSINESS,
    description="The server cannot write to the store that keeps idempotency keys (it is read-only, full, or "
    "not permitted), so it did not run the call. Resending will not help until the server is fixed: escalate "
    "to a human, quoting the errorId, or take another path.",
    code="IDEMPOTENCY_STORE_UNWRITABLE",
    execution_state=ExecutionState.NOT_EXECUTED,
)


def in_progress(seconds_left: float) -> FailureDetails:
    """The failure a duplicate gets while the first call with its key runs, `seconds_left` of its lease left."""
    return FailureDetails(
        message="Call in progress",
        category=ErrorCategory.TRANSIENT,
        description="A call with this idempotency key is still running, so this one was not run. Resend it with "
        "the same key after the wait to get the first call's answer.",
        code="IN_PROGRESS",
        # Soon, but not past the lease: if the first call's server died, the resend learns it then.
        retry_after_seconds=round(min(max(seconds_left, 0.1), 2.0), 1),
        execution_state=ExecutionState.NOT_EXECUTED,
    )


def not_kept(size: int, limit: int) -> FailureDetails:
    return FailureDetails(
        message="Answer not kept",
        category=ErrorCategory.BUSINESS,
        description=f"The first call with this idempotency key ran to its end, but its answer ({size} bytes) was "
        f"larger than this server keeps for resends ({limit} bytes), so it cannot be sent again. Do not resend "
        "it: find out with a read-only tool what it did.",
        code="ANSWER_NOT_KEPT",
    )
