"""What the contract says to an agent, in one wording: verdicts, headlines, advice, the resend rule.

The server side, the proxy, the reader and the partial reports all tell an agent the same
few things: whether resending can help, what to do instead, and when a resend of a write is
safe. Written here once, they cannot drift apart into four wordings of one rule.

Descriptions a failure carries of its own (a tool's, a classified exception's) say what went
wrong; these sentences say what to do about it, and are appended to them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_CEILING, Decimal
from typing import Final

from mcp_errors._shared.contract import ErrorCategory, ExecutionState

__all__ = [
    "ADVICE",
    "EMPTY_ANSWER",
    "HEADLINES",
    "RESEND_RULE",
    "VERDICT_NOT_RETRYABLE",
    "VERDICT_RETRYABLE",
    "advice",
    "format_seconds",
    "may_have_applied",
    "resend_after",
    "seconds_in_words",
    "to_milliseconds",
]

EMPTY_ANSWER: Final = (
    "No results: the tool ran and found nothing (resultCount 0). This is not an error: resending the same call"
    " finds nothing more."
)
"""The text of a tool's bare empty answer (`[]` or `None`) under `install`: a success that says so."""

VERDICT_RETRYABLE: Final = "retryable"
"""The verdict in an error text's head when resending the same call can succeed (`[transient error, retryable]`)."""
VERDICT_NOT_RETRYABLE: Final = "not retryable"
"""The verdict in an error text's head otherwise: something must change before calling again."""

HEADLINES: Final[Mapping[ErrorCategory, str]] = {
    ErrorCategory.TRANSIENT: "The server failed for now",
    ErrorCategory.VALIDATION: "The server rejected the request",
    ErrorCategory.BUSINESS: "The server refused the request",
    ErrorCategory.PERMISSION: "The server denied access",
}
"""A failure's message when all that is known of it is its category (a proxied server's failure)."""

ADVICE: Final[Mapping[ErrorCategory, str]] = {
    ErrorCategory.TRANSIENT: "The failure is temporary: resend the same call after a short wait.",
    ErrorCategory.VALIDATION: "Correct the request as described and call again.",
    ErrorCategory.BUSINESS: "Resending the same call will not help: take another path, or escalate to a human.",
    ErrorCategory.PERMISSION: "Resending will not help: escalate, or call again as a principal that has access.",
}
"""What an agent does next for each category (the taxonomy in `_server/errors.py`)."""

RESEND_RULE: Final = "resend it only if it is read-only, idempotent, or carries the same idempotency key"
"""When a call whose outcome is unknown may be sent again: a resend must not apply a write twice."""

_ADVICE_BY_CODE: Final[Mapping[str, str]] = {
    "NOT_FOUND": "Check the name or path (list what exists first), or take another path.",
    "SERVER_MISCONFIGURED": "No change to the call fixes this: escalate to whoever runs the server, quoting the "
    "errorId.",
    "CONFLICT": "Read the current state again and decide on another step, or escalate.",
}


def advice(category: ErrorCategory, *, code: str | None = None, execution_state: ExecutionState | None = None) -> str:
    """What to do next about a failure: its code's advice where it has one, else its category's.

    A transient failure that does not say it was refused before it ran ends with the resend
    rule (`may_have_applied`): it may have written.
    """
    special = _ADVICE_BY_CODE.get(code or "")
    if special is not None:
        return special
    if category is ErrorCategory.TRANSIENT and execution_state is not ExecutionState.NOT_EXECUTED:
        return f"{ADVICE[category]} {may_have_applied()}"
    return ADVICE[category]


def may_have_applied() -> str:
    """The sentence a transient failure of a call that may have written ends with."""
    return f"If the call changes data it may already have been applied: {RESEND_RULE}."


def resend_after(seconds: float | None) -> str:
    """`Resend after a short wait.`, or after the wait a server asked for (`Resend after at least 2 seconds.`)."""
    if seconds is None:
        return "Resend after a short wait."
    return f"Resend after at least {seconds_in_words(seconds)}."


def to_milliseconds(seconds: float) -> float:
    """A wait as every writer gives it: rounded up to the millisecond (`0.18619727` is `0.187`).

    Up, not to the nearest: no client is told to come back sooner than it was asked to.
    Rounding a rounded wait changes nothing.
    """
    if not math.isfinite(seconds) or abs(seconds) >= _NO_MILLISECONDS_PAST:
        return seconds
    # Through the shortest decimal form: 4.35 stays 4.35 (4.35 * 1000 is 4350.000000000001).
    return float(Decimal(repr(seconds)).quantize(_MILLISECOND, rounding=ROUND_CEILING))


def format_seconds(seconds: float) -> str:
    """A wait as the head writes it: plain decimal, in milliseconds at most (`2`, `0.25`)."""
    # Never the exponent form of `:g` (`1e+06`), which the head's grammar does not admit.
    return f"{to_milliseconds(seconds):.3f}".rstrip("0").rstrip(".")


def seconds_in_words(seconds: float) -> str:
    """A wait as a sentence says it, with the head's precision: `1 second`, `0.187 seconds`."""
    shown = format_seconds(seconds)
    return f"{shown} second" if shown == "1" else f"{shown} seconds"


_MILLISECOND: Final = Decimal("0.001")
_NO_MILLISECONDS_PAST: Final = 1e12  # seconds; past the head's 12 digits a millisecond means nothing
