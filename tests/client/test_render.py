"""Renderers hand an outcome to Anthropic, OpenAI and LangChain as plain data."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import CallToolResult, TextContent

from mcp_errors import (
    Decision,
    ErrorCategory,
    ExecutionState,
    FieldError,
    RecoveryPolicy,
    ToolOutcome,
    call_tool_with_recovery,
    read_result,
    to_anthropic_tool_result,
    to_langchain_tool_message,
    to_openai_function_output,
)
from mcp_errors._shared.envelope import FailureDetails, error_result
from mcp_errors.testing import set_testing

VALIDATION = read_result(
    error_result(
        FailureDetails(
            message="Invalid arguments",
            category=ErrorCategory.VALIDATION,
            description="Fix amount.",
            field_errors=(FieldError("amount", "not a number", expected="a number"),),
        ),
        error_id="e1",
    )
)


def test_an_anthropic_tool_result_flags_errors_and_states_category_and_verdict() -> None:
    block = to_anthropic_tool_result(VALIDATION, tool_use_id="toolu_1")
    assert (block["type"], block["tool_use_id"], block["is_error"]) == ("tool_result", "toolu_1", True)
    text = block["content"][0]["text"]
    assert text.startswith("[validation error, not retryable]")
    assert "amount" in text
    assert "e1" in text


def test_a_success_renders_its_text_without_error_flags() -> None:
    outcome = read_result(CallToolResult(content=[TextContent(type="text", text="42 rows")]))
    assert to_anthropic_tool_result(outcome, tool_use_id="t")["is_error"] is False
    assert to_openai_function_output(outcome, call_id="c") == {
        "type": "function_call_output",
        "call_id": "c",
        "output": "42 rows",
    }
    assert to_langchain_tool_message(outcome, tool_call_id="x")["status"] == "success"


def test_an_empty_result_tells_the_model_not_to_resend() -> None:
    outcome = read_result(CallToolResult(content=[]))
    message = to_langchain_tool_message(outcome, tool_call_id="x", name="search")
    assert (message["status"], message["name"]) == ("success", "search")
    assert "do not resend" in message["content"]


def test_a_contract_text_head_is_shown_with_the_readers_verdict_not_its_own() -> None:
    text = "[transient error, retryable after 2s] Payment gateway timed out. Resend shortly."
    outcome = read_result(CallToolResult(content=[TextContent(type="text", text=text)], is_error=True))
    shown = to_openai_function_output(outcome, call_id="c")["output"]
    assert shown == "[transient error (inferred), not retryable] Payment gateway timed out. Resend shortly."


def test_an_inferred_category_is_labelled_as_inferred() -> None:
    outcome = read_result(CallToolResult(content=[TextContent(type="text", text="Permission denied")], is_error=True))
    assert to_openai_function_output(outcome, call_id="c")["output"].startswith(
        "[permission error (inferred), not retryable]"
    )


@pytest.mark.anyio
async def test_a_report_renders_the_calls_made_and_the_next_step() -> None:
    async def down(name: str, arguments: dict[str, Any], meta: Any) -> CallToolResult:
        return error_result(
            FailureDetails(
                message="Busy",
                category=ErrorCategory.TRANSIENT,
                description="Resend later.",
                execution_state=ExecutionState.NOT_EXECUTED,
            )
        )

    with set_testing():
        report = await call_tool_with_recovery(down, "read", {}, policy=RecoveryPolicy(max_attempts=2))
    assert report.decision is Decision.ESCALATE
    message = to_langchain_tool_message(report, tool_call_id="x")
    assert (message["status"], message["name"]) == ("error", "read")
    assert "Calls made: 2 (stopped: retries_exhausted)" in message["content"]
    assert "do not resend" in message["content"]


def test_langchain_accepts_the_message_fields() -> None:
    messages = pytest.importorskip("langchain_core.messages")
    message = messages.ToolMessage(**to_langchain_tool_message(VALIDATION, tool_call_id="x"))
    assert message.status == "error"


def test_a_plain_outcome_needs_no_sdk() -> None:
    outcome = ToolOutcome(kind="error", category=ErrorCategory.BUSINESS, description="Over the limit.")
    assert to_anthropic_tool_result(outcome, tool_use_id="t")["content"][0]["text"] == (
        "[business error, not retryable] Over the limit."
    )
