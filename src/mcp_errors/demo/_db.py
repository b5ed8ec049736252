"""The demo support desk's embedded SQLite database: schema, deterministic seed, queries.

Everything the demo tools answer comes from here, so a refund really changes what the next
`get_order` says, and the simulator can audit the database after a run (double refunds).
"""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import platformdirs

__all__ = [
    "AUTO_REFUND_LIMIT",
    "CURRENCY",
    "KNOWLEDGE_SOURCES",
    "MEMORY",
    "Database",
    "KeyReuseError",
    "RefundOutcome",
    "default_db_path",
    "money",
]

MEMORY: Final = ":memory:"
CURRENCY: Final = "EUR"
"""The one currency of the desk: every amount it stores and every text that names one."""
AUTO_REFUND_LIMIT: Final = 500.0
"""Refunds up to this amount are applied automatically; above it a human must approve."""


def money(amount: float) -> str:
    """An amount as every text of the desk writes it, with its currency: `750.00 EUR`."""
    return f"{amount:.2f} {CURRENCY}"


KNOWLEDGE_SOURCES: Final = ("faq", "policies", "manuals", "tickets", "community")
"""The five sources `search_knowledge` can read, each of which can time out on its own."""

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS customers (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    name TEXT NOT NULL,
    tier TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY,
    customer_id TEXT NOT NULL REFERENCES customers(id),
    total REAL NOT NULL,
    status TEXT NOT NULL,
    placed_on TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS refunds (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id TEXT NOT NULL REFERENCES orders(id),
    amount REAL NOT NULL,
    reason TEXT NOT NULL,
    idempotency_key TEXT UNIQUE
);
CREATE TABLE IF NOT EXISTS idempotency (
    key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    result TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS financial_records (
    customer_id TEXT PRIMARY KEY REFERENCES customers(id),
    lifetime_value REAL NOT NULL,
    outstanding_balance REAL NOT NULL,
    credit_limit REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS knowledge (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL
);
"""

_FIRST_NAMES: Final = ("Ana", "Bao", "Chidi", "Dana", "Emeka", "Freya", "Goro", "Hana", "Ines", "Jonas", "Kofi", "Lin")
_LAST_NAMES: Final = ("Silva", "Tran", "Okafor", "Levi", "Nwosu", "Berg", "Sato", "Kim", "Costa", "Weber", "Mensah")
_KNOWLEDGE: Final = {
    "faq": [
        ("How do refunds work?", "Refunds go back to the original payment method within 5 business days."),
        ("Where is my order?", "Track an order with its id, which looks like #12345, on the orders page."),
        ("Can I change my delivery address?", "Addresses can be changed until the order ships."),
    ],
    "policies": [
        ("Refund policy", f"Refunds up to {money(AUTO_REFUND_LIMIT)} are automatic; larger refunds need a manager."),
        ("Returns window", "Items can be returned within 30 days of delivery for a full refund."),
        ("Data access policy", "Financial records are visible to the finance team only."),
    ],
    "manuals": [
        ("Kettle K2 manual", "Descale the kettle monthly; a blinking light means it needs descaling."),
        ("Blender B7 manual", "Never run the blender empty; the warranty covers the motor for two years."),
    ],
    "tickets": [
        ("Refund arrived twice", "A customer received a refund twice after a timeout; finance reversed one."),
        ("Late delivery", "Courier delays in the north region; orders arrive two days late."),
    ],
    "community": [
        ("Tips for the blender", "Add liquid first; the blender handles ice better with some water."),
        ("Refund experience", "My refund took three days to show up on my card statement."),
    ],
}


def default_db_path() -> Path:
    """Where `mcp-errors serve` keeps its database unless told otherwise (the user's data dir)."""
    return Path(platformdirs.user_data_dir("mcp-errors", appauthor=False)) / "demo-desk.sqlite3"


@dataclass(frozen=True, slots=True)
class RefundOutcome:
    """What `Database.refund` did."""

    receipt: dict[str, Any]
    replayed: bool
    """True when the idempotency key was seen before and the first receipt was returned."""


RefundCheck = Callable[[float | None], None]
"""Called with the order's refundable amount (None: no such order) inside the transaction."""


class KeyReuseError(Exception):
    """An idempotency key came back with different arguments."""


class Database:
    """The desk's data, on one SQLite connection guarded by a lock.

    Args:
        path: A file path, or `":memory:"` for a private in-memory database.
        seed: Seeds the generated customers and orders, so every run of the demo sees the same
            desk.

    Example:
        ```python
        from mcp_errors.demo._db import Database

        db = Database(":memory:")
        assert db.find_customer("nobody@example.com") is None
        ```
    """

    def __init__(self, path: str | Path = MEMORY, *, seed: int = 7) -> None:
        if str(path) != MEMORY:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # Autocommit mode: every write below opens its own explicit transaction.
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=5.0)
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.Lock()
        if str(path) != MEMORY:
            # Replicas (`serve --workers N`) share the file: readers then never wait for a writer.
            self._conn.execute("PRAGMA journal_mode = WAL")
        with self._lock:
            self._conn.executescript(_SCHEMA)
        with self._transaction():  # one process seeds; replicas starting with it see its rows
            if self._conn.execute("SELECT COUNT(*) FROM customers").fetchone()[0] == 0:
                self._seed(seed)

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _seed(self, seed: int) -> None:
        rng = random.Random(seed)
        customers = []
        for index in range(12):
            first, last = _FIRST_NAMES[index], _LAST_NAMES[index % len(_LAST_NAMES)]
            customer_id = f"C-{1001 + index}"
            email = f"{first.lower()}.{last.lower()}@example.com"
            tier = rng.choice(("standard", "standard", "gold"))
            customers.append(customer_id)
            self._conn.execute(
                "INSERT INTO customers VALUES (?, ?, ?, ?)", (customer_id, email, f"{first} {last}", tier)
            )
            self._conn.execute(
                "INSERT INTO financial_records VALUES (?, ?, ?, ?)",
                (customer_id, round(rng.uniform(200, 9000), 2), round(rng.uniform(0, 400), 2), 2500.0),
            )
        for index in range(60):
            order_id = f"#{10001 + index}"
            # A few large orders, so that a refund can exceed the automatic limit.
            total = round(rng.uniform(900, 1500) if index % 10 == 1 else rng.uniform(20, 480), 2)
            status = rng.choice(("delivered", "delivered", "shipped", "processing"))
            day = 1 + index % 28
            self._conn.execute(
                "INSERT INTO orders VALUES (?, ?, ?, ?, ?)",
                (order_id, customers[index % len(customers)], total, status, f"2025-05-{day:02d}"),
            )
        for source, articles in _KNOWLEDGE.items():
            for title, body in articles:
                self._conn.execute(
                    "INSERT INTO knowledge (source, title, body) VALUES (?, ?, ?)", (source, title, body)
                )

    # -- reads ---------------------------------------------------------------------------

    def find_customer(self, email: str) -> dict[str, Any] | None:
        """The customer with this email (case-insensitive), or None."""
        with self._lock:
            row = self._conn.execute("SELECT id, email, name, tier FROM customers WHERE email = ?", (email,)).fetchone()
        return dict(row) if row is not None else None

    def get_order(self, order_id: str) -> dict[str, Any] | None:
        """The order with its refunded and still refundable amounts, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT o.id, o.customer_id, o.total, o.status, o.placed_on,"
                " COALESCE((SELECT SUM(amount) FROM refunds r WHERE r.order_id = o.id), 0) AS refunded"
                " FROM orders o WHERE o.id = ?",
                (order_id,),
            ).fetchone()
        if row is None:
            return None
        order = dict(row)
        order["refunded"] = round(order["refunded"], 2)
        order["refundable"] = round(order["total"] - order["refunded"], 2)
        return order

    def financial_records(self, customer_id: str) -> dict[str, Any] | None:
        """The customer's financial record, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT customer_id, lifetime_value, outstanding_balance, credit_limit"
                " FROM financial_records WHERE customer_id = ?",
                (customer_id,),
            ).fetchone()
        return dict(row) if row is not None else None

    def search(self, source: str, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Articles of one source whose title or body contains every word of the query."""
        words = [word for word in query.lower().split() if word]
        clauses = " AND ".join("(LOWER(title) LIKE ? ESCAPE '\\' OR LOWER(body) LIKE ? ESCAPE '\\')" for _ in words)
        params: list[Any] = [source]
        for word in words:
            pattern = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            params += [pattern, pattern]
        sql = "SELECT title, body FROM knowledge WHERE source = ?"
        if clauses:
            sql += f" AND {clauses}"
        sql += " ORDER BY id LIMIT ?"
        params.append(limit)
        with self._lock:
            rows = self._conn.execute(sql, params).fetchall()
        return [{"source": source, "title": row["title"], "snippet": row["body"]} for row in rows]

    def refunds_for(self, order_id: str) -> list[dict[str, Any]]:
        """Every refund applied to an order, oldest first (the auditor's view)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT id, order_id, amount, reason, idempotency_key FROM refunds WHERE order_id = ? ORDER BY id",
                (order_id,),
            ).fetchall()
        return [dict(row) for row in rows]

    def refund_count(self) -> int:
        """How many refunds the database holds."""
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM refunds").fetchone()[0])

    # -- writes --------------------------------------------------------------------------

    def refund(
        self, order_id: str, amount: float, reason: str, *, idempotency_key: str | None, check: RefundCheck
    ) -> RefundOutcome:
        """Apply a refund and, with a key, record its receipt in the same transaction.

        Recording the key with the write is what makes a resend after a lost answer safe:
        either both landed or neither did.

        Args:
            order_id: A well-formed order id.
            amount: The amount to refund.
            reason: Why.
            idempotency_key: The caller's key for this logical refund, if any.
            check: Called with the order (or None) inside the transaction; raises to refuse.

        Returns:
            The receipt, and whether it was replayed from an earlier call with the same key.

        Raises:
            KeyReuseError: The key was used before with other arguments.
        """
        amount = round(amount, 2)  # cents: what is checked, stored and reported is the same amount
        fingerprint = hashlib.sha256(json.dumps([order_id, amount, reason]).encode()).hexdigest()
        with self._transaction() as conn:
            if idempotency_key is not None:
                seen = conn.execute(
                    "SELECT fingerprint, result FROM idempotency WHERE key = ?", (idempotency_key,)
                ).fetchone()
                if seen is not None:
                    if seen["fingerprint"] != fingerprint:
                        raise KeyReuseError(idempotency_key)
                    return RefundOutcome(json.loads(seen["result"]), replayed=True)
            row = conn.execute(
                "SELECT o.total - COALESCE((SELECT SUM(amount) FROM refunds r WHERE r.order_id = o.id), 0)"
                " AS refundable FROM orders o WHERE o.id = ?",
                (order_id,),
            ).fetchone()
            check(None if row is None else round(row["refundable"], 2))
            cursor = conn.execute(
                "INSERT INTO refunds (order_id, amount, reason, idempotency_key) VALUES (?, ?, ?, ?)",
                (order_id, amount, reason, idempotency_key),
            )
            receipt = {
                "refundId": f"R-{cursor.lastrowid:06d}",
                "orderId": order_id,
                "amount": amount,
                "remainingRefundable": round(round(row["refundable"], 2) - amount, 2),
            }
            if idempotency_key is not None:
                conn.execute(
                    "INSERT INTO idempotency VALUES (?, ?, ?)", (idempotency_key, fingerprint, json.dumps(receipt))
                )
        return RefundOutcome(receipt, replayed=False)
