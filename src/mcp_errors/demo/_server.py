"""The demo support desk: an `MCPServer` with five tools over the SQLite desk.

Every answer comes from the database, and every failure is raised as a classified
`ToolError`, which `mcp_errors.install` turns into the wire contract. Built without
`install` (the benchmark's baseline) the same failures reach the client as the SDK's text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Final, Literal, get_args

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from mcp_errors._server.errors import AccessDeniedError, BusinessRuleError, InputValidationError, TransientError
from mcp_errors._server.install import install
from mcp_errors._shared.contract import HONOURS_IDEMPOTENCY_META, IDEMPOTENCY_KEY_META, ExecutionState, FieldError
from mcp_errors._shared.envelope import empty_result
from mcp_errors.demo._db import (
    AUTO_REFUND_LIMIT,
    CURRENCY,
    KNOWLEDGE_SOURCES,
    MEMORY,
    Database,
    KeyReuseError,
    money,
)
from mcp_errors.demo._faults import FaultConfig, FaultInjector

__all__ = ["DESK_TOOLS", "OUTAGE_TARGETS", "DeskConfig", "build_server"]

_ORDER_ID: Final = re.compile(r"#\d{5}")
_CUSTOMER_ID: Final = re.compile(r"C-\d{4}")
_MAX_QUERY_WORDS: Final = 32
# A word is a LIKE pattern: SQLite refuses one of over 50,000 bytes as "too complex", an
# internal error for what is a bad input. No article has a word near this long.
_MAX_WORD_CHARS: Final = 200
# Dot-separated pieces, a dot never inside a piece, starting only where a word starts: one
# way to read any text, and a failed start costs one step (linear, even searched).
_EMAIL: Final = re.compile(r"(?<![^\s@])[^@\s.]+(?:\.[^@\s.]+)*@[^@\s.]+(?:\.[^@\s.]+)+")

Source = Literal["faq", "policies", "manuals", "tickets", "community"]
if set(get_args(Source)) != set(KNOWLEDGE_SOURCES):  # pragma: no cover - one list of sources
    raise RuntimeError("Source and KNOWLEDGE_SOURCES disagree")
_SOURCE_DOC: Final = "One of: " + ", ".join(KNOWLEDGE_SOURCES)

DESK_TOOLS: Final = ("lookup_customer", "get_order", "process_refund", "get_financial_records", "search_knowledge")
"""The desk's tools (a test keeps this equal to what tools/list shows)."""

OUTAGE_TARGETS: Final = frozenset(DESK_TOOLS) | {f"search_knowledge:{source}" for source in KNOWLEDGE_SOURCES}
"""What `--outage` may take down: a tool, or one source of `search_knowledge`."""

_READ_ONLY: Final = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# A refund moves money and cannot be taken back from here, and a keyless resend refunds
# again, so it is neither read-only nor idempotent; with a key the server replays instead.
_REFUND: Final = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
)


class Customer(BaseModel):
    id: str
    email: str
    name: str
    tier: str


class CustomerLookup(BaseModel):
    resultCount: int  # noqa: N815  # wire name
    customers: list[Customer]


class Order(BaseModel):
    id: str
    customer_id: str
    total: float
    status: str
    placed_on: str
    refunded: float
    refundable: float
    currency: str = CURRENCY


class OrderLookup(BaseModel):
    resultCount: int  # noqa: N815
    order: Order | None = None


class RefundReceipt(BaseModel):
    refundId: str  # noqa: N815
    orderId: str  # noqa: N815
    amount: float
    remainingRefundable: float  # noqa: N815
    currency: str = CURRENCY


class FinancialRecord(BaseModel):
    customer_id: str
    lifetime_value: float
    outstanding_balance: float
    credit_limit: float
    currency: str = CURRENCY


class FinancialLookup(BaseModel):
    resultCount: int  # noqa: N815
    record: FinancialRecord | None = None


class Article(BaseModel):
    source: str
    title: str
    snippet: str


class SearchResults(BaseModel):
    resultCount: int  # noqa: N815
    source: str
    results: list[Article]


@dataclass(frozen=True, slots=True)
class DeskConfig:
    """How to run the desk.

    Args:
        db: SQLite file path or `":memory:"`.
        role: `"support"` (default) or `"finance"`, which may read financial records.
        faults: Faults to inject.
        contract: False builds the server without `mcp_errors.install` (benchmark baseline).
        store: URL of the idempotency store for the write tools that keep no keys of
            their own (`mcp_errors.open_store`); `None`: no replay. `process_refund`
            always keeps its key in the refund's own transaction, in the desk file.
    """

    db: str | Path = MEMORY
    role: Literal["support", "finance"] = "support"
    faults: FaultConfig = field(default_factory=FaultConfig)
    contract: bool = True
    store: str | None = None


_REFUND_DOC: Final = (
    f"Refund part or all of an order, in {CURRENCY}.\n\n"
    f"Refunds up to {money(AUTO_REFUND_LIMIT)} are applied at once; larger ones need a human's approval. A resend "
    'carrying the same idempotency key (request `_meta["mcp-errors/idempotencyKey"]`) replays the first receipt '
    "instead of refunding twice."
)


def _received(value: object) -> str:
    return repr(value)[:60]


def _check_order_id(order_id: str) -> None:
    if not _ORDER_ID.fullmatch(order_id):
        raise InputValidationError(
            "Invalid order ID format",
            description=f"Order ID must be in format #NNNNN (e.g. #12345). Received: {_received(order_id)}. "
            "Reformat the ID and call again.",
            code="INVALID_ORDER_ID",
            execution_state=ExecutionState.NOT_EXECUTED,
            field_errors=[
                FieldError("order_id", "not an order id", expected="#NNNNN, e.g. #12345", received=_received(order_id))
            ],
        )


def build_server(config: DeskConfig | None = None, *, database: Database | None = None) -> MCPServer[Any]:
    """Build the demo support desk.

    Args:
        config: Database, role, faults and whether to install the error contract.
        database: An already open database to serve (tests audit it directly); by default
            one is opened from `config.db`.

    Returns:
        The server, ready for `run()` or an in-memory `mcp.Client`.

    Example:
        ```python
        import anyio
        from mcp import Client
        from mcp_errors.demo import build_server

        async def main() -> None:
            async with Client(build_server()) as client:
                result = await client.call_tool("get_order", {"order_id": "order-abc"})
                assert result.structured_content["errorCategory"] == "validation"

        anyio.run(main)
        ```
    """
    config = config or DeskConfig()
    db = database if database is not None else Database(config.db, seed=config.faults.seed)
    faults = FaultInjector(config.faults)
    server: MCPServer[Any] = MCPServer(
        "mcp-errors demo desk",
        instructions=(
            "A customer-support desk: look up customers and orders, refund orders (up to "
            f"{money(AUTO_REFUND_LIMIT)} automatically), read financial records (finance role only) and "
            f"search five knowledge sources ({', '.join(KNOWLEDGE_SOURCES)})."
        ),
    )
    server.desk_database = db  # type: ignore[attr-defined]  # the demo's auditor reads it

    @server.tool(annotations=_READ_ONLY)
    async def lookup_customer(email: str) -> Annotated[CallToolResult, CustomerLookup]:
        """Find a customer by email address.

        No match is a valid empty result (resultCount 0), not an error.
        """
        if not _EMAIL.fullmatch(email):
            raise InputValidationError(
                "Invalid email address",
                description=f"Expected an email address like name@example.com. Received: {_received(email)}.",
                code="INVALID_EMAIL",
                execution_state=ExecutionState.NOT_EXECUTED,
                field_errors=[FieldError("email", "not an email address", expected="name@example.com")],
            )
        await faults.before_call("lookup_customer")
        customer = db.find_customer(email)
        if customer is None:
            return empty_result(
                f"No customer found matching email {email!r}. The query executed successfully but returned no matches.",
                {"resultCount": 0, "customers": []},
            )
        return _found(CustomerLookup(resultCount=1, customers=[Customer(**customer)]))

    @server.tool(annotations=_READ_ONLY)
    async def get_order(order_id: str) -> Annotated[CallToolResult, OrderLookup]:
        """Get an order by id (format #NNNNN, e.g. #12345), with what is still refundable.

        An unknown id is a valid empty result (resultCount 0).
        """
        _check_order_id(order_id)
        await faults.before_call("get_order")
        order = db.get_order(order_id)
        if order is None:
            return empty_result(
                f"No order {order_id} exists. The lookup ran and matched nothing.", {"resultCount": 0, "order": None}
            )
        return _found(OrderLookup(resultCount=1, order=Order(**order)))

    @server.tool(annotations=_REFUND, meta={HONOURS_IDEMPOTENCY_META: True}, description=_REFUND_DOC)
    async def process_refund(order_id: str, amount: float, reason: str, ctx: Context) -> RefundReceipt:
        _check_order_id(order_id)
        # Money is refunded in cents: round first, so what is checked is what is stored.
        requested = amount
        amount = round(amount, 2) if math.isfinite(amount) else amount
        if not math.isfinite(amount) or amount < 0.01:
            raise InputValidationError(
                "Invalid refund amount",
                description=f"The refund amount must be at least {money(0.01)} (amounts are rounded to cents). "
                f"Received: {_received(requested)}.",
                code="INVALID_AMOUNT",
                execution_state=ExecutionState.NOT_EXECUTED,
                field_errors=[
                    FieldError(
                        "amount",
                        "below one cent",
                        expected=f"an amount >= {money(0.01)}",
                        received=_received(requested),
                    )
                ],
            )
        if not reason.strip():
            raise InputValidationError(
                "Missing refund reason",
                description="Give the reason for the refund in a few words.",
                code="MISSING_REASON",
                execution_state=ExecutionState.NOT_EXECUTED,
                field_errors=[FieldError("reason", "empty", expected="a short reason")],
            )
        key = _idempotency_key(ctx)
        await faults.before_call("process_refund")

        def check(refundable: float | None) -> None:
            if refundable is None:
                raise BusinessRuleError(
                    "Order not found",
                    description=f"There is no order {order_id}, so nothing can be refunded. Check the id with the "
                    "customer.",
                    code="ORDER_NOT_FOUND",
                    execution_state=ExecutionState.NOT_EXECUTED,
                )
            if amount > AUTO_REFUND_LIMIT:
                raise BusinessRuleError(
                    "Refund exceeds policy limit",
                    description=f"Refund amount of {money(amount)} exceeds the {money(AUTO_REFUND_LIMIT)} "
                    "automatic refund limit. This requires manager approval. Do not change the amount: escalate to "
                    f"a human agent with the order id {order_id}, the amount and the reason.",
                    code="REFUND_NEEDS_APPROVAL",
                    execution_state=ExecutionState.NOT_EXECUTED,
                    extra={"limit": AUTO_REFUND_LIMIT, "currency": CURRENCY},
                )
            if amount > refundable + 1e-9:
                raise BusinessRuleError(
                    "Refund exceeds what was paid",
                    description=f"Only {money(refundable)} of order {order_id} is still refundable; "
                    f"{money(amount)} was asked. Check earlier refunds with get_order before asking again.",
                    code="REFUND_EXCEEDS_REMAINING",
                    execution_state=ExecutionState.NOT_EXECUTED,
                    extra={"remainingRefundable": refundable, "currency": CURRENCY},
                )

        try:
            outcome = db.refund(order_id, amount, reason, idempotency_key=key, check=check)
        except KeyReuseError:
            # A validation error, as in mcp_errors._server.replay: a new operation needs a new key.
            raise InputValidationError(
                "Idempotency key reused",
                description="This idempotency key was already used for a different refund. Use a new key for a new "
                "refund.",
                code="IDEMPOTENCY_KEY_REUSED",
                execution_state=ExecutionState.NOT_EXECUTED,
                field_errors=[
                    FieldError(
                        f"_meta.{IDEMPOTENCY_KEY_META}",
                        "already used for a different refund",
                        expected="a new key, or the arguments of the first refund",
                    )
                ],
            ) from None
        if not outcome.replayed and faults.lose_reply():
            raise TransientError(
                "Refund service timed out",
                description="The refund service did not answer in time, so whether the refund was applied is "
                "unknown. Resend with the same idempotency key to learn the outcome; without a key, check the "
                "order with get_order before resending.",
                code="TIMEOUT",
                execution_state=ExecutionState.OUTCOME_UNKNOWN,
            )
        return RefundReceipt(**outcome.receipt)

    @server.tool(annotations=_READ_ONLY)
    async def get_financial_records(customer_id: str) -> Annotated[CallToolResult, FinancialLookup]:
        """Read a customer's financial record (id like C-1001). Needs the finance role."""
        # Permission before existence and format: a caller without access learns nothing.
        if config.role != "finance":
            raise AccessDeniedError(
                "Access denied",
                description="The current service account does not have permission to access financial records. "
                "Escalate to a senior agent with financial system access.",
                code="FINANCE_ROLE_REQUIRED",
                execution_state=ExecutionState.NOT_EXECUTED,
            )
        if not _CUSTOMER_ID.fullmatch(customer_id):
            raise InputValidationError(
                "Invalid customer id",
                description=f"Customer ids look like C-1001. Received: {_received(customer_id)}.",
                code="INVALID_CUSTOMER_ID",
                execution_state=ExecutionState.NOT_EXECUTED,
                field_errors=[FieldError("customer_id", "not a customer id", expected="C-NNNN, e.g. C-1001")],
            )
        await faults.before_call("get_financial_records")
        record = db.financial_records(customer_id)
        if record is None:
            return empty_result(
                f"No financial record for customer {customer_id}. The lookup ran and matched nothing.",
                {"resultCount": 0, "record": None},
            )
        return _found(FinancialLookup(resultCount=1, record=FinancialRecord(**record)))

    @server.tool(annotations=_READ_ONLY)
    async def search_knowledge(
        query: str, source: Annotated[Source, Field(description=_SOURCE_DOC)]
    ) -> Annotated[CallToolResult, SearchResults]:
        """Search one knowledge source for articles containing every word of the query."""
        if not query.strip():
            raise InputValidationError(
                "Empty search query",
                description="Give at least one word to search for.",
                code="EMPTY_QUERY",
                execution_state=ExecutionState.NOT_EXECUTED,
                field_errors=[FieldError("query", "empty", expected="one or more words")],
            )
        words = set(query.lower().split())
        longest = max(len(word) for word in words)
        if len(words) > _MAX_QUERY_WORDS:
            # Each word is a clause of the search: a query of thousands would break SQLite's
            # limits and come back as an internal error instead of what it is.
            raise _query_too_long(f"at most {_MAX_QUERY_WORDS} different words", f"{len(words)}", "too many words")
        if longest > _MAX_WORD_CHARS:
            limit = f"words of at most {_MAX_WORD_CHARS} characters"
            raise _query_too_long(limit, f"one of {longest}", "word too long")
        await faults.before_call("search_knowledge", source)
        results = db.search(source, query)
        if not results:
            return empty_result(
                f"No article in {source} matches {query!r}. The search ran and matched nothing.",
                {"resultCount": 0, "source": source, "results": []},
            )
        return _found(SearchResults(resultCount=len(results), source=source, results=[Article(**r) for r in results]))

    return install(server, idempotency=config.store) if config.contract else server


def _query_too_long(limit: str, found: str, reason: str) -> InputValidationError:
    return InputValidationError(
        "Search query too long",
        description=f"Use {limit}; this query has {found}.",
        code="QUERY_TOO_LONG",
        execution_state=ExecutionState.NOT_EXECUTED,
        field_errors=[FieldError("query", reason, expected=limit)],
    )


def _found(model: BaseModel) -> CallToolResult:
    # Built here rather than by the SDK because these tools also return empty results as
    # CallToolResult, and the SDK accepts no union of a model with CallToolResult.
    return CallToolResult(
        content=[TextContent(type="text", text=model.model_dump_json())],
        structured_content=model.model_dump(mode="json"),
    )


def _idempotency_key(ctx: Context) -> str | None:
    meta = ctx.request_context.meta
    key = meta.get(IDEMPOTENCY_KEY_META) if meta else None
    return key if isinstance(key, str) and key else None
