"""Idempotency stores: where keyed calls claim their key and leave their first answer.

Pass one to `mcp_errors.install(server, idempotency=...)`, by object or through
`open_store(url)`. `MemoryStore` serves one process; `SQLiteStore` every process on one
host, across restarts; `PostgresStore` and `RedisStore` replicas on any number of hosts
(extras `postgres` and `redis`). To keep keys elsewhere, subclass `IdempotencyStore`.
"""

from mcp_errors.stores._memory import MemoryStore
from mcp_errors.stores._postgres import PostgresStore
from mcp_errors.stores._protocol import Abandoned, Claim, Finished, IdempotencyStore, InProgress, Mismatch, Won
from mcp_errors.stores._redis import RedisStore
from mcp_errors.stores._sqlite import SQLiteStore
from mcp_errors.stores._url import open_store

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
