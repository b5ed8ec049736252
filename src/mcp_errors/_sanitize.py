"""Make text safe to cross to the agent: no secrets, no paths, no tracebacks, bounded."""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_RECEIVED_CHARS",
    "REDACTED",
    "find_leaks",
    "is_secret_name",
    "sanitize_text",
]

MAX_MESSAGE_CHARS: Final = 200
MAX_DESCRIPTION_CHARS: Final = 1000
MAX_RECEIVED_CHARS: Final = 80

REDACTED: Final = "[REDACTED]"

# C0/C1 controls, and the invisible format characters (zero-width, bidi overrides) that can
# hide or reorder text a human reviews.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_WHITESPACE_RUN = re.compile(r"\s+")
# Names that usually hold secrets, also inside longer names: `DB_PASSWORD`, `X-Api-Key`,
# `PGPASSWORD`, `accessToken`, `clientSecret`. After the secret word only a separated or
# capitalised part may follow, so that `author` or `tokenizer` are not secret names. Every
# repetition is bounded: an unbounded one made the scan quadratic on text like `a-a-a-...`.
_SECRET_NAME: Final = (
    r"[A-Za-z0-9_-]{0,30}?(?i:password|passwd|pwd|secret|token|api[_-]?key|apikey|authorization|auth|"
    r"credentials?|private[_-]?key|session[_-]?id|cookie)(?:[_-][A-Za-z0-9]+|[A-Z][a-z0-9]*){0,4}"
)
_SECRET_NAME_ONLY: Final = re.compile(_SECRET_NAME)
# Each pattern keeps its first group (the label) and redacts what follows.
_SECRETS: Final = (
    # key=value and key: value, also JSON's `"api_key": "..."`
    re.compile(
        rf"(\b{_SECRET_NAME}\b[\"']?\s*[=:]\s*)"
        r"(?:(?i:bearer|basic)\s+)?(\"[^\"]*\"|'[^']*'|[^\s,;&]+)"
    ),
    # Authorization schemes written without a key name
    re.compile(r"(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}"),
    # user:password@ in URLs and connection strings
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]{0,30}://[^\s:/@]*:)[^\s@/]+(?=@)"),
)
# Well-known token shapes, redacted whole.
_TOKENS: Final = re.compile(
    r"\b(?:sk-[A-Za-z0-9_-]{16,}|sk_(?:live|test)_[A-Za-z0-9]{10,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{5,})"
)
_TRACEBACK: Final = re.compile(r"(?s)Traceback \(most recent call last\):.*")
_FRAME: Final = re.compile(r'File "[^"]+", line \d+(?:, in \S+)?')
# Absolute paths of two or more segments, Unix or Windows (drive or UNC), not part of a URL.
_PATH: Final = re.compile(
    r"(?<![\w:/.])(?:/[\w.@~+-]+){2,}/?|\b[A-Za-z]:\\(?:[\w.@~ +-]+\\?)+|\\\\[\w.$-]+(?:\\[\w.$@~+-]+)+"
)


def sanitize_text(text: str, *, limit: int) -> str:
    """Redact secrets, paths and tracebacks, fold control characters, cap the length.

    Args:
        text: Any text that is about to reach the agent.
        limit: The most characters to keep; longer text ends with an ellipsis.

    Returns:
        The safe text.
    """
    if len(text) <= _CACHED_CHARS:
        return _sanitize_cached(text, limit)
    return _sanitize(text, limit)


# Tools raise the same messages and descriptions over and over; a dozen regex passes per
# text were the largest cost mcp-errors added to the error path (see docs/performance.md).
_CACHED_CHARS: Final = 2000


def _sanitize(text: str, limit: int) -> str:
    # Only the head can reach the agent: the regexes need not read megabytes a client sent.
    text = text[: limit * 4 + 256]
    text = _TRACEBACK.sub("[traceback removed]", text)
    text = _FRAME.sub("[frame removed]", text)
    for pattern in _SECRETS:
        text = pattern.sub(_REDACT_AFTER_LABEL, text)
    text = _TOKENS.sub(REDACTED, text)
    text = _PATH.sub("[path]", text)
    text = _CONTROL.sub(" ", text)
    text = _WHITESPACE_RUN.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


_sanitize_cached = functools.lru_cache(maxsize=1024)(_sanitize)
_REDACT_AFTER_LABEL: Final = r"\g<1>" + REDACTED


def is_secret_name(name: str) -> bool:
    """Whether an argument or field name usually holds a secret, e.g. `password` or `db_api_key`.

    Args:
        name: The last segment of a field path.

    Returns:
        True when its value must be redacted whole.
    """
    return _SECRET_NAME_ONLY.fullmatch(name) is not None


# A value after a secret-named label (or a bearer/basic scheme) counts as a credential only when
# it looks like one: one word of 6+ characters mixing letters and digits. Prose after the label
# ("api_key: required argument is missing") is a field name followed by its problem. Known
# token shapes and URL userinfo passwords count whatever they look like.
_CREDENTIAL: Final = re.compile(r"(?=[^\s]*[A-Za-z])(?=[^\s]*\d)[^\s]{6,}")
_VALUE_EDGES: Final = "\"'.,;:)]}>"


def find_leaks(text: str) -> list[str]:
    """What in text that already reached an agent should not have: tracebacks, secrets, paths.

    Stricter than `sanitize_text` about what a secret is, since it judges rather than redacts:
    `[REDACTED]`, and a secret-named label followed by prose, are not leaks.

    Args:
        text: One text of a tool result.

    Returns:
        The kinds found, in the order "a stack trace", "a secret", "a file path (<path>)";
        empty when the text is clean.
    """
    leaks: list[str] = []
    if _TRACEBACK.search(text) or _FRAME.search(text):
        leaks.append("a stack trace")
    if _TOKENS.search(text) or any(_looks_secret(match) for pattern in _SECRETS for match in pattern.finditer(text)):
        leaks.append("a secret")
    path = _PATH.search(text)
    if path is not None:
        leaks.append(f"a file path ({path.group(0)})")
    return leaks


def _looks_secret(match: re.Match[str]) -> bool:
    value = match.group(0)[len(match.group(1)) :].strip()
    if value.startswith(REDACTED) or value.strip(_VALUE_EDGES).startswith(REDACTED):
        return False
    if "://" in match.group(1):
        return True
    value = re.sub(r"(?i)^(?:bearer|basic)\s+", "", value).strip(_VALUE_EDGES)
    return _CREDENTIAL.fullmatch(value) is not None
