"""Tools whose argument validators speak for themselves, or fail themselves; MCPServer and fastmcp.

A validator's `ValueError` is its author's words about the value ("customer ids look like
C-1234"). A validator that raises one while handling a real failure (a directory lookup that
could not connect, a ledger query that failed) reports the server's fault, and its text
carries the host, the address, the user and the key. Run it over stdio with
`python tests/servers/validator_server.py`.
"""

from __future__ import annotations

import re
import socket
import sqlite3
from typing import Annotated, Any

from fastmcp import FastMCP
from mcp.server.mcpserver import MCPServer
from pydantic import AfterValidator

from mcp_errors import install

# Planted in the text of the validators' own failures: none of these may reach the client.
DIRECTORY_HOST = "db-7.corp.internal"
DIRECTORY_USER = "svc_reader"
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq"
LEDGER_PATH = "/srv/app/ledger.db"
LEAKED = (DIRECTORY_HOST, DIRECTORY_USER, ACCOUNT_KEY, "AccountKey", LEDGER_PATH, "no such table")

_RATES = {"EUR": 1.0, "USD": 1.08}


def _closed_port() -> int:
    """A local port nothing listens on: connecting to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def known_customer(customer_id: str) -> str:
    """Checks the id's shape, then that the customer directory knows it."""
    if not re.fullmatch(r"C-\d{4}", customer_id):
        raise ValueError("customer ids look like C-1234")
    try:
        socket.create_connection(("127.0.0.1", _closed_port()), timeout=5).close()
    except OSError as exc:
        raise ValueError(
            f"could not connect to {DIRECTORY_HOST} (10.20.30.40) as {DIRECTORY_USER}; AccountKey={ACCOUNT_KEY}: {exc}"
        ) from exc
    return customer_id


def known_currency(currency: str) -> str:
    """A deliberate ValueError raised while handling a KeyError: still about the value."""
    try:
        _RATES[currency]
    except KeyError:
        raise ValueError(f"unknown currency {currency!r}; use one of EUR, USD") from None
    return currency


def open_ledger(ledger: str) -> str:
    """A ledger query that fails (the table is missing), reported as a ValueError."""
    try:
        sqlite3.connect(":memory:").execute("SELECT id FROM ledger WHERE id = ?", (ledger,))
    except sqlite3.Error as exc:
        raise ValueError(f"ledger lookup failed: {exc} in {LEDGER_PATH}")  # noqa: B904  (the context is implicit on purpose)
    return ledger


CustomerId = Annotated[str, AfterValidator(known_customer)]
Currency = Annotated[str, AfterValidator(known_currency)]
LedgerId = Annotated[str, AfterValidator(open_ledger)]


def find_customer(customer_id: CustomerId) -> str:
    """Find a customer by id (C-NNNN)."""
    return customer_id


def convert(amount: float, currency: Currency) -> float:
    """Convert an amount from EUR."""
    return amount * _RATES[currency]


def read_ledger(ledger: LedgerId) -> str:
    """Read one ledger."""
    return ledger


TOOLS: tuple[Any, ...] = (find_customer, convert, read_ledger)


def build_mcpserver() -> MCPServer:
    """The validator tools on an installed `MCPServer`."""
    server = install(MCPServer("validators"))
    for tool in TOOLS:
        server.tool()(tool)
    return server


def build_fastmcp() -> FastMCP:
    """The same tools on an installed fastmcp server."""
    server = FastMCP("validators-fastmcp")
    for tool in TOOLS:
        server.tool(tool)
    return install(server)


if __name__ == "__main__":
    build_mcpserver().run()
