"""The contract's vocabulary: which category is retryable, what an envelope is, which JSON-RPC errors stay so."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, URL_ELICITATION_REQUIRED

import mcp_errors
from mcp_errors import ENVELOPE_SCHEMA, ErrorCategory, is_error_envelope
from mcp_errors._shared.contract import CATEGORY_VALUES, CONTRACT_CODES, REQUIRED_FIELDS, is_protocol_signal


def test_only_a_transient_failure_is_retryable() -> None:
    assert [category for category in ErrorCategory if category.is_retryable] == [ErrorCategory.TRANSIENT]


def test_the_schema_requires_what_the_vocabulary_says_and_lists_the_four_categories() -> None:
    assert set(REQUIRED_FIELDS) == {"errorCategory", "isRetryable", "description"}
    assert set(ENVELOPE_SCHEMA["properties"]["errorCategory"]["enum"]) == CATEGORY_VALUES


@given(category=st.sampled_from(sorted(CATEGORY_VALUES)), retryable=st.booleans(), description=st.text(max_size=20))
def test_an_envelope_is_one_whose_verdict_agrees_with_its_category_and_that_says_something(
    category: str, retryable: bool, description: str
) -> None:
    envelope = {"errorCategory": category, "isRetryable": retryable, "description": description}
    agrees = retryable == (category == "transient") and description != ""
    assert is_error_envelope(envelope) is agrees
    valid = jsonschema.Draft202012Validator(ENVELOPE_SCHEMA).is_valid(envelope)
    assert valid is agrees


def test_only_the_codes_a_client_acts_on_stay_jsonrpc_errors() -> None:
    assert is_protocol_signal(MCPError(URL_ELICITATION_REQUIRED, "sign in"))
    assert is_protocol_signal(MCPError(MISSING_REQUIRED_CLIENT_CAPABILITY, "needs sampling"))
    for code in (INVALID_PARAMS, INTERNAL_ERROR, -32001):
        assert not is_protocol_signal(MCPError(code, "x"))
    assert not is_protocol_signal(TimeoutError())


@pytest.mark.parametrize("value", [None, [], "transient", {"errorCategory": "transient", "isRetryable": True}])
def test_what_lacks_a_required_field_is_no_envelope(value: object) -> None:
    assert not is_error_envelope(value)


def codes_written(source: str) -> set[str]:
    """The UPPER_SNAKE strings given as a `code` (keyword, or `_transient`'s third argument) in `source`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        values = [keyword.value for keyword in node.keywords if keyword.arg == "code"]
        if isinstance(node.func, ast.Name) and node.func.id == "_transient" and len(node.args) > 2:
            values.append(node.args[2])
        for value in values:
            found |= {
                constant.value
                for constant in ast.walk(value)
                if isinstance(constant, ast.Constant)
                and isinstance(constant.value, str)
                and re.fullmatch(r"[A-Z][A-Z0-9_]+", constant.value)
            }
    return found


def test_every_code_the_package_writes_is_a_contract_code() -> None:
    # Metrics keep these as labels whatever server sent them: a code written here but missing
    # from the list would be counted as `other`.
    package = Path(mcp_errors.__file__).parent
    written: set[str] = set()
    for folder in ("_server", "_shared", "_client", "stores", "proxy"):
        for module in (package / folder).glob("*.py"):
            written |= codes_written(module.read_text())
    assert len(written) >= 20
    assert written <= CONTRACT_CODES, written - CONTRACT_CODES
