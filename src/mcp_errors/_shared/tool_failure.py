"""SEP-3313's `_meta["io.modelcontextprotocol/toolFailure"]`: our envelope to it, and it to a category.

The draft proposal (spec PRs #3312/#3313) puts a tool failure's classification in the
result's `_meta`: `class` (`capability` | `reliability` | `governance`), an open `code`,
`retryable` (reliability only), `retryNotBefore` (epoch milliseconds), a required
`correlationId` and `agentGuidance`. The writer is opt-in (`install(...,
tool_failure_meta=True)`, `mcp-errors proxy --tool-failure-meta`), since the
`io.modelcontextprotocol/` prefix is reserved for the specification. The reader serves the
client (`read_result`) and the proxy, which maps an upstream's toolFailure to a category.

| envelope                                     | class         | code                        | retryable |
|----------------------------------------------|---------------|-----------------------------|-----------|
| `transient`                                  | `reliability` | `retryable_transient_error` | `true`    |
| `business`, code `INTERNAL_ERROR`            | `reliability` | `internal_error`            | `false`   |
| `validation`, code `UNKNOWN_TOOL`            | `capability`  | `capability_unsupported`    | -         |
| `validation`                                 | `capability`  | `invalid_input`             | -         |
| `business`, code ending in `NOT_FOUND`       | `capability`  | `resource_not_found`        | -         |
| `business`                                   | `governance`  | `policy_blocked`            | -         |
| `permission`, code with `UNAUTHORIZED`/`AUTH` | `governance` | `auth_required`             | -         |
| `permission`                                 | `governance`  | `permission_denied`         | -         |

`correlationId` is the envelope's `errorId`, `agentGuidance` its `description`, and
`retryNotBefore` is written only with a `retryAfterSeconds`. Read back, the draft's codes
give these categories again; other spellings of `class` are matched by keyword, and a
failure that says only `retryable: true` is transient.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcp_errors._shared.contract import CATEGORY_VALUES, TOOL_FAILURE_META, ErrorCategory
from mcp_errors._shared.waits import wait_seconds, wait_until

__all__ = ["TOOL_FAILURE_META", "ToolFailure", "read_tool_failure", "with_tool_failure", "write_tool_failure"]


def write_tool_failure(envelope: Mapping[str, Any], *, now: float | None = None) -> dict[str, Any]:
    """The SEP-3313 object for an error envelope (see the module's table).

    Args:
        envelope: A result's `structuredContent`, already in the contract.
        now: The current time in seconds since the epoch, for `retryNotBefore`.

    Returns:
        The object to put under `_meta["io.modelcontextprotocol/toolFailure"]`.
    """
    category = ErrorCategory(envelope["errorCategory"])
    code = str(envelope.get("code") or "")
    failure_class, failure_code = _CLASS_AND_CODE[category](code)
    failure: dict[str, Any] = {"class": failure_class, "code": failure_code}
    if failure_class == "reliability":
        failure["retryable"] = category.is_retryable
    wait = envelope.get("retryAfterSeconds")
    if category.is_retryable and isinstance(wait, int | float) and not isinstance(wait, bool):
        failure["retryNotBefore"] = math.ceil(((time.time() if now is None else now) + wait) * 1000)
    error_id = envelope.get("errorId")
    if isinstance(error_id, str) and error_id:
        failure["correlationId"] = error_id
    failure["agentGuidance"] = envelope["description"]
    return failure


def with_tool_failure(meta: Mapping[str, Any] | None, envelope: Mapping[str, Any]) -> dict[str, Any]:
    """`meta` with the SEP-3313 object of `envelope` added; one already there is kept."""
    merged = dict(meta or {})
    merged.setdefault(TOOL_FAILURE_META, write_tool_failure(envelope))
    return merged


@dataclass(frozen=True, slots=True)
class ToolFailure:
    """A SEP-3313 object read back into the contract's terms."""

    category: ErrorCategory | None
    """`None` when neither the class, the code nor the retry flag says what it is."""
    retryable: bool
    """Only ever `True` for a transient failure."""
    inferred: bool
    """Whether the category was matched by keyword rather than read from the draft's terms."""
    code: str | None = None
    retry_after_seconds: float | None = None
    guidance: str | None = None
    correlation_id: str | None = None


def read_tool_failure(failure: Mapping[str, Any], *, now: float | None = None) -> ToolFailure:
    """Read a `toolFailure` object leniently: the draft's terms first, then keywords.

    Args:
        failure: The object under `_meta["io.modelcontextprotocol/toolFailure"]`.
        now: The current time in seconds since the epoch, for `retryNotBefore`.

    Returns:
        What it says, in the contract's terms.
    """
    raw_class = failure.get("class")
    raw_code = failure.get("code")
    code = raw_code if isinstance(raw_code, str) and raw_code else None
    retryable_flag = failure.get("retryable") is True
    category = _DRAFT_CODES.get(code.lower()) if code else None
    inferred = False
    if isinstance(raw_class, str) and category is None:
        raw_class = raw_class[:_MAX_CLASS_CHARS]  # a class is a word; the rest of a long one says nothing
        category = _DRAFT_CLASSES.get(raw_class.lower())
        if raw_class.lower() == "reliability":
            category = ErrorCategory.TRANSIENT if retryable_flag else ErrorCategory.BUSINESS
        elif category is None:
            category = next((c for c, pattern in _CLASS_KEYWORDS if pattern.search(raw_class)), None)
            inferred = category is not None and raw_class.lower() not in CATEGORY_VALUES
    if category is None and retryable_flag:
        category, inferred = ErrorCategory.TRANSIENT, True
    guidance = failure.get("agentGuidance")
    correlation = failure.get("correlationId")
    return ToolFailure(
        category=category,
        retryable=retryable_flag and category is ErrorCategory.TRANSIENT,
        inferred=inferred,
        code=code,
        retry_after_seconds=_not_before(failure.get("retryNotBefore"), time.time() if now is None else now),
        guidance=guidance if isinstance(guidance, str) and guidance else None,
        correlation_id=correlation if isinstance(correlation, str) and correlation else None,
    )


def _transient_class(code: str) -> tuple[str, str]:
    return "reliability", "retryable_transient_error"


def _validation_class(code: str) -> tuple[str, str]:
    return ("capability", "capability_unsupported") if code == "UNKNOWN_TOOL" else ("capability", "invalid_input")


def _business_class(code: str) -> tuple[str, str]:
    if code == "INTERNAL_ERROR":
        return "reliability", "internal_error"
    if code.endswith("NOT_FOUND"):
        return "capability", "resource_not_found"
    return "governance", "policy_blocked"


def _permission_class(code: str) -> tuple[str, str]:
    if "UNAUTHORIZED" in code or "AUTH" in code.split("_"):
        return "governance", "auth_required"
    return "governance", "permission_denied"


_CLASS_AND_CODE: Final = {
    ErrorCategory.TRANSIENT: _transient_class,
    ErrorCategory.VALIDATION: _validation_class,
    ErrorCategory.BUSINESS: _business_class,
    ErrorCategory.PERMISSION: _permission_class,
}

_DRAFT_CODES: Final[Mapping[str, ErrorCategory]] = {
    "retryable_transient_error": ErrorCategory.TRANSIENT,
    "invalid_input": ErrorCategory.VALIDATION,
    "capability_unsupported": ErrorCategory.VALIDATION,
    "resource_not_found": ErrorCategory.BUSINESS,
    "policy_blocked": ErrorCategory.BUSINESS,
    "internal_error": ErrorCategory.BUSINESS,
    "auth_required": ErrorCategory.PERMISSION,
    "permission_denied": ErrorCategory.PERMISSION,
    "user_action_required": ErrorCategory.PERMISSION,
}
"""The draft's codes (and ours, `internal_error`), which decide before the class does."""

_DRAFT_CLASSES: Final[Mapping[str, ErrorCategory]] = {
    "capability": ErrorCategory.VALIDATION,
    "governance": ErrorCategory.PERMISSION,
    # "reliability" depends on `retryable`: see read_tool_failure.
    **{value: ErrorCategory(value) for value in CATEGORY_VALUES},
}

# `class` was free text in earlier drafts: the common spellings, tried in this order.
_CLASS_KEYWORDS: Final[Sequence[tuple[ErrorCategory, re.Pattern[str]]]] = (
    (ErrorCategory.TRANSIENT, re.compile(r"transient|unavailable|timeout|rate|throttl|overload|busy", re.I)),
    (ErrorCategory.VALIDATION, re.compile(r"validation|invalid|input|argument|param|schema", re.I)),
    (ErrorCategory.PERMISSION, re.compile(r"permission|auth|forbidden|denied|access", re.I)),
    (ErrorCategory.BUSINESS, re.compile(r"business|conflict|precondition|policy|rule|state", re.I)),
)

# Below this a number is read as seconds to wait (as earlier drafts had it), above it as the
# draft's epoch milliseconds: 1e11 ms is 1973, 1e11 s is over 3000 years.
_EPOCH_MS_FROM: Final = 1e11
_MAX_CLASS_CHARS: Final = 256


def _not_before(value: object, now: float) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if not 0 <= value < math.inf:
            return None  # NaN fails the range check too
        if value < _EPOCH_MS_FROM:
            return wait_seconds(value)
        # Capped before dividing: an integer no float can hold (10**400) is still a time.
        return wait_until(min(value, _LATEST_MS) / 1000, now=now)
    if not isinstance(value, str):
        return None
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if when.tzinfo is None:
            when = when.replace(tzinfo=_dt.UTC)
        return wait_until(when.timestamp(), now=now)
    except (ValueError, OverflowError):  # not a time, or one beyond the calendar's range
        return None


_LATEST_MS: Final = 1e16
"""Epoch milliseconds far past any wait worth keeping (year 318857), and a finite float."""
