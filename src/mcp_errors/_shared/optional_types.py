"""Recognise optional libraries' classes by name, so that none of them must be installed."""

from __future__ import annotations

__all__ = ["is_fastmcp", "is_httpx"]


def _is_named(obj: object, package: str, names: tuple[str, ...]) -> bool:
    return any(klass.__name__ in names and klass.__module__.startswith(package) for klass in type(obj).__mro__)


def is_httpx(exc: BaseException, *names: str) -> bool:
    """Whether `exc` is (a subclass of) one of httpx's exception classes named `names`."""
    # `httpx` or `httpx2` (which mcp 2.3 ships): both start with "httpx".
    return _is_named(exc, "httpx", names)


def is_fastmcp(obj: object, *names: str) -> bool:
    """Whether `obj` is an instance of one of fastmcp's classes named `names`."""
    return _is_named(obj, "fastmcp.", names)
