"""Make text safe to cross to the agent: no secrets, paths or tracebacks, bounded, encodable.

What is redacted is one list, used both to redact (`sanitize_text`) and to judge text that
already crossed (`find_leaks`, the checker's leak rule); docs/wire-format.md documents it:

- stack traces and `File "...", line N` frames;
- secrets, as `_shared/secrets.py` finds them (private keys, token shapes, URL passwords,
  `Bearer`/`Basic` credentials, the values of secret-named keys);
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
characters starts, so hostile text cannot make it quadratic.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcp_errors._shared.secrets import REDACTED, has_secret, is_secret_name, redact_secrets

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
    r"""The places a server announces as its own in the answer of a tool that lists them
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
    text = redact_secrets(text)
    text = _FILE_URL.sub(_PATH_MARK, text)
    text = _UNIX_PATH.sub(_redact_file_path, text)
    # Cheap test first: most texts have no Windows path.
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
