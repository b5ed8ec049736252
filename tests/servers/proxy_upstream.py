"""An upstream for `mcp-errors proxy`: a server that does *not* follow the contract.

Built with the SDK's `MCPServer` and no `install`, so its failures come out the way most
servers send them: prose in an `isError` result, raised JSON-RPC errors, structured fields
of its own, SEP-3313 `_meta`. It also has what the proxy must pass through untouched
(successes, empty results, progress, foreign `_meta`, resources, prompts) and what it must
survive (a child that dies in the middle of a call). Run it over stdio:
`python tests/servers/proxy_upstream.py`, or over streamable HTTP with `... http [PORT]`
(stateful) or `... http-stateless` (it prints its port).

Per-process counters (`attempts`, `count_write`) let the tests see how often the proxy
really called the upstream.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import BaseModel

READ_ONLY = ToolAnnotations(read_only_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, idempotent_hint=False)

# Planted in failure texts: none of these may reach the client through the proxy.
LEAKED_SECRET = "sk-live-9f8e7d6c5b4a39281706"
LEAKED_PATH = "/srv/upstream/app/handlers.py"


class Forecast(BaseModel):
    city: str
    celsius: float


def build_server() -> MCPServer[Any]:
    """The upstream server; every tool is described in its docstring.

    Its name is `proxy-upstream`, or `$PROXY_UPSTREAM_NAME`.
    """
    server: MCPServer[Any] = MCPServer(os.environ.get("PROXY_UPSTREAM_NAME", "proxy-upstream"))
    calls: Counter[str] = Counter()
    notes: dict[str, list[str]] = {}

    @server.tool(annotations=READ_ONLY)
    def echo(text: str) -> str:
        """Return `text` unchanged."""
        return text

    @server.tool(annotations=READ_ONLY)
    def forecast(city: str) -> Forecast:
        """A typed result: the tool advertises an outputSchema."""
        if city == "Atlantis":
            raise ValueError(f"no station for {city}")
        return Forecast(city=city, celsius=21.5)

    @server.tool(annotations=READ_ONLY)
    def search(query: str) -> list[str]:
        """Find nothing: the SDK answers with no content at all."""
        return []

    @server.tool(annotations=READ_ONLY)
    def nothing() -> CallToolResult:
        """A success with no content and no structuredContent."""
        return CallToolResult(content=[])

    @server.tool(annotations=READ_ONLY)
    def structured_only() -> CallToolResult:
        """A success whose data is only in structuredContent (`content: []`)."""
        return CallToolResult(content=[], structured_content={"items": ["a", "b", "c"]})

    @server.tool(annotations=READ_ONLY)
    def fail(message: str) -> str:
        """Fail with `message` as prose (`isError` with one text block)."""
        raise SDKToolError(message)

    @server.tool(annotations=READ_ONLY)
    def fail_jsonrpc(code: int, message: str, data: dict[str, Any] | None = None) -> str:
        """Answer with a JSON-RPC error instead of a result."""
        raise MCPError(code, message, data)

    @server.tool(annotations=READ_ONLY)
    def open_note(note: str) -> str:
        """Look `note` up in an index resource, missing: -32002, naming the resource the server looked for."""
        raise MCPError(-32002, "Resource not found: file:///srv/notes/index.json")

    @server.tool(annotations=READ_ONLY)
    def fail_structured(structured: dict[str, Any], text: str = "failed") -> CallToolResult:
        """An `isError` result with the given structuredContent."""
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content=structured, is_error=True
        )

    @server.tool(annotations=READ_ONLY)
    def fail_meta(failure: dict[str, Any], text: str = "failed") -> CallToolResult:
        """An `isError` result with SEP-3313 `_meta["io.modelcontextprotocol/toolFailure"]`."""
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            is_error=True,
            _meta={"io.modelcontextprotocol/toolFailure": failure, "trace": "kept"},
        )

    @server.tool(annotations=READ_ONLY)
    def claim_meta(meta: dict[str, Any], failed: bool = False) -> CallToolResult:
        """Answer with `_meta` of the caller's choosing (what a hostile server can write), as a success or failure."""
        return CallToolResult(content=[TextContent(type="text", text="done")], is_error=failed, _meta=meta)

    @server.tool(annotations=READ_ONLY)
    def with_meta(ctx: Context) -> CallToolResult:
        """Succeed, echoing the request's `_meta` in the result's `_meta`."""
        request_meta = dict(ctx.request_context.meta or {})
        return CallToolResult(
            content=[TextContent(type="text", text="ok")],
            _meta={"echo": {k: v for k, v in request_meta.items() if not k.startswith("io.modelcontextprotocol/")}},
        )

    @server.tool(annotations=READ_ONLY)
    def environment(name: str) -> str:
        """The child's value of environment variable `name` and its working directory."""
        return f"{os.environ.get(name, '<unset>')}|{os.getcwd()}"

    @server.tool(annotations=READ_ONLY)
    def flaky_read(key: str, failures: int = 2) -> str:
        """Time out `failures` times per key, then succeed."""
        calls[key] += 1
        if calls[key] <= failures:
            raise SDKToolError(f"upstream read timed out (attempt {calls[key]})")
        return f"read after {calls[key]} attempts"

    @server.tool(annotations=READ_ONLY)
    def flaky_status(key: str, failures: int = 2, status: int = 504) -> CallToolResult:
        """Fail `failures` times per key with an HTTP `status` it declares (`{"status": 504}`), then succeed."""
        calls[key] += 1
        if calls[key] <= failures:
            return CallToolResult(
                content=[TextContent(type="text", text=f"backend answered {status}")],
                structured_content={"status": status, "error": f"backend answered {status} (attempt {calls[key]})"},
                is_error=True,
            )
        return _text(f"read after {calls[key]} attempts")

    @server.tool(annotations=READ_ONLY)
    async def stall(key: str, ctx: Context, failures: int = 2, hang: bool = False) -> CallToolResult:
        """Fail `failures` times per key with a declared 503; then, with `hang`, report progress and never answer."""
        calls[key] += 1
        if calls[key] <= failures:
            return CallToolResult(
                content=[TextContent(type="text", text="service unavailable")],
                structured_content={"status": 503, "error": "service unavailable"},
                is_error=True,
            )
        if hang:
            await ctx.report_progress(1, 2, "stalled")
            await anyio.sleep_forever()
        return _text(f"answered after {calls[key]} calls")

    @server.tool(annotations=WRITES)
    def limited(user: str) -> CallToolResult:
        """A write with a per-user quota that `mallory` has used up (HTTP 429, declared); others get through."""
        if user == "mallory":
            text = "429 Too Many Requests: per-user rate limit exceeded for user mallory"
            return CallToolResult(
                content=[TextContent(type="text", text=text)],
                structured_content={"status": 429, "error": text},
                is_error=True,
            )
        calls[f"limited:{user}"] += 1
        return _text(f"done for {user}")

    @server.tool(annotations=READ_ONLY)
    def read_note(path: str) -> str:
        """The text of the file at `path` (what a filesystem server's read tool returns)."""
        with open(path, encoding="utf-8") as file:
            return file.read()

    @server.tool(annotations=WRITES)
    def flaky_write(key: str) -> str:
        """A write that always times out, outcome unknown."""
        calls[key] += 1
        raise SDKToolError("the ledger did not answer in time")

    @server.tool(annotations=WRITES)
    def busy_write(key: str, failures: int = 1) -> str:
        """A write refused before it runs ('database locked') `failures` times per key."""
        calls[key] += 1
        if calls[key] <= failures:
            raise SDKToolError("database is locked, nothing was written")
        return f"written after {calls[key]} attempts"

    @server.tool(annotations=WRITES)
    def sign_in_first(key: str) -> str:
        """Ask for a sign-in at a URL (-32042, as servers of 2025-11-25 do) on the first call per key, then run."""
        calls[key] += 1
        if calls[key] == 1:
            url = f"https://auth.example.com/connect?state={key}"
            elicitation = {"mode": "url", "elicitationId": f"sign-in-{key}", "url": url, "message": "Sign in first."}
            raise MCPError(-32042, "Sign in first.", {"elicitations": [elicitation]})
        return f"signed in, ran after {calls[key]} attempts"

    @server.tool(annotations=WRITES)
    def count_write(key: str) -> str:
        """A write that counts how often it ran for `key`."""
        calls[key] += 1
        return f"ran {calls[key]} time(s)"

    @server.tool(annotations=WRITES)
    def refuse(key: str) -> str:
        """Count the call for `key`, then refuse it: "Invalid order id" (a validation failure)."""
        calls[key] += 1
        raise SDKToolError(f"Invalid order id: {key!r} is not an order id")

    @server.tool(annotations=WRITES)
    def remember(text: str, ctx: Context) -> str:
        """Keep `text` in this MCP session's notes (what a stateful server holds for its caller)."""
        session = notes.setdefault(_session_of(ctx), [])
        session.append(text)
        return f"{len(session)} note(s)"

    @server.tool(annotations=READ_ONLY)
    def recall(ctx: Context) -> list[str]:
        """This MCP session's notes."""
        return notes.get(_session_of(ctx), [])

    @server.tool(annotations=READ_ONLY)
    def attempts(key: str) -> int:
        """How often a counting tool ran for `key`."""
        return calls[key]

    @server.tool(annotations=READ_ONLY)
    async def count_up(steps: int, ctx: Context) -> str:
        """Report progress `steps` times, then answer."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"counted to {steps}"

    @server.tool(annotations=READ_ONLY)
    def log_to_stderr(text: str) -> str:
        """Write `text` to the server's stderr."""
        print(text, file=sys.stderr, flush=True)
        return "logged"

    cancelled = anyio.Event()

    @server.tool(annotations=READ_ONLY)
    async def hang(pid_file: str, ctx: Context) -> str:
        """Write this process's pid to `pid_file`, report progress, then never answer."""
        await anyio.Path(pid_file).write_text(str(os.getpid()))
        await ctx.report_progress(1, 2, "started")
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "unreachable"

    @server.tool(annotations=READ_ONLY)
    async def was_cancelled() -> bool:
        """Whether a `hang` call was cancelled (waiting up to 10 s for it to be)."""
        with anyio.move_on_after(10):
            await cancelled.wait()
        return cancelled.is_set()

    @server.tool(annotations=WRITES)
    def crash() -> str:
        """Exit the whole server in the middle of the call."""
        os._exit(3)

    @server.resource("note://greeting")
    def greeting() -> str:
        """A static resource."""
        return "hello from upstream"

    @server.resource("note://retired/{name}")
    def retired(name: str) -> str:
        """A resource a server of 2025-11-25 and earlier reports missing with -32002."""
        raise MCPError(-32002, "Resource not found", {"uri": f"note://retired/{name}"})

    @server.prompt()
    def summarize(topic: str) -> str:
        """A prompt with one argument."""
        return f"Summarize {topic}."

    return server


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _session_of(ctx: Context) -> str:
    """The caller's MCP session: its `Mcp-Session-Id` over HTTP, the one stdio session otherwise."""
    return (ctx.headers or {}).get("mcp-session-id", "stdio")


def build_paged_server(tools: int = 10, page: int = 4) -> Server[Any]:
    """A low-level server that lists its tools `page` at a time (`tool_0` ... `tool_<n-1>`)."""

    async def on_list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        names = [f"tool_{index}" for index in range(start, min(start + page, tools))]
        listed = [Tool(name=name, input_schema={"type": "object"}) for name in names]
        following = start + page
        return ListToolsResult(tools=listed, next_cursor=str(following) if following < tools else None)

    async def on_call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=f"{params.name} ran")])

    return Server("paged", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve_paged_over_stdio() -> None:
    server = build_paged_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve_http(port: int = 0, *, stateless: bool = False, build: Callable[[], MCPServer[Any]] = build_server) -> None:
    """Serve `build()` over streamable HTTP on 127.0.0.1 (a free port by default), and print the port once bound.

    Stateful by default (it gives each session an `Mcp-Session-Id`); `stateless` gives none.
    """
    import functools
    import socket

    import uvicorn

    # Bound before the port is printed: the kernel queues connections until uvicorn accepts.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart on the same port
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)
    app = build().streamable_http_app(stateless_http=stateless)
    # Tests stop it with SIGTERM (a restart, an upstream gone): unbounded, uvicorn's shutdown
    # waits for every open response, and a proxy's standing GET stream need not end.
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1))
    anyio.run(functools.partial(server.serve, sockets=[sock]))


if __name__ == "__main__":
    match sys.argv[1:]:
        case ["http"]:
            serve_http()
        case ["http", port]:
            serve_http(int(port))
        case ["http-stateless"]:
            serve_http(stateless=True)
        case ["paged"]:
            anyio.run(serve_paged_over_stdio)
        case _:
            build_server().run()
