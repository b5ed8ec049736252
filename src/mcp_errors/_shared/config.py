"""Process-wide settings read at run time: today only testing mode (after stamina's).

Testing mode makes the recovery policy skip its backoff waits; skipped waits still count
towards the deadline and still appear in the report, so behaviour is the same, only
faster. The public switches are `mcp_errors.testing.set_testing` and `is_testing`.
"""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Final

__all__ = ["is_testing", "set_testing"]


class _Config:
    __slots__ = ("lock", "testing")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.testing = False


_CONFIG: Final = _Config()


def is_testing() -> bool:
    """Whether testing mode is on: the recovery policy skips its backoff waits."""
    return _CONFIG.testing


def set_testing(enabled: bool = True) -> RestoreTesting:
    """Turn testing mode on or off; as a context manager, restore the previous mode on exit.

    Args:
        enabled: Whether backoff waits are skipped.

    Returns:
        A context manager that restores the mode that was in force before this call.

    Example:
        ```python
        from mcp_errors.testing import is_testing, set_testing

        with set_testing():
            assert is_testing()  # call_tool_with_recovery does not sleep here
        set_testing(True)  # or for the whole test session
        set_testing(False)
        assert not is_testing()
        ```
    """
    with _CONFIG.lock:
        previous, _CONFIG.testing = _CONFIG.testing, enabled
    return RestoreTesting(previous)


class RestoreTesting:
    """What `set_testing` returns: used as a context manager, it restores the previous mode."""

    __slots__ = ("_previous",)

    def __init__(self, previous: bool) -> None:
        self._previous = previous

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with _CONFIG.lock:
            _CONFIG.testing = self._previous
