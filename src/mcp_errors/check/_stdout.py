"""Lines a stdio server writes to its stdout that are not MCP messages (ME021).

The SDK's stdio client logs each line it cannot parse (with a traceback) and drops it; the
checker counts them instead, per run, and keeps the tracebacks off its own output.

A dropped line can also be the server's *answer* to a request, in JSON the client refuses (a
lone UTF-16 surrogate in a tool's name, say: valid JSON, not Unicode text). The request then
waits for an answer that already came and went; the checker is told at once
(`on_lost_answer`) instead of waiting out its timeout.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Callable, Iterator
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
        self.lost_answer: str | None = None
        """Why the first answer to a request the client dropped could not be read, if one was."""
        self.on_lost_answer: Callable[[], None] | None = None
        """Called once, when the first such answer is dropped."""

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
        line = _unparsed_line(record.exc_info[1]) if record.exc_info is not None else None
        if self.first is None:
            self.first = line
        if self.lost_answer is None and line is not None:
            self.lost_answer = _unreadable_answer(line)
            if self.lost_answer is not None and self.on_lost_answer is not None:
                self.on_lost_answer()
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


def _unreadable_answer(line: str) -> str | None:
    """Why `line`, an answer to a request, could not be read by the client; `None` if it is no answer."""
    if '"id"' not in line:
        return None
    try:
        message = json.loads(line)  # Python's reader takes what the client's refused
    except ValueError:
        return None
    if not isinstance(message, dict) or "id" not in message or not ("result" in message or "error" in message):
        return None
    try:
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        why = "a string in it holds a lone UTF-16 surrogate (such as \\ud800), which is not Unicode text"
    else:
        why = "it is not a valid JSON-RPC message of the protocol"
    return f"the server's answer to request {json.dumps(message['id'])[:40]} could not be read by an MCP client: {why}"
