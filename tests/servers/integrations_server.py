"""The server the agent-framework integration tests call: one tool per outcome, made with `install`.

Run as a script it serves over stdio, so the frameworks' own stdio clients can spawn it.
`calls` counts every call per tool, so a test can tell how often a framework resent one.
"""

from __future__ import annotations

from collections import Counter

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations

from mcp_errors import (
    AccessDeniedError,
    BusinessRuleError,
    FieldError,
    InputValidationError,
    TransientError,
    empty_result,
    install,
)

FLAKY_FAILURES = 1
"""How many times `flaky_quote` fails (transient) before it answers."""

FAILING_CALLS: list[tuple[str, dict[str, object], str]] = [
    ("quote_down", {"symbol": "ACME"}, "transient"),
    ("cancel_order", {"order_id": "abc"}, "validation"),
    ("refund", {"order_id": "#12345", "amount": "lots"}, "validation"),
    ("refund", {"order_id": "#12345", "amount": 900}, "business"),
    ("delete_account", {"account_id": "a-1"}, "permission"),
]
"""One call per category (and argument validation): tool, arguments, the category it must report."""

SERVER_SCRIPT = __file__
"""Run with the current interpreter to serve over stdio."""


def build_server() -> MCPServer:
    """A fresh server with its own call counter (`server.calls`)."""
    server = install(MCPServer("integrations"))
    calls: Counter[str] = Counter()
    server.calls = calls  # type: ignore[attr-defined]

    read_only = ToolAnnotations(read_only_hint=True)

    @server.tool(annotations=read_only)
    def flaky_quote(symbol: str) -> str:
        """Fails once with a transient error, then answers."""
        calls["flaky_quote"] += 1
        if calls["flaky_quote"] <= FLAKY_FAILURES:
            raise TransientError(
                "Quote service timed out",
                description="The quote service is busy. Resend the same call shortly.",
                code="UPSTREAM_TIMEOUT",
            )
        return f"{symbol}: 42.0"

    @server.tool(annotations=read_only)
    def quote_down(symbol: str) -> str:
        """Always fails with a transient error."""
        calls["quote_down"] += 1
        raise TransientError(
            "Quote service unavailable",
            description="The quote service is down. Resend the same call later.",
            code="UPSTREAM_DOWN",
        )

    @server.tool()
    def cancel_order(order_id: str) -> str:
        """Rejects the order id as malformed."""
        calls["cancel_order"] += 1
        raise InputValidationError(
            "Order id is malformed",
            description="Order ids look like #12345. Fix order_id and call again.",
            code="BAD_ORDER_ID",
            field_errors=[FieldError("order_id", "wrong format", expected="#NNNNN", received=order_id[:20])],
        )

    @server.tool()
    def refund(order_id: str, amount: float) -> str:
        """Refuses refunds over the policy limit."""
        calls["refund"] += 1
        if amount > 500:
            raise BusinessRuleError(
                "Refund exceeds policy limit",
                description="Refunds above 500 need a manager. Escalate to a human with the details.",
                code="REFUND_LIMIT_EXCEEDED",
            )
        return f"refunded {amount:g} on {order_id}"

    @server.tool()
    def delete_account(account_id: str) -> str:
        """The caller may not delete accounts."""
        calls["delete_account"] += 1
        raise AccessDeniedError(
            "Not allowed to delete accounts",
            description="Your role cannot delete accounts. Ask an administrator; do not retry.",
            code="ROLE_FORBIDDEN",
        )

    @server.tool()
    def find_customer(email: str) -> CallToolResult:
        """Runs the lookup and matches nothing."""
        calls["find_customer"] += 1
        return empty_result(f"No customer matches email {email!r}; the lookup ran and found nothing.")

    @server.tool()
    def call_count(tool: str) -> int:
        """How many times `tool` was called on this server process."""
        return calls[tool]

    return server


if __name__ == "__main__":
    build_server().run("stdio")
