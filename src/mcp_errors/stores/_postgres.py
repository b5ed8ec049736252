"""The PostgreSQL store (psycopg 3): keys shared by every replica, on the database's clock.

Why psycopg 3 rather than asyncpg: it is typed (the house runs mypy --strict), it is libpq,
so the store takes any URL or connection string a deployment already has (service files,
`PGPASSWORD`, `sslmode`, Unix sockets), and it works behind PgBouncer in transaction mode;
asyncpg's own protocol is faster per statement, but a claim is one short statement whose
cost is the network round trip (see docs/performance.md).
"""

from __future__ import annotations

import logging
import zlib
from typing import TYPE_CHECKING, Any, Final

import anyio

from mcp_errors._shared.sanitize import redact_url
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
from mcp_errors.stores._sqlite import check_table_name

if TYPE_CHECKING:
    from psycopg import AsyncClientCursor, AsyncConnection
    from psycopg_pool import AsyncConnectionPool

__all__ = ["PostgresStore"]

logger = logging.getLogger("mcp_errors")

_CLEANUP_BATCH: Final = 1000

# disk full, insufficient privilege, a read-only transaction (a standby)
_UNWRITABLE_SQLSTATE: Final = frozenset({"53100", "42501", "25006"})


class PostgresStore(IdempotencyStore):
    """Keys in a PostgreSQL table, for replicas on any number of hosts.

    A claim is one `INSERT ... ON CONFLICT DO UPDATE ... WHERE expired RETURNING` statement:
    the row lock it takes makes exactly one concurrent claimer win, and a key whose time to
    live ended is taken over in the same statement. Leases and expiry use the database's
    clock, so replicas whose clocks drift still agree. Every statement carries its own
    `statement_timeout` (`SET LOCAL`, in the same round trip), the time left of
    `timeout_seconds`: a claim that waits on a lock another session holds is cancelled by the
    database itself, so that a claim the caller was told failed never commits later (a
    cancelled client alone leaves the statement running on the server). The table is created on first use
    (under an advisory lock, so replicas starting together do not race); expired keys are
    deleted in batches, at most once per `cleanup_interval` per process. Needs the
    `postgres` extra (or `pip install "psycopg[binary,pool]>=3.2"`).

    Args:
        url: A libpq URL or connection string, e.g. `postgresql://app@db/app`.
        table: Table name.
        pool_min_size: Connections kept open.
        pool_max_size: Connections at most (concurrent store operations of this process).
        cleanup_interval: Seconds between clean-ups of expired keys.
        **options: `ttl_seconds`, `lease_seconds`, `wait_seconds`, `grace_seconds`,
            `max_result_bytes`, `timeout_seconds` (see `IdempotencyStore`).

    Raises:
        ImportError: If psycopg is not installed.

    Example:
        ```python no-run
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import install
        from mcp_errors.stores import PostgresStore

        server = install(MCPServer("payments"), idempotency=PostgresStore("postgresql://app@db/app"))
        ```
    """

    def __init__(
        self,
        url: str,
        *,
        table: str = "mcp_errors_idempotency",
        pool_min_size: int = 1,
        pool_max_size: int = 10,
        cleanup_interval: float = 60.0,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        try:
            import psycopg_pool  # noqa: F401  # fail at construction, not at the first call
        except ImportError as exc:
            raise ImportError(
                "PostgresStore needs psycopg: pip install 'psycopg[binary,pool]>=3.2' (the postgres extra)"
            ) from exc
        _check_conninfo(url)
        self.url = url
        self.table = check_table_name(table)
        self.pool_min_size = pool_min_size
        self.pool_max_size = pool_max_size
        self.cleanup_interval = cleanup_interval
        self._pool: AsyncConnectionPool | None = None
        self._opening = anyio.Lock()
        self._next_cleanup = 0.0
        t = self.table
        self._claim_sql = (
            f"INSERT INTO {t} AS s (key, fingerprint, token, lease_until, expires_at)"
            " VALUES (%(key)s, %(fp)s, %(token)s,"
            " clock_timestamp() + make_interval(secs => %(lease)s),"
            " clock_timestamp() + make_interval(secs => %(ttl)s))"
            " ON CONFLICT (key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, token = EXCLUDED.token,"
            " lease_until = EXCLUDED.lease_until, expires_at = EXCLUDED.expires_at, result = NULL"
            " WHERE s.expires_at <= clock_timestamp()"
            " RETURNING token"
        )
        self._read_sql = (
            f"SELECT fingerprint, result, EXTRACT(EPOCH FROM lease_until - clock_timestamp())::float8"
            f" FROM {t} WHERE key = %(key)s AND expires_at > clock_timestamp()"
        )

    async def claim(self, key: str, fingerprint: str, *, lease_seconds: float, token: str | None = None) -> Claim:
        deadline = anyio.current_time() + self.timeout_seconds
        pool = await self._open()
        params = {"key": key, "fp": fingerprint, "lease": lease_seconds, "ttl": max(self.ttl_seconds, lease_seconds)}
        async with pool.connection(timeout=self._left(deadline)) as conn:
            while True:
                token = token or new_token()
                cursor = await self._execute(conn, deadline, self._claim_sql, {**params, "token": token})
                if await cursor.fetchone() is not None:
                    await self._clean_up_now_and_then(conn, deadline)
                    return Won(token)
                # Someone holds the key: read what it holds. It may have been released or
                # expired in between, then the claim is simply tried again.
                row = await (await self._execute(conn, deadline, self._read_sql, {"key": key})).fetchone()
                if row is None:
                    continue
                stored_fingerprint, result, seconds_left = row
                if stored_fingerprint != fingerprint:
                    return Mismatch()
                if result is not None:
                    return Finished(bytes(result))
                if seconds_left > 0:
                    return InProgress(seconds_left)
                return Abandoned()

    async def finish(self, key: str, token: str, result: bytes) -> bool:
        sql = (
            f"UPDATE {self.table} SET result = %(result)s, lease_until = NULL,"
            " expires_at = LEAST(expires_at, clock_timestamp() + make_interval(secs => %(ttl)s))"
            " WHERE key = %(key)s AND token = %(token)s AND result IS NULL"
        )
        return await self._change(sql, {"result": result, "ttl": self.ttl_seconds, "key": key, "token": token})

    async def release(self, key: str, token: str) -> bool:
        sql = f"DELETE FROM {self.table} WHERE key = %(key)s AND token = %(token)s AND result IS NULL"
        return await self._change(sql, {"key": key, "token": token})

    async def renew(self, key: str, token: str, *, lease_seconds: float) -> bool:
        sql = (
            f"UPDATE {self.table} SET lease_until = clock_timestamp() + make_interval(secs => %(lease)s),"
            " expires_at = GREATEST(expires_at, clock_timestamp() + make_interval(secs => %(lease)s))"
            " WHERE key = %(key)s AND token = %(token)s AND result IS NULL"
        )
        return await self._change(sql, {"lease": lease_seconds, "key": key, "token": token})

    async def ping(self) -> None:
        # One connection of its own, not the pool: a pool retries a refused connection until its
        # timeout and then says only that it timed out; libpq's own error says why.
        from psycopg import AsyncConnection

        try:
            with anyio.fail_after(self.timeout_seconds):
                conn = await AsyncConnection.connect(self.url, autocommit=True)
                try:
                    await conn.execute("SELECT 1")
                finally:
                    await conn.close()
        except Exception as exc:  # any failure to reach the database is the one answer
            raise unreachable(self.url, exc) from None

    def is_unwritable(self, error: BaseException) -> bool:
        """PostgreSQL's disk full, insufficient privilege and read-only transaction (a standby), by SQLSTATE."""
        # psycopg's errors carry their SQLSTATE.
        return getattr(error, "sqlstate", None) in _UNWRITABLE_SQLSTATE or super().is_unwritable(error)

    async def aclose(self) -> None:
        async with self._opening:
            if self._pool is not None:
                await self._pool.close()
                self._pool = None

    async def _change(self, sql: str, params: dict[str, Any]) -> bool:
        deadline = anyio.current_time() + self.timeout_seconds
        pool = await self._open()
        async with pool.connection(timeout=self._left(deadline)) as conn:
            cursor = await self._execute(conn, deadline, sql, params)
            return cursor.rowcount == 1

    async def _execute(
        self, conn: AsyncConnection[Any], deadline: float, sql: str, params: dict[str, Any]
    ) -> AsyncClientCursor[Any]:
        """Run `sql` under a `statement_timeout` of the time left until `deadline`, in one round trip.

        `SET LOCAL` and the statement go as one simple query (parameters bound on the client,
        as libpq quotes literals), which PostgreSQL runs as one transaction: the limit holds
        for this statement only, also behind PgBouncer in transaction mode, where a session's
        `SET` would reach another client's connection.
        """
        from psycopg import AsyncClientCursor

        cursor: AsyncClientCursor[Any] = AsyncClientCursor(conn)
        milliseconds = max(1, int(self._left(deadline) * 1000))
        await cursor.execute(f"SET LOCAL statement_timeout = {milliseconds}; {sql}", params)
        cursor.nextset()  # the statement's own result, after SET's
        return cursor

    def _left(self, deadline: float) -> float:
        left = deadline - anyio.current_time()
        if left <= 0:
            raise TimeoutError(f"the idempotency store did not answer within {self.timeout_seconds:g} s")
        return left

    async def _open(self) -> AsyncConnectionPool:
        if self._pool is not None:
            return self._pool
        async with self._opening:
            if self._pool is None:
                from psycopg_pool import AsyncConnectionPool

                pool = AsyncConnectionPool(
                    self.url,
                    min_size=self.pool_min_size,
                    max_size=self.pool_max_size,
                    kwargs={"autocommit": True},
                    open=False,
                )
                await pool.open(wait=True)
                try:
                    await self._create_table(pool)
                except BaseException:
                    await pool.close()
                    raise
                self._pool = pool
        return self._pool

    async def _create_table(self, pool: AsyncConnectionPool) -> None:
        # CREATE TABLE IF NOT EXISTS is not safe against itself: two replicas starting at
        # once can both try and one fails on the catalog. An advisory lock serialises them.
        lock_id = zlib.crc32(self.table.encode())
        async with pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_id,))
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} ("
                " key text PRIMARY KEY, fingerprint text NOT NULL, token text NOT NULL,"
                " lease_until timestamptz, expires_at timestamptz NOT NULL, result bytea)"
            )
            await conn.execute(f"CREATE INDEX IF NOT EXISTS {self.table}_expires ON {self.table} (expires_at)")

    async def _clean_up_now_and_then(self, conn: AsyncConnection[Any], deadline: float) -> None:
        now = anyio.current_time()
        if now < self._next_cleanup:
            return
        self._next_cleanup = now + self.cleanup_interval
        from psycopg import Error

        try:
            await self._execute(
                conn,
                deadline,
                f"DELETE FROM {self.table} WHERE key IN"
                f" (SELECT key FROM {self.table} WHERE expires_at <= clock_timestamp() LIMIT {_CLEANUP_BATCH})",
                {},
            )
        except (Error, TimeoutError):
            # The claim is won and must reach its caller: a clean-up that waits on a lock or
            # fails is tried again at the next interval.
            logger.debug("expired idempotency keys were not deleted this time", exc_info=True)


def _check_conninfo(url: str) -> None:
    """Refuse a URL libpq cannot parse here, in words that hold none of it.

    libpq's own message quotes the token it could not read (for a password with a `%` that
    starts no escape, the password), and the pool would log it again on every reconnect.
    """
    import psycopg.conninfo

    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        raise ValueError(
            f"the PostgreSQL store URL {redact_url(url)!r} cannot be parsed: check its form, and percent-encode "
            "a '%', '@', '/' or ':' in the user name or password (a '%' as %25)"
        ) from None
