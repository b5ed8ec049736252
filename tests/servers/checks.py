"""Assertions shared by the round-trip tests: what every error and success result must satisfy."""

from __future__ import annotations

import gc
import json
import logging
import math
import re
import tracemalloc
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import jsonschema

from mcp_errors import ENVELOPE_SCHEMA, ErrorCategory, ExecutionState, ToolOutcome, is_error_envelope
from mcp_errors._client.render import outcome_text
from mcp_errors._shared.envelope import FailureDetails

_TEXT_HEAD = re.compile(
    r"^\[(transient|validation|business|permission) error(?: \(inferred\))?, (retryable|not retryable)[^\]]*\] "
)


async def memory_kept_per_batch(batch: Callable[[int], Awaitable[None]]) -> int:
    """Bytes a second run of `batch` keeps beyond the first's (`tracemalloc`, garbage collected).

    `batch(number)` runs one batch of work (its argument tells the batches apart). The first
    run fills what is filled once (caches replaced wholesale, pools); what a second run keeps
    on top is what grows with the work. Log lines are not written meanwhile: the test
    runner keeps every record it captures, which is the runner's memory, not the server's.
    """
    await batch(0)
    logging.disable(logging.CRITICAL)
    tracemalloc.start()
    try:
        gc.collect()
        start = tracemalloc.get_traced_memory()[0]
        await batch(1)
        gc.collect()
        first = tracemalloc.get_traced_memory()[0] - start
        await batch(2)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - start - first
    finally:
        tracemalloc.stop()
        logging.disable(logging.NOTSET)


def details_on_the_wire(details: FailureDetails) -> str:
    """Everything a classified failure sends: its text block and its envelope, as one string."""
    return details.to_text() + json.dumps(details.to_structured())


def check_details(details: FailureDetails, category: str, code: str) -> dict[str, Any]:
    """Assert a classified failure's envelope is valid with this category and code, and return it."""
    envelope = details.to_structured()
    jsonschema.validate(envelope, ENVELOPE_SCHEMA)
    assert (envelope["errorCategory"], envelope.get("code")) == (category, code)
    return envelope


def validate(instance: object, schema: Mapping[str, Any]) -> None:
    """Validate as a strict client would (JSON Schema 2020-12, formats not asserted)."""
    jsonschema.Draft202012Validator(dict(schema)).validate(instance)


def check_error(result: Mapping[str, Any], output_schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """Assert the whole contract on one error result (wire JSON) and return its envelope."""
    assert result.get("isError") is True
    json.dumps(result, ensure_ascii=False).encode("utf-8")  # can be written to the client
    envelope = result["structuredContent"]
    validate(envelope, ENVELOPE_SCHEMA)
    assert is_error_envelope(envelope)
    if output_schema is not None:
        validate(envelope, output_schema)
    assert envelope["isRetryable"] is (envelope["errorCategory"] == "transient")
    first = result["content"][0]
    assert first["type"] == "text"
    head = _TEXT_HEAD.match(first["text"])
    assert head is not None, first["text"]
    assert head.group(1) == envelope["errorCategory"]
    assert (head.group(2) == "retryable") is envelope["isRetryable"]
    assert envelope["description"] in first["text"]
    assert re.fullmatch(r"[0-9a-f]{12}", envelope["errorId"])
    assert f"errorId: {envelope['errorId']}" in first["text"]
    return dict(envelope)


def check_success(result: Mapping[str, Any], output_schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """Assert a success result is not an error and matches the advertised schema."""
    assert not result.get("isError")
    structured = result["structuredContent"]
    assert not is_error_envelope(structured)
    if output_schema is not None:
        validate(structured, output_schema)
    return dict(structured)


def assert_nothing_leaks(result: Mapping[str, Any], *needles: str) -> None:
    """None of `needles` (planted secrets, paths) and no traceback appear anywhere in the result."""
    wire = json.dumps(result)
    for needle in needles:
        assert needle not in wire
    assert "Traceback" not in wire
    assert 'File "' not in wire


def assert_sound_outcome(outcome: ToolOutcome) -> None:
    """Assert what every outcome satisfies, whatever the server sent: typed fields, retryable only if transient."""
    assert outcome.kind in ("success", "empty", "error")
    assert outcome.category is None or isinstance(outcome.category, ErrorCategory)
    assert not outcome.is_retryable or outcome.category is ErrorCategory.TRANSIENT
    wait = outcome.retry_after_seconds
    assert wait is None or (type(wait) is float and 0 <= wait < math.inf)
    assert outcome.execution_state is None or isinstance(outcome.execution_state, ExecutionState)
    for text in (outcome.description, outcome.message):
        assert isinstance(text, str)
    for optional in (outcome.code, outcome.error_id):
        assert optional is None or isinstance(optional, str)
    for error in outcome.field_errors:
        assert isinstance(error.field, str)
        assert isinstance(error.problem, str)
        assert error.expected is None or isinstance(error.expected, str)
        assert error.received is None or isinstance(error.received, str)
    outcome_text(outcome)  # and a model can be shown it
