"""A script that builds a server and never serves it, so the process exits at once.

The mistake a newcomer makes when the `server.run()` line is missing; the checker must say
what happened instead of only "Connection closed". Run: `python never_served_server.py`.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

from mcp_errors import install

server = install(MCPServer("never-served"))


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text
