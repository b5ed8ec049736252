"""Stdio servers that misbehave at the process level: `hang`, `block`, `crash` or `silent`.

`python misbehaving_server.py hang`: one tool never answers, one answers well.
`python misbehaving_server.py block`: one tool blocks the server's event loop (a sync sleep in
an async tool), so the server answers nothing after it; the other tool is fine.
`python misbehaving_server.py crash`: the process exits in the middle of a tool call.
`python misbehaving_server.py silent`: reads stdin and never answers, not even the handshake.
`python misbehaving_server.py slow-start`: starts serving only after `SLOW_START_SECONDS`, then
behaves (a server behind `uv run` and a proxy on a loaded machine).
"""

from __future__ import annotations

import os
import sys
import time

import anyio
from mcp.server.mcpserver import MCPServer

from mcp_errors import install

SLOW_START_SECONDS = 3.0


def build_server(behaviour: str) -> MCPServer:
    server = install(MCPServer(f"misbehaving-{behaviour}"))

    @server.tool()
    async def lookup(customer_email: str) -> str:
        """A tool that misbehaves."""
        if behaviour == "crash":
            sys.stderr.write("fatal: lookup backend gone\n")
            sys.stderr.flush()
            os._exit(3)
        if behaviour == "slow-start":
            return f"No customer matches {customer_email}; the lookup ran and found nothing."
        if behaviour == "block":
            time.sleep(3600)  # noqa: ASYNC251 - the defect this server exists to have
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool()
    def echo(text: str) -> str:
        """A tool that behaves."""
        return text

    return server


def main() -> None:
    behaviour = sys.argv[1]
    if behaviour == "silent":
        for _ in sys.stdin:
            pass
        return
    if behaviour == "slow-start":
        time.sleep(SLOW_START_SECONDS)
    build_server(behaviour).run()


if __name__ == "__main__":
    main()
