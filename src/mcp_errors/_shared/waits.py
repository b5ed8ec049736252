"""A wait someone sent, read as seconds: once, with one cap.

A wait arrives as a JSON number (`retryAfterSeconds`, a server's `retry_after`), as text (an
HTTP `Retry-After` header, a rules file's template, words in a failure's text) or as a moment
(an HTTP date, a timestamp). Every reader of one (the client's `read_result`, the proxy's
chain, the vocabulary's reading of "retry after 30 seconds", the server's `Retry-After`, the
breaker's cooldown) reads it here, so that a wait is a finite number of seconds from 0 to
`MAX_RETRY_AFTER_SECONDS` wherever it is read, and nothing a peer sends makes it otherwise.
"""

from __future__ import annotations

import email.utils
import math
import time
from typing import Final

from mcp_errors._shared.contract import MAX_RETRY_AFTER_SECONDS

__all__ = ["MAX_WAIT_TEXT_CHARS", "capped_wait", "retry_after_header", "wait_seconds", "wait_until"]

MAX_WAIT_TEXT_CHARS: Final = 64
"""The longest text read as a number of seconds: a wait is a few digits."""


def capped_wait(seconds: float) -> float:
    """`seconds` within 0 and `MAX_RETRY_AFTER_SECONDS` (a day): the one cap on every wait."""
    return float(min(max(0.0, seconds), MAX_RETRY_AFTER_SECONDS))


def wait_seconds(value: object) -> float | None:
    """A wait given as a number of seconds, capped; `None` unless it is a finite number >= 0.

    A JSON number, or text that is one (`"30"`, `" 2.5 "`). Booleans, NaN, infinities,
    negative numbers and anything else are no wait.

    Example:
        ```python
        from mcp_errors._shared.waits import wait_seconds

        assert wait_seconds(30) == 30.0
        assert wait_seconds("2.5") == 2.5
        assert wait_seconds(10**400) == wait_seconds("9" * 400) == 86_400.0
        assert wait_seconds(-1) is None and wait_seconds(True) is None
        ```
    """
    if isinstance(value, str):
        value = value.strip()
        if value.isascii() and value.isdigit() and len(value) > _MANY_DIGITS:
            return MAX_RETRY_AFTER_SECONDS  # a whole number of seconds past any cap, however long
        if len(value) > MAX_WAIT_TEXT_CHARS:
            return None
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < math.inf:
        return None  # NaN fails the range check too
    # Compared before the conversion: an integer no float can hold (10**400) is still a wait.
    return float(min(value, MAX_RETRY_AFTER_SECONDS))


_MANY_DIGITS: Final = 15


def wait_until(moment: float, *, now: float | None = None) -> float:
    """The wait from `now` (the current time by default) until `moment` (epoch seconds), capped."""
    return capped_wait(round(moment - (time.time() if now is None else now), 3))


def retry_after_header(value: object) -> float | None:
    """An HTTP `Retry-After` value (RFC 9110: a number of seconds, or an HTTP date), as a wait; `None` if neither."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # `isdigit` alone admits "²"
        return wait_seconds(value)
    if len(value) > _MAX_HEADER_CHARS:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return wait_until(when.timestamp())


_MAX_HEADER_CHARS: Final = 256
