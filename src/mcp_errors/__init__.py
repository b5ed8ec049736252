"""Structured, actionable MCP tool errors: what went wrong and what the agent should do next.

The names below live in private modules and are imported on first use: `import mcp_errors`
(and with it the `mcp-errors` command's `--help` and `--version`) does not load the MCP SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

from mcp_errors._shared.lazy import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    __version__: str
    from mcp_errors._client.budget import RetryBudget
    from mcp_errors._client.outcome import ToolOutcome, read_result
    from mcp_errors._client.partial import (
        FailedCall,
        NextStep,
        PartialReport,
        ToolCall,
        gather_partial,
        plan_next_step,
        read_partial,
    )
    from mcp_errors._client.policy import Attempt, Decision, RecoveryPolicy, RecoveryReport, call_tool_with_recovery
    from mcp_errors._client.render import to_anthropic_tool_result, to_langchain_tool_message, to_openai_function_output
    from mcp_errors._client.task_polling import TaskPolling
    from mcp_errors._server.classify import register_exception
    from mcp_errors._server.errors import (
        AccessDeniedError,
        BusinessRuleError,
        InputValidationError,
        ToolError,
        TransientError,
    )
    from mcp_errors._server.install import install, to_error_result
    from mcp_errors._shared.contract import (
        ENVELOPE_SCHEMA,
        ErrorCategory,
        ExecutionState,
        FieldError,
        is_error_envelope,
    )
    from mcp_errors._shared.envelope import admit_error_envelope, empty_result
    from mcp_errors.stores import IdempotencyStore, open_store

__all__ = [
    "ENVELOPE_SCHEMA",
    "AccessDeniedError",
    "Attempt",
    "BusinessRuleError",
    "Decision",
    "ErrorCategory",
    "ExecutionState",
    "FailedCall",
    "FieldError",
    "IdempotencyStore",
    "InputValidationError",
    "NextStep",
    "PartialReport",
    "RecoveryPolicy",
    "RecoveryReport",
    "RetryBudget",
    "TaskPolling",
    "ToolCall",
    "ToolError",
    "ToolOutcome",
    "TransientError",
    "admit_error_envelope",
    "call_tool_with_recovery",
    "empty_result",
    "gather_partial",
    "install",
    "is_error_envelope",
    "open_store",
    "plan_next_step",
    "read_partial",
    "read_result",
    "register_exception",
    "to_anthropic_tool_result",
    "to_error_result",
    "to_langchain_tool_message",
    "to_openai_function_output",
]

_HOMES: dict[str, str] = {
    "RetryBudget": "mcp_errors._client.budget",
    "ToolOutcome": "mcp_errors._client.outcome",
    "read_result": "mcp_errors._client.outcome",
    "FailedCall": "mcp_errors._client.partial",
    "NextStep": "mcp_errors._client.partial",
    "PartialReport": "mcp_errors._client.partial",
    "ToolCall": "mcp_errors._client.partial",
    "gather_partial": "mcp_errors._client.partial",
    "plan_next_step": "mcp_errors._client.partial",
    "read_partial": "mcp_errors._client.partial",
    "Attempt": "mcp_errors._client.policy",
    "Decision": "mcp_errors._client.policy",
    "RecoveryPolicy": "mcp_errors._client.policy",
    "RecoveryReport": "mcp_errors._client.policy",
    "call_tool_with_recovery": "mcp_errors._client.policy",
    "to_anthropic_tool_result": "mcp_errors._client.render",
    "to_langchain_tool_message": "mcp_errors._client.render",
    "to_openai_function_output": "mcp_errors._client.render",
    "TaskPolling": "mcp_errors._client.task_polling",
    "register_exception": "mcp_errors._server.classify",
    "AccessDeniedError": "mcp_errors._server.errors",
    "BusinessRuleError": "mcp_errors._server.errors",
    "InputValidationError": "mcp_errors._server.errors",
    "ToolError": "mcp_errors._server.errors",
    "TransientError": "mcp_errors._server.errors",
    "install": "mcp_errors._server.install",
    "to_error_result": "mcp_errors._server.install",
    "ENVELOPE_SCHEMA": "mcp_errors._shared.contract",
    "ErrorCategory": "mcp_errors._shared.contract",
    "ExecutionState": "mcp_errors._shared.contract",
    "FieldError": "mcp_errors._shared.contract",
    "is_error_envelope": "mcp_errors._shared.contract",
    "admit_error_envelope": "mcp_errors._shared.envelope",
    "empty_result": "mcp_errors._shared.envelope",
    "IdempotencyStore": "mcp_errors.stores",
    "open_store": "mcp_errors.stores",
}


_lazy_getattr, __dir__ = _lazy_exports(__name__, _HOMES)


def __getattr__(name: str) -> _Any:
    if name == "__version__":
        from importlib.metadata import version

        return version("mcp-errors")
    return _lazy_getattr(name)
