"""The proxy's classification chain: first source that says something wins, nothing unsafe leaks."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from leak_strategies import texts_with_a_path, texts_with_a_secret
from mcp_errors import ENVELOPE_SCHEMA, ErrorCategory, ExecutionState
from mcp_errors._shared.sanitize import find_leaks
from mcp_errors.proxy._classify import MAX_SAID_CHARS, UpstreamClassifier, UpstreamFailure, _canonical
from mcp_errors.proxy._rules import parse_rules

CHAIN = UpstreamClassifier()
SCHEMA = {"type": "object", "properties": {"day": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}}}


def classify(text: str = "", **failure: Any) -> Any:
    return CHAIN.classify(UpstreamFailure(tool=failure.pop("tool", "t"), text=text, **failure), error_id="e")


def test_the_drafts_tool_failure_wins_over_structured_fields_and_words() -> None:
    details = classify(
        "rate limit exceeded",
        structured={"status": 403},
        meta={"io.modelcontextprotocol/toolFailure": {"class": "capability", "code": "invalid_input"}},
    )
    assert (details.category, details.code, details.inferred) == (ErrorCategory.VALIDATION, "INVALID_INPUT", False)


def test_structured_fields_win_over_words() -> None:
    details = classify("permission denied", structured={"error": {"status": "503", "retry_after": 4}})
    assert (details.category, details.retry_after_seconds, details.inferred) == (ErrorCategory.TRANSIENT, 4, False)


def test_an_invalid_envelope_is_rebuilt_from_its_category() -> None:
    details = classify("x", structured={"errorCategory": "permission", "isRetryable": True, "description": ""})
    assert (details.category, details.code) == (ErrorCategory.PERMISSION, None)


def test_invalid_params_names_the_arguments_from_the_schema_check_and_says_nothing_ran() -> None:
    details = classify("bad", jsonrpc_code=-32602, arguments={"day": "tomorrow"}, input_schema=SCHEMA)
    assert [error.field for error in details.field_errors] == ["day"]
    assert details.execution_state is ExecutionState.NOT_EXECUTED


def test_a_failure_on_arguments_that_break_the_schema_is_validation_but_says_nothing_about_running() -> None:
    details = classify("something broke", arguments={"day": 5}, input_schema=SCHEMA)
    assert (details.category, details.code, details.execution_state) == (
        ErrorCategory.VALIDATION,
        "INVALID_ARGUMENTS",
        None,
    )


def test_a_typescript_servers_mcp_error_text_counts_as_its_json_rpc_code() -> None:
    details = classify("MCP error -32602: Input validation error: Invalid arguments for tool x: expected string")
    assert (details.category, details.execution_state) == (ErrorCategory.VALIDATION, ExecutionState.NOT_EXECUTED)
    assert "MCP error" not in details.description


@pytest.mark.parametrize(
    ("text", "data"),
    [
        ("Resource not found: file:///srv/notes/index.json", None),
        ("Resource not found", {"uri": "file:///srv/notes/index.json"}),
        ("Resource file:///home/ops/notes/index.json not found", None),
    ],
)
def test_a_resource_not_found_is_a_missing_thing_not_a_misconfigured_server(text: str, data: Any) -> None:
    details = classify(text, jsonrpc_code=-32002, jsonrpc_data=data, arguments={"note": "minutes"})
    assert (details.category, details.code) == (ErrorCategory.VALIDATION, "NOT_FOUND")


def test_method_not_found_for_a_tool_the_proxy_does_not_list_is_an_unknown_tool() -> None:
    details = classify("no", tool="ecko", jsonrpc_code=-32601, known_tools=("echo", "search"))
    assert details.code == "UNKNOWN_TOOL"
    assert "echo, search" in details.description


@pytest.mark.parametrize(
    ("text", "category", "code", "wait"),
    [
        ("429 Too Many Requests; Retry-After: 20", ErrorCategory.TRANSIENT, "UPSTREAM_RATE_LIMITED", 20),
        ("quota exceeded, try again in 500ms", ErrorCategory.TRANSIENT, "UPSTREAM_RATE_LIMITED", 0.5),
        ("Deadline exceeded", ErrorCategory.TRANSIENT, "UPSTREAM_TIMEOUT", None),
        ("getaddrinfo EAI_AGAIN api.example.com", ErrorCategory.TRANSIENT, "UPSTREAM_UNAVAILABLE", None),
        ("read ECONNRESET", ErrorCategory.TRANSIENT, "UPSTREAM_CONNECTION_LOST", None),
        ("database is locked", ErrorCategory.TRANSIENT, "DATABASE_BUSY", None),
        ("Invalid API key provided", ErrorCategory.PERMISSION, "NOT_AUTHENTICATED", None),
        ("HTTP 404 from the catalogue", ErrorCategory.VALIDATION, "NOT_FOUND", None),
        ("status code 409", ErrorCategory.BUSINESS, "CONFLICT", None),
        ("branch already exists", ErrorCategory.BUSINESS, "CONFLICT", None),
        ("1 validation error for Arguments", ErrorCategory.VALIDATION, "INVALID_ARGUMENTS", None),
    ],
)
def test_built_in_word_rules_are_marked_inferred(
    text: str, category: ErrorCategory, code: str, wait: float | None
) -> None:
    details = classify(text)
    assert (details.category, details.code, details.retry_after_seconds, details.inferred) == (
        category,
        code,
        wait,
        True,
    )


def test_words_that_say_nothing_get_the_safe_default_with_the_words_kept() -> None:
    details = classify("Error executing tool t: the frobnicator jammed")
    assert (details.category, details.code, details.inferred) == (ErrorCategory.BUSINESS, "TOOL_ERROR", False)
    assert details.description.endswith("The server said: the frobnicator jammed")


def test_the_users_rules_come_after_the_json_rpc_code_and_before_the_word_rules() -> None:
    rules = parse_rules(
        {"rule": [{"match": {"text": "timed out|bad"}, "category": "permission", "code": "MINE"}]}, source="test"
    )
    mine = UpstreamClassifier(rules)
    assert mine.classify(UpstreamFailure(tool="t", text="timed out"), error_id="e").code == "MINE"  # type: ignore[union-attr]
    jsonrpc = mine.classify(UpstreamFailure(tool="t", text="bad", jsonrpc_code=-32602), error_id="e")
    assert jsonrpc is not None
    assert jsonrpc.category is ErrorCategory.VALIDATION


def test_a_valid_envelope_is_left_alone() -> None:
    envelope = {"errorCategory": "transient", "isRetryable": True, "description": "Wait a bit."}
    assert classify("x", structured=envelope) is None


@given(
    words=st.one_of(texts_with_a_secret(), texts_with_a_path()),
    structured=st.none()
    | st.dictionaries(st.sampled_from(["status", "code", "category", "error"]), st.text(max_size=30) | st.integers()),
    code=st.none() | st.sampled_from([-32602, -32601, -32603, -32000, -32001, -32099]),
)
def test_any_upstream_failure_becomes_a_valid_envelope_without_its_secrets_or_paths(
    words: tuple[str, str], structured: dict[str, Any] | None, code: int | None
) -> None:
    text, planted = words
    assume(text.count(planted) == 1)  # a secret the text around it repeats is no longer one
    details = classify(text, structured=structured, jsonrpc_code=code, jsonrpc_data={"field": text})
    assert details is not None
    written, envelope = details.write("e")
    jsonschema.validate(envelope, ENVELOPE_SCHEMA)
    assert planted not in written
    assert find_leaks(written) == []
    assert len(envelope["description"]) <= 1000


@given(st.text(min_size=MAX_SAID_CHARS * 3, max_size=MAX_SAID_CHARS * 6))
def test_the_upstreams_words_are_capped(text: str) -> None:
    details = classify(text)
    assert len(details.description) <= 1000


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=8), _JSON_VALUES, max_size=4))
def test_the_arguments_key_of_shared_classifications_is_their_sorted_compact_json(arguments: dict[str, Any]) -> None:
    assert _canonical(arguments) == json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_arguments_that_are_not_json_share_no_classification() -> None:
    assert _canonical({"when": object()}) is None
    unsortable: dict[Any, Any] = {1: "a", "b": 2}  # keys that cannot be sorted together
    assert _canonical(unsortable) is None
