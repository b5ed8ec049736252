"""Text from outside shown on one line: whitespace folded, cut with an ellipsis."""

from __future__ import annotations

__all__ = ["one_line"]


def one_line(text: str, limit: int | None = None) -> str:
    """`text` on one line (every run of whitespace one space), at most `limit` characters.

    A longer text is cut to `limit - 1` characters followed by `…`, so that the result is never
    longer than `limit`; `None` keeps the whole text.
    """
    text = " ".join(text.split())
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"
