"""The exceptions a tool raises: one per category, each enforcing the contract's rules."""

from __future__ import annotations

import math

import pytest
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

from mcp_errors import (
    AccessDeniedError,
    BusinessRuleError,
    ErrorCategory,
    ExecutionState,
    FieldError,
    InputValidationError,
    ToolError,
    TransientError,
)

SUBCLASSES = [
    (TransientError, ErrorCategory.TRANSIENT),
    (InputValidationError, ErrorCategory.VALIDATION),
    (BusinessRuleError, ErrorCategory.BUSINESS),
    (AccessDeniedError, ErrorCategory.PERMISSION),
]


@pytest.mark.parametrize(("klass", "category"), SUBCLASSES)
def test_each_subclass_carries_its_category(klass: type[ToolError], category: ErrorCategory) -> None:
    error = klass("m", description="d")
    assert error.category is category
    assert isinstance(error, ToolError)
    assert isinstance(error, SDKToolError)


@pytest.mark.parametrize("name", ["PermissionError", "ValidationError", "TimeoutError", "ConnectionError"])
def test_no_subclass_shadows_a_builtin_or_pydantic_name(name: str) -> None:
    import mcp_errors

    assert not hasattr(mcp_errors, name)


def test_category_takes_the_enum_or_its_string_value() -> None:
    assert ToolError("m", category="business", description="d").category is ErrorCategory.BUSINESS
    assert ToolError("m", category=ErrorCategory.PERMISSION, description="d").category is ErrorCategory.PERMISSION


def test_a_category_is_required_and_must_be_one_of_the_four() -> None:
    with pytest.raises(TypeError):
        ToolError("m", description="d")
    with pytest.raises(ValueError, match="fatal"):
        ToolError("m", category="fatal", description="d")


def test_a_subclass_refuses_a_different_category() -> None:
    with pytest.raises(TypeError):
        BusinessRuleError("m", category="transient", description="d")
    assert BusinessRuleError("m", category="business", description="d").category is ErrorCategory.BUSINESS


@pytest.mark.parametrize("klass", [InputValidationError, BusinessRuleError, AccessDeniedError])
def test_retry_after_is_refused_outside_transient(klass: type[ToolError]) -> None:
    with pytest.raises(ValueError, match="transient"):
        klass("m", description="d", retry_after_seconds=1)


@pytest.mark.parametrize("seconds", [-1.0, math.inf, math.nan])
def test_retry_after_must_be_a_finite_non_negative_number(seconds: float) -> None:
    with pytest.raises(ValueError, match="retry_after_seconds"):
        TransientError("m", description="d", retry_after_seconds=seconds)


def test_field_errors_are_refused_outside_validation() -> None:
    with pytest.raises(ValueError, match="validation"):
        BusinessRuleError("m", description="d", field_errors=[FieldError("x", "bad")])


@pytest.mark.parametrize("code", ["lower", "Mixed_Case", "HAS SPACE", "1LEADING_DIGIT", "DASH-ED", ""])
def test_codes_must_be_upper_snake(code: str) -> None:
    with pytest.raises(ValueError, match="UPPER_SNAKE"):
        BusinessRuleError("m", description="d", code=code)


def test_optional_fields_are_kept_as_given() -> None:
    error = InputValidationError(
        "Bad order id",
        description="Use #NNNNN.",
        code="ORDER_ID_FORMAT",
        field_errors=iter([FieldError("order_id", "wrong format", "#NNNNN", "order-abc")]),
        execution_state="not_executed",
        extra={"hint": "#12345"},
    )
    assert error.field_errors == (FieldError("order_id", "wrong format", "#NNNNN", "order-abc"),)
    assert error.execution_state is ExecutionState.NOT_EXECUTED
    assert error.extra == {"hint": "#12345"}
    assert str(error) == "Bad order id"
    assert "ORDER_ID_FORMAT" in repr(error)


def test_extra_fields_may_not_use_the_contracts_names() -> None:
    with pytest.raises(ValueError, match="retryAfterSeconds"):
        BusinessRuleError("Over limit", description="Escalate.", extra={"retryAfterSeconds": 5, "orderId": "#1"})
