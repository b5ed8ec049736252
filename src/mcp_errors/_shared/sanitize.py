"""Make text safe to cross to the agent: no secrets, paths or tracebacks, bounded, encodable.

What is redacted is one list, used both to redact (`sanitize_text`) and to judge text that
already crossed (`find_leaks`, the checker's leak rule); docs/wire-format.md documents it:

- stack traces and `File "...", line N` frames;
- secrets: PEM private-key blocks; well-known token shapes (`_TOKENS`); the password of
  `scheme://user:password@host` (the last `@` before the host ends it, so a password
  containing `@` goes whole); `Bearer`/`Basic` credentials; and the value after a
  secret-named key (`is_secret_name`) written `key=value`, `key: value` or as JSON;
- absolute file paths (Unix, Windows with either slash, UNC) and `file:` URLs;
- internal network addresses: private, shared and link-local IPv4, unique-local and
  link-local IPv6.

Every scan is linear in the text's length: patterns start only where a run of their
characters starts, and the key/value scan resumes after each value it redacts, so hostile
text (`a=a=a=...`) cannot make it quadratic.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import re
from collections.abc import Iterator
from typing import Final

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_RECEIVED_CHARS",
    "REDACTED",
    "encodable",
    "escape_surrogates",
    "find_leaks",
    "has_secret",
    "is_secret_name",
    "sanitize_text",
]

MAX_MESSAGE_CHARS: Final = 200
MAX_DESCRIPTION_CHARS: Final = 1000
MAX_RECEIVED_CHARS: Final = 80

REDACTED: Final = "[REDACTED]"
_PATH_MARK: Final = "[path]"
_ADDRESS_MARK: Final = "[internal address]"

# Lone UTF-16 surrogates (valid in a JSON string as `\ud800`, and what Python's
# `surrogateescape` makes of undecodable file names) cannot be encoded as UTF-8: a result
# holding one is never written to the client.
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")
# C0/C1 controls, and the invisible format characters (zero-width, bidi overrides) that can
# hide or reorder text a human reviews.
_CONTROL: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_WHITESPACE_RUN: Final = re.compile(r"\s+")

_TRACEBACK: Final = re.compile(r"(?s)Traceback \(most recent call last\):.*")
_FRAME: Final = re.compile(r'File "[^"]+", line \d+(?:, in \S+)?')

# A PEM private key, to its END line, or to the end of the text when that was cut off.
_PRIVATE_KEY: Final = re.compile(
    r"(?s)-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----|.*)"
)
# Well-known token shapes, redacted whole. A match starts only where a run of token
# characters starts.
_TOKENS: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-[A-Za-z0-9_-]{16,}"  # OpenAI, Anthropic (sk-ant-...)
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe secret and restricted keys
    r"|whsec_[A-Za-z0-9]{20,}"  # Stripe webhook secrets
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained tokens
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab personal access tokens
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API keys
    r"|xox[abeprs]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|npm_[A-Za-z0-9]{36}"  # npm tokens
    r"|pypi-[A-Za-z0-9_-]{50,}"  # PyPI tokens
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face tokens
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid keys
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{5,}"  # JWTs
    r")"
)
# The password of `scheme://user:password@host`: up to the last `@` before the path, so
# that a password containing `@` is redacted whole.
_USERINFO: Final = re.compile(r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,30}://[^\s:/?#@]*:)([^\s/?#]+)@")
# Authorization schemes written without a key name.
_SCHEME_CREDENTIAL: Final = re.compile(r"(?i)(?<![A-Za-z0-9_-])((?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]{8,})")

# A key and its separator (`key=`, `key: `, JSON's `"key": `); whether the key names a secret
# is decided in Python (`is_secret_name`), and only then is its value read.
_KEY: Final = re.compile(r"(?<![A-Za-z0-9_-])([A-Za-z0-9_-]++)[\"']?[ \t]*[=:](\s*)")
# The value after a secret-named key: a quoted string; after a spaced separator
# (`password: correct horse battery staple`) or an authorization key
# (`Authorization:Token abc`), the rest of the clause; else one word (`password=hunter2`).
_QUOTED_VALUE: Final = re.compile(r"\"[^\"\n]*\"?|'[^'\n]*'?")
_CLAUSE_VALUE: Final = re.compile(r"(?:[^\n\r,;&)\]}\".]|\.(?!\s|$))+")
_WORD_VALUE: Final = re.compile(r"[^\s,;&]+")

# Patterns that can start with a literal do, and check what precedes it after: the regex
# engine then skips to candidates instead of testing a lookbehind at every position.
_FILE_URL: Final = re.compile(r"(?i)f(?<![a-z0-9+.-]f)ile:/[^\s\"'<>]*")
# Absolute paths of two or more segments, Unix or Windows (drive with either slash, or UNC),
# not part of a URL. A Windows segment may hold spaces (`C:\Program Files\...`) when more
# path follows it.
_UNIX_PATH: Final = re.compile(r"/(?<![\w:/.]/)[\w.@~+-]+(?:/[\w.@~+-]+)+/?")
_WINDOWS_PATH: Final = re.compile(
    r"(?<![\w/:.])[A-Za-z]:[\\/](?:[\w.@~+-]+(?: [\w.@~+-]+)*[\\/])*[\w.@~+-]*"
    r"|\\\\[\w.$-]+(?:\\[\w.$@~+-]+)+"
)
_IPV4: Final = re.compile(r"\d(?<![\d.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3}(?!\.?\d)")
_IPV6: Final = re.compile(r"(?i)f(?<![0-9a-f:]f)[c-e][0-9a-f]{2}:[0-9a-f:]{1,36}(?![0-9a-f:])")
_INTERNAL_NETWORKS: Final = tuple(
    ipaddress.ip_network(network)
    for network in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "169.254.0.0/16")
) + tuple(ipaddress.ip_network(network) for network in ("fc00::/7", "fe80::/10"))


def sanitize_text(text: str, *, limit: int) -> str:
    """Redact secrets, paths, internal addresses and tracebacks; fold control characters; cap the length.

    The result can always be encoded as UTF-8: a lone surrogate becomes U+FFFD.

    Args:
        text: Any text that is about to reach the agent.
        limit: The most characters to keep; longer text ends with an ellipsis.

    Returns:
        The safe text.
    """
    if len(text) <= _CACHED_CHARS:
        return _sanitize_cached(text, limit)
    return _sanitize(text, limit)


def encodable(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so that it can be sent as UTF-8."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def escape_surrogates(text: str) -> str:
    """`text` with every lone surrogate written as its JSON escape (`\\ud800`), six ASCII characters."""
    return text if text.isascii() else _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


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
    text = encodable(text)
    text = _TRACEBACK.sub("[traceback removed]", text)
    text = _FRAME.sub("[frame removed]", text)
    text = _PRIVATE_KEY.sub(REDACTED, text)
    text = _redact_secret_values(text)
    # Cheap tests first: most texts have no URL, no scheme, no Windows path.
    if "://" in text and "@" in text:
        text = _USERINFO.sub(_REDACT_PASSWORD, text)
    lowered = text.lower()
    if "bearer" in lowered or "basic" in lowered:
        text = _SCHEME_CREDENTIAL.sub(_REDACT_AFTER_LABEL, text)
    text = _TOKENS.sub(REDACTED, text)
    text = _FILE_URL.sub(_PATH_MARK, text)
    text = _UNIX_PATH.sub(_PATH_MARK, text)
    if ":\\" in text or ":/" in text or "\\\\" in text:
        text = _WINDOWS_PATH.sub(_PATH_MARK, text)
    text = _IPV4.sub(_redact_internal_address, text)
    text = _IPV6.sub(_redact_internal_address, text)
    text = _CONTROL.sub(" ", text)
    text = _WHITESPACE_RUN.sub(" ", text).strip()
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


_SPACES: Final = (" ", "\t", "\n", "\r", "\x0b", "\x0c")
_sanitize_cached = functools.lru_cache(maxsize=1024)(_sanitize)
_REDACT_AFTER_LABEL: Final = r"\g<1>" + REDACTED
_REDACT_PASSWORD: Final = r"\g<1>" + REDACTED + "@"


def _secret_values(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the values after secret-named keys in `text`, in order, not overlapping."""
    position = 0
    while (key := _KEY.search(text, position)) is not None:
        position = key.end()
        name = key.group(1)
        if not is_secret_name(name):
            # Only the key is consumed: a pair inside a harmless value (`url: ...?token=...`)
            # is still found.
            continue
        start = key.end()
        if text.startswith(("'", '"'), start):
            value = _QUOTED_VALUE.match(text, start)
        elif key.group(2) or _is_authorization(name):
            value = _CLAUSE_VALUE.match(text, start)
        else:
            value = _WORD_VALUE.match(text, start)
        if value is None:
            continue
        end = start + len(value.group().rstrip())
        if end > start:
            yield start, end
            position = end


def _redact_secret_values(text: str) -> str:
    parts: list[str] = []
    done = 0
    for start, end in _secret_values(text):
        parts += (text[done:start], REDACTED)
        done = end
    return "".join(parts) + text[done:] if parts else text


def _redact_internal_address(match: re.Match[str]) -> str:
    return _ADDRESS_MARK if _is_internal_address(match.group()) else match.group()


def _is_internal_address(text: str) -> bool:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    return any(address in network for network in _INTERNAL_NETWORKS if network.version == address.version)


# The words of a name: `_`/`-` separated, camelCase, or an all-caps run (`PGPASSWORD`).
_NAME_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS: Final = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "signature",
        "sig",
        "privatekey",
        "secretkey",
        "accesskey",
        "accountkey",
        "signingkey",
        "masterkey",
        "encryptionkey",
        "sessionid",
        "cookie",
    }
)
# Glued words that still end in a secret word: `pgpassword`, `accesstoken`, `clientsecret`.
_SECRET_ENDINGS: Final = ("password", "passwd", "passphrase", "token", "secret", "apikey")
# A name ending in one of these is about a secret, not one: `InvalidTokenError`, `tokenLimit`,
# `signature_version`, `token_uri`.
_NOT_SECRET_TAILS: Final = frozenset(
    {
        "error",
        "exception",
        "mismatch",
        "expired",
        "expiry",
        "limit",
        "count",
        "length",
        "size",
        "type",
        "version",
        "algorithm",
        "method",
        "name",
        "url",
        "uri",
        "endpoint",
        "scheme",
        "provider",
    }
)
_AUTHORIZATION_WORDS: Final = frozenset({"auth", "authorization"})


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    """Whether an argument or field name usually holds a secret, e.g. `password` or `db_api_key`.

    Also inside longer or glued names (`DB_PASSWORD`, `X-Api-Key`, `accessToken`,
    `PGPASSWORD`, `AccountKey`, `X-Amz-Signature`), but not names about a secret
    (`InvalidTokenError`, `tokenLimit`) or that only contain the letters (`author`,
    `tokenizer`, `secretary`).

    Args:
        name: The last segment of a field path.

    Returns:
        True when its value must be redacted whole.
    """
    words = _words(name)
    if not words or words[-1] in _NOT_SECRET_TAILS:
        return False
    pairs = (first + second for first, second in itertools.pairwise(words))
    return any(word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS) for word in words) or any(
        pair in _SECRET_WORDS for pair in pairs
    )


@functools.lru_cache(maxsize=1024)
def _is_authorization(name: str) -> bool:
    """Whether a key is an authorization header, whose value starts with a scheme (`Token abc`)."""
    return not _AUTHORIZATION_WORDS.isdisjoint(_words(name))


def _words(name: str) -> list[str]:
    return [word.lower() for word in _NAME_WORDS.findall(name)]


# A value after a secret-named label (or a bearer/basic scheme) counts as a credential only when
# it looks like one: its first word has 6+ characters mixing letters and digits. Prose after the
# label ("api_key: required argument is missing") is a field name followed by its problem.
# Private keys, known token shapes and URL userinfo passwords count whatever they look like.
_CREDENTIAL: Final = re.compile(r"(?=[^\s]*[A-Za-z])(?=[^\s]*\d)[^\s]{6,}")
_VALUE_EDGES: Final = "\"'.,;:)]}>"
_SCHEME_WORDS: Final = frozenset({"bearer", "basic", "token", "digest", "bot", "apikey"})


def find_leaks(text: str) -> list[str]:
    """What in text that already reached an agent should not have: tracebacks, secrets, paths, addresses.

    The same list `sanitize_text` redacts, judged more strictly, since it judges rather than
    redacts: `[REDACTED]`, and a secret-named label followed by prose, are not leaks.

    Args:
        text: One text of a tool result.

    Returns:
        The kinds found, in the order "a stack trace", "a secret", "a file path (<path>)",
        "an internal address (<address>)"; empty when the text is clean.
    """
    leaks: list[str] = []
    if _TRACEBACK.search(text) or _FRAME.search(text):
        leaks.append("a stack trace")
    if has_secret(text):
        leaks.append("a secret")
    path = _FILE_URL.search(text) or _UNIX_PATH.search(text) or _WINDOWS_PATH.search(text)
    if path is not None:
        leaks.append(f"a file path ({path.group(0)})")
    address = next(
        (
            match.group()
            for pattern in (_IPV4, _IPV6)
            for match in pattern.finditer(text)
            if _is_internal_address(match.group())
        ),
        None,
    )
    if address is not None:
        leaks.append(f"an internal address ({address})")
    return leaks


def has_secret(text: str) -> bool:
    """Whether text holds a secret `find_leaks` would report: a private key, a token, a password."""
    return (
        _PRIVATE_KEY.search(text) is not None
        or _TOKENS.search(text) is not None
        or any(not match.group(2).startswith(REDACTED) for match in _USERINFO.finditer(text))
        or any(_looks_like_credential(match.group(2)) for match in _SCHEME_CREDENTIAL.finditer(text))
        or any(_looks_like_credential(text[start:end]) for start, end in _secret_values(text))
    )


def _looks_like_credential(value: str) -> bool:
    if value.lstrip("\"' ").startswith(REDACTED):
        return False
    words = [word.strip(_VALUE_EDGES) for word in value.split()]
    if len(words) > 1 and words[0].lower() in _SCHEME_WORDS:
        words = words[1:]
    return bool(words) and _CREDENTIAL.fullmatch(words[0]) is not None
