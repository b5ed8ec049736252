"""Paths in an error's text, judged by their role: information for the agent, or a leak.

A path is information when the caller knows it or needs it to fix its call:

- the caller's own path arguments, also as the server resolved a relative one and as pydantic
  quotes a long one back, shortened in the middle;
- the server's allowed places: roots a tool such as `list_allowed_directories` listed, `roots`
  from `--args`, places the error calls allowed ("outside the allowed repository '/srv/repo'"),
  and places it names as where to look ("Note 'x' does not exist under /srv/notes. Call
  list_folder ...");
- URL routes (`GET /api/v2/dags`, `/v1/orders/ord-123`): addresses of an API, not files.

Any other path is what the caller could not know: source files, installed packages
(`site-packages`, `node_modules`), home folders. Those stay leaks even when an error names
them as a place to look (only an explicit "allowed" gives a home folder its role), and so does
a traceback, wherever its frames are.

`mask_known_paths` replaces the paths that are information with `[path]`, so that the leak
finder (`_sanitize.find_leaks`) sees only the others. Every pattern here is linear in the
text, and the text is the judge's bounded start of a server's answer.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from typing import Any, Final

__all__ = ["argument_paths", "mask_known_paths"]

_MASK: Final = "[path]"
# A path-like token: `/srv/x`, `C:\\Users\\x`, `C:/x`; not the rest of a URL (`scheme://host/x`).
# No nested repetition: linear in the text.
_PATH_TOKEN: Final = re.compile(r"(?<![\w.:/])(?:[A-Za-z]:)?[/\\][^\s'\"`,;()<>\[\]{}]*")
# "outside the allowed repository '/srv/repo'", "allowed directories: /srv/data".
_ALLOWED_PLACE: Final = re.compile(
    r"\ballowed\s+(?:directories|directory|dirs|roots?|repositor(?:y|ies)|paths?|folders?|locations?)\b",
    re.IGNORECASE,
)
# A sentence that sends the agent to a place: something it named is not there, or it is told
# where to look ("does not exist under", "not found in", "Call list_folder on").
_WHERE_TO_LOOK: Final = re.compile(
    r"\b(?:does not exist|doesn't exist|do not exist|not found|no such|not present|missing|outside|not (?:in|inside|"
    r"within|under)|available|exists? (?:in|under)|look|search|list|browse|call|use|try)\b",
    re.IGNORECASE,
)
# The word just before a path that names it as a place.
_PLACE_WORD: Final = re.compile(r"\b(?:under|in|inside|within|below|beneath|at|from|on)\s+(?:the\s+)?(?:\w+\s+){0,2}$")
_PLACE_WORD_CHARS: Final = 40
# An API's address: an HTTP method or an API word just before it ...
_ROUTE_CUE: Final = re.compile(
    r"\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|endpoint|route|url|api)\b\s*[:'\"`]?\s*$", re.IGNORECASE
)
# ... or a first segment only APIs use: `/api/...`, `/v2/...`, `/graphql`.
_ROUTE_HEAD: Final = re.compile(r"^/(?:api|v\d+(?:\.\d+)?|graphql|rest|rpc|oauth2?|webhooks?)(?:/|$)", re.IGNORECASE)
# What no caller could know, whatever the sentence around it says.
_UNKNOWABLE: Final = re.compile(
    r"(?:^|/)(?:site-packages|dist-packages|node_modules|\.venv|venv|__pycache__|\.cargo|\.npm|\.cache)(?:/|$)"
    r"|^/(?:home|Users|root)(?:/|$)|^[A-Za-z]:/Users/"
    r"|\.(?:py|pyc|js|mjs|cjs|ts|go|rs|java|rb|php|cs|c|cc|cpp|h|so|dll|jar)$",
    re.IGNORECASE,
)
_SENTENCE_CHARS: Final = 300
_SENTENCE_END: Final = re.compile(r"\n|\.\s")


def mask_known_paths(text: str, known: Collection[str]) -> str:
    """`text` with every path that is information for the caller replaced by `[path]`.

    Args:
        text: One text of an error result (already cut to a bounded length).
        known: Paths the caller knows: its own arguments (`argument_paths`) and the server's
            roots (from a roots tool or `--args`); a path under an absolute one is known too.

    Returns:
        The text, with what is left for the leak finder: paths the caller could not know.
    """
    prefixes = [_trimmed(path) for path in known if _is_absolute(path)]
    relatives = [_trimmed(path) for path in known if path and not _is_absolute(path) and path not in (".", "..")]
    prefixes += _allowed_places(text)
    prefixes += [path for path in _places_to_look(text) if not _is_unknowable(path)]
    prefixes = list(dict.fromkeys(_normal(prefix) for prefix in prefixes if prefix))
    relatives = list(dict.fromkeys(_normal(relative).lstrip("./") for relative in relatives))

    def masked(token: re.Match[str]) -> str:
        path = _trimmed(token.group(0))
        normal = _normal(path)
        if _is_route(text, token.start(), normal) or _is_known(normal, prefixes, relatives):
            return _MASK
        return token.group(0)

    return _PATH_TOKEN.sub(masked, text)


def argument_paths(arguments: Mapping[str, Any]) -> list[str]:
    """The call's own string arguments that may name a path, top level and in lists."""
    found: list[str] = []
    for value in arguments.values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and ("/" in item or "\\" in item or _is_absolute(item)):
                found.append(item)
            elif isinstance(item, str) and 3 <= len(item) <= 255 and " " not in item:
                found.append(item)  # a relative name the server may resolve: `notes.txt`
    return found


def _allowed_places(text: str) -> list[str]:
    """Paths the text calls allowed ("the allowed repository '/srv/repo'"): the server says their role."""
    places: list[str] = []
    for allowed in _ALLOWED_PLACE.finditer(text):
        sentence = _SENTENCE_END.split(text[allowed.end() : allowed.end() + _SENTENCE_CHARS], maxsplit=1)[0]
        places += [_trimmed(token.group(0)) for token in _PATH_TOKEN.finditer(sentence)]
    return places


def _places_to_look(text: str) -> Iterable[str]:
    """Paths a sentence names as a place ("under /srv/notes") while it sends the agent there."""
    start = 0
    for end in [*(match.end() for match in _SENTENCE_END.finditer(text)), len(text)]:
        sentence = text[start:end]
        if _WHERE_TO_LOOK.search(sentence[:_SENTENCE_CHARS]):
            for token in _PATH_TOKEN.finditer(sentence):
                before = sentence[max(token.start() - _PLACE_WORD_CHARS, 0) : token.start()]
                if _PLACE_WORD.search(before.rstrip("'\"`:").rstrip() + " "):
                    yield _trimmed(token.group(0))
        start = end


def _is_route(text: str, start: int, path: str) -> bool:
    if _is_unknowable(path):
        return False
    return bool(_ROUTE_HEAD.match(path)) or bool(_ROUTE_CUE.search(text[max(start - 20, 0) : start]))


def _is_known(path: str, prefixes: Iterable[str], relatives: Iterable[str]) -> bool:
    # pydantic shortens a long value it quotes back: `/tmp/pytes...t_git0/repo`.
    head, shortened, tail = path.partition("...")
    for root in prefixes:
        if path == root or path.startswith(root.rstrip("/") + "/"):
            return True
        if shortened and head and root.startswith(head) and root.endswith(tail):
            return True
    return any(relative and path.endswith("/" + relative) for relative in relatives)


def _is_unknowable(path: str) -> bool:
    return bool(_UNKNOWABLE.search(_normal(path)))


def _normal(path: str) -> str:
    return path.replace("\\", "/")


def _trimmed(path: str) -> str:
    return path.strip().strip("'\"`").rstrip(".:,;")


def _is_absolute(path: str) -> bool:
    return path.startswith(("/", "\\")) or bool(re.match(r"[A-Za-z]:[/\\]", path))
