"""Gateway servers: tools that call another MCP server and let its JSON-RPC errors escape.

A gateway's tool holds an `mcp.Client` to a downstream server. When the downstream does
not answer within the client's read timeout, the client raises `MCPError(-32001)`; a tool
that does not catch it lets a JSON-RPC error out of the tool. `install` must turn it into
a contract result like any other exception.

`build_gateway(kind)` builds the gateway as an `MCPServer` or a fastmcp `FastMCP`, with:

- `forward_slow`: calls the downstream's `slow` tool, which never answers in time;
- `leak_downstream_error`: raises a JSON-RPC error whose text holds a connection string;
- `needs_url_elicitation`: raises the SDK's `UrlElicitationRequiredError` (-32042), which
  asks the client to act and must stay a JSON-RPC error (fastmcp itself masks it);
- `needs_sampling`: raises `-32021` (the client lacks a capability, SEP-2575), which must
  stay a JSON-RPC error too.
"""

from __future__ import annotations

from typing import Any, Literal

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError, UrlElicitationRequiredError
from mcp_types import INTERNAL_ERROR, MISSING_REQUIRED_CLIENT_CAPABILITY, ElicitRequestURLParams

from mcp_errors import install

DOWNSTREAM_TIMEOUT = 0.05
"""Seconds the gateway's client waits for the downstream (a real read timeout)."""
LEAKED_DSN = "postgresql://admin:hunter2-Sup3rS3cret@db.internal/prod"


def build_downstream() -> MCPServer[Any]:
    downstream = MCPServer("downstream")

    @downstream.tool()
    async def slow() -> str:
        await anyio.Event().wait()  # never set: the gateway's read timeout ends the call
        return "never"

    return downstream


async def _forward_slow() -> str:
    async with Client(build_downstream(), read_timeout_seconds=DOWNSTREAM_TIMEOUT) as client:
        result = await client.call_tool("slow", {})
    return str(result.content)


def _leak_downstream_error() -> str:
    raise MCPError(INTERNAL_ERROR, f"downstream failed: could not connect to {LEAKED_DSN}")


def _needs_url_elicitation() -> str:
    raise UrlElicitationRequiredError(
        [ElicitRequestURLParams(message="Sign in first", url="https://example.com/login", elicitation_id="login-1")]
    )


def _needs_sampling() -> str:
    raise MCPError(MISSING_REQUIRED_CLIENT_CAPABILITY, "This tool needs a client that supports sampling")


def build_gateway(kind: Literal["mcpserver", "fastmcp"]) -> Any:
    """The gateway as an installed `MCPServer` or fastmcp `FastMCP`."""
    server: Any
    if kind == "mcpserver":
        server = MCPServer("gateway")
    else:
        from fastmcp import FastMCP

        server = FastMCP("gateway")
    for function, name in (
        (_forward_slow, "forward_slow"),
        (_leak_downstream_error, "leak_downstream_error"),
        (_needs_url_elicitation, "needs_url_elicitation"),
        (_needs_sampling, "needs_sampling"),
    ):
        server.tool(name=name)(function)
    return install(server)
