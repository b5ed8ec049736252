"""Servers for the real peers of the interop tests, next to `contract_server.py`.

The interop tests run the TypeScript SDK clients and the Inspector against
`contract_server.py` itself. This script adds the two shapes they need on top:

- `python interop_server.py plain` serves over stdio a server *without* `install` whose
  tool returns the error envelope by hand: its outputSchema is not widened, which is what
  strict clients reject.
- `python interop_server.py http` serves the contract server over streamable HTTP on a free
  port of 127.0.0.1, for the conformance suite, and prints the port once it listens. The
  conformance scenarios call fixed tool names, so `/<tool>/mcp` is a contract server whose
  `test_error_handling` makes the failing call of `CASES` for `<tool>`, through `install`
  and argument validation as any call, and whose `test_simple_text` returns the empty result.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
from contract_server import CASES, Case, Order, build_server  # type: ignore[import-not-found]
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from mcp_errors import BusinessRuleError, to_error_result

EMPTY_PATH = "search_orders"
"""The mount whose `test_simple_text` is the contract server's empty result."""


def build_plain_server() -> MCPServer[Any]:
    """A server without `install`: one tool with an outputSchema returns an envelope by hand."""
    server: MCPServer[Any] = MCPServer("plain")

    @server.tool()
    def refund(order_id: str, amount: float) -> Order:
        """Refunds above 500 need a manager."""
        error = BusinessRuleError(
            "Refund exceeds policy limit",
            description=f"Refunds above 500 need a manager; {amount:g} was asked. Escalate to a human.",
            code="REFUND_LIMIT_EXCEEDED",
        )
        # The SDK passes an `isError` CallToolResult through, but advertises the narrow schema.
        return to_error_result(error, tool_name="refund")

    return server


def build_conformance_server(case: Case | None) -> MCPServer[Any]:
    """The contract server plus the tools the conformance scenarios call by name."""
    server = build_server()

    @server.tool()  # type: ignore[untyped-decorator]
    async def test_error_handling() -> CallToolResult:
        """Fails like one contract call (conformance scenario tools-call-error)."""
        if case is None:
            raise RuntimeError("this mount has no failing case")
        result: CallToolResult = await server.call_tool(case.tool, case.arguments)
        return result

    @server.tool()  # type: ignore[untyped-decorator]
    async def test_simple_text() -> CallToolResult:
        """The contract's empty result (conformance scenario tools-call-simple-text)."""
        result: CallToolResult = await server.call_tool("search_orders", {"customer": "nobody@example.com"})
        return result

    return server  # type: ignore[no-any-return]


def http_app() -> Any:
    """One Starlette app mounting a conformance server per contract case."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    cases: dict[str, Case | None] = {case.tool: case for case in CASES}
    cases[EMPTY_PATH] = None
    apps = {path: build_conformance_server(case).streamable_http_app() for path, case in cases.items()}

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # Each mounted app runs its own session manager in its lifespan; Mount does not.
        async with contextlib.AsyncExitStack() as stack:
            for app in apps.values():
                await stack.enter_async_context(app.router.lifespan_context(app))
            yield

    return Starlette(routes=[Mount(f"/{path}", app=app) for path, app in apps.items()], lifespan=lifespan)


def serve_http() -> None:
    import uvicorn

    # Bound before the port is printed, so the caller may connect at once: the kernel
    # queues connections until uvicorn accepts them. No free-port race, no polling.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    server = uvicorn.Server(uvicorn.Config(http_app(), log_level="warning", timeout_graceful_shutdown=1))
    anyio.run(functools.partial(server.serve, sockets=[sock]))


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["plain"]:
            build_plain_server().run("stdio")
        case ["http"]:
            serve_http()
        case _:
            sys.exit("usage: interop_server.py plain|http")
