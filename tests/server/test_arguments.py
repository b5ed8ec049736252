"""Arguments judged before a tool runs: each bad field named, secrets redacted, a validator's own failure classified."""

from __future__ import annotations

import decimal
import logging
import sqlite3
from typing import Any

import pytest
from fastmcp import Client as FastMCPClient
from mcp import Client
from pydantic import BaseModel, Field, ValidationError, field_validator

from mcp_errors._server.arguments import classify_arguments
from servers import validator_server
from servers.checks import assert_nothing_leaks, check_details, check_error, details_on_the_wire

ERROR_ID = "0123456789ab"


class Refund(BaseModel):
    order_id: str = Field(pattern=r"^#\d{5}$")
    amount: float = Field(gt=0)
    api_key: str = Field(min_length=40)


def test_argument_errors_name_each_field_and_redact_secret_values() -> None:
    with pytest.raises(ValidationError) as caught:
        Refund.model_validate({"order_id": "order-abc", "api_key": "sk-live-short"})
    schema = Refund.model_json_schema()
    details = classify_arguments(caught.value, tool_name="refund", input_schema=schema, error_id=ERROR_ID)
    envelope = check_details(details, "validation", "INVALID_ARGUMENTS")
    fields = {error["field"]: error for error in envelope["fieldErrors"]}
    assert set(fields) == {"order_id", "amount", "api_key"}
    assert "received" not in fields["amount"]
    assert fields["api_key"]["received"] == "[REDACTED]"
    assert "sk-live-short" not in details_on_the_wire(details)
    assert fields["order_id"]["expected"] == "a string matching ^#\\d{5}$"


# A validator's own words reach the caller; a failure inside it (a lookup that could not
# connect, a query that failed) is the server's, classified as what it is, its text unsent.
VALIDATOR_CASES = [
    pytest.param("find_customer", {"customer_id": "12"}, "validation", "INVALID_ARGUMENTS", "customer ids look like"),
    pytest.param("convert", {"amount": 5, "currency": "XYZ"}, "validation", "INVALID_ARGUMENTS", "unknown currency"),
    pytest.param("find_customer", {"customer_id": "C-1234"}, "transient", "UPSTREAM_UNAVAILABLE", None),
    pytest.param("read_ledger", {"ledger": "L-1"}, "business", "INTERNAL_ERROR", None),
]


def check_validator_case(result: dict[str, Any], category: str, code: str, words: str | None) -> None:
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope["code"]) == (category, code)
    if words is not None:
        assert any(words in error["problem"] for error in envelope["fieldErrors"])
    assert_nothing_leaks(result, *validator_server.LEAKED)


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "arguments", "category", "code", "words"), VALIDATOR_CASES)
async def test_a_validators_own_words_reach_the_caller_on_mcpserver_and_its_failures_do_not(
    mode: str, tool: str, arguments: dict[str, Any], category: str, code: str, words: str | None
) -> None:
    async with Client(validator_server.build_mcpserver(), mode=mode) as client:
        result = await client.call_tool(tool, arguments)
    check_validator_case(result.model_dump(by_alias=True, exclude_none=True, mode="json"), category, code, words)


@pytest.mark.anyio
@pytest.mark.parametrize(("tool", "arguments", "category", "code", "words"), VALIDATOR_CASES)
async def test_a_validators_own_words_reach_the_caller_on_fastmcp_and_its_failures_do_not(
    tool: str, arguments: dict[str, Any], category: str, code: str, words: str | None
) -> None:
    async with FastMCPClient(validator_server.build_fastmcp()) as client:
        result = await client.call_tool_mcp(tool, arguments)
    check_validator_case(result.model_dump(by_alias=True, exclude_none=True, mode="json"), category, code, words)


@pytest.mark.anyio
async def test_a_validator_that_failed_itself_is_logged_with_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    async with Client(validator_server.build_mcpserver()) as client:
        result = await client.call_tool("read_ledger", {"ledger": "L-1"})
    assert result.structured_content is not None
    [record] = [r for r in caplog.records if r.name == "mcp_errors" and r.levelno == logging.ERROR]
    assert record.error_id == result.structured_content["errorId"]  # type: ignore[attr-defined]
    assert record.exc_info is not None
    assert isinstance(record.exc_info[1], sqlite3.OperationalError)


def test_a_value_error_raised_while_reading_the_value_stays_a_validation_error() -> None:
    class Amount(BaseModel):
        value: str

        @field_validator("value")
        @classmethod
        def parse(cls, value: str) -> str:
            try:
                decimal.Decimal(value)
            except decimal.InvalidOperation:
                raise ValueError("amounts look like 12.50")  # noqa: B904  (the context is a value problem)
            return value

    with pytest.raises(ValidationError) as caught:
        Amount.model_validate({"value": "lots"})
    details = classify_arguments(caught.value, error_id=ERROR_ID)
    check_details(details, "validation", "INVALID_ARGUMENTS")
    assert "amounts look like 12.50" in details.field_errors[0].problem
