"""A small shop server for the recovery tests; run it as a script for the stdio transport.

`python shop.py [--idempotency] [--role admin|support] [--third-party] [--resettable]`

`--resettable` adds a `reset` tool that forgets every call so far, so that one process can
serve the stdio tests of a module one after the other, each from a fresh start.
"""

from __future__ import annotations

import argparse
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError
from mcp_types import CallToolResult, ToolAnnotations

from mcp_errors import AccessDeniedError, BusinessRuleError, empty_result, install
from mcp_errors.stores import MemoryStore
from mcp_errors.testing import add_flaky_tool

READ_ONLY = ToolAnnotations(read_only_hint=True)


def build_shop(*, idempotency: bool = False, role: str = "support", resettable: bool = False) -> MCPServer[Any]:
    """The contract-following shop: one tool per recovery case."""
    server: MCPServer[Any] = MCPServer("shop")
    install(server, idempotency=MemoryStore() if idempotency else None)
    charges: list[float] = []
    flaky = [
        add_flaky_tool(server, "search_orders", failures=2, read_only=True, result="3 orders"),
        add_flaky_tool(server, "inventory_status", failures=10**9, read_only=True),
    ]

    if resettable:  # (the idempotency keys the tests send are each new: the store needs no reset)

        @server.tool()
        def reset() -> str:
            """Forget every charge and every flaky tool's calls so far."""
            charges.clear()
            for tool in flaky:
                tool.calls = tool.side_effects = 0
            return "reset"

    @server.tool()
    def charge(amount: float) -> str:
        """Charge the card. Not idempotent: every run charges again."""
        charges.append(amount)
        return f"charged {amount:g}; {len(charges)} charge(s) so far"

    @server.tool()
    def charge_slow_upstream(amount: float) -> str:
        """Charge the card, then lose the upstream's answer: the charge is applied, the call times out."""
        charges.append(amount)
        raise TimeoutError("payment gateway did not answer")

    @server.tool(annotations=READ_ONLY)
    def charges_made() -> int:
        """How many charges were applied (to count side effects over stdio)."""
        return len(charges)

    @server.tool()
    def refund(order_id: str, amount: float) -> str:
        """Refund an order; refunds above 500 need a manager."""
        if amount > 500:
            raise BusinessRuleError(
                "Refund exceeds policy limit",
                description="Refunds above 500 need a manager: escalate to a human.",
                code="REFUND_LIMIT_EXCEEDED",
            )
        return f"refunded {amount:g} on {order_id}"

    @server.tool()
    def delete_account(customer_id: str) -> str:
        """Delete a customer account (admins only)."""
        if role != "admin":
            raise AccessDeniedError(
                "Admins only",
                description="Only an admin may delete accounts: escalate or call as an admin.",
                code="ADMIN_ONLY",
            )
        return f"deleted {customer_id}"

    @server.tool(annotations=READ_ONLY)
    def find_customer(email: str) -> CallToolResult:
        """Look a customer up by email."""
        return empty_result(f"No customer matches email {email!r}; the lookup ran and found nothing.")

    return server


def build_third_party(*, resettable: bool = False) -> MCPServer[Any]:
    """A server without the contract: the SDK turns every failure into text only."""
    server: MCPServer[Any] = MCPServer("third-party")
    calls = {"weather": 0}

    if resettable:

        @server.tool()
        def reset() -> str:
            """Forget every call so far."""
            calls["weather"] = 0
            return "reset"

    @server.tool(annotations=READ_ONLY)
    def weather(city: str) -> str:
        """Weather for a city; the upstream is always 'temporarily unavailable'."""
        calls["weather"] += 1
        raise SDKToolError("Service temporarily unavailable, try again later")

    @server.tool(annotations=READ_ONLY)
    def weather_calls() -> int:
        """How many times `weather` ran."""
        return calls["weather"]

    @server.tool(annotations=READ_ONLY)
    def crash() -> str:
        """Fails with an unexpected exception (the SDK masks it)."""
        raise ValueError("secret detail")

    # Bad arguments get pydantic's report as text, which names the arguments and echoes
    # their values: words such as "permissions" or "403" there say nothing of the failure.
    @server.tool()
    def grant(user: str, permissions: list[str]) -> str:
        """Grant permissions to a user."""
        return f"granted {', '.join(permissions)} to {user}"

    @server.tool(annotations=READ_ONLY)
    def lookup_order(order_id: int) -> str:
        """Look an order up by its number."""
        return f"order {order_id}"

    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--idempotency", action="store_true")
    parser.add_argument("--role", default="support")
    parser.add_argument("--third-party", action="store_true")
    parser.add_argument("--resettable", action="store_true")
    options = parser.parse_args()
    if options.third_party:
        build_third_party(resettable=options.resettable).run()
    else:
        build_shop(idempotency=options.idempotency, role=options.role, resettable=options.resettable).run()
