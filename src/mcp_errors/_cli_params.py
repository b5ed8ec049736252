"""What the subcommands' options share: the `--http` address, `PORT` or `HOST:PORT`; a `--store`
checked at start-up.

Imports nothing heavy: it is on the path of `mcp-errors --help`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from mcp_errors.stores import IdempotencyStore

__all__ = ["HTTP_METAVAR", "LOOPBACK", "open_store_or_exit", "parse_http_address"]

HTTP_METAVAR = "[HOST:]PORT"
LOOPBACK = "127.0.0.1"


def parse_http_address(value: str, *, default_host: str = LOOPBACK) -> tuple[str, int]:
    """Read an `--http` value: `PORT` (on `default_host`) or `HOST:PORT` (`[::1]:PORT` for IPv6).

    Raises:
        typer.BadParameter: If the port is missing, not a number or outside 1..65535.
    """
    host, _, port = value.strip().rpartition(":")
    host = host.strip("[]") if host else default_host
    if not port.isdigit() or not 0 < int(port) < 65536 or not host:
        raise typer.BadParameter(
            f"expected PORT or HOST:PORT with a port from 1 to 65535, e.g. 8080 or 127.0.0.1:8080, not {value!r}",
            param_hint="--http",
        )
    return host, int(port)


def open_store_or_exit(url: str, *, command: str) -> IdempotencyStore:
    """The store `--store URL` names, opened and pinged once at start-up (then closed again: the
    calls run in another event loop), so a typo or a closed port is told now, not as a transient
    error on every keyed call.

    Raises:
        typer.Exit: Status 2, after one line on stderr naming the URL without its password.
    """
    import anyio

    from mcp_errors.stores import open_store

    async def ping_then_close(store: IdempotencyStore) -> None:
        try:
            await store.ping()
        finally:
            await store.aclose()

    try:
        store = open_store(url)
        anyio.run(ping_then_close, store)
    except (ValueError, ImportError, ConnectionError) as exc:
        typer.echo(f"mcp-errors {command}: --store: {exc}", err=True)
        raise typer.Exit(2) from None
    return store
