"""A stdio MCP server written without an SDK, to send what SDK-built servers refuse to send.

Its listing holds one tool whose inputSchema is malformed (`"properties": 5`) beside a
well-behaved one. The Python SDK server will not serialise such a listing and its client
rejects it as a whole on a 2025-11-25 connection; a checker must still judge that one tool
and check the other. It speaks 2025-11-25 only (`server/discover` is not found, as on any
server that predates 2026-07-28). Run: `python tests/servers/check/raw_listing_server.py`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

DESCRIPTION = "The argument customer_email must be an email address; correct it and call again."

TOOLS: list[dict[str, Any]] = [
    {
        "name": "malformed_properties",
        "description": "Its inputSchema's properties is a number.",
        "inputSchema": {"type": "object", "properties": 5},
    },
    {
        "name": "well_behaved",
        "description": "Looks a customer up.",
        "inputSchema": {
            "type": "object",
            "properties": {"customer_email": {"type": "string", "minLength": 3}},
            "required": ["customer_email"],
        },
    },
]


def call_tool(params: dict[str, Any]) -> dict[str, Any]:
    arguments = params.get("arguments") or {}
    email = arguments.get("customer_email")
    if isinstance(email, str) and len(email) >= 3 and set(arguments) == {"customer_email"}:
        return {"content": [{"type": "text", "text": f"Customer {email} has 3 orders."}], "isError": False}
    envelope = {"errorCategory": "validation", "isRetryable": False, "description": DESCRIPTION}
    text = f"[validation error, not retryable] Invalid customer email. {DESCRIPTION}"
    return {"content": [{"type": "text", "text": text}], "structuredContent": envelope, "isError": True}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw-listing", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        return call_tool(params)
    if method == "ping":
        return {}
    raise LookupError(method)


def main() -> None:
    serve(answer)


def serve(answer: Callable[[str, dict[str, Any]], dict[str, Any]]) -> None:
    """Answer JSON-RPC requests on stdin, one line each, with `answer(method, params)` (`LookupError`: not found)."""
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification
        try:
            reply: dict[str, Any] = {"result": answer(message["method"], message.get("params") or {})}
        except LookupError:
            reply = {"error": {"code": -32601, "message": f"Method not found: {message['method']}"}}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], **reply}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
