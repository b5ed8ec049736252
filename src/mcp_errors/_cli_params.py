"""What the subcommands' options share: the `--http` address, `PORT` or `HOST:PORT`.

Imports nothing heavy: it is on the path of `mcp-errors --help`.
"""

from __future__ import annotations

import typer

__all__ = ["HTTP_METAVAR", "LOOPBACK", "parse_http_address"]

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
