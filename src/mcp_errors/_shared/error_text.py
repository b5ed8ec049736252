"""The first text line of an error result: its one writer and its one parser.

Many hosts show the model only the first text block of a result (Claude Code, LangChain's
MCP adapters, the OpenAI Agents SDK), so that block must carry the verdict on its own. It
starts with a head in square brackets, then the message and description, and ends with the
occurrence's errorId:

    [transient error, retryable after 2s] Upstream timeout. Resend after a short wait. (errorId: 5f2c9a1e07b3)
    [validation error, not retryable] Invalid order id. Send #NNNNN, e.g. #12345.

The head is `[<category> error, <verdict>]`: `<category>` is one of the four categories,
and `<verdict>` is `retryable` (transient only, with ` after <seconds>s` when the server
asked for a wait) or `not retryable`. The renderers for model APIs (`_client/render.py`) write two
more forms of the same head: `unclassified error` when the category is unknown, and
`<category> error (inferred)` when the reader guessed it.

Writer and parser live together so they cannot drift: a head the parser cannot read would
make a text-only error read as plain prose, and it would never be resent. The parser reads
only the start and the end of a text, so its cost does not grow with the text's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from mcp_errors._shared.advice import VERDICT_NOT_RETRYABLE, VERDICT_RETRYABLE, format_seconds
from mcp_errors._shared.contract import ErrorCategory

__all__ = [
    "ErrorHead",
    "ErrorText",
    "read_error_text",
    "with_error_id",
    "write_error_text",
]


@dataclass(frozen=True, slots=True)
class ErrorHead:
    """The bracketed head of an error text: category and verdict."""

    category: ErrorCategory | None
    """`None` writes (and reads back) `unclassified error`."""
    retryable: bool
    retry_after_seconds: float | None = None
    """Written only for a retryable head, rounded to milliseconds."""
    inferred: bool = False
    """Whether the category was guessed rather than declared: `(inferred)` after it."""

    def write(self) -> str:
        """The head as text, e.g. `[transient error, retryable after 2s]`."""
        label = "unclassified" if self.category is None else self.category.value
        if self.inferred and self.category is not None:
            label += " error (inferred)"
        else:
            label += " error"
        if not self.retryable:
            return f"[{label}, {VERDICT_NOT_RETRYABLE}]"
        if self.retry_after_seconds is None:
            return f"[{label}, {VERDICT_RETRYABLE}]"
        return f"[{label}, {VERDICT_RETRYABLE} after {format_seconds(self.retry_after_seconds)}s]"


@dataclass(frozen=True, slots=True)
class ErrorText:
    """An error text read back: its head, the text after it, and the errorId at its end."""

    head: ErrorHead
    body: str
    """The message and description: the text between the head and the errorId."""
    error_id: str | None = None


def write_error_text(head: ErrorHead, body: str, *, error_id: str | None = None) -> str:
    """The whole first text block: the head, the body, and the occurrence's errorId if given."""
    text = f"{head.write()} {body}"
    return text if error_id is None else with_error_id(text, error_id)


def with_error_id(text: str, error_id: str) -> str:
    """`text` with the occurrence's errorId at its end, where `read_error_text` finds it."""
    # Kept apart from the head so that a failure written once can be sent many times, each
    # occurrence adding only its own id (docs/performance.md).
    return f"{text}{_ID_OPEN}{error_id})"


def read_error_text(text: str) -> ErrorText | None:
    """Read a text that starts with a head; `None` when it does not.

    Only the head at the very start and an errorId at the very end are read, so the cost
    does not depend on the length of what lies between them.
    """
    match = _HEAD.match(text)
    if match is None:
        return None
    raw = match["category"]
    after = match["after"]
    head = ErrorHead(
        category=None if raw == "unclassified" else ErrorCategory(raw),
        retryable=match["verdict"] != VERDICT_NOT_RETRYABLE,
        retry_after_seconds=float(after) if after is not None else None,
        inferred=match["inferred"] is not None,
    )
    rest = text[match.end() :].rstrip()
    error_id = None
    if rest.endswith(")"):
        # `rfind` near the end only: an errorId is short, and a text full of "(errorId: "
        # must not make the search quadratic.
        start = rest.rfind(_ID_OPEN, max(0, len(rest) - _MAX_ID_TAIL))
        if start >= 0 and _ERROR_ID.fullmatch(rest, start + len(_ID_OPEN), len(rest) - 1):
            error_id = rest[start + len(_ID_OPEN) : -1]
            rest = rest[:start]
    body = rest.strip()
    return ErrorText(head=head, body=body, error_id=error_id)


_ID_OPEN: Final = " (errorId: "
_MAX_ID_TAIL: Final = 80
_ERROR_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
_HEAD: Final = re.compile(
    r"\[(?P<category>transient|validation|business|permission|unclassified) error(?P<inferred> \(inferred\))?, "
    rf"(?P<verdict>{VERDICT_RETRYABLE}(?: after (?P<after>[0-9]{{1,12}}(?:\.[0-9]{{1,6}})?)s)?"
    rf"|{VERDICT_NOT_RETRYABLE})\]"
)
