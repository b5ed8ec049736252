"""The claim protocol every idempotency store speaks, and what a claim can answer.

A keyed call first *claims* its key. Exactly one claimer of a free key wins and runs the
tool; every other claimer learns, in the same atomic step, what the key holds: the first
call's finished answer, a call still running (until when), a key reused with other
arguments, or a call whose runner died before it finished. The winner then *finishes* the
key with the answer, *releases* it (only when nothing was executed), and *renews* its lease
while a slow tool runs. No store ever reads a key and then writes it in a second step: a
check-then-act would let two replicas both win.
"""

from __future__ import annotations

import abc
import errno
import math
import os
import re
from dataclasses import dataclass
from types import TracebackType
from typing import Final, Self
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "Abandoned",
    "Claim",
    "Finished",
    "IdempotencyStore",
    "InProgress",
    "Mismatch",
    "Won",
    "new_token",
    "unreachable",
    "without_password",
]


@dataclass(frozen=True, slots=True)
class Won:
    """The key was free: this claimer runs the call, and holds the key with `token`."""

    token: str


@dataclass(frozen=True, slots=True)
class Finished:
    """The first call with this key finished: `result` is its answer, as it was stored."""

    result: bytes


@dataclass(frozen=True, slots=True)
class InProgress:
    """The first call with this key is running; its lease ends in `seconds_left` unless renewed."""

    seconds_left: float


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The key is held for a call with other arguments."""


@dataclass(frozen=True, slots=True)
class Abandoned:
    """The first call's lease expired before it finished: its runner died, its outcome is unknown.

    The call is never run again under this key (it may have been applied).
    """


Claim = Won | Finished | InProgress | Mismatch | Abandoned
"""What `IdempotencyStore.claim` answers."""

_DEFAULT_TTL: Final = 24 * 3600.0
_DEFAULT_LEASE: Final = 30.0
_DEFAULT_WAIT: Final = 10.0
_DEFAULT_GRACE: Final = 60.0
_DEFAULT_MAX_RESULT_BYTES: Final = 256 * 1024
_DEFAULT_TIMEOUT: Final = 5.0
_UNWRITABLE_ERRNO: Final = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})


def new_token() -> str:
    """A fresh claim token: unguessable, so only the winner can finish, release or renew."""
    return os.urandom(16).hex()


class IdempotencyStore(abc.ABC):
    """Where keyed calls claim their key and leave their first answer.

    Subclass it for another database: implement `claim`, `finish`, `release` and `renew`
    atomically (each in one statement, transaction or script), and `aclose`. The backends
    shipped in `mcp_errors.stores` pass the same conformance suite.

    Args:
        ttl_seconds: How long a key is kept from its claim; after that it is free again
            (a resend that late runs the call again). A key whose call is still running is
            kept while its lease is renewed, however long that is, and for at most
            `ttl_seconds` after its answer.
        lease_seconds: How long a claim holds without renewal. The running call renews it
            every third of this; when its server dies, duplicates see "in progress" for
            at most this long, then "outcome unknown".
        wait_seconds: How long a duplicate that arrives while the first call runs waits for
            its answer before it gets a transient `IN_PROGRESS` error.
        grace_seconds: How long a claimed call keeps running after its caller stopped
            waiting (a client timeout or cancel, a server shutdown), so that its answer is
            kept for the resend; then it is cancelled and its key answers "outcome unknown".
        max_result_bytes: The largest answer kept for replay. A larger one is answered to
            its first caller as usual; a resend gets an error that says it ran and that its
            answer was not kept (the call is not run again).
        timeout_seconds: How long one store operation may take, waiting for a lock or a
            connection included. A claim that takes longer is answered
            `IDEMPOTENCY_STORE_UNAVAILABLE` (not executed: resend with the same key). A store
            that can enforce this on its side does (PostgreSQL with `statement_timeout`,
            SQLite with its busy wait and a deadline its worker thread checks), so that a
            claim given up is never granted later to nobody; replay stops waiting for any
            store at twice this.

    Raises:
        ValueError: If a duration is not positive (`grace_seconds` may be 0) or
            `max_result_bytes < 1024`.
    """

    def __init__(
        self,
        *,
        ttl_seconds: float = _DEFAULT_TTL,
        lease_seconds: float = _DEFAULT_LEASE,
        wait_seconds: float = _DEFAULT_WAIT,
        grace_seconds: float = _DEFAULT_GRACE,
        max_result_bytes: int = _DEFAULT_MAX_RESULT_BYTES,
        timeout_seconds: float = _DEFAULT_TIMEOUT,
    ) -> None:
        for name, value in (
            ("ttl_seconds", ttl_seconds),
            ("lease_seconds", lease_seconds),
            ("timeout_seconds", timeout_seconds),
        ):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
        for name, value in (("wait_seconds", wait_seconds), ("grace_seconds", grace_seconds)):
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must not be negative, not {value!r}")
        if max_result_bytes < 1024:
            raise ValueError(f"max_result_bytes must be at least 1024, not {max_result_bytes!r}")
        self.ttl_seconds = ttl_seconds
        self.lease_seconds = lease_seconds
        self.wait_seconds = wait_seconds
        self.grace_seconds = grace_seconds
        self.max_result_bytes = max_result_bytes
        self.timeout_seconds = timeout_seconds

    @abc.abstractmethod
    async def claim(self, key: str, fingerprint: str, *, lease_seconds: float, token: str | None = None) -> Claim:
        """Claim `key` for a call whose arguments hash to `fingerprint`, atomically.

        Args:
            key: The scoped key (tool, caller and idempotency key, hashed by the replay).
            fingerprint: Hash of the call's arguments.
            lease_seconds: How long the claim holds without `renew`.
            token: The token to hold the key with when it is won (one of `new_token()`); a
                new one when omitted. A caller that passes it can still `release` a claim the
                store granted after the caller stopped waiting for its answer. (A store written
                before this argument, without it, still works: such a claim then waits for its
                lease to end.)

        Returns:
            `Won` for a free or expired key; otherwise what the key holds: `Mismatch` for
            another fingerprint, else `Finished`, `InProgress` or `Abandoned`.
        """

    @abc.abstractmethod
    async def finish(self, key: str, token: str, result: bytes) -> bool:
        """Store the answer of the call that holds `key` with `token`.

        Returns:
            Whether it was stored (`False`: the token no longer holds the key).
        """

    @abc.abstractmethod
    async def release(self, key: str, token: str) -> bool:
        """Free `key`, held with `token`, for a call that executed nothing.

        Returns:
            Whether the key was freed.
        """

    @abc.abstractmethod
    async def renew(self, key: str, token: str, *, lease_seconds: float) -> bool:
        """Extend the lease of the running call that holds `key` with `token`.

        Returns:
            Whether the lease was extended (`False`: the token no longer holds the key).
        """

    async def ping(self) -> None:  # noqa: B027  # optional: a store in this process has nothing to reach
        """Open the store once and make one round trip, to learn at start-up what the first keyed
        call would otherwise learn: a wrong host or port, a wrong password, a missing folder.

        The stores shipped here each reach their database; this default does nothing, for a
        store with nothing to reach. Call `aclose` after it when the next call runs in another
        event loop.

        Raises:
            ConnectionError: One line naming the store (its URL without a password) and why it
                cannot be opened.
        """

    def is_unwritable(self, error: BaseException) -> bool:
        """Whether `error`, raised by this store, says it cannot be written at all (rather than for a moment).

        A store that cannot be written (a read-only folder or database, a full disk, no
        permission) is a configuration failure: replay answers its calls
        `IDEMPOTENCY_STORE_UNWRITABLE` (escalate) instead of "resend in a moment". Replay asks
        about the error and each exception it wraps. This default knows the operating system's
        errors (a read-only file system, no permission, no space); a store whose database
        says so in its own words adds them.

        Args:
            error: An exception a store operation raised, or one it wraps.

        Returns:
            True when no resend can succeed until someone fixes the store.
        """
        return isinstance(error, OSError) and error.errno in _UNWRITABLE_ERRNO

    async def aclose(self) -> None:  # noqa: B027  # optional: stores without connections need nothing
        """Close connections (the store reconnects on next use)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


_PASSWORD_FIELD: Final = re.compile(r"(?i)\b(password\s*=\s*)('[^']*'|[^\s&]*)")
"""A password given as a field: `password=...` in a key=value connection string or a URL's query."""
_HIDDEN: Final = "***"


def without_password(url: str) -> str:
    """`url` as it may be printed: the password of its user part and any `password=` field
    replaced by `***` (`postgresql://app:***@db/keys`).

    Example:
        ```python
        from mcp_errors.stores._protocol import without_password

        assert without_password("redis://:hunter2@cache:6379/0") == "redis://:***@cache:6379/0"
        ```
    """
    shown = _PASSWORD_FIELD.sub(lambda match: match.group(1) + _HIDDEN, url)
    try:
        parts = urlsplit(shown)
    except ValueError:
        return shown
    if parts.password is None:
        return shown
    user, _, _ = parts.netloc.rpartition("@")[0].partition(":")
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:{_HIDDEN}@{host}"))


def unreachable(url: str, exc: BaseException) -> ConnectionError:
    """The one line a store's `ping` raises: the store's URL without its password, and why."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    password = _password_of(url)
    if password:
        reason = reason.replace(password, _HIDDEN)
    return ConnectionError(f"cannot open the idempotency store {without_password(url)}: {reason}")


def _password_of(url: str) -> str | None:
    try:
        return urlsplit(url).password
    except ValueError:
        return None
