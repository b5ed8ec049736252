"""A server that exercises the whole error contract: one tool per category and every edge.

Built with `MCPServer` and `mcp_errors.install`; some tools are registered before
`install` and some after, so both paths are covered by every round trip. Run it over
stdio with `python tests/servers/contract_server.py`.

`CASES` is the table the round-trip tests walk: tool, arguments, and what must come back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from mcp_errors import (
    AccessDeniedError,
    BusinessRuleError,
    FieldError,
    InputValidationError,
    TransientError,
    empty_result,
    install,
)

# Planted in the crash's exception text: none of these may reach the client.
LEAKED_SECRET = "hunter2-Sup3rS3cret"
LEAKED_PATH = "/srv/orders/app/db.py"
CRASH_TEXT = f"connect to postgresql://admin:{LEAKED_SECRET}@db.internal/prod failed at {LEAKED_PATH}"
# A file name that is not UTF-8, as `os.listdir` returns it: with a lone surrogate, which
# cannot be encoded. A result that carried it would never be written to the client.
UNDECODABLE_NAME = os.fsdecode(b"q3-\xff.csv")


class Order(BaseModel):
    order_id: str
    status: str


class OrderSearch(BaseModel):
    resultCount: int  # noqa: N815  (wire name)
    orders: list[Order]


@dataclass(frozen=True)
class Case:
    """One tool call and the error it must produce."""

    tool: str
    arguments: dict[str, Any]
    category: str
    code: str
    retryable: bool


CASES: tuple[Case, ...] = (
    Case("check_stock", {}, "transient", "INVENTORY_BUSY", True),
    Case("update_email", {"email": "not-an-email"}, "validation", "EMAIL_INVALID", False),
    Case("refund", {"order_id": "#12345", "amount": 750.0}, "business", "REFUND_LIMIT_EXCEEDED", False),
    Case("read_salaries", {}, "permission", "FINANCE_ONLY", False),
    Case("crash", {}, "business", "INTERNAL_ERROR", False),
    Case("export_report", {}, "business", "EXPORT_UNREADABLE", False),
    Case("get_order", {"order_id": "order-abc", "quantity": 0}, "validation", "INVALID_ARGUMENTS", False),
    Case("no_such_tool", {}, "validation", "UNKNOWN_TOOL", False),
)
"""Every failing call of this server, with the category and code it must report."""


def build_server() -> MCPServer:
    """The contract server; tools on both sides of `install`."""
    server = MCPServer("contract")

    @server.tool()
    def get_order(
        order_id: Annotated[str, Field(pattern=r"^#\d{5}$", description="Order id like #12345")],
        quantity: Annotated[int, Field(ge=1)] = 1,
    ) -> Order:
        """Fetch one order."""
        return Order(order_id=order_id, status="shipped")

    @server.tool()
    def check_stock() -> Order:
        """Always busy."""
        raise TransientError(
            "Inventory service busy",
            description="The inventory service is under load; the request is valid. Resend it in a few seconds.",
            code="INVENTORY_BUSY",
            retry_after_seconds=2,
            execution_state="not_executed",
        )

    install(server)

    @server.tool()
    def update_email(email: str) -> Order:
        """Rejects every address."""
        raise InputValidationError(
            "Invalid email address",
            description="The email must look like name@example.com. Correct it and call again.",
            code="EMAIL_INVALID",
            field_errors=[FieldError("email", "not an email address", "name@domain", email)],
        )

    @server.tool()
    def refund(order_id: str, amount: float) -> Order:
        """Refunds above 500 need a manager."""
        raise BusinessRuleError(
            "Refund exceeds policy limit",
            description=f"Refunds above 500 need a manager; {amount:g} was asked. Escalate to a human.",
            code="REFUND_LIMIT_EXCEEDED",
        )

    @server.tool()
    def read_salaries() -> Order:
        """Only finance may read salaries."""
        raise AccessDeniedError(
            "Finance records are restricted",
            description="Only the finance role may read salaries. Ask a human in finance.",
            code="FINANCE_ONLY",
        )

    @server.tool()
    def crash() -> Order:
        """A defect: raises an exception nobody classified."""
        raise RuntimeError(CRASH_TEXT)

    @server.tool()
    def export_report() -> Order:
        """Names a file it cannot read, whose name is not UTF-8."""
        raise BusinessRuleError(
            f"Cannot read {UNDECODABLE_NAME}",
            description=f"The report file {UNDECODABLE_NAME} could not be read. Ask a human to rename it.",
            code="EXPORT_UNREADABLE",
        )

    @server.tool()
    def search_orders(customer: str) -> OrderSearch:
        """Finds nothing, correctly."""
        return_value: CallToolResult = empty_result(
            f"No orders match customer {customer!r}; the search ran and found nothing.",
            {"orders": []},
        )
        return return_value  # type: ignore[return-value]  # MCPServer passes a CallToolResult through

    return server


if __name__ == "__main__":
    build_server().run()
