"""A server (no contract) whose error texts are built to make a reader slow.

Each tool returns an `isError` result whose only text block is one of `HOSTILE_TEXTS`,
each over 200 KiB: a contract head followed by `(errorId: a` over and over (what made the
old reader's regular expression quadratic: 18 s at 215 KiB), a head whose wait never
ends, and prose that keeps almost matching the keywords a text-only error is guessed by.
"""

from __future__ import annotations

from typing import Any, Final

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

_REPEATS: Final = 20_000
HOSTILE_TEXTS: Final[dict[str, str]] = {
    "unclosed_error_ids": "[transient error, retryable] Upstream timeout." + " (errorId: a" * _REPEATS,
    "closed_error_ids": "[business error, not retryable] Refused." + " (errorId: a)" * _REPEATS,
    "endless_wait": "[transient error, retryable after " + "9" * (11 * _REPEATS) + "s] Busy.",
    "near_keywords": "timed " * _REPEATS + "rate-" * _REPEATS + "[" * _REPEATS,
}


def build_hostile_texts_server() -> MCPServer[Any]:
    server = MCPServer("hostile-texts")
    for name, text in HOSTILE_TEXTS.items():

        def fail(text: str = text) -> CallToolResult:
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

        server.add_tool(fail, name=name, description="Fails with a text built to slow a reader down.")
    return server
