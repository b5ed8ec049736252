"""SEP-3313's `_meta["io.modelcontextprotocol/toolFailure"]`: written from our envelope, read back."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client as FastMCPClient
from fastmcp import FastMCP
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from mcp_errors import (
    AccessDeniedError,
    BusinessRuleError,
    ErrorCategory,
    InputValidationError,
    TransientError,
    install,
    read_result,
)
from mcp_errors._shared.tool_failure import TOOL_FAILURE_META, read_tool_failure, with_tool_failure, write_tool_failure

NOW = 1_800_000_000.0


def envelope(category: str, code: str | None = None, **more: Any) -> dict[str, Any]:
    data = {"errorCategory": category, "isRetryable": category == "transient", "description": "What to do."}
    return data | ({"code": code} if code else {}) | more


@pytest.mark.parametrize(
    ("category", "code", "failure_class", "failure_code"),
    [
        ("transient", "UPSTREAM_TIMEOUT", "reliability", "retryable_transient_error"),
        ("business", "INTERNAL_ERROR", "reliability", "internal_error"),
        ("validation", "UNKNOWN_TOOL", "capability", "capability_unsupported"),
        ("validation", "INVALID_ARGUMENTS", "capability", "invalid_input"),
        ("business", "ORDER_NOT_FOUND", "capability", "resource_not_found"),
        ("business", "REFUND_LIMIT_EXCEEDED", "governance", "policy_blocked"),
        ("permission", "UPSTREAM_UNAUTHORIZED", "governance", "auth_required"),
        ("permission", "FINANCE_ONLY", "governance", "permission_denied"),
    ],
)
def test_each_envelope_maps_to_the_drafts_class_and_code_and_back(
    category: str, code: str, failure_class: str, failure_code: str
) -> None:
    failure = write_tool_failure(envelope(category, code, errorId="e-1"), now=NOW)
    assert (failure["class"], failure["code"]) == (failure_class, failure_code)
    assert ("retryable" in failure) is (failure_class == "reliability")
    assert (failure["correlationId"], failure["agentGuidance"]) == ("e-1", "What to do.")
    read = read_tool_failure(failure, now=NOW)
    assert (read.category, read.retryable, read.inferred) == (ErrorCategory(category), category == "transient", False)


def test_retry_not_before_is_epoch_milliseconds_and_reads_back_as_the_wait() -> None:
    failure = write_tool_failure(envelope("transient", retryAfterSeconds=2.5), now=NOW)
    assert failure["retryNotBefore"] == (NOW + 2.5) * 1000
    assert read_tool_failure(failure, now=NOW).retry_after_seconds == 2.5
    assert read_tool_failure({"retryable": True, "retryNotBefore": 3}, now=NOW).retry_after_seconds == 3
    assert "retryNotBefore" not in write_tool_failure(envelope("business", retryAfterSeconds=4), now=NOW)


def test_an_existing_tool_failure_and_other_meta_keys_are_kept() -> None:
    theirs = {"class": "governance", "code": "policy_blocked"}
    merged = with_tool_failure({"trace": "t", TOOL_FAILURE_META: theirs}, envelope("transient"))
    assert merged == {"trace": "t", TOOL_FAILURE_META: theirs}
    assert with_tool_failure(None, envelope("validation"))[TOOL_FAILURE_META]["code"] == "invalid_input"


def test_the_reader_reads_the_meta_when_a_host_dropped_structured_content() -> None:
    failure = write_tool_failure(envelope("permission", "FINANCE_ONLY", errorId="e-2"), now=NOW)
    result = CallToolResult(
        content=[TextContent(type="text", text="denied")], is_error=True, _meta={TOOL_FAILURE_META: failure}
    )
    outcome = read_result(result)
    assert (outcome.category, outcome.is_retryable, outcome.error_id, outcome.source) == (
        ErrorCategory.PERMISSION,
        False,
        "e-2",
        "tool_failure_meta",
    )


@given(
    st.dictionaries(
        st.sampled_from(["class", "code", "retryable", "retryNotBefore", "agentGuidance"]),
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    )
)
def test_any_tool_failure_object_reads_without_raising_and_only_transient_is_retryable(data: dict[str, Any]) -> None:
    read = read_tool_failure(data)
    assert read.retryable is False or read.category is ErrorCategory.TRANSIENT
    assert read.retry_after_seconds is None or read.retry_after_seconds >= 0


FAILURES = [
    TransientError("Inventory busy", description="Resend in a moment.", retry_after_seconds=1),
    InputValidationError("Bad email", description="Send an address like a@b.c."),
    BusinessRuleError("Too much", description="Ask a manager.", code="REFUND_LIMIT_EXCEEDED"),
    AccessDeniedError("Finance only", description="Escalate."),
]


@pytest.mark.anyio
async def test_install_writes_the_meta_on_an_mcpserver_only_when_asked(mode: str) -> None:
    for enabled in (False, True):
        server = install(MCPServer("s"), tool_failure_meta=enabled)

        @server.tool()
        def fail(index: int) -> str:
            raise FAILURES[index]

        async with Client(server, mode=mode) as client:
            results = [await client.call_tool("fail", {"index": index}) for index in range(len(FAILURES))]
        for result in results:
            failure = (result.meta or {}).get(TOOL_FAILURE_META)
            assert (failure is not None) is enabled
            if failure is not None:
                assert read_tool_failure(failure).category is read_result(result).category


@pytest.mark.anyio
async def test_install_writes_the_meta_on_a_fastmcp_server_when_asked() -> None:
    server: FastMCP[Any] = FastMCP("s")
    install(server, tool_failure_meta=True)

    @server.tool
    def fail(index: int) -> str:
        raise FAILURES[index]

    async with FastMCPClient(server) as client:
        results = [await client.call_tool_mcp("fail", {"index": index}) for index in range(len(FAILURES))]
    categories = [read_tool_failure((result.meta or {})[TOOL_FAILURE_META]).category for result in results]
    assert categories == [failure.category for failure in FAILURES]
