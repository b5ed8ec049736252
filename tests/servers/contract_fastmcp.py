"""The contract server again, built with fastmcp: same tools, same `CASES`."""

from __future__ import annotations

from typing import Annotated

from fastmcp import FastMCP
from pydantic import Field

from mcp_errors import (
    AccessDeniedError,
    BusinessRuleError,
    FieldError,
    InputValidationError,
    TransientError,
    empty_result,
    install,
)

try:
    from servers.contract_server import CRASH_TEXT, UNDECODABLE_NAME, Order, OrderSearch
except ImportError:  # run as a script
    from contract_server import CRASH_TEXT, UNDECODABLE_NAME, Order, OrderSearch  # type: ignore[import-not-found, no-redef]


def build_fastmcp_server() -> FastMCP:
    """The fastmcp contract server; tools on both sides of `install`."""
    server = FastMCP("contract-fastmcp")

    @server.tool
    def get_order(
        order_id: Annotated[str, Field(pattern=r"^#\d{5}$", description="Order id like #12345")],
        quantity: Annotated[int, Field(ge=1)] = 1,
    ) -> Order:
        """Fetch one order."""
        return Order(order_id=order_id, status="shipped")

    @server.tool
    def check_stock() -> Order:
        """Always busy."""
        raise TransientError(
            "Inventory service busy",
            description="The inventory service is under load; the request is valid. Resend it in a few seconds.",
            code="INVENTORY_BUSY",
            retry_after_seconds=2,
        )

    install(server)

    @server.tool
    def update_email(email: str) -> Order:
        """Rejects every address."""
        raise InputValidationError(
            "Invalid email address",
            description="The email must look like name@example.com. Correct it and call again.",
            code="EMAIL_INVALID",
            field_errors=[FieldError("email", "not an email address", "name@domain", email)],
        )

    @server.tool
    def refund(order_id: str, amount: float) -> Order:
        """Refunds above 500 need a manager."""
        raise BusinessRuleError(
            "Refund exceeds policy limit",
            description=f"Refunds above 500 need a manager; {amount:g} was asked. Escalate to a human.",
            code="REFUND_LIMIT_EXCEEDED",
        )

    @server.tool
    def read_salaries() -> Order:
        """Only finance may read salaries."""
        raise AccessDeniedError(
            "Finance records are restricted",
            description="Only the finance role may read salaries. Ask a human in finance.",
            code="FINANCE_ONLY",
        )

    @server.tool
    def crash() -> Order:
        """A defect: raises an exception nobody classified."""
        raise RuntimeError(CRASH_TEXT)

    @server.tool
    def export_report() -> Order:
        """Names a file it cannot read, whose name is not UTF-8."""
        raise BusinessRuleError(
            f"Cannot read {UNDECODABLE_NAME}",
            description=f"The report file {UNDECODABLE_NAME} could not be read. Ask a human to rename it.",
            code="EXPORT_UNREADABLE",
        )

    @server.tool
    def search_orders(customer: str) -> OrderSearch:
        """Finds nothing, correctly."""
        return empty_result(  # type: ignore[return-value]  # fastmcp passes a CallToolResult through
            f"No orders match customer {customer!r}; the search ran and found nothing.", {"orders": []}
        )

    return server


if __name__ == "__main__":
    build_fastmcp_server().run(show_banner=False)
