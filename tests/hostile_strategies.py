"""Hypothesis strategies for what a hostile or broken server can send: any JSON in any field.

Each field of the error envelope, of the proposed `toolFailure` meta and of a partial report
gets either a value of the right shape or any JSON at all, including values a careless
reader trips on: a list where a string belongs (unhashable), integers no float can hold
(`10**400`), NaN, infinities. Values hypothesis itself cannot print (nesting past the recursion
limit, integers past Python's int-to-str limit) are tested by name with `nested` and `HUGE_INT`.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import strategies as st

from mcp_errors._client.outcome import TOOL_FAILURE_META

NASTY_SCALARS = st.sampled_from(
    [
        10**400,
        -(10**400),
        1e308,
        math.inf,
        -math.inf,
        math.nan,
        -0.0,
        "",
        "transient",
        "not_executed",
        "9999-12-31T23:59:59+00:00",
        "0001-01-01T00:00:00+14:00",
        "0001-01-01T00:00:00-14:00",
        "[transient error, retryable after 999999999999s] x",
    ]
)
HUGE_INT = 10**5000
"""More digits than Python will turn into text (`str()` raises)."""
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20), NASTY_SCALARS)
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)
ANY = JSON


def nested(depth: int) -> Any:
    """A list inside a list, `depth` deep: past the recursion limit, JSON encoders give up."""
    value: Any = "x"
    for _ in range(depth):
        value = [value]
    return value


def _field(right: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value of the right shape, or anything at all."""
    return st.one_of(right, ANY)


FIELD_ERRORS = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "field": _field(st.text(max_size=10)),
            "problem": ANY,
            "expected": ANY,
            "received": ANY,
        },
    )
    | ANY,
    max_size=3,
)

ENVELOPES = st.fixed_dictionaries(
    {},
    optional={
        "errorCategory": _field(st.sampled_from(["transient", "validation", "business", "permission"])),
        "isRetryable": _field(st.booleans()),
        "description": _field(st.text(max_size=30)),
        "code": _field(st.sampled_from(["BUSY", "TOOL_ERROR"])),
        "retryAfterSeconds": _field(st.floats(min_value=0, max_value=60)),
        "fieldErrors": _field(FIELD_ERRORS),
        "executionState": _field(st.sampled_from(["not_executed", "outcome_unknown"])),
        "errorId": _field(st.text(max_size=12)),
    },
)
"""`structuredContent` that claims to be an error envelope, each field possibly anything."""

TOOL_FAILURES = st.fixed_dictionaries(
    {},
    optional={
        "class": _field(st.sampled_from(["reliability", "capability", "governance", "transient"])),
        "code": ANY,
        "retryable": ANY,
        "retryNotBefore": _field(st.integers(min_value=0, max_value=2_000_000_000_000)),
        "correlationId": ANY,
        "agentGuidance": ANY,
    },
)
"""The proposed `_meta["io.modelcontextprotocol/toolFailure"]`, each field possibly anything."""

FAILED_ENTRIES = st.fixed_dictionaries(
    {},
    optional={
        "errorCategory": _field(st.sampled_from(["transient", "business", "permission"])),
        "isRetryable": ANY,
        "attempts": ANY,
        "description": ANY,
        "code": ANY,
        "reason": _field(st.sampled_from(["retries_exhausted", "outcome_unknown"])),
    },
)
PARTIAL_REPORTS = st.fixed_dictionaries(
    {"answered": ANY, "failed": _field(st.dictionaries(st.text(max_size=6), _field(FAILED_ENTRIES), max_size=3))},
    optional={
        "partial": ANY,
        "total": ANY,
        "results": _field(st.dictionaries(st.text(max_size=6), ANY, max_size=3)),
        "order": _field(st.lists(_field(st.text(max_size=6)), max_size=4)),
        "resultCount": ANY,
    },
)
"""A subagent's partial report (`structuredContent`), each field possibly anything."""

STRUCTURED = st.one_of(ENVELOPES, PARTIAL_REPORTS, st.dictionaries(st.text(max_size=8), ANY, max_size=3))
TEXTS = st.one_of(st.text(max_size=40), NASTY_SCALARS.filter(lambda value: isinstance(value, str)))


@st.composite
def well_formed_hostile_results(draw: st.DrawFn) -> dict[str, Any]:
    """A result any client accepts (the right top-level shape) with anything inside its fields."""
    result: dict[str, Any] = {
        "content": draw(st.lists(TEXTS.map(lambda text: {"type": "text", "text": text}), max_size=2)),
        "isError": draw(st.sampled_from([True, True, False])),
    }
    if draw(st.integers(0, 3)):
        result["structuredContent"] = draw(STRUCTURED)
    if draw(st.booleans()):
        result["_meta"] = {TOOL_FAILURE_META: draw(_field(TOOL_FAILURES))}
    return result


@st.composite
def _malformed_results(draw: st.DrawFn) -> dict[str, Any]:
    result = draw(well_formed_hostile_results())
    result[draw(st.sampled_from(["content", "isError", "structuredContent", "_meta"]))] = draw(ANY)
    return result


def hostile_results() -> st.SearchStrategy[dict[str, Any]]:
    """A `CallToolResult` as wire JSON: mostly well formed with anything inside, sometimes not."""
    return st.one_of(well_formed_hostile_results(), well_formed_hostile_results(), _malformed_results())
