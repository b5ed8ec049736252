"""`read_result` reads every kind of answer, from any server, into a `ToolOutcome`."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from mcp import Client
from mcp.client import InputRequiredRoundsExceededError
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, INTERNAL_ERROR, INVALID_PARAMS, REQUEST_TIMEOUT, CallToolResult, TextContent

from hostile_strategies import HUGE_INT, hostile_results, nested, well_formed_hostile_results
from mcp_errors import ErrorCategory, ExecutionState, TransientError, empty_result, install, read_result
from mcp_errors._client.outcome import TOOL_FAILURE_META, is_call_failure
from servers.checks import assert_sound_outcome
from servers.hostile_texts import HOSTILE_TEXTS, build_hostile_texts_server
from servers.shop import build_third_party


def text_error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


@pytest.mark.anyio
async def test_our_envelope_is_read_with_every_optional_field(mode: str) -> None:
    server = install(MCPServer("s"))

    @server.tool()
    def busy() -> str:
        raise TransientError(
            "Busy", description="Resend later.", code="BUSY", retry_after_seconds=2, execution_state="not_executed"
        )

    async with Client(server, mode=mode) as client:
        outcome = read_result(await client.call_tool("busy", {}))
    assert (outcome.kind, outcome.category, outcome.is_retryable, outcome.source) == (
        "error",
        ErrorCategory.TRANSIENT,
        True,
        "envelope",
    )
    assert (outcome.code, outcome.retry_after_seconds, outcome.execution_state) == (
        "BUSY",
        2,
        ExecutionState.NOT_EXECUTED,
    )
    assert outcome.error_id
    assert not outcome.category_inferred


def test_an_envelope_whose_flag_denies_retrying_is_not_retryable() -> None:
    result = CallToolResult(
        content=[],
        is_error=True,
        structured_content={"errorCategory": "transient", "isRetryable": False, "description": "x"},
    )
    assert not read_result(result).is_retryable


def test_the_proposed_tool_failure_meta_is_read_leniently() -> None:
    result = CallToolResult.model_validate(
        {
            "content": [{"type": "text", "text": "rate limited"}],
            "isError": True,
            "_meta": {
                "io.modelcontextprotocol/toolFailure": {
                    "class": "RateLimited",
                    "code": "RATE",
                    "retryable": True,
                    "retryNotBefore": 3,
                    "correlationId": "c-1",
                    "agentGuidance": "Wait 3 seconds.",
                }
            },
        }
    )
    outcome = read_result(result)
    assert (outcome.category, outcome.is_retryable, outcome.retry_after_seconds) == (ErrorCategory.TRANSIENT, True, 3)
    assert (outcome.error_id, outcome.description, outcome.source) == ("c-1", "Wait 3 seconds.", "tool_failure_meta")


def test_a_tool_failure_meta_with_an_unknown_class_and_no_retry_flag_has_no_category() -> None:
    result = CallToolResult.model_validate(
        {"content": [], "isError": True, "_meta": {"io.modelcontextprotocol/toolFailure": {"class": "Weird"}}}
    )
    outcome = read_result(result)
    assert (outcome.category, outcome.is_retryable) == (None, False)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Error executing tool x: Service temporarily unavailable", ErrorCategory.TRANSIENT),
        ("Permission denied for user bob", ErrorCategory.PERMISSION),
        ("1 validation error for arguments", ErrorCategory.VALIDATION),
        ("Error executing tool x", None),
    ],
)
def test_text_only_errors_get_an_inferred_category_retryable_only_when_plainly_transient(
    text: str, category: ErrorCategory | None
) -> None:
    outcome = read_result(text_error(text))
    transient = category is ErrorCategory.TRANSIENT
    assert (outcome.category, outcome.category_inferred, outcome.is_retryable) == (category, True, transient)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("Error executing tool x: extra_forbidden", ErrorCategory.VALIDATION),  # pydantic's error type
        ("Error executing tool delete_permissions", None),
        ("Error executing tool x: the caller has no permission for /reports", ErrorCategory.PERMISSION),
        ("Insufficient permissions", ErrorCategory.PERMISSION),
        ("HTTP 403 Forbidden", ErrorCategory.PERMISSION),
        (
            "order_id\n  Input should be a valid integer [type=int_parsing, input_value='A-403', input_type=str]",
            ErrorCategory.VALIDATION,
        ),
        # pydantic's own "Value error" (read by the word model), not the echoed "access denied, timed out".
        (
            "q\n  Value error [type=value_error, input_value='access denied, timed out', input_type=str]",
            ErrorCategory.VALIDATION,
        ),
    ],
)
def test_keywords_count_only_as_whole_words_and_never_inside_pydantics_echo_of_the_input(
    text: str, category: ErrorCategory | None
) -> None:
    outcome = read_result(text_error(text))
    assert (outcome.category, outcome.category_inferred, outcome.is_retryable) == (category, True, False)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("grant", {"user": "bob"}),
        ("grant", {"user": "bob", "permissions": "forbidden"}),
        ("lookup_order", {"order_id": "A-403"}),
    ],
    ids=["missing-argument-named-permissions", "echoed-word-forbidden", "echoed-number-403"],
)
async def test_a_third_party_servers_argument_report_reads_as_validation_whatever_it_names_or_echoes(
    mode: str, tool: str, arguments: dict[str, Any]
) -> None:
    with anyio.fail_after(10):
        async with Client(build_third_party(), mode=mode) as client:
            outcome = read_result(await client.call_tool(tool, arguments))
    assert (outcome.category, outcome.category_inferred, outcome.is_retryable) == (
        ErrorCategory.VALIDATION,
        True,
        False,
    )


def test_the_contract_text_block_alone_gives_the_category_but_never_a_retry() -> None:
    """Prose is not a promise: without the envelope, nothing is resent on the text's word."""
    outcome = read_result(text_error("[transient error, retryable after 2s] Busy. Resend later. (errorId: abc)"))
    assert (outcome.category, outcome.retry_after_seconds, outcome.error_id) == (ErrorCategory.TRANSIENT, 2.0, "abc")
    assert outcome.category_inferred
    assert not outcome.is_retryable


@pytest.mark.parametrize(
    "head", ["[transient error, retryable after 1.2.3s] Busy.", "[transient error, retryable after .s]"]
)
def test_a_malformed_contract_head_from_another_server_is_read_as_plain_text(head: str) -> None:
    outcome = read_result(text_error(head))
    assert (outcome.kind, outcome.source, outcome.is_retryable, outcome.retry_after_seconds) == (
        "error",
        "text",
        False,
        None,
    )


@pytest.mark.parametrize("wait", [float("nan"), float("inf"), -1, True, "soon"])
def test_a_retry_after_that_is_not_a_finite_wait_is_ignored(wait: object) -> None:
    envelope = {"errorCategory": "transient", "isRetryable": True, "description": "Busy.", "retryAfterSeconds": wait}
    outcome = read_result(text_error("Busy.").model_copy(update={"structured_content": envelope}))
    assert outcome.is_retryable
    assert outcome.retry_after_seconds is None


def test_a_partial_report_whose_answers_found_nothing_is_not_an_empty_result() -> None:
    """Some sources failed: "nothing found" is only what the others said."""
    report = {"partial": True, "answered": 1, "total": 2, "resultCount": 0, "results": {}, "failed": {"b": {}}}
    result = CallToolResult(
        content=[TextContent(type="text", text="1 of 2 sources answered")], structured_content=report
    )
    assert read_result(result).kind == "success"


@pytest.mark.parametrize(
    ("exc", "category", "state", "retryable"),
    [
        (ConnectionRefusedError(), ErrorCategory.TRANSIENT, ExecutionState.NOT_EXECUTED, True),
        (TimeoutError(), ErrorCategory.TRANSIENT, ExecutionState.OUTCOME_UNKNOWN, True),
        (ConnectionResetError(), ErrorCategory.TRANSIENT, ExecutionState.OUTCOME_UNKNOWN, True),
        (MCPError(REQUEST_TIMEOUT, "timed out"), ErrorCategory.TRANSIENT, ExecutionState.OUTCOME_UNKNOWN, True),
        (MCPError(CONNECTION_CLOSED, "closed"), ErrorCategory.TRANSIENT, ExecutionState.OUTCOME_UNKNOWN, True),
        (MCPError(INVALID_PARAMS, "bad"), ErrorCategory.VALIDATION, ExecutionState.NOT_EXECUTED, False),
        (MCPError(INTERNAL_ERROR, "boom"), None, ExecutionState.OUTCOME_UNKNOWN, False),
    ],
)
def test_failures_without_a_result_are_read_from_the_exception(
    exc: BaseException, category: ErrorCategory | None, state: ExecutionState, retryable: bool
) -> None:
    outcome = read_result(exc)
    assert (outcome.kind, outcome.category, outcome.execution_state, outcome.is_retryable) == (
        "error",
        category,
        state,
        retryable,
    )
    assert outcome.category_inferred
    assert outcome.result is None


@pytest.mark.parametrize(
    ("result", "kind"),
    [
        (empty_result("Nothing matched; the search ran."), "empty"),
        (CallToolResult(content=[]), "empty"),
        (CallToolResult(content=[], structured_content={}), "empty"),
        (CallToolResult(content=[TextContent(type="text", text="0")]), "success"),
        (CallToolResult(content=[], structured_content={"resultCount": 2}), "success"),
        (CallToolResult(content=[], structured_content={"result": []}), "empty"),
        (CallToolResult(content=[], structured_content={"result": [1]}), "success"),
    ],
)
def test_the_empty_rule(result: CallToolResult, kind: str) -> None:
    assert read_result(result).kind == kind


@pytest.mark.anyio
async def test_a_tool_returning_nothing_reads_as_empty_not_as_an_error(mode: str) -> None:
    server: MCPServer[Any] = MCPServer("s")

    @server.tool()
    def nothing() -> list[str]:
        return []

    async with Client(server, mode=mode) as client:
        result = await client.call_tool("nothing", {})
    assert read_result(result).kind == "empty"


def test_wire_json_is_accepted_as_well() -> None:
    outcome = read_result(
        {
            "content": [],
            "isError": True,
            "structuredContent": {"errorCategory": "business", "isRetryable": False, "description": "d"},
        }
    )
    assert (outcome.category, outcome.description) == (ErrorCategory.BUSINESS, "d")


@pytest.mark.parametrize(
    ("exc", "state"),
    [
        (httpx.ConnectError("refused"), ExecutionState.NOT_EXECUTED),
        (httpx.ReadTimeout("slow"), ExecutionState.OUTCOME_UNKNOWN),
        (httpx.ReadError("reset"), ExecutionState.OUTCOME_UNKNOWN),
        (httpx.RemoteProtocolError("closed mid-answer"), ExecutionState.OUTCOME_UNKNOWN),
    ],
)
def test_httpx_transport_failures_are_transient_with_the_right_execution_state(
    exc: Exception, state: ExecutionState
) -> None:
    outcome = read_result(exc)
    assert outcome.category is ErrorCategory.TRANSIENT
    assert outcome.execution_state is state


# Whatever a server sends, the reader answers with an outcome: an unreadable field is ignored
# or leaves the category unknown, and nothing unreadable makes a call look safe to resend.


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(hostile_results())
def test_any_json_in_any_field_is_read_into_a_sound_outcome(result: dict[str, Any]) -> None:
    assert_sound_outcome(read_result(result))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(well_formed_hostile_results())
def test_any_json_inside_a_well_formed_result_is_read_into_a_sound_outcome(result: dict[str, Any]) -> None:
    assert_sound_outcome(read_result(CallToolResult.model_validate(result)))


@pytest.mark.parametrize(
    ("structured", "category", "retry_after"),
    [
        ({"errorCategory": ["transient"], "isRetryable": True, "description": "x"}, None, None),
        ({"errorCategory": {"transient": 1}, "isRetryable": True, "description": "x"}, None, None),
        (
            {"errorCategory": "transient", "isRetryable": True, "description": "x", "retryAfterSeconds": 10**400},
            "transient",
            86_400.0,
        ),
    ],
    ids=["category-list", "category-object", "huge-wait"],
)
def test_the_issues_hostile_values_are_read(
    structured: dict[str, Any], category: str | None, retry_after: float | None
) -> None:
    outcome = read_result(CallToolResult(content=[], is_error=True, structured_content=structured))
    assert outcome.category == category
    assert outcome.retry_after_seconds == retry_after


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("Client must be used within an async context manager"),
        RuntimeError("Invalid structured content returned by tool x: made up, with no schema error behind it"),
        InputRequiredRoundsExceededError(3),
    ],
    ids=["client-not-entered", "look-alike-text", "input-required-rounds"],
)
def test_a_runtime_error_that_is_not_the_sdks_output_schema_check_is_no_call_failure(exc: RuntimeError) -> None:
    assert not is_call_failure(exc)


def test_an_answer_that_is_no_tool_result_is_an_error_whose_outcome_is_unknown() -> None:
    outcome = read_result({"content": 5, "isError": "yes"})
    assert (outcome.kind, outcome.category, outcome.is_retryable) == ("error", None, False)
    assert outcome.execution_state is ExecutionState.OUTCOME_UNKNOWN


@pytest.mark.parametrize("value", [nested(5000), HUGE_INT], ids=["nested-past-the-recursion-limit", "huge-int"])
@pytest.mark.parametrize(
    "make",
    [
        lambda value: {"content": [], "structuredContent": {"rows": value}},
        lambda value: {
            "content": [],
            "isError": True,
            "structuredContent": {
                "errorCategory": "validation",
                "isRetryable": False,
                "description": "Fix it.",
                "fieldErrors": [{"field": "a", "problem": value, "expected": value, "received": value}],
            },
        },
        lambda value: {"content": [], "isError": True, "_meta": {TOOL_FAILURE_META: {"agentGuidance": value}}},
    ],
    ids=["success", "field-errors", "tool-failure"],
)
def test_values_no_encoder_can_write_are_read_and_shown(make: Any, value: object) -> None:
    assert_sound_outcome(read_result(make(value)))


@pytest.mark.anyio
@pytest.mark.parametrize("tool", sorted(HOSTILE_TEXTS))
async def test_a_hostile_error_text_over_200_kib_is_read_at_once(mode: str, tool: str) -> None:
    assert len(HOSTILE_TEXTS[tool]) > 200 * 1024
    async with Client(build_hostile_texts_server(), mode=mode) as client:
        # A hang guard, not a speed target: the old reader took 18 s on the first text.
        with anyio.fail_after(10):
            outcome = read_result(await client.call_tool(tool, {}))
            await anyio.lowlevel.checkpoint()  # a deadline passed in the synchronous read fires here
    assert outcome.kind == "error"
    assert not outcome.is_retryable
    assert outcome.error_id is None or len(outcome.error_id) <= 64
