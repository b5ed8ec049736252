"""The SQLite store: keys in a file, shared by every process on the host, kept across restarts."""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import anyio
import anyio.to_thread

from mcp_errors.stores._protocol import (
    Abandoned,
    Claim,
    Finished,
    IdempotencyStore,
    InProgress,
    Mismatch,
    Won,
    new_token,
    unreachable,
)

__all__ = ["SQLiteStore", "check_table_name"]

_T = TypeVar("_T")
_TABLE_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_CLEANUP_BATCH: Final = 500


def check_table_name(table: str) -> str:
    """`table` if it is a plain SQL identifier (it is written into statements, not bound)."""
    if not _TABLE_NAME.fullmatch(table):
        raise ValueError(f"table must be a plain identifier (letters, digits, _), not {table!r}")
    return table


_UNWRITABLE_CODES: Final = frozenset(
    {sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_FULL, sqlite3.SQLITE_PERM}
)


class SQLiteStore(IdempotencyStore):
    """Keys in a SQLite file (WAL mode): survives restarts, shared by processes on one host.

    Each operation is one `BEGIN IMMEDIATE` transaction, which holds SQLite's write lock, so
    exactly one of any number of concurrent claimers (threads or processes) wins a key.
    An operation is first tried in the event loop on a connection that never waits (tens of
    microseconds); when the file is locked it runs in a worker thread instead, which waits
    for the lock up to `busy_timeout` and never past the operation's `timeout_seconds`
    (counted from when it was asked, its turn in the thread's queue included), so a busy
    database never blocks the event loop (only SQLite's own WAL checkpoints, every 1000 pages
    written, do some I/O in it) and a claim the caller was told failed is never granted
    later. Expired keys are deleted in batches, at most once per `cleanup_interval` per
    process.

    Durability: WAL with `synchronous=NORMAL`, SQLite's recommended setting for WAL: a
    committed claim or answer survives a crash of the process; a power loss may lose the
    last transactions (and with them the replay of those keys).

    Args:
        path: The database file (created if missing, in a folder that must exist); `":memory:"` for a
            private in-memory database.
        table: Table name.
        busy_timeout: Seconds a transaction waits at most for another process's write lock
            (and never past `timeout_seconds`).
        cleanup_interval: Seconds between clean-ups of expired keys.
        clock: Wall-clock seconds (shared by the processes on the host; tests pass a fake).
        **options: `ttl_seconds`, `lease_seconds`, `wait_seconds`, `grace_seconds`,
            `max_result_bytes`, `timeout_seconds` (see `IdempotencyStore`).

    Example:
        ```python
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import install
        from mcp_errors.stores import SQLiteStore

        server = install(MCPServer("payments"), idempotency=SQLiteStore("idempotency.sqlite3"))
        ```
    """

    def __init__(
        self,
        path: str | Path,
        *,
        table: str = "mcp_errors_idempotency",
        busy_timeout: float = 10.0,
        cleanup_interval: float = 60.0,
        clock: Callable[[], float] = time.time,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.path = str(path)
        self.table = check_table_name(table)
        self.busy_timeout = busy_timeout
        self.cleanup_interval = cleanup_interval
        self._clock = clock
        self._next_cleanup = 0.0
        # Two connections to the file: one that never waits (tried in the event loop) and one
        # that waits up to `busy_timeout` for another process's lock (in a worker thread).
        self._connections: dict[bool, sqlite3.Connection] = {}
        self._lock = threading.Lock()
        self._limiter = anyio.CapacityLimiter(1)

    async def claim(self, key: str, fingerprint: str, *, lease_seconds: float, token: str | None = None) -> Claim:
        return await self._run(self._claim, key, fingerprint, lease_seconds, token)

    async def finish(self, key: str, token: str, result: bytes) -> bool:
        sql = (
            f"UPDATE {self.table} SET result = ?1, lease_until = NULL, expires_at = MIN(expires_at, ?2)"
            " WHERE key = ?3 AND token = ?4 AND result IS NULL"
        )
        return await self._run(_change, sql, (result, self._clock() + self.ttl_seconds, key, token))

    async def release(self, key: str, token: str) -> bool:
        sql = f"DELETE FROM {self.table} WHERE key = ? AND token = ? AND result IS NULL"
        return await self._run(_change, sql, (key, token))

    async def renew(self, key: str, token: str, *, lease_seconds: float) -> bool:
        sql = (
            f"UPDATE {self.table} SET lease_until = ?1, expires_at = MAX(expires_at, ?1)"
            " WHERE key = ?2 AND token = ?3 AND result IS NULL"
        )
        return await self._run(_change, sql, (self._clock() + lease_seconds, key, token))

    async def ping(self) -> None:
        def select_one(conn: sqlite3.Connection, deadline: float | None) -> None:
            conn.execute("SELECT 1").fetchone()

        try:
            await self._run(select_one)
        except (sqlite3.Error, OSError, TimeoutError) as exc:
            raise unreachable(f"sqlite:///{self.path}", exc) from None

    def is_unwritable(self, error: BaseException) -> bool:
        """SQLite's read-only, cannot-open, full and permission codes, and the system's errors."""
        if isinstance(error, sqlite3.Error):
            code = getattr(error, "sqlite_errorcode", None)
            return code is not None and code & 0xFF in _UNWRITABLE_CODES
        return super().is_unwritable(error)

    async def aclose(self) -> None:
        def close() -> None:
            with self._lock:
                for conn in self._connections.values():
                    conn.close()
                self._connections.clear()

        await anyio.to_thread.run_sync(close, limiter=self._limiter)

    async def _run(self, operation: Callable[..., _T], *args: Any) -> _T:
        # An operation takes tens of microseconds when nothing holds the database, less than
        # a hop to a worker thread: it is tried right here on the connection that never
        # waits. When the file is locked (by this process's worker or another process),
        # nothing was done and it goes to the worker thread, which may wait. The first
        # operation sets the file up, which may wait for another process: a worker's job too.
        deadline = time.monotonic() + self.timeout_seconds
        if self._connections and self._lock.acquire(blocking=False):
            try:
                return operation(self._connection(wait=False), None, *args)
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    raise
            finally:
                self._lock.release()
        return await anyio.to_thread.run_sync(self._run_waiting, deadline, operation, *args, limiter=self._limiter)

    def _run_waiting(self, deadline: float, operation: Callable[..., _T], *args: Any) -> _T:
        # A worker thread cannot be cancelled: it bounds itself, so that it answers before
        # the caller stops waiting (at twice `timeout_seconds`) and never writes after.
        with self._lock:
            wait = _left(deadline, self.timeout_seconds)
            conn = self._connection(wait=True, busy_seconds=wait)
            conn.execute(f"PRAGMA busy_timeout = {max(1, int(min(wait, self.busy_timeout) * 1000))}")
            return operation(conn, deadline, *args)

    def _connection(self, *, wait: bool, busy_seconds: float | None = None) -> sqlite3.Connection:
        wait = wait or self.path == ":memory:"  # one private database: one connection
        conn = self._connections.get(wait)
        if conn is None:
            if self.path != ":memory:" and not Path(self.path).parent.is_dir():
                # Never created here: a typo in a URL must not leave folders behind (as root, anywhere).
                raise sqlite3.OperationalError(f"the folder {Path(self.path).parent} does not exist")
            busy = min(self.busy_timeout, busy_seconds if busy_seconds is not None else self.busy_timeout)
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=busy if wait else 0
            )
            if not self._connections:  # the first connection sets the file up, waiting if it must
                conn.execute(f"PRAGMA busy_timeout = {int(busy * 1000)}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.table} ("
                    " key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, token TEXT NOT NULL,"
                    " lease_until REAL, expires_at REAL NOT NULL, result BLOB) WITHOUT ROWID"
                )
                conn.execute(f"CREATE INDEX IF NOT EXISTS {self.table}_expires ON {self.table} (expires_at)")
                conn.execute(f"PRAGMA busy_timeout = {int(busy * 1000) if wait else 0}")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._connections[wait] = conn
        return conn

    def _claim(
        self,
        conn: sqlite3.Connection,
        deadline: float | None,
        key: str,
        fingerprint: str,
        lease_seconds: float,
        token: str | None = None,
    ) -> Claim:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if deadline is not None:
                # The lock came late (a slow disk, a long busy wait): a claim its caller may
                # no longer wait for must not be granted.
                _left(deadline, self.timeout_seconds)
            now = self._clock()
            row = conn.execute(
                f"SELECT fingerprint, lease_until, expires_at, result FROM {self.table} WHERE key = ?", (key,)
            ).fetchone()
            claim: Claim
            if row is None or row[2] <= now:
                token = token or new_token()
                conn.execute(
                    f"INSERT OR REPLACE INTO {self.table} VALUES (?, ?, ?, ?, ?, NULL)",
                    (key, fingerprint, token, now + lease_seconds, now + max(self.ttl_seconds, lease_seconds)),
                )
                claim = Won(token)
                if now >= self._next_cleanup:
                    self._next_cleanup = now + self.cleanup_interval
                    conn.execute(
                        f"DELETE FROM {self.table} WHERE key IN"
                        f" (SELECT key FROM {self.table} WHERE expires_at <= ? LIMIT {_CLEANUP_BATCH})",
                        (now,),
                    )
            elif row[0] != fingerprint:
                claim = Mismatch()
            elif row[3] is not None:
                claim = Finished(bytes(row[3]))
            elif row[1] > now:
                claim = InProgress(row[1] - now)
            else:
                claim = Abandoned()
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return claim


def _left(deadline: float, timeout: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError(f"the idempotency store's database stayed locked for {timeout:g} s")
    return left


def _change(conn: sqlite3.Connection, deadline: float | None, sql: str, params: tuple[Any, ...]) -> bool:
    # One statement in autocommit mode: its own atomic transaction.
    return conn.execute(sql, params).rowcount == 1
