"""The contract's vocabulary: which category is retryable, what an envelope is, which JSON-RPC errors stay so."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Final

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, URL_ELICITATION_REQUIRED

import mcp_errors
from mcp_errors import ENVELOPE_SCHEMA, ErrorCategory, is_error_envelope
from mcp_errors._shared.contract import CATEGORY_VALUES, REQUIRED_FIELDS, is_protocol_signal
from mcp_errors._shared.signals import CONTRACT_CODES


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


_CODE: Final = re.compile(r"[A-Z][A-Z0-9_]+")
# Calls that take a code as their first argument: the vocabulary's kinds (`_kind`,
# `FailureKind`) and the server's transient failures (`_transient`, its third).
_CODE_ARGUMENT: Final = {"_kind": 0, "FailureKind": 0, "_transient": 2}


def codes_written(source: str) -> set[str]:
    """The UPPER_SNAKE strings `source` writes as a code: a `code=` keyword, a kind's or a
    transient failure's code argument, a kind looked up by code (`KINDS["CONFLICT"]`), a table
    entry naming a kind by code (`("CONFLICT", (409, 410))`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        values: list[ast.expr] = []
        if isinstance(node, ast.Call):
            values += [keyword.value for keyword in node.keywords if keyword.arg == "code"]
            at = _CODE_ARGUMENT.get(node.func.id) if isinstance(node.func, ast.Name) else None
            if at is not None and len(node.args) > at:
                values.append(node.args[at])
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "KINDS":
            values.append(node.slice)
        elif (
            isinstance(node, ast.Tuple)
            and len(node.elts) == 2
            and isinstance(node.elts[1], ast.Tuple)
            and all(isinstance(item, ast.Constant) and isinstance(item.value, int) for item in node.elts[1].elts)
        ):
            values.append(node.elts[0])
        for value in values:
            found |= {
                constant.value
                for constant in ast.walk(value)
                if isinstance(constant, ast.Constant)
                and isinstance(constant.value, str)
                and _CODE.fullmatch(constant.value)
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
