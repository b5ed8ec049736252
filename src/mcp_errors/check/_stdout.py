"""Lines a stdio server writes to its stdout that are not MCP messages (ME021).

The SDK's stdio client logs each line it cannot parse (with a traceback) and drops it; the
checker counts them instead, per run, and keeps the tracebacks off its own output.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

__all__ = ["StdoutNoise", "catch_stdout_noise"]


class StdoutNoise(logging.Filter):
    """Counts the stdout lines the SDK's stdio client could not parse, and keeps its traceback
    for them off the checker's output.

    The logger is shared; a record counts for the run whose server sent the line, known by
    the context the stdio client's reader task inherited from that run.
    """

    def __init__(self) -> None:
        super().__init__()
        self.lines = 0
        self.first: str | None = None

    def describe(self, quoted_chars: int) -> str | None:
        """What ME021 says: how many lines were not MCP messages, quoting the first; `None` if none."""
        if not self.lines:
            return None
        example = f", the first: {self.first[:quoted_chars]!r}" if self.first else ""
        count = (
            "1 line on stdout was not an MCP message"
            if self.lines == 1
            else f"{self.lines} lines on stdout were not MCP messages"
        )
        return f"{count}{example}"

    def filter(self, record: logging.LogRecord) -> bool:
        if _current_noise.get() is not self or not record.getMessage().startswith("Failed to parse JSONRPC message"):
            return True
        self.lines += 1
        if self.first is None and record.exc_info is not None:
            self.first = _unparsed_line(record.exc_info[1])
        return False


@contextmanager
def catch_stdout_noise() -> Iterator[StdoutNoise]:
    """Count, for the run inside, the stdout lines its stdio server wrote that were not MCP messages."""
    stdio_logger = logging.getLogger("mcp.client.stdio")
    noise = StdoutNoise()
    stdio_logger.addFilter(noise)
    token = _current_noise.set(noise)
    try:
        yield noise
    finally:
        _current_noise.reset(token)
        stdio_logger.removeFilter(noise)


_current_noise: Final[contextvars.ContextVar[StdoutNoise | None]] = contextvars.ContextVar(
    "mcp_errors_check_stdout_noise", default=None
)


def _unparsed_line(exc: BaseException | None) -> str | None:
    errors = getattr(exc, "errors", None)
    try:
        first = errors()[0] if callable(errors) else None
    except (IndexError, TypeError):
        return None
    value = first.get("input") if isinstance(first, dict) else None
    return value if isinstance(value, str) else None
