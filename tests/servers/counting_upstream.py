"""A stdio MCP server that records every message it gets and refuses a second `initialize`.

The gateway's front does each server's handshake itself before the proxy's imports, and the
SDK's client adopts the running server afterwards: its own `initialize` must never reach the
server. This server, written with the standard library only, exits with status 7 (its stderr
says why) when a second `initialize` arrives, and appends every message it receives, one JSON
line each, to the file named by `COUNTING_UPSTREAM_LOG` (when set).

Right after its `initialize` answer it sends a `notifications/message` log line (a message
from the server the front reads before the SDK takes over: it must still reach the SDK).

Tools: `echo` (returns its `text`), `fail` (an `isError` result in prose, which the proxy
classifies), `crash` (the process exits with status 9 in the middle of the call).
`COUNTING_UPSTREAM_PAGES=1` lists the tools one per page (`nextCursor`);
`COUNTING_UPSTREAM_GROWS=1` adds a tool `late` from its second listing on (a list that changed
between the front's listing and the gateway's).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

TOOLS: list[dict[str, Any]] = [
    {
        "name": "echo",
        "title": "Echo",
        "description": "Say the text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "outputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "fail",
        "description": "Fails in prose.",
        "inputSchema": {"type": "object", "properties": {}},
        "_meta": {"example.com/kept": 1},
    },
    {"name": "crash", "description": "Exits in the middle of the call.", "inputSchema": {"type": "object"}},
]


def main() -> None:
    log_path = os.environ.get("COUNTING_UPSTREAM_LOG")
    paged = os.environ.get("COUNTING_UPSTREAM_PAGES") == "1"
    grows = os.environ.get("COUNTING_UPSTREAM_GROWS") == "1"
    listings = 0
    initialized = False
    out = sys.stdout

    def send(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if log_path:
            with open(log_path, "a", encoding="utf-8") as log:
                log.write(json.dumps(message) + "\n")
        method, ident = message.get("method"), message.get("id")
        if method == "initialize":
            if initialized:
                print("counting upstream: a second initialize arrived", file=sys.stderr, flush=True)
                sys.exit(7)
            initialized = True
            send(
                {
                    "jsonrpc": "2.0",
                    "id": ident,
                    "result": {
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {"listChanged": False}, "logging": {}},
                        "serverInfo": {"name": "counting", "version": "1.0"},
                    },
                }
            )
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": "counting upstream started"},
                }
            )
        elif method == "tools/list":
            listings += 1
            tools = [*TOOLS, {"name": "late", "inputSchema": {"type": "object"}}] if grows and listings > 1 else TOOLS
            if paged:
                cursor = int((message.get("params") or {}).get("cursor") or 0)
                page: dict[str, Any] = {"tools": tools[cursor : cursor + 1]}
                if cursor + 1 < len(tools):
                    page["nextCursor"] = str(cursor + 1)
                send({"jsonrpc": "2.0", "id": ident, "result": page})
            else:
                send({"jsonrpc": "2.0", "id": ident, "result": {"tools": tools}})
        elif method == "tools/call":
            params = message.get("params") or {}
            name, arguments = params.get("name"), params.get("arguments") or {}
            if name == "crash":
                sys.exit(9)
            if name == "echo":
                text = str(arguments.get("text", ""))
                result: dict[str, Any] = {
                    "content": [{"type": "text", "text": text}],
                    "structuredContent": {"text": text},
                }
            elif name == "late":
                result = {"content": [{"type": "text", "text": "late"}]}
            elif name == "fail":
                result = {
                    "content": [{"type": "text", "text": "Error: permission denied for this file"}],
                    "isError": True,
                }
            else:
                send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})
                continue
            send({"jsonrpc": "2.0", "id": ident, "result": result})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": ident, "result": {}})
        elif ident is not None:
            send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
