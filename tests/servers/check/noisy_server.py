"""A stdio server that prints to its stdout, where only MCP messages belong (rule ME021).

`python noisy_server.py`: a start-up banner on stdout, then a well-behaved server.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

from mcp_errors import install


def build_server() -> MCPServer:
    server = install(MCPServer("noisy"))

    @server.tool()
    def echo(text: str) -> str:
        """A tool that behaves."""
        return text

    return server


if __name__ == "__main__":
    print("starting up, hello!", flush=True)  # the defect: a banner on the protocol stream
    sys.stdout.flush()
    build_server().run()
