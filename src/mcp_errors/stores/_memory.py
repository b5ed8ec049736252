"""The in-memory store: one process, bounded in keys, bytes and age."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_errors.stores._protocol import (
    Abandoned,
    Claim,
    Finished,
    IdempotencyStore,
    InProgress,
    Mismatch,
    Won,
    new_token,
)

__all__ = ["MemoryStore"]

_ENTRY_OVERHEAD = 200
"""Bytes counted for an entry besides its key and answer (the objects that hold them)."""


@dataclass(slots=True)
class _Entry:
    fingerprint: str
    expires_at: float
    token: str
    lease_until: float
    result: bytes | None = None

    def size(self, key: str) -> int:
        return _ENTRY_OVERHEAD + len(key) + len(self.fingerprint) + len(self.result or b"")


class MemoryStore(IdempotencyStore):
    """Keys in this process's memory: for tests and single-process servers.

    Keys are claimed atomically within the process (every operation is one step under a
    lock), so concurrent duplicates in one server are safe; a restart forgets every key
    and other replicas see none of them: use `SQLiteStore`, `PostgresStore` or
    `RedisStore` there.

    Bounded: at most `max_entries` keys and `max_bytes` of keys and answers; past either,
    the oldest *finished* keys are dropped first (a call still running is never dropped).

    Args:
        max_entries: Keys kept at most.
        max_bytes: Bytes of keys and answers kept at most.
        clock: Seconds from a monotonic clock (tests pass a fake one).
        **options: `ttl_seconds`, `lease_seconds`, `wait_seconds`, `grace_seconds`,
            `max_result_bytes`, `timeout_seconds` (see `IdempotencyStore`).

    Example:
        ```python
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import install
        from mcp_errors.stores import MemoryStore

        server = install(MCPServer("payments"), idempotency=MemoryStore(ttl_seconds=3600))
        ```
    """

    def __init__(
        self,
        *,
        max_entries: int = 10_000,
        max_bytes: int = 64 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        if max_entries < 1 or max_bytes < self.max_result_bytes:
            raise ValueError("max_entries must be positive and max_bytes at least max_result_bytes")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        # Calls from several threads (several event loops) must not interleave.
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def stored_bytes(self) -> int:
        """Bytes of keys and answers held now (what `max_bytes` bounds)."""
        return self._bytes

    async def claim(self, key: str, fingerprint: str, *, lease_seconds: float, token: str | None = None) -> Claim:
        with self._lock:
            now = self._clock()
            self._drop_expired(now)
            entry = self._entries.get(key)
            if entry is not None and entry.expires_at <= now:  # behind a longer-lived key
                del self._entries[key]
                self._bytes -= entry.size(key)
                entry = None
            if entry is None:
                token = token or new_token()
                entry = _Entry(fingerprint, now + max(self.ttl_seconds, lease_seconds), token, now + lease_seconds)
                self._entries[key] = entry
                self._bytes += entry.size(key)
                self._shrink()
                return Won(token)
            if entry.fingerprint != fingerprint:
                return Mismatch()
            if entry.result is not None:
                return Finished(entry.result)
            if entry.lease_until > now:
                return InProgress(entry.lease_until - now)
            return Abandoned()

    async def finish(self, key: str, token: str, result: bytes) -> bool:
        with self._lock:
            entry = self._running(key, token)
            if entry is None:
                return False
            self._bytes += len(result)
            entry.result = result
            entry.expires_at = min(entry.expires_at, self._clock() + self.ttl_seconds)
            self._shrink()
            return True

    async def release(self, key: str, token: str) -> bool:
        with self._lock:
            entry = self._running(key, token)
            if entry is None:
                return False
            del self._entries[key]
            self._bytes -= entry.size(key)
            return True

    async def renew(self, key: str, token: str, *, lease_seconds: float) -> bool:
        with self._lock:
            entry = self._running(key, token)
            if entry is None:
                return False
            entry.lease_until = self._clock() + lease_seconds
            entry.expires_at = max(entry.expires_at, entry.lease_until)
            return True

    def _running(self, key: str, token: str) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is None or entry.token != token or entry.result is not None:
            return None
        return entry

    def _drop_expired(self, now: float) -> None:
        # Keys live ttl_seconds from their claim, so insertion order is expiry order but for
        # the few whose running call outlived it (`renew`): `claim` checks its own key too.
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if entry.expires_at > now:
                return
            del self._entries[key]
            self._bytes -= entry.size(key)

    def _shrink(self) -> None:
        # Oldest finished keys first; running ones (few: one per call in flight) are skipped.
        count, size = len(self._entries), self._bytes
        victims: list[str] = []
        for key, entry in self._entries.items():
            if count <= self.max_entries and size <= self.max_bytes:
                break
            if entry.result is not None:
                victims.append(key)
                count -= 1
                size -= entry.size(key)
        for key in victims:
            del self._entries[key]
        self._bytes = size
