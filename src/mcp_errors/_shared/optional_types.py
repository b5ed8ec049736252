"""Recognise optional libraries' classes by name, so that none of them must be installed."""

from __future__ import annotations

from typing import Final

__all__ = ["is_fastmcp", "is_httpx"]

_KNOWN: Final[dict[tuple[type, str, tuple[str, ...]], bool]] = {}
_KNOWN_MAX: Final = 512


def _is_named(obj: object, package: str, names: tuple[str, ...]) -> bool:
    # Answered once per class: walking the MRO reads each `__name__`, a new string on every
    # read for a builtin class, and this runs for every failure classified
    # (docs/performance.md). Classes made at run time could grow the cache: it is bounded.
    key = (type(obj), package, names)
    known = _KNOWN.get(key)
    if known is None:
        known = any(klass.__name__ in names and klass.__module__.startswith(package) for klass in key[0].__mro__)
        if len(_KNOWN) >= _KNOWN_MAX:
            _KNOWN.clear()
        _KNOWN[key] = known
    return known


def is_httpx(exc: BaseException, *names: str) -> bool:
    """Whether `exc` is (a subclass of) one of httpx's exception classes named `names`."""
    # `httpx` or `httpx2` (which mcp 2.3 ships): both start with "httpx".
    return _is_named(exc, "httpx", names)


def is_fastmcp(obj: object, *names: str) -> bool:
    """Whether `obj` is an instance of one of fastmcp's classes named `names`."""
    return _is_named(obj, "fastmcp.", names)
