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

What the agent itself already knows is kept (`sanitize_text(..., keep=...)`, built with
`known_to_the_agent`): a path or address the call's own arguments carry, and the places the
server announces as its roots (`list_allowed_directories`) with the paths beneath them. A
secret is redacted even when the agent sent it: credentials are never echoed.

`redact_url` and `redact_urls` are the log's own, narrower redaction: a URL keeps its scheme,
host, port and path (what an operator needs to tell which server is meant) and loses its
userinfo, its query values and its fragment, wherever the proxy or a store writes one.

Every scan is linear in the text's length: patterns start only where a run of their
characters starts, and the key/value scan resumes after each value it redacts, so hostile
text (`a=a=a=...`) cannot make it quadratic.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_RECEIVED_CHARS",
    "REDACTED",
    "ROOTS_TOOL",
    "Known",
    "encodable",
    "escape_surrogates",
    "find_leaks",
    "has_secret",
    "is_secret_name",
    "known_to_the_agent",
    "redact_url",
    "redact_urls",
    "roots_announced",
    "sanitize_json",
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
    # OpenAI, Anthropic (sk-proj-..., sk-ant-api03-...): a random run of 20 or more somewhere,
    # so that a SKU of short groups (sk-2024-01-15-blue) is not one.
    r"sk-(?=[A-Za-z0-9_-]*?[A-Za-z0-9_]{20})[A-Za-z0-9_-]+"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe secret and restricted keys
    r"|whsec_[A-Za-z0-9]{20,}"  # Stripe webhook secrets
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained tokens
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab personal access tokens
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API keys
    r"|xox[abeprs]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|xapp-\d-[A-Za-z0-9-]{10,}"  # Slack app-level tokens
    r"|T[A-Z0-9]{8,12}/[AB][A-Z0-9]{8,12}/[A-Za-z0-9]{20,}"  # Slack webhook URLs' secret path
    r"|\d{17,20}/[A-Za-z0-9_-]{60,}"  # Discord webhook URLs' id and token
    r"|hv[sbr]\.[A-Za-z0-9_-]{20,}"  # HashiCorp Vault tokens
    r"|npm_[A-Za-z0-9]{36}"  # npm tokens
    r"|pypi-[A-Za-z0-9_-]{50,}"  # PyPI tokens
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face tokens
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid keys
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"  # JWTs, unsigned ones (`alg: none`) too
    r")"
)
# The password of `scheme://user:password@host`: up to the last `@` before the path, so
# that a password containing `@` is redacted whole; a password containing `/` ends at the
# first `@` (a port and a path, `host:8080/users/ada@example.com`, are not a password).
_USERINFO: Final = re.compile(
    r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,30}://[^\s:/?#@]*:)([^\s/?#]+|(?!\d+/)[^\s?#@]{1,200})@"
)
# Authorization schemes written without a key name; the credential must look like one
# (`_looks_random`), so that "Basic subscription" and "bearer bonds" stay words.
_SCHEME_CREDENTIAL: Final = re.compile(r"(?i)(?<![A-Za-z0-9_-])((?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]{8,})")

# A key and its separator (`key=`, `key: `, JSON's `"key": `, JSON escaped in a string
# `\"key\":`, Ruby's and PHP's `key => `), or a command line's `--key value`; whether the key
# names a secret is decided in Python (`is_secret_name`), and only then is its value read.
_KEY: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?:([A-Za-z0-9_-]++)(?:\\?[\"'])?[ \t]*(=>|[=:])(\s*)"
    r"|--([A-Za-z][A-Za-z0-9_-]*)[ \t]+(?=[^\s-]))"
)
# The value after a secret-named key: a quoted string (also JSON-escaped); after a spaced
# separator (`password: correct horse battery staple`) or an authorization key
# (`Authorization:Token abc`), the words of the clause up to the first word of prose; else
# one word (`password=hunter2`).
_QUOTED_VALUE: Final = re.compile(r"\"[^\"\n]*\"?|'[^'\n]*'?")
_ESCAPED_QUOTED_VALUE: Final = re.compile(r"\\\"(?:[^\"\\\n]|\\[^\"\n])*(?:\\\"|$)")
_CLAUSE_WORD: Final = re.compile(r"[^\s,;&)\]}\"]+")
_WORD_VALUE: Final = re.compile(r"[^\s,;&]+")
# An XML element whose name is a secret's (`<password>...</password>`, `<ApiKey>`).
_XML_ELEMENT: Final = re.compile(r"<([A-Za-z_][\w.:-]{0,60})(?:\s[^<>]{0,200})?>([^<]*)</")

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
# An API route (`/v1/orders/ord-123`, `GET /orders/17`) is what an agent calls, not a place
# on the server's disk: kept, unless it names a source or configuration file.
_ROUTE_START: Final = re.compile(r"(?i)/(?:v\d{1,3}(?:\.\d{1,3})?|api|graphql|rest|oauth2?|\.well-known)(?:/|$)")
_HTTP_METHOD_BEFORE: Final = re.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)[ \t]+$")
_SOURCE_FILE: Final = re.compile(
    r"(?i)\.(?:py|pyc|js|mjs|cjs|ts|rb|go|java|class|jar|php|rs|cs|c|h|cpp|sh|ya?ml|toml|ini|cfg|conf|env|json|"
    r"xml|properties|pem|key|crt|log|db|sqlite3?)$"
)
# A dotted quad written as a version (`version 10.2.3.4`, `v10.2.3.4`, `pkg@10.2.3.4`,
# `>=10.2.3.4`, `upgrade to 10.2.3.4`) is not an address.
_VERSION_BEFORE: Final = re.compile(
    r"(?i)(?:\b(?:version|versions|ver|release|build|firmware|patch|revision|rev|upgrade|downgrade|update|"
    r"install|sdk)\b[ \t:=]*(?:to[ \t]+|is[ \t]+)?|(?<![A-Za-z0-9])v|[@=~^]|[<>]=?)$"
)


def sanitize_text(text: str, *, limit: int, keep: Known | None = None) -> str:
    """Redact secrets, paths, internal addresses and tracebacks; fold control characters; cap the length.

    The result can always be encoded as UTF-8: a lone surrogate becomes U+FFFD.

    Args:
        text: Any text that is about to reach the agent.
        limit: The most characters to keep; longer text ends with an ellipsis.
        keep: What the agent already knows (`known_to_the_agent`): those paths and addresses
            are left as they are wherever they stand whole in `text`.

    Returns:
        The safe text.
    """
    if keep is not None and (keep.values or keep.roots):
        sheltered, kept = _shelter(text, keep)
        if kept:
            return _sanitize(sheltered, limit, kept)
    if len(text) <= _CACHED_CHARS:
        return _sanitize_cached(text, limit)
    return _sanitize(text, limit)


@dataclass(frozen=True, slots=True)
class Known:
    """What the agent already knows, so a failure's text may say it back (`known_to_the_agent`)."""

    values: frozenset[str] = frozenset()
    """Paths and addresses the call's own arguments carry, kept where they stand whole."""
    roots: frozenset[str] = frozenset()
    """Places the server announced as its own (its allowed directories), kept with the paths beneath them."""


_MAX_KNOWN: Final = 32
_MAX_KNOWN_CHARS: Final = 1024
_MAX_KNOWN_DEPTH: Final = 4


def known_to_the_agent(arguments: Mapping[str, Any] | None, roots: Iterable[str] = ()) -> Known:
    """The paths and addresses a call's arguments carry and the server's announced roots, which
    its failure's text may say back to the agent.

    A value the sanitiser would redact as a path, a `file:` URL or an internal address counts;
    a value under a secret-named argument, or one that holds a secret, never does (a credential
    is never echoed, even to the agent that sent it); nor do other plain values, which the
    sanitiser leaves alone anyway.

    Args:
        arguments: The call's arguments (nested values too, a few levels deep).
        roots: Paths the server announced as its own (`roots_announced`).

    Returns:
        What `sanitize_text(..., keep=...)` leaves as it is.
    """
    values: set[str] = set()
    for value in _argument_strings(arguments or {}, 0):
        if len(values) >= _MAX_KNOWN:
            break
        if _is_sheltered_kind(value):
            values.add(value)
    kept_roots = frozenset(
        root.rstrip("/\\")
        for root in itertools.islice(roots, _MAX_KNOWN)
        if _is_sheltered_kind(root) and root.rstrip("/\\")
    )
    return Known(frozenset(values), kept_roots)


def _argument_strings(value: Any, depth: int, name: str = "") -> Iterator[str]:
    if depth > _MAX_KNOWN_DEPTH or (name and is_secret_name(name)):
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in itertools.islice(value.items(), _MAX_KNOWN * 2):
            yield from _argument_strings(item, depth + 1, str(key))
    elif isinstance(value, list | tuple):
        for item in itertools.islice(value, _MAX_KNOWN * 2):
            yield from _argument_strings(item, depth + 1, name)


def _is_sheltered_kind(value: str) -> bool:
    """A single-line path, `file:` URL or internal address that holds no secret."""
    if not 2 <= len(value) <= _MAX_KNOWN_CHARS or _CONTROL.search(value) or "\n" in value or "\r" in value:
        return False
    shaped = (
        _UNIX_PATH.fullmatch(value) is not None
        or _FILE_URL.fullmatch(value) is not None
        or _WINDOWS_PATH.fullmatch(value) is not None
        or (value.startswith("/") and _UNIX_SEGMENT.fullmatch(value[1:]) is not None)
        or any(_is_internal_address(match) for match in (_IPV4.fullmatch(value), _IPV6.fullmatch(value)) if match)
    )
    return shaped and not has_secret(value)


_UNIX_SEGMENT: Final = re.compile(r"[\w.@~+-]+/?")
# Stand-ins for what is kept while the rest is sanitised: private-use characters, which no
# pattern here reads as part of a path, a key or a token (and which are dropped from the text first).
_OPEN, _CLOSE = "\ue000", "\ue001"
_STAND_IN: Final = re.compile("\ue000(\\d+)\ue001")
_PATH_CHARS: Final = "\\w.@~+-"


def _shelter(text: str, keep: Known) -> tuple[str, list[str]]:
    """`text` with each kept value (and each path beneath a kept root) where it stands whole
    replaced by a stand-in, and the values in stand-in order."""
    text = text[:_SHELTER_READ_CHARS].replace(_OPEN, "\ufffd").replace(_CLOSE, "\ufffd")
    kept: list[str] = []

    def stand_in(match: re.Match[str]) -> str:
        if has_secret(match.group()):
            return match.group()  # a path beneath a root may name a credential: never kept
        kept.append(match.group())
        return f"{_OPEN}{len(kept) - 1}{_CLOSE}"

    for root in sorted(keep.roots, key=len, reverse=True):
        beneath = rf"(?<![{_PATH_CHARS}/]){re.escape(root)}(?:[/\\][{_PATH_CHARS}]++)*+[/\\]?+(?![{_PATH_CHARS}])"
        text = re.sub(beneath, stand_in, text)
    for value in sorted(keep.values, key=len, reverse=True):
        whole = rf"(?<![{_PATH_CHARS}/]){re.escape(value)}(?![{_PATH_CHARS}]|[/\\][{_PATH_CHARS}])"
        text = re.sub(whole, stand_in, text)
    return text, kept


# `list_allowed_directories`, `list_roots`, `get_allowed_paths`, `allowed_repositories`, ...
ROOTS_TOOL: Final = re.compile(
    r"(?:list_|get_)?(?:allowed_(?:directories|dirs|folders|paths|roots|repositories|repos)|roots)"
)
"""The name of a tool that lists the places a server allows (lower case, `-` as `_`)."""
# An absolute path alone on its line, after a `- ` bullet or after a label's colon.
_ROOT_LINE: Final = re.compile(r"^(?:.*?:\s+|[-*]\s+)?((?:[A-Za-z]:)?[/\\][^\s,;'\"]*)\s*$", re.MULTILINE)
_ROOTS_CHARS: Final = 20_000


def roots_announced(tool: str, text: str) -> list[str]:
    """The places a server announces as its own in the answer of a tool that lists them
    (`ROOTS_TOOL`: server-filesystem's `list_allowed_directories` answers `Allowed
    directories:` and a path a line); empty for any other tool.

    Example:
        ```python
        from mcp_errors._shared.sanitize import roots_announced

        said = "Allowed directories:\n/srv/data\n/home/ada/notes"
        assert roots_announced("list_allowed_directories", said) == ["/srv/data", "/home/ada/notes"]
        ```
    """
    if not ROOTS_TOOL.fullmatch(tool.lower().replace("-", "_")):
        return []
    paths = (path for path in _ROOT_LINE.findall(text[:_ROOTS_CHARS]) if path.rstrip("/\\"))
    return list(dict.fromkeys(paths))


_SHELTER_READ_CHARS: Final = 64_000
"""The most of a text read for kept values: more than any text's kept head (`_sanitize` cuts at `limit * 4 + 256`)."""


def sanitize_json(value: Any, depth: int = 0) -> Any:
    """JSON data with every string in it sanitised, keys included; nesting cut at 8 levels.

    For structured data that crosses to the agent (a tool's `extra` fields, an upstream's own
    error envelope): its shape is kept, its words are not trusted. A value JSON cannot carry
    is written as its sanitised text.

    Args:
        value: Any JSON-like value.
        depth: How deep `value` already is (for the recursion).

    Returns:
        The same shape, safe to send.
    """
    if isinstance(value, str):
        return sanitize_text(value, limit=MAX_DESCRIPTION_CHARS)
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= _MAX_JSON_DEPTH:
        return None
    if isinstance(value, Mapping):
        return {
            sanitize_text(str(key), limit=MAX_MESSAGE_CHARS): sanitize_json(item, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [sanitize_json(item, depth + 1) for item in value]
    return sanitize_text(str(value), limit=MAX_MESSAGE_CHARS)


_MAX_JSON_DEPTH: Final = 8


def encodable(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so that it can be sent as UTF-8."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def escape_surrogates(text: str) -> str:
    """`text` with every lone surrogate written as its JSON escape (`\\ud800`), six ASCII characters."""
    return text if text.isascii() else _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def redact_url(url: str) -> str:
    """`url` for a log line: its userinfo, query values and fragment redacted, the rest kept.

    Also for a URL without a scheme (`user:password@host/db`, `//host/db?password=x`): what
    comes before the last `@` of the authority is userinfo.

    Example:
        ```python
        from mcp_errors._shared.sanitize import redact_url

        url = "https://bot:s3cret@api.example.com/mcp?api_key=k3y&region=eu#frag"
        assert redact_url(url) == "https://[REDACTED]@api.example.com/mcp?api_key=[REDACTED]&region=[REDACTED]#[REDACTED]"
        ```
    """
    scheme, marker, rest = url.partition("://")
    if not marker:
        scheme, rest = "", url.removeprefix("//")
        marker = "//" if url.startswith("//") else ""
    end = next((at for at, char in enumerate(rest) if char in "/?#"), len(rest))
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        authority = f"{REDACTED}@{authority.rpartition('@')[2]}"
    tail, hash_mark, fragment = tail.partition("#")
    path, question_mark, query = tail.partition("?")
    if query:
        query = "&".join(
            f"{part.partition('=')[0]}={REDACTED}" if "=" in part else REDACTED if part else ""
            for part in query.split("&")
        )
    return f"{scheme}{marker}{authority}{path}{question_mark}{query}{hash_mark}{REDACTED if fragment else ''}"


def redact_urls(text: str) -> str:
    """`text` with every `scheme://...` URL in it passed through `redact_url`, for a log line."""
    return _URL.sub(lambda match: redact_url(match.group()), text) if "://" in text else text


# A scheme (bounded), `://`, and the run of characters a URL in prose can hold: each start
# position costs at most the scheme's bound, and a match consumes what it covers.
_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]{0,31}://[^\s\"'<>`]*")


# Tools raise the same messages and descriptions over and over; a dozen regex passes per
# text were the largest cost mcp-errors added to the error path (see docs/performance.md).
_CACHED_CHARS: Final = 2000


def _sanitize(text: str, limit: int, kept: list[str] | None = None) -> str:
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
    if "</" in text:
        text = _XML_ELEMENT.sub(_redact_xml_secret, text)
    text = _redact_secret_values(text)
    # Cheap tests first: most texts have no URL, no scheme, no Windows path.
    if "://" in text and "@" in text:
        text = _USERINFO.sub(_REDACT_PASSWORD, text)
    lowered = text.lower()
    if "bearer" in lowered or "basic" in lowered:
        text = _SCHEME_CREDENTIAL.sub(_redact_scheme_credential, text)
    text = _TOKENS.sub(REDACTED, text)
    text = _FILE_URL.sub(_PATH_MARK, text)
    text = _UNIX_PATH.sub(_redact_file_path, text)
    if ":\\" in text or ":/" in text or "\\\\" in text:
        text = _WINDOWS_PATH.sub(_PATH_MARK, text)
    text = _IPV4.sub(_redact_internal_address, text)
    text = _IPV6.sub(_redact_internal_address, text)
    text = _CONTROL.sub(" ", text)
    text = _WHITESPACE_RUN.sub(" ", text).strip()
    if kept:
        text = _STAND_IN.sub(lambda match: kept[int(match.group(1))], text)
    if len(text) > limit:
        text = text[: max(limit - 1, 0)].rstrip() + "…"
    return text


_SPACES: Final = (" ", "\t", "\n", "\r", "\x0b", "\x0c")
_sanitize_cached = functools.lru_cache(maxsize=1024)(_sanitize)
_REDACT_PASSWORD: Final = r"\g<1>" + REDACTED + "@"


def _secret_values(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the credentials after secret-named keys in `text`, in order, not overlapping.

    A value that is prose (`api_token: must be 20+ characters`, `Invalid token: it expired`)
    or a placeholder (`password=None`, `token: ${API_TOKEN}`) is no credential. Each value is
    read once: the scan resumes after a credential, and prose is judged by its first word.
    """
    position = 0
    while (key := _KEY.search(text, position)) is not None:
        position = key.end()
        flag = key.group(4)
        name = flag or key.group(1)
        if not is_secret_name(name) and not _is_url_secret(text, key) and not _is_qualified_key(text, key):
            # Only the key is consumed: a pair inside a harmless value (`url: ...?token=...`)
            # is still found.
            continue
        spaced = flag is None and (bool(key.group(3)) or _is_authorization(name))
        span = _credential(text, key.end(), clause=spaced)
        if span is not None:
            yield span
            position = span[1]


def _credential(text: str, start: int, *, clause: bool) -> tuple[int, int] | None:
    """The span of the credential a secret-named key's value at `start` holds, if it holds one."""
    if text.startswith(("'", '"'), start):
        value = _QUOTED_VALUE.match(text, start)
        inside = value.group()[1:] if value is not None else ""
    elif text.startswith('\\"', start):
        value = _ESCAPED_QUOTED_VALUE.match(text, start)
        inside = value.group()[2:] if value is not None else ""
    elif clause:
        return _clause_credential(text, start)
    else:
        value = _WORD_VALUE.match(text, start)
        inside = value.group() if value is not None else ""
    if value is None or not _is_credential_start(inside):
        return None
    return start, value.end()


def _clause_credential(text: str, start: int) -> tuple[int, int] | None:
    # The clause's words up to its end (a line end, `,;&)]}"`, a sentence's full stop) or to
    # its first word of prose: `hunter2 was rejected` is a credential and what was said of it.
    first = _CLAUSE_WORD.match(text, start)
    if first is None:
        return None
    word = first.group()
    if word.lower() in _SCHEME_WORDS:
        # `Authorization: Bearer <value>`: the scheme is a credential's only with one after it.
        after = _CLAUSE_WORD.match(text, first.end() + 1) if text[first.end() : first.end() + 1] == " " else None
        if after is None or not _looks_random(after.group().strip(_VALUE_EDGES)):
            return None
    elif not _is_credential_start(word) or (_next_word_start(text, first.end()) and not _starts_phrase(word)):
        return None
    end = position = start
    while (word_match := _CLAUSE_WORD.match(text, position)) is not None:
        found = word_match.group()
        if end > start and _is_prose(found):
            break
        end = word_match.end()
        if found.endswith(".") and (end == len(text) or text[end].isspace()):
            end -= 1  # a full stop ends the sentence, and is not the credential's
            break
        position = _next_word_start(text, end)
        if not position:
            break
    return (start, end) if end > start else None


def _next_word_start(text: str, end: int) -> int:
    """Where the clause's next word starts after a word ending at `end`; 0 when the clause ends there."""
    gap = end
    while gap < len(text) and text[gap] in " \t":
        gap += 1
    return gap if end < gap < len(text) and _CLAUSE_WORD.match(text, gap) is not None else 0


def _starts_phrase(word: str) -> bool:
    """Whether the first of several words after a secret-named label starts a credential.

    A word that looks generated (`hunter2`, `Winter2024!`) does, and so does a lower-case word
    (a passphrase: `correct horse battery staple`); a capitalised word or an acronym starts a
    sentence (`Rotation pending`, `SSO via Okta only`), a number followed by words is a count or
    a value echoed back (`12345 is not of type 'string'`), and `SameSite=None` is a pair of its own.
    """
    word = word.strip(_VALUE_EDGES)
    if "=" in word or word.isdigit():
        return False
    if any(char.isdigit() for char in word) or not word.isalpha():
        return True
    return word.islower() or (word.isupper() and len(word) >= 12)  # an acronym is short


def _is_prose(word: str) -> bool:
    word = word.strip(_VALUE_EDGES).lower()
    return word in _PROSE_WORDS or (len(word) > 4 and word.endswith(("ed", "ing")))


def _is_credential_start(value: str) -> bool:
    """Whether a secret-named key's value starts with a credential, rather than prose or a placeholder."""
    first = value.split(None, 1)[0] if value.strip() else ""
    if first.startswith(("<", "${", "{{")):
        return False  # a template: `<your token here>`, `${API_KEY}`, `{{ token }}`
    word = first.strip(_VALUE_EDGES)
    # Shorter than 4 characters: a count or a version (`pass=3`, `Signature=v1`), not a secret.
    return len(word) >= 4 and word.lower() not in _PROSE_WORDS and _PLACEHOLDER.fullmatch(word) is None


def _is_qualified_key(text: str, key: re.Match[str]) -> bool:
    # "Invalid API key: ..." names its secret in two words, of which only `key` is the label's.
    return (key.group(1) or "").lower() == "key" and _KEY_QUALIFIER.search(
        text, max(0, key.start() - 12), key.start()
    ) is not None


_KEY_QUALIFIER: Final = re.compile(r"(?i)\b(?:api|access|secret|private|signing|master|encryption|license)[ _-]$")


def _is_url_secret(text: str, key: re.Match[str]) -> bool:
    # `key` and `code` are secrets only as a URL's query parameters (`?key=...`, OAuth's
    # `?code=...`): elsewhere "key=order-17" is a database's duplicate key.
    return (
        key.group(2) == "="
        and key.group(1).lower() in _URL_SECRET_PARAMETERS
        and key.start() > 0
        and text[key.start() - 1] in "?&"
    )


_URL_SECRET_PARAMETERS: Final = frozenset({"key", "code"})
# Words that start prose, not a credential: function words, and what error texts say of a
# credential (`required`, `expired`, `missing`) or of its value (`None`, `empty`).
_PROSE_WORDS: Final = frozenset(
    """a an the is are was were be been being am it its this that these those there here not no nor never
    must should shall can cannot could will would may might has have had does do did to of for in on at by
    with without from as and or but if than then because when while after before until since only also too
    very please you your we our they their which who what where how why so such any all each every some more
    less least most per must required missing invalid expired expires revoked empty wrong incorrect rejected
    denied needed needs need expected unknown malformed mismatch mismatched unauthorized forbidden blank
    absent none null nil undefined unset hidden redacted masked omitted provided accepted ok valid true false
    yes enabled disabled contains length characters minimum maximum format supplied given present changed
    updated reset sent received used reused verified failed failure error see use try field value header
    parameter argument longer shorter short long weak set""".split()  # noqa: SIM905  # words read best as words
)
# Placeholders: masks (`***`, `xxxx`), templates (`<your-key>`, `${API_KEY}`, `{{token}}`, `%s`).
_PLACEHOLDER: Final = re.compile(r"[*•xX#.]+|<[^<>]*>|\$\{?[A-Z_][A-Z0-9_]*\}?|\{\{[^{}]*\}\}|%[sd]")
_VALUE_EDGES: Final = "\"'.,;:()[]{}\\"
_SCHEME_WORDS: Final = frozenset({"bearer", "basic", "token", "digest", "bot", "apikey"})


def _redact_secret_values(text: str) -> str:
    parts: list[str] = []
    done = 0
    for start, end in _secret_values(text):
        parts += (text[done:start], REDACTED)
        done = end
    return "".join(parts) + text[done:] if parts else text


def _redact_xml_secret(match: re.Match[str]) -> str:
    if not _is_xml_secret(match):
        return match.group()
    return match.group()[: match.start(2) - match.start()] + REDACTED + "</"


def _is_xml_secret(match: re.Match[str]) -> bool:
    return is_secret_name(match.group(1).rpartition(":")[2]) and _is_credential_start(match.group(2))


def _redact_scheme_credential(match: re.Match[str]) -> str:
    return match.group(1) + REDACTED if _looks_random(match.group(2)) else match.group()


def _redact_file_path(match: re.Match[str]) -> str:
    return _PATH_MARK if _is_file_path(match) else match.group()


def _is_file_path(match: re.Match[str]) -> bool:
    """Whether a Unix-looking path is a place on a disk rather than an API route."""
    path = match.group()
    if _SOURCE_FILE.search(path):
        return True
    if _ROUTE_START.match(path):
        return False
    return _HTTP_METHOD_BEFORE.search(match.string, max(0, match.start() - 10), match.start()) is None


def _redact_internal_address(match: re.Match[str]) -> str:
    return _ADDRESS_MARK if _is_internal_address(match) else match.group()


def _is_internal_address(match: re.Match[str]) -> bool:
    try:
        address = ipaddress.ip_address(match.group())
    except ValueError:
        return False
    if not any(address in network for network in _INTERNAL_NETWORKS if network.version == address.version):
        return False
    return _VERSION_BEFORE.search(match.string, max(0, match.start() - 24), match.start()) is None


# The words of a name: `_`/`-` separated, camelCase, or an all-caps run (`PGPASSWORD`).
_NAME_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS: Final = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "pass",
        "pw",
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
        "ref",
        "reference",
        "arn",
        "path",
        "file",
        "hint",
        "policy",
        "rotation",
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


def find_leaks(text: str) -> list[str]:
    """What in text that already reached an agent should not have: tracebacks, secrets, paths, addresses.

    The same list `sanitize_text` redacts, judged the same way: `[REDACTED]`, a placeholder,
    and a secret-named label followed by prose are not leaks.

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
    path = (
        _FILE_URL.search(text)
        or next((match for match in _UNIX_PATH.finditer(text) if _is_file_path(match)), None)
        or _WINDOWS_PATH.search(text)
    )
    if path is not None:
        leaks.append(f"a file path ({path.group(0)})")
    address = next(
        (
            match.group()
            for pattern in (_IPV4, _IPV6)
            for match in pattern.finditer(text)
            if _is_internal_address(match)
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
        or any(_looks_random(match.group(2)) for match in _SCHEME_CREDENTIAL.finditer(text))
        or any(True for _ in _secret_values(text))
        or ("</" in text and any(_is_xml_secret(match) for match in _XML_ELEMENT.finditer(text)))
    )


def _looks_random(word: str) -> bool:
    """Whether a word after `Bearer`/`Basic` is a credential: letters with digits, or mixed case
    no word has (`dXNlcjpwYXNz`); not `subscription` or `instruments`."""
    if len(word) < 8:
        return False
    if any(char.isdigit() for char in word) and any(char.isalpha() for char in word):
        return True
    upper = sum(char.isupper() for char in word)
    lower = sum(char.islower() for char in word)
    return len(word) >= 12 and upper >= 3 and lower >= 3 and upper * 5 >= len(word)
