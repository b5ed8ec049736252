"""The leak rule (ME010) on error texts: real leaks are flagged, field names and redactions are not."""

from __future__ import annotations

import pytest
from mcp_types import CallToolResult, TextContent, Tool

from mcp_errors.check._judge import judge_call
from mcp_errors.check._probes import Probe

TOOL = Tool(name="connect", input_schema={"type": "object", "properties": {"api_key": {"type": "string"}}})
PROBE = Probe("missing-required", {}, ("api_key",), "required 'api_key' missing")


def error_with(description: str) -> CallToolResult:
    data = {"errorCategory": "validation", "isRetryable": False, "description": description}
    text = f"[validation error, not retryable] Invalid arguments. {description}"
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data, is_error=True)


def leak_rules(description: str) -> list[str]:
    return [rule for rule, _ in judge_call(TOOL, PROBE, error_with(description)) if rule == "ME010"]


@pytest.mark.parametrize(
    "description",
    [
        "The argument api_key is wrong. Fields: api_key: required argument is missing (expected a string).",
        "Correct password and call again. Fields: password: String should have at least 8 characters.",
        "The api_key was rejected (token=[REDACTED]); send a valid api_key and call again.",
        'The api_key was rejected ({"api_key": "[REDACTED]"}); send a valid one and call again.',
        "The api_key must be a string, not a number: api_key: 12345 is not of type 'string'.",
        "The api_key is missing; send a Bearer authentication header or the api_key argument.",
        "The database at postgres://admin:[REDACTED]@db.internal/prod refused the api_key; call again later.",
    ],
)
def test_a_secret_named_field_with_its_problem_or_a_redaction_is_not_a_leak(description: str) -> None:
    assert leak_rules(description) == []


@pytest.mark.parametrize(
    "description",
    [
        "The api_key was rejected: api_key=sk-live-4f9a8b7c6d5e4f3a2b1c0d. Send a valid api_key.",
        "The api_key was rejected for user bob with password: hunter2. Send a valid api_key.",
        'The api_key was rejected ({"api_key": "a1b2c3d4e5f6"}); send a valid one and call again.',
        "The api_key was refused; upstream said Authorization: Bearer abc123def456ghi789.",
        "The database at postgres://admin:hunter@db.internal/prod refused the api_key; call again later.",
        "The api_key was rejected; the stored key is ghp_abcdefghijklmnopqrstuvwxyz0123 and differs.",
    ],
)
def test_a_credential_looking_value_is_a_leak(description: str) -> None:
    assert leak_rules(description) == ["ME010"]
