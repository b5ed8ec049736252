"""What an exception wraps, walked with a bound: a hand-made `__cause__` cycle must not hang an error path.

The SDKs wrap what a tool raised (`ToolError` from the original), fastmcp's proxy wraps an
upstream's `MCPError`, a validator raises `ValueError` while handling a lost connection: each
reader of a failure walks such a chain, and each walks it here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

__all__ = ["MAX_LINKS", "cause_or_context", "causes", "innermost"]

MAX_LINKS: Final = 16
"""The most links walked: real chains are two or three long."""


def cause_or_context(exc: BaseException) -> BaseException | None:
    """The exception behind `exc`: the one it was raised from, else the one being handled."""
    return exc.__cause__ or exc.__context__


def causes(
    exc: BaseException | None, *, behind: Callable[[BaseException], BaseException | None] = cause_or_context
) -> Iterator[BaseException]:
    """`exc` and the exceptions behind it, outermost first, at most `MAX_LINKS` of them.

    Args:
        exc: Where to start; `None` yields nothing.
        behind: The next link of the chain, `None` where it ends.
    """
    current = exc
    for _ in range(MAX_LINKS):
        if current is None:
            return
        yield current
        current = behind(current)


def innermost(exc: BaseException, *, behind: Callable[[BaseException], BaseException | None]) -> BaseException:
    """The last link of the chain from `exc` (`exc` itself when nothing is behind it)."""
    last = exc
    for last in causes(exc, behind=behind):  # noqa: B007  # the loop's last value is the answer
        pass
    return last
