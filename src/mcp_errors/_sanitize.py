"""Make text safe to cross to the agent: no secrets, no paths, no tracebacks, bounded."""

from __future__ import annotations

import functools
import itertools
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
# A `key=value` or `key: value` pair (also JSON's `"api_key": "..."`); whether the key names a
# secret is decided in Python (`is_secret_name`). The key starts where a run of name characters
# starts and is matched possessively, so the scan stays linear on any text (`a-a-a-...`). The
# value is only looked at (a lookahead), so that a pair inside it (`url: ...?api_key=...`) is
# still found.
_KEY_VALUE: Final = re.compile(
    r"(?<![A-Za-z0-9_-])([A-Za-z0-9_-]++)[\"']?\s*[=:]\s*"
    r"(?=((?:(?i:bearer|basic)\s+)?(?:\"[^\"]{0,500}\"|'[^']{0,500}'|[^\s,;&]+)))"
)
# Each pattern keeps its first group (the label) and redacts what follows.
_SECRETS: Final = (
    # Authorization schemes written without a key name
    re.compile(r"(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}"),
    # user:password@ in URLs and connection strings
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]{0,30}://[^\s:/@]*:)[^\s@/]+(?=@)"),
)
# The words of a name: `_`/`-` separated, camelCase, or an all-caps run (`PGPASSWORD`).
_NAME_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS: Final = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "secret",
        "token",
        "apikey",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "privatekey",
        "sessionid",
        "cookie",
    }
)
# Glued words that still end in a secret word: `pgpassword`, `accesstoken`, `clientsecret`.
_SECRET_ENDINGS: Final = ("password", "passwd", "token", "secret", "apikey")
# A name ending in one of these is about a secret, not one: `InvalidTokenError`, `tokenLimit`.
_NOT_SECRET_TAILS: Final = frozenset(
    {"error", "exception", "mismatch", "expired", "expiry", "limit", "count", "length", "size", "type"}
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
    # The last word of the head goes too: a secret cut in two no longer matches its pattern.
    cut = limit * 4 + 256
    if len(text) > cut:
        head = text[:cut]
        text = head[: max(0, *map(head.rfind, _SPACES))]
    text = _TRACEBACK.sub("[traceback removed]", text)
    text = _FRAME.sub("[frame removed]", text)
    text = _redact_secret_values(text)
    for pattern in _SECRETS:
        text = pattern.sub(_REDACT_AFTER_LABEL, text)
    text = _TOKENS.sub(REDACTED, text)
    text = _PATH.sub("[path]", text)
    text = _CONTROL.sub(" ", text)
    text = _WHITESPACE_RUN.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


_SPACES: Final = (" ", "\t", "\n", "\r", "\x0b", "\x0c")
_sanitize_cached = functools.lru_cache(maxsize=1024)(_sanitize)
_REDACT_AFTER_LABEL: Final = r"\g<1>" + REDACTED


def _secret_values(text: str) -> list[re.Match[str]]:
    """The `key=value` pairs of `text` whose key names a secret, not overlapping."""
    found: list[re.Match[str]] = []
    end = 0
    for match in _KEY_VALUE.finditer(text):
        if match.start() >= end and is_secret_name(match.group(1)):
            found.append(match)
            end = match.end() + len(match.group(2))
    return found


def _redact_secret_values(text: str) -> str:
    parts: list[str] = []
    done = 0
    for match in _secret_values(text):
        parts += (text[done : match.end()], REDACTED)
        done = match.end() + len(match.group(2))
    return "".join(parts) + text[done:]


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    """Whether an argument or field name usually holds a secret, e.g. `password` or `db_api_key`.

    Also inside longer or glued names (`DB_PASSWORD`, `X-Api-Key`, `accessToken`,
    `PGPASSWORD`), but not names about a secret (`InvalidTokenError`, `tokenLimit`) or that
    only contain the letters (`author`, `tokenizer`, `secretary`).

    Args:
        name: The last segment of a field path.

    Returns:
        True when its value must be redacted whole.
    """
    words = [word.lower() for word in _NAME_WORDS.findall(name)]
    if not words or words[-1] in _NOT_SECRET_TAILS:
        return False
    pairs = (first + second for first, second in itertools.pairwise(words))
    return any(word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS) for word in words) or any(
        pair in _SECRET_WORDS for pair in pairs
    )


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
    if (
        _TOKENS.search(text)
        or any(_looks_secret(match) for pattern in _SECRETS for match in pattern.finditer(text))
        or any(_looks_like_credential(match.group(2)) for match in _secret_values(text))
    ):
        leaks.append("a secret")
    path = _PATH.search(text)
    if path is not None:
        leaks.append(f"a file path ({path.group(0)})")
    return leaks


def _looks_secret(match: re.Match[str]) -> bool:
    if "://" in match.group(1):
        return not match.group(0)[len(match.group(1)) :].startswith(REDACTED)
    return _looks_like_credential(match.group(0)[len(match.group(1)) :])


def _looks_like_credential(value: str) -> bool:
    value = value.strip()
    if value.startswith(REDACTED) or value.strip(_VALUE_EDGES).startswith(REDACTED):
        return False
    value = re.sub(r"(?i)^(?:bearer|basic)\s+", "", value).strip(_VALUE_EDGES)
    return _CREDENTIAL.fullmatch(value) is not None
