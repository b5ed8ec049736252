"""Choose a store by URL, the way deployments configure their databases."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from mcp_errors._shared.sanitize import redact_url
from mcp_errors.stores._protocol import IdempotencyStore

__all__ = ["open_store"]


def open_store(url: str, **options: Any) -> IdempotencyStore:
    """The idempotency store a URL names. Nothing connects until the first keyed call.

    | URL                                   | store                                     |
    |---------------------------------------|-------------------------------------------|
    | `memory://`                           | `MemoryStore` (this process only)         |
    | `sqlite:///keys.sqlite3`              | `SQLiteStore`, path relative to the cwd   |
    | `sqlite:////var/lib/app/keys.sqlite3` | `SQLiteStore`, absolute path (4 slashes)  |
    | `postgresql://user@host/db`           | `PostgresStore` (also `postgres://`)      |
    | `redis://host:6379/0`                 | `RedisStore` (also `rediss://`, `unix://`) |

    The SQLite form is SQLAlchemy's, so an existing database URL can be reused.

    Args:
        url: Where the keys live.
        **options: Passed to the store: `ttl_seconds`, `lease_seconds`, `wait_seconds`,
            `grace_seconds`, `max_result_bytes`, `timeout_seconds`, and the store's own (e.g. `table`).

    Returns:
        The store, not yet connected.

    Raises:
        ValueError: If the URL's scheme names no store, or a SQLite URL has no path.
        ImportError: If the store's driver is not installed (the message names the extra).

    Example:
        ```python
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import install, open_store

        server = install(MCPServer("payments"), idempotency=open_store("sqlite:///idempotency.sqlite3"))
        ```
    """
    scheme = urlsplit(url).scheme.lower()
    # Each store is imported when named: a process with no SQLite store does without sqlite3.
    if scheme == "memory":
        from mcp_errors.stores._memory import MemoryStore

        return MemoryStore(**options)
    if scheme == "sqlite":
        path = unquote(url.split(":", 1)[1].removeprefix("///"))
        if not path or path.startswith("//"):
            raise ValueError(
                "a SQLite store URL needs a file: sqlite:///relative/path or sqlite:////absolute/path, "
                f"not {redact_url(url)!r}"
            )
        from mcp_errors.stores._sqlite import SQLiteStore

        return SQLiteStore(path, **options)
    if scheme in ("postgresql", "postgres"):
        from mcp_errors.stores._postgres import PostgresStore

        return PostgresStore(url, **options)
    if scheme in ("redis", "rediss", "unix"):
        from mcp_errors.stores._redis import RedisStore

        return RedisStore(url, **options)
    raise ValueError(
        f"no idempotency store for {scheme + '://' if '://' in url else repr(redact_url(url))}; "
        "use memory://, sqlite:///path, postgresql://... or redis://..."
    )
