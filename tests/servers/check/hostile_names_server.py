"""A stdio MCP server written without an SDK, whose tool names no SDK would let through.

`surrogate`: one tool is named by a lone UTF-16 surrogate (`"\\ud800"`, valid JSON, not
Unicode text, which the SDK's client refuses). `long`: nine tools named by 100,000
characters each, differing only in their last one. A checker must judge them fast, say what
is wrong, and keep its reports small (every call fails in prose, so each tool has findings).
It speaks 2025-11-25 only. Run: `python tests/servers/check/hostile_names_server.py surrogate|long`.
"""

from __future__ import annotations

import sys
from typing import Any

from raw_listing_server import serve  # type: ignore[import-not-found]  # the same line-by-line JSON-RPC loop, with these answers

LONG: str = "reticulate_" + "s" * 99_989
SURROGATE: str = "\ud800"
SCHEMA: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
PLAIN: dict[str, Any] = {"name": "plain", "description": "An ordinary tool.", "inputSchema": SCHEMA}
TOOLS: dict[str, list[dict[str, Any]]] = {
    "surrogate": [{"name": SURROGATE, "description": "Named by a lone surrogate.", "inputSchema": SCHEMA}, PLAIN],
    "long": [
        *({"name": LONG + end, "description": "A long name.", "inputSchema": SCHEMA} for end in "abcdefghi"),
        PLAIN,
    ],
}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    if method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile-names", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS[sys.argv[1]]}
    if method == "tools/call":
        # Every call fails in prose, with no envelope: findings for every tool, each naming it.
        return {"content": [{"type": "text", "text": "Error: the frobnicator jammed"}], "isError": True}
    if method == "ping":
        return {}
    raise LookupError(method)


if __name__ == "__main__":
    serve(answer)
