"""A server built with the foundation (MCPServer + install): it must pass every rule.

Run as a stdio server: `python tests/servers/check/good_server.py`, or over streamable
HTTP: `python tests/servers/check/good_server.py --http PORT`.
"""

from __future__ import annotations

import sys
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

from mcp_errors import BusinessRuleError, empty_result, install

ORDERS = {"#12345": 40.0}


class OrderLookup(BaseModel):
    resultCount: int  # noqa: N815  # wire name
    orders: list[str]


def build_server() -> MCPServer:
    server = install(MCPServer("good-orders"))

    @server.tool()
    def find_orders(
        order_id: Annotated[str, Field(pattern=r"^#\d{5}$", description="Order id like #12345")],
    ) -> OrderLookup:
        """Find orders by id."""
        if order_id not in ORDERS:
            # MCPServer passes a CallToolResult through at run time; the schema stays OrderLookup's.
            return empty_result(  # type: ignore[return-value]
                f"No order matches id {order_id}; the search ran and found nothing.",
                {"resultCount": 0, "orders": []},
            )
        return OrderLookup(resultCount=1, orders=[order_id])

    @server.tool()
    def set_quantity(
        quantity: Annotated[int, Field(ge=1, le=10)],
        unit: Literal["box", "pallet"],
        note: Annotated[str, Field(min_length=2, max_length=20)] = "none",
    ) -> str:
        """Set how many units an order holds."""
        return f"Quantity set to {quantity} {unit}."

    @server.tool()
    def refund(order_id: str, amount: Annotated[float, Field(gt=0)]) -> str:
        """Refund an order."""
        raise BusinessRuleError(
            "Refund needs approval",
            description="Refunds need a manager's approval: escalate to a human with the order id.",
            code="REFUND_NEEDS_APPROVAL",
        )

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def purge_orders(confirm: bool) -> str:
        """Delete every order (never called by the checker without --allow-destructive)."""
        ORDERS.clear()
        return "purged"

    return server


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        build_server().run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        build_server().run()
