"""Structured, actionable MCP tool errors: what went wrong and what the agent should do next."""

from mcp_errors._classify import register_exception
from mcp_errors._envelope import (
    ENVELOPE_SCHEMA,
    ErrorCategory,
    ExecutionState,
    FieldError,
    admit_error_envelope,
    empty_result,
    is_error_envelope,
)
from mcp_errors._errors import (
    AccessDeniedError,
    BusinessRuleError,
    InputValidationError,
    ToolError,
    TransientError,
)
from mcp_errors._install import install, to_error_result

__all__ = [
    "ENVELOPE_SCHEMA",
    "AccessDeniedError",
    "BusinessRuleError",
    "ErrorCategory",
    "ExecutionState",
    "FieldError",
    "InputValidationError",
    "ToolError",
    "TransientError",
    "admit_error_envelope",
    "empty_result",
    "install",
    "is_error_envelope",
    "register_exception",
    "to_error_result",
]
