"""Structured, actionable MCP tool errors: what went wrong and what the agent should do next."""

from mcp_errors._budget import RetryBudget
from mcp_errors._classify import register_exception
from mcp_errors._contract import ENVELOPE_SCHEMA, ErrorCategory, ExecutionState, FieldError, is_error_envelope
from mcp_errors._envelope import admit_error_envelope, empty_result
from mcp_errors._errors import (
    AccessDeniedError,
    BusinessRuleError,
    InputValidationError,
    ToolError,
    TransientError,
)
from mcp_errors._install import install, to_error_result
from mcp_errors._outcome import ToolOutcome, read_result
from mcp_errors._partial import (
    FailedCall,
    NextStep,
    PartialReport,
    ToolCall,
    gather_partial,
    plan_next_step,
    read_partial,
)
from mcp_errors._policy import Attempt, Decision, RecoveryPolicy, RecoveryReport, call_tool_with_recovery
from mcp_errors._render import to_anthropic_tool_result, to_langchain_tool_message, to_openai_function_output
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
