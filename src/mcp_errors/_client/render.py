"""Hand an outcome to a model: plain-data tool results for the Anthropic, OpenAI and LangChain APIs.

No SDK is imported: each renderer returns the dict the API expects, so it works with the
SDK objects (`ToolMessage(**data)`) or raw HTTP alike. The text follows the contract's
first text block, `"[<category> error, retryable|not retryable] <description>"`, because
most hosts show the model only text; when given a `RecoveryReport`, it also says how many
calls were made and the next step, so the model does not resend what the policy already
resent or gave up on.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import TextContent

from mcp_errors._client.outcome import ToolOutcome
from mcp_errors._client.policy import Decision, RecoveryReport
from mcp_errors._shared.error_text import ErrorHead, write_error_text

__all__ = ["outcome_text", "to_anthropic_tool_result", "to_langchain_tool_message", "to_openai_function_output"]

_NEXT_STEP = {
    Decision.FIX_INPUT: "Next step: correct the arguments listed above and call again.",
    Decision.ESCALATE: "Next step: do not resend this call; take another path or escalate to a human.",
}


def outcome_text(item: ToolOutcome | RecoveryReport) -> str:
    """The text a model should read for an outcome (or a report's final outcome)."""
    report = item if isinstance(item, RecoveryReport) else None
    outcome = report.outcome if report is not None else item
    assert isinstance(outcome, ToolOutcome)
    if outcome.kind == "success":
        return _success_text(outcome)
    if outcome.kind == "empty":
        text = outcome.message or "No results."
        return f"{text} [empty result: the call ran and matched nothing; do not resend it]"
    parts = [_error_head(outcome)]
    parts.extend(
        f"- {fe.field}: {fe.problem}" + (f" (expected {fe.expected})" if fe.expected else "")
        for fe in outcome.field_errors
    )
    if report is not None:
        calls = len(report.attempts)
        parts.append(f"Calls made: {calls}" + (f" (stopped: {report.reason})." if report.reason else "."))
        if report.decision in _NEXT_STEP:
            parts.append(_NEXT_STEP[report.decision])
    if outcome.error_id:
        parts.append(f"errorId: {outcome.error_id}")
    return "\n".join(parts)


def to_anthropic_tool_result(item: ToolOutcome | RecoveryReport, *, tool_use_id: str) -> dict[str, Any]:
    """A `tool_result` content block for the Anthropic Messages API.

    Args:
        item: The outcome, or the report of `call_tool_with_recovery`.
        tool_use_id: The `id` of the model's `tool_use` block.

    Returns:
        `{"type": "tool_result", "tool_use_id": ..., "content": [{"type": "text", ...}], "is_error": ...}`.

    Example:
        ```python
        from mcp_errors import ToolOutcome, to_anthropic_tool_result

        block = to_anthropic_tool_result(ToolOutcome(kind="success", message="42"), tool_use_id="toolu_1")
        assert block["is_error"] is False
        ```
    """
    outcome = _outcome(item)
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": [{"type": "text", "text": outcome_text(item)}],
        "is_error": outcome.kind == "error",
    }


def to_openai_function_output(item: ToolOutcome | RecoveryReport, *, call_id: str) -> dict[str, Any]:
    """A `function_call_output` item for the OpenAI Responses API.

    The API has no error flag, so the verdict travels in the text only.

    Args:
        item: The outcome, or the report of `call_tool_with_recovery`.
        call_id: The `call_id` of the model's `function_call` item.

    Returns:
        `{"type": "function_call_output", "call_id": ..., "output": ...}`.
    """
    return {"type": "function_call_output", "call_id": call_id, "output": outcome_text(item)}


def to_langchain_tool_message(
    item: ToolOutcome | RecoveryReport, *, tool_call_id: str, name: str | None = None
) -> dict[str, Any]:
    """The fields of a LangChain `ToolMessage`: pass them as `ToolMessage(**data)`.

    Args:
        item: The outcome, or the report of `call_tool_with_recovery`.
        tool_call_id: The id of the model's tool call.
        name: The tool's name (taken from a report when omitted).

    Returns:
        `{"type": "tool", "content": ..., "tool_call_id": ..., "status": "success"|"error",
        "artifact": <structuredContent>}` plus `name` when known.
    """
    outcome = _outcome(item)
    data: dict[str, Any] = {
        "type": "tool",
        "content": outcome_text(item),
        "tool_call_id": tool_call_id,
        "status": "error" if outcome.kind == "error" else "success",
        "artifact": outcome.structured,
    }
    tool_name = name or (item.tool if isinstance(item, RecoveryReport) else None)
    if tool_name:
        data["name"] = tool_name
    return data


def _outcome(item: ToolOutcome | RecoveryReport) -> ToolOutcome:
    return item.outcome if isinstance(item, RecoveryReport) else item


def _success_text(outcome: ToolOutcome) -> str:
    result = outcome.result
    if result is None:
        return outcome.message
    # Non-text blocks (images, resources) are shown as their JSON rather than dropped.
    parts = [
        block.text if isinstance(block, TextContent) else block.model_dump_json(by_alias=True, exclude_none=True)
        for block in result.content
    ]
    if not parts and result.structured_content is not None:
        try:
            return json.dumps(result.structured_content, ensure_ascii=False, default=str)
        except (ValueError, RecursionError):  # nested too deep, or an integer past the digit limit
            return "(structured content too large to show)"
    return "\n".join(parts)


def _error_head(outcome: ToolOutcome) -> str:
    head = ErrorHead(
        category=outcome.category,
        retryable=outcome.is_retryable,
        retry_after_seconds=outcome.retry_after_seconds,
        inferred=outcome.category_inferred,
    )
    description = outcome.description or outcome.message or "The tool failed without saying why."
    return write_error_text(head, description)
