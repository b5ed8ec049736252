"""Idempotency stores: where keyed calls claim their key and leave their first answer.

Pass one to `mcp_errors.install(server, idempotency=...)`, by object or through
`open_store(url)`. `MemoryStore` serves one process; `SQLiteStore` every process on one
host, across restarts; `PostgresStore` and `RedisStore` replicas on any number of hosts
(extras `postgres` and `redis`). To keep keys elsewhere, subclass `IdempotencyStore`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING

from mcp_errors._shared.lazy import lazy_exports as _lazy_exports
from mcp_errors.stores._protocol import Abandoned, Claim, Finished, IdempotencyStore, InProgress, Mismatch, Won
from mcp_errors.stores._url import open_store

if _TYPE_CHECKING:
    from mcp_errors.stores._memory import MemoryStore
    from mcp_errors.stores._postgres import PostgresStore
    from mcp_errors.stores._redis import RedisStore
    from mcp_errors.stores._sqlite import SQLiteStore

__all__ = [
    "Abandoned",
    "Claim",
    "Finished",
    "IdempotencyStore",
    "InProgress",
    "MemoryStore",
    "Mismatch",
    "PostgresStore",
    "RedisStore",
    "SQLiteStore",
    "Won",
    "open_store",
]

# The backends are imported on first use: a server or proxy that keeps no keys (or keeps them in
# memory) does without sqlite3 and the database drivers' modules.
_BACKENDS: dict[str, str] = {
    "MemoryStore": "mcp_errors.stores._memory",
    "PostgresStore": "mcp_errors.stores._postgres",
    "RedisStore": "mcp_errors.stores._redis",
    "SQLiteStore": "mcp_errors.stores._sqlite",
}


__getattr__, __dir__ = _lazy_exports(__name__, _BACKENDS)
