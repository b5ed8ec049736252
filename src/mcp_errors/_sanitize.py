"""Make text safe to cross to the agent: no secrets, no paths, no tracebacks, bounded."""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_DESCRIPTION_CHARS", "MAX_MESSAGE_CHARS", "MAX_RECEIVED_CHARS", "sanitize_text"]

MAX_MESSAGE_CHARS: Final = 200
MAX_DESCRIPTION_CHARS: Final = 1000
MAX_RECEIVED_CHARS: Final = 80

REDACTED: Final = "[REDACTED]"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_WHITESPACE_RUN = re.compile(r"\s+")
# Each pattern keeps its first group (the label) and redacts what follows.
_SECRETS: Final = (
    # key=value and key: value for names that usually hold secrets
    re.compile(
        r"(?i)(\b(?:password|passwd|pwd|secret|client_secret|token|access_token|refresh_token|api[_-]?key|"
        r"apikey|auth|authorization|private[_-]?key|session[_-]?id|cookie)\b\s*[=:]\s*)"
        r"(?:bearer\s+|basic\s+)?(\"[^\"]*\"|'[^']*'|[^\s,;&]+)"
    ),
    # Authorization schemes written without a key name
    re.compile(r"(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}"),
    # user:password@ in URLs and connection strings
    re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)[^\s@/]+(?=@)"),
)
# Well-known token shapes, redacted whole.
_TOKENS: Final = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|sk_(?:live|test)_[A-Za-z0-9]{10,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{5,})"
)
_TRACEBACK: Final = re.compile(r"(?s)Traceback \(most recent call last\):.*")
_FRAME: Final = re.compile(r'File "[^"]+", line \d+(?:, in \S+)?')
# Absolute paths of two or more segments, Unix or Windows, not part of a URL.
_PATH: Final = re.compile(r"(?<![\w:/.])(?:/[\w.@~+-]+){2,}/?|\b[A-Za-z]:\\(?:[\w.@~ +-]+\\?)+")


def sanitize_text(text: str, *, limit: int) -> str:
    """Redact secrets, paths and tracebacks, fold control characters, cap the length.

    Args:
        text: Any text that is about to reach the agent.
        limit: The most characters to keep; longer text ends with an ellipsis.

    Returns:
        The safe text.
    """
    text = _TRACEBACK.sub("[traceback removed]", text)
    text = _FRAME.sub("[frame removed]", text)
    for pattern in _SECRETS:
        text = pattern.sub(lambda match: f"{match.group(1)}{REDACTED}", text)
    text = _TOKENS.sub(REDACTED, text)
    text = _PATH.sub("[path]", text)
    text = _CONTROL.sub(" ", text)
    text = _WHITESPACE_RUN.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text
