"""The envelope: how a failure and an empty result are written, and the schema that describes them."""

from __future__ import annotations

import json
import os
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from mcp_errors import (
    ENVELOPE_SCHEMA,
    ErrorCategory,
    ExecutionState,
    FieldError,
    admit_error_envelope,
    empty_result,
    is_error_envelope,
)
from mcp_errors._shared.envelope import FailureDetails, error_result

words = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "Zs")), min_size=1, max_size=60).filter(
    lambda text: text.strip() != ""
)
field_errors = st.lists(
    st.builds(
        FieldError,
        field=st.from_regex(r"[a-z_][a-z0-9_.]{0,20}", fullmatch=True),
        problem=words,
        expected=st.none() | words,
        received=st.none() | words,
    ),
    max_size=3,
)


error_ids = st.none() | st.from_regex(r"[0-9a-f]{12}", fullmatch=True)


@st.composite
def failures(draw: st.DrawFn) -> FailureDetails:
    category = draw(st.sampled_from(ErrorCategory))
    transient = category is ErrorCategory.TRANSIENT
    return FailureDetails(
        message=draw(words),
        category=category,
        description=draw(words),
        code=draw(st.none() | st.from_regex(r"[A-Z][A-Z0-9_]{0,30}", fullmatch=True)),
        retry_after_seconds=draw(
            st.none() | st.floats(min_value=0, max_value=86400, allow_nan=False) if transient else st.none()
        ),
        field_errors=tuple(draw(field_errors)) if category is ErrorCategory.VALIDATION else (),
        execution_state=draw(st.none() | st.sampled_from(ExecutionState)),
    )


@given(failures(), error_ids)
def test_an_error_result_survives_the_wire_and_keeps_its_invariants(
    details: FailureDetails, error_id: str | None
) -> None:
    result = error_result(details, error_id=error_id)
    on_wire = json.loads(result.model_dump_json(by_alias=True, exclude_none=True))
    back = CallToolResult.model_validate(on_wire)
    assert back == result
    envelope = on_wire["structuredContent"]
    jsonschema.validate(envelope, ENVELOPE_SCHEMA)
    assert is_error_envelope(envelope)
    assert on_wire["isError"] is True
    assert envelope["isRetryable"] is (details.category is ErrorCategory.TRANSIENT)
    assert envelope["errorCategory"] == details.category.value
    text = on_wire["content"][0]["text"]
    verdict = "retryable" if details.category.is_retryable else "not retryable"
    assert text.startswith(f"[{details.category.value} error, {verdict}")
    assert details.description in text
    if error_id is not None:
        assert text.endswith(f"(errorId: {error_id})")
        assert envelope["errorId"] == error_id
    else:
        assert "errorId" not in envelope


@given(failures(), st.lists(st.from_regex(r"[0-9a-f]{12}", fullmatch=True), min_size=2, max_size=4, unique=True))
def test_one_failure_written_for_several_calls_keeps_each_calls_error_id_apart(
    details: FailureDetails, error_ids: list[str]
) -> None:
    """A shared instance is written once; each result still gets its own id and its own dict."""
    written = [details.write(error_id) for error_id in error_ids]
    assert [structured["errorId"] for _, structured in written] == error_ids
    assert [text.rsplit("(errorId: ", 1)[1] for text, _ in written] == [f"{error_id})" for error_id in error_ids]
    written[0][1]["description"] = "changed by a caller"
    assert details.to_structured()["description"] == details.description


@given(failures())
def test_the_schema_and_is_error_envelope_reject_a_retryable_non_transient(details: FailureDetails) -> None:
    envelope = details.to_structured()
    envelope["isRetryable"] = not envelope["isRetryable"]
    assert not is_error_envelope(envelope)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(envelope, ENVELOPE_SCHEMA)


def test_the_schema_rejects_retry_after_outside_transient_and_codes_that_are_not_upper_snake() -> None:
    base = {"errorCategory": "business", "isRetryable": False, "description": "Escalate."}
    jsonschema.validate(base, ENVELOPE_SCHEMA)
    for bad in ({**base, "retryAfterSeconds": 3}, {**base, "code": "not-snake"}, {**base, "description": ""}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, ENVELOPE_SCHEMA)


@pytest.mark.parametrize(
    "value",
    [None, [], "transient", {"errorCategory": "transient", "isRetryable": True}, {"resultCount": 0}],
)
def test_is_error_envelope_rejects_what_is_not_an_envelope(value: object) -> None:
    assert not is_error_envelope(value)


def test_the_first_text_block_names_category_verdict_wait_and_error_id() -> None:
    details = FailureDetails(
        message="Inventory busy",
        category=ErrorCategory.TRANSIENT,
        description="Resend in a few seconds.",
        retry_after_seconds=2.5,
    )
    text = details.to_text("0123456789ab")
    assert (
        text
        == "[transient error, retryable after 2.5s] Inventory busy. Resend in a few seconds. (errorId: 0123456789ab)"
    )


def test_a_computed_wait_is_written_to_the_millisecond_in_both_text_and_structured_content() -> None:
    details = FailureDetails(
        message="Busy", category=ErrorCategory.TRANSIENT, description="Resend.", retry_after_seconds=0.1861972720000722
    )
    result = error_result(details)
    assert result.structured_content is not None
    assert result.structured_content["retryAfterSeconds"] == 0.187  # up: never sooner than the server asked
    assert getattr(result.content[0], "text", "").startswith("[transient error, retryable after 0.187s]")


def test_extra_fields_never_override_the_contract() -> None:
    details = FailureDetails(
        message="m",
        category=ErrorCategory.BUSINESS,
        description="d",
        extra={"isRetryable": True, "orderId": "#12345", "errorId": "tool-chosen"},
    )
    assert details.to_structured("e1")["isRetryable"] is False
    assert details.to_structured("e1")["orderId"] == "#12345"
    assert details.to_structured("e1")["errorId"] == "e1"
    assert "errorId" not in details.to_structured()


def test_error_result_merges_into_an_existing_meta_without_touching_it() -> None:
    meta = {"io.modelcontextprotocol/serverInfo": {"name": "s"}, "example.com/trace": "t-1"}
    result = error_result(FailureDetails("m", ErrorCategory.PERMISSION, "Escalate."), meta=meta)
    assert result.meta == meta
    assert result.meta is not meta


def test_empty_result_defaults_to_a_zero_count_success() -> None:
    result = empty_result("No customer matches 'a@b.c'; the lookup ran and found nothing.")
    assert result.is_error is False
    assert result.structured_content == {"resultCount": 0}
    assert isinstance(result.content[0], TextContent)
    assert "found nothing" in result.content[0].text


def test_empty_result_adds_result_count_but_keeps_the_tool_shape() -> None:
    given_structured: dict[str, list[Any]] = {"customers": []}
    result = empty_result("none", given_structured)
    assert result.structured_content == {"customers": [], "resultCount": 0}
    assert given_structured == {"customers": []}
    assert empty_result("none", {"resultCount": 0, "x": 1}).structured_content == {"resultCount": 0, "x": 1}


def test_empty_result_naming_an_undecodable_file_can_be_written_to_the_client() -> None:
    name = os.fsdecode(b"q3-\xff.csv")  # a lone surrogate, as os.listdir returns it
    result = empty_result(f"No rows in {name}; the scan ran and found nothing.")
    # What the stdio transport does with every message; it raised on the surrogate.
    written = result.model_dump_json(by_alias=True)
    assert "q3-\ufffd.csv" in json.loads(written)["content"][0]["text"]


class Line(BaseModel):
    sku: str


class Basket(BaseModel):
    lines: list[Line]


def test_a_widened_schema_admits_the_envelope_and_still_resolves_the_success_refs() -> None:
    success = Basket.model_json_schema()
    assert "$defs" in success
    widened = admit_error_envelope(success)
    assert widened is not None
    assert widened["type"] == "object"
    assert "$defs" in widened
    validator = jsonschema.Draft202012Validator(widened)
    validator.validate({"lines": [{"sku": "A1"}]})
    validator.validate({"errorCategory": "validation", "isRetryable": False, "description": "Fix sku."})
    assert not validator.is_valid({"lines": [{"sku": 1}]})
    # Admission is deliberately looser than the contract: a strict client that rejected an
    # inconsistent envelope would hide the error from the model. The checker enforces it.
    inconsistent = {"errorCategory": "validation", "isRetryable": True, "description": "x"}
    assert validator.is_valid(inconsistent)
    assert not jsonschema.Draft202012Validator(ENVELOPE_SCHEMA).is_valid(inconsistent)


def test_a_draft_7_schema_keeps_its_document_keys_at_the_root_where_its_refs_resolve() -> None:
    # What zod-to-json-schema writes for TypeScript servers (seen through the proxy).
    success = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/definitions/Item"}}},
        "required": ["items"],
        "definitions": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
    }
    widened = admit_error_envelope(success)
    assert widened is not None
    assert widened["$schema"] == success["$schema"]
    assert "$schema" not in widened["anyOf"][0]
    validator = jsonschema.Draft7Validator(widened)
    validator.validate({"items": [{"id": 1}]})
    validator.validate({"errorCategory": "transient", "isRetryable": True, "description": "Resend."})
    assert not validator.is_valid({"items": [{"id": "one"}]})


def test_widening_is_idempotent_and_leaves_the_input_alone() -> None:
    success: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}}
    once = admit_error_envelope(success)
    assert admit_error_envelope(once) == once
    assert success == {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert admit_error_envelope(None) is None


def test_the_embedded_envelope_branch_carries_no_id_so_many_tools_can_embed_it() -> None:
    widened = admit_error_envelope({"type": "object"})
    assert widened is not None
    branch = widened["anyOf"][1]
    assert "$id" not in branch
    assert "$schema" not in branch
    jsonschema.Draft202012Validator.check_schema(ENVELOPE_SCHEMA)


def test_every_contract_envelope_passes_the_embedded_branch() -> None:
    """The branch only admits; whatever the full schema accepts, it accepts too."""
    widened = admit_error_envelope({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    assert widened is not None
    for category in ErrorCategory:
        envelope = FailureDetails(
            message="m", category=category, description="d", code="C", field_errors=()
        ).to_structured("e")
        jsonschema.validate(envelope, ENVELOPE_SCHEMA)
        jsonschema.validate(envelope, widened)
    # What is neither a success nor an error is still refused.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"isRetryable": False, "description": "d"}, widened)


def test_the_embedded_branch_is_only_the_envelope_marker_and_the_success_schema_keeps_its_keys() -> None:
    success = {"type": "object", "title": "Order", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    widened = admit_error_envelope(success)
    assert widened == {
        "type": "object",
        "anyOf": [
            {"title": "Order", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            {"required": ["errorCategory"]},
        ],
    }
    # Schemas widened by earlier versions (a titled branch with the three fields) stay as they are.
    earlier = {"type": "object", "anyOf": [success, {"title": ENVELOPE_SCHEMA["title"], "type": "object"}]}
    assert admit_error_envelope(earlier) == earlier


def test_the_text_block_spells_out_each_field_error_for_text_only_hosts() -> None:
    details = FailureDetails(
        message="Invalid arguments",
        category=ErrorCategory.VALIDATION,
        description="Correct each one as described and call again.",
        field_errors=(
            FieldError("order_id", "does not match", expected="#NNNNN", received="'order-abc'"),
            FieldError("amount", "required argument is missing"),
        ),
    )
    text = details.to_text()
    assert "order_id: does not match (expected #NNNNN; received 'order-abc')" in text
    assert "amount: required argument is missing" in text
