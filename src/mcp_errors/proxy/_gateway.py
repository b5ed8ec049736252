"""The gateway: every server of a host's configuration behind the contract, from one process.

`mcp-errors proxy --config FILE` builds one proxy per server with `build_proxy` (each with
its own rules, circuit breaker, restart notice, repeat guard and key namespace
`proxy/<server>`) and mounts them on one fastmcp server, which names their tools
`<server>_<tool>` as fastmcp's multi-server configurations do. The command starts the stdio
servers before it imports fastmcp (`_gateway_config`, `_spawn`); their transports adopt them.
Over stdio, a front with the standard library only (`_front`) answers the host's `initialize`
and `tools/list` meanwhile, with each server's handshake done; the gateway then serves
through it (`serve_through_front`).

One server never takes the others down. Each is started and listed on its own, within the
start-up time; one that does not start (it exits, hangs, or is not found) is left out, the
log says which and why, and it is tried again in the background, with a growing wait: when
it comes up it is mounted and every front session gets `notifications/tools/list_changed`.
Until then a call to one of its tools gets a `transient`, `UPSTREAM_UNAVAILABLE`,
`not_executed` result from the gateway. Once up, a server that exits is the proxy's
ordinary case (`_child.py`: started again, calls answered as unavailable meanwhile, the
last good list kept). `require_all` restores fail-fast start-up.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import logging
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
from fastmcp import FastMCP
from fastmcp.exceptions import NotFoundError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import Tool, ToolResult
from mcp.server.session import ServerSession
from mcp_types import CallToolRequestParams, ListToolsRequest

from mcp_errors._server.arguments import unknown_tool
from mcp_errors._server.classify import new_error_id
from mcp_errors._server.fastmcp import error_tool_result
from mcp_errors._shared.envelope import FailureDetails
from mcp_errors.proxy._child import ChildProcess
from mcp_errors.proxy._front import GATEWAY_NAME, Front, message_line
from mcp_errors.proxy._gateway_config import ServerEntry, read_server_entries
from mcp_errors.proxy._hosts import HostConfigError
from mcp_errors.proxy._middleware import unavailable_failure
from mcp_errors.proxy._rules import Rules, RulesError, load_rules
from mcp_errors.proxy._server import (
    ProxySettings,
    StartupError,
    Upstream,
    build_proxy,
    check_upstream,
    close_upstream,
    handshake_timeout,
)
from mcp_errors.proxy._spawn import EarlyStart

__all__ = [
    "Gateway",
    "GatewayServer",
    "read_gateway_config",
    "run_gateway",
    "serve_gateway",
    "servers_of",
]

logger = logging.getLogger("mcp_errors.proxy")

FIRST_RETRY_WAIT: Final = 1.0
MAX_RETRY_WAIT: Final = 30.0


@dataclass(frozen=True)
class GatewayServer:
    """One server of the gateway: its name (the tools' prefix), what it runs, and its rules."""

    name: str
    upstream: Upstream
    rules: Rules | None = None
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """What an HTTP upstream gets on every request (the entry's `headers`), whoever calls."""


def read_gateway_config(path: Path, *, packs: bool = True) -> list[GatewayServer]:
    """The servers of a host's configuration file, ready to start (disabled ones left out).

    An entry already wrapped by `mcp-errors wrap` runs the server it wraps (with its `--rules`).
    Each entry may name a rules file (`"rules": "git.toml"`, relative to the file); a server
    without one gets the shipped rule pack it is recognised by, unless `packs` is off.

    Args:
        path: The file.
        packs: Give recognised servers their shipped rule packs.

    Raises:
        HostConfigError: If the file is not a host's configuration, or an entry cannot be run.
        RulesError: If a server's rules file cannot be read.
    """
    return servers_of(read_server_entries(path, packs=packs), {})


def servers_of(entries: Sequence[ServerEntry], early: Mapping[str, EarlyStart]) -> list[GatewayServer]:
    """The servers to front for `entries`, their rules loaded; a stdio server in `early` (by name),
    already started (`_spawn.EarlyStart`), is adopted by its transport instead of started again."""
    servers = []
    for entry in entries:
        rules = load_rules(entry.rules) if entry.rules is not None else None
        if entry.command is None:
            assert entry.url is not None
            servers.append(GatewayServer(entry.name, entry.url, rules, headers=entry.headers))
            continue
        command, *args = entry.command
        child = ChildProcess(command, args, env=entry.env, cwd=entry.cwd, early=early.get(entry.name))
        servers.append(GatewayServer(entry.name, child, rules))
    return servers


@dataclass
class _Member:
    server: GatewayServer
    proxy: FastMCP[Any]
    up: bool = False
    reason: str = "is starting"
    retry_at: float | None = None
    tools: frozenset[str] = frozenset()
    """The server's tool names as last listed (unprefixed): calls to them go straight to its proxy."""


class Gateway:
    """Many proxies mounted on one fastmcp server, each started, listed and failing on its own.

    Args:
        servers: The servers to front, by name.
        settings: What every server's proxy does (rules come from each server; the key
            namespace is `proxy/<server>` unless the settings name one, then `<it>/<server>`).
        startup_seconds: How long each server may take to start and list its tools.
        require_all: Fail start-up when any server does not start, instead of leaving it out.
    """

    def __init__(
        self,
        servers: Sequence[GatewayServer],
        settings: ProxySettings | None = None,
        *,
        startup_seconds: float = 30.0,
        require_all: bool = False,
    ) -> None:
        settings = settings or ProxySettings()
        self.startup_seconds = startup_seconds
        self.require_all = require_all
        self.server: FastMCP[Any] = FastMCP(GATEWAY_NAME)
        self.members: dict[str, _Member] = {}
        prefix = settings.store_namespace or "proxy"
        for each in servers:
            if each.name in self.members:
                raise ValueError(f"two servers are named {each.name!r}")
            own = dataclasses.replace(
                settings, rules=each.rules, name=each.name, store_namespace=f"{prefix}/{each.name}"
            )
            self.members[each.name] = _Member(each, build_proxy(each.upstream, own, headers=each.headers))
        # The SDK makes a session object per request, over one connection per front session:
        # the latest of each connection's is kept, to tell it of new tools.
        self._sessions: weakref.WeakKeyDictionary[Any, ServerSession] = weakref.WeakKeyDictionary()
        self.server.add_middleware(_GatewayMiddleware(self))

    async def start(self, *, background: anyio.abc.TaskGroup | None = None) -> None:
        """Start every server at once and mount those that came up; keep trying the others in `background`.

        Raises:
            StartupError: With `require_all`, naming every server that did not start.
        """
        async with anyio.create_task_group() as starting:
            for member in self.members.values():
                starting.start_soon(self._try_start, member)
        down = [member for member in self.members.values() if not member.up]
        if down and self.require_all:
            raise StartupError("\n".join(f"{m.server.name}: {m.reason}" for m in down))
        if background is not None:
            for member in down:
                background.start_soon(self._keep_trying, member)

    async def aclose(self) -> None:
        """Stop every server's child (or its HTTP sessions) and the key stores."""
        with anyio.CancelScope(shield=True):
            for member in self.members.values():
                try:
                    await close_upstream(member.proxy, member.server.upstream)
                except Exception:  # one that cannot be closed must not keep the others open
                    logger.warning("Closing server %r failed", member.server.name, exc_info=True)

    def member_of(self, tool: str) -> _Member | None:
        """The server whose prefix `tool` carries (the longest, as names may hold '_')."""
        found = [m for name, m in self.members.items() if tool.startswith(f"{name}_")]
        return max(found, key=lambda m: len(m.server.name), default=None)

    async def _try_start(self, member: _Member) -> bool:
        name = member.server.name
        upstream = member.server.upstream
        try:
            if isinstance(upstream, ChildProcess) and upstream.early_timed_out():
                raise handshake_timeout(upstream, self.startup_seconds)
            tools = await check_upstream(member.proxy, upstream, seconds=self.startup_seconds)
        except StartupError as exc:
            member.reason = str(exc)
            logger.warning(
                "Gateway: server %r did not start; the others serve without it, and it is tried again. %s", name, exc
            )
            if isinstance(upstream, ChildProcess):
                with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                    await upstream.disconnect()
            return False
        self.server.mount(member.proxy, namespace=name)
        member.up, member.reason, member.tools = True, "is up", frozenset(tools)
        logger.info("Gateway: server %r is up with %d tools", name, len(tools))
        return True

    async def _keep_trying(self, member: _Member) -> None:
        wait = FIRST_RETRY_WAIT
        while True:
            member.retry_at = anyio.current_time() + wait
            await anyio.sleep(wait)
            if await self._try_start(member):
                member.retry_at = None
                logger.warning("Gateway: server %r came up; its tools are listed now", member.server.name)
                await self._tell_sessions()
                return
            wait = min(wait * 2, MAX_RETRY_WAIT)

    def _seen(self, session: ServerSession | None) -> None:
        connection = getattr(session, "_connection", None)
        if session is not None and connection is not None:
            self._sessions[connection] = session

    async def _tell_sessions(self) -> None:
        for connection, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:  # a session that ended meanwhile
                self._sessions.pop(connection, None)


class _GatewayMiddleware(Middleware):
    """Remembers front sessions (to tell them of new tools); answers calls for a server that is down."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def on_request(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        fastmcp_context = context.fastmcp_context
        request_context = fastmcp_context.request_context if fastmcp_context is not None else None
        self.gateway._seen(getattr(request_context, "session", None))
        return await call_next(context)

    async def on_list_tools(
        self,
        context: MiddlewareContext[ListToolsRequest],
        call_next: CallNext[ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        for member in self.gateway.members.values():
            if member.up:
                prefix = f"{member.server.name}_"
                names = {tool.name.removeprefix(prefix) for tool in tools if tool.name.startswith(prefix)}
                member.tools = frozenset(names) if names else member.tools
        return tools

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = context.message.name
        member = self.gateway.member_of(name)
        if member is not None and not member.up:
            wait = None if member.retry_at is None else max(0.0, member.retry_at - anyio.current_time())
            return error_tool_result(_not_started(member.server.name, wait), new_error_id())
        if member is not None:
            tool = name[len(member.server.name) + 1 :]
            if tool in member.tools:
                # Straight to the server's proxy (its own middleware runs): the gateway's lookup
                # across every mounted server would cost each call a quarter more CPU.
                return await member.proxy.call_tool(tool, context.message.arguments or {})
        try:
            return await call_next(context)
        except NotFoundError:
            error_id = new_error_id()
            known = [tool.name for tool in await self.gateway.server.list_tools()]
            return error_tool_result(unknown_tool(name, error_id=error_id, known=known), error_id)


def _not_started(server: str, retry_after: float | None) -> FailureDetails:
    # The proxy's own words for a server that is not running, with which server it is.
    reason = f"The server {server!r} behind this gateway has not started yet; it is being started again."
    return unavailable_failure(reason, retry_after)


async def serve_gateway(
    gateway: Gateway,
    *,
    http: tuple[str, int] | None = None,
    front: Front | None = None,
) -> None:
    """Start the gateway's servers, then serve it over stdio (or streamable HTTP) until stopped.

    Args:
        gateway: The gateway.
        http: Serve streamable HTTP on this host and port instead of stdio.
        front: The stdio front that answered the host so far (`_front.Front`): served through it.

    Raises:
        StartupError: With `require_all`, if a server did not start.
    """
    try:
        if front is not None:
            await anyio.to_thread.run_sync(front.settled.wait)  # its handshakes are over: adopted now
        not_started: StartupError | None = None
        async with anyio.create_task_group() as background:
            try:
                await gateway.start(background=background)
            except StartupError as exc:
                # Raised in the task group, it would reach the command inside an exception group.
                not_started = exc
            else:
                await _serve(gateway.server, http=http, front=front)
            background.cancel_scope.cancel()
        if not_started is not None:
            raise not_started
    finally:
        await gateway.aclose()


async def _serve(server: FastMCP[Any], *, http: tuple[str, int] | None, front: Front | None) -> None:
    if front is not None:
        await serve_through_front(server, front)
    elif http is None:
        await server.run_stdio_async(show_banner=False)
    else:
        host, port = http
        await server.run_http_async(show_banner=False, host=host, port=port, stateless_http=True, json_response=True)


async def serve_through_front(server: FastMCP[Any], front: Front) -> None:
    """Serve `server` over stdio as fastmcp's `run_stdio_async` does, with `front` as its stdio.

    What the front kept is replayed first: the host's `initialize` (the answer the front gave
    is checked against the server's, and not sent twice), then the rest in order, then every
    line both ways, read and written by the SDK's own stdio server. When the front answered
    `tools/list`, the server's own list is asked for and compared: if it differs (a server
    that came up since), the host gets `notifications/tools/list_changed`.
    """
    from fastmcp.server.context import reset_transport, set_transport
    from mcp.server.stdio import stdio_server

    host = _FrontStdio(front, asyncio.get_running_loop())

    token = set_transport("stdio")
    try:
        async with server._lifespan_manager(), stdio_server(stdin=host, stdout=host) as (read, write):  # type: ignore[arg-type]
            await server._mcp_server.run(read, write, server._mcp_server.create_initialization_options())
    finally:
        reset_transport(token)


_LIST_AGAIN_ID: Final = "mcp-errors-front-tools-list-again"


class _FrontStdio:
    """The front as the SDK's stdio server's stdin (lines, `async for`) and stdout (`write`, `flush`).

    What the front kept is given first; when it starts with the host's `initialize`, the rest
    waits for its answer, as the host itself waited (the SDK's server takes nothing else
    before it has answered `initialize`).
    """

    def __init__(self, front: Front, loop: asyncio.AbstractEventLoop) -> None:
        self._front = front
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._replay = collections.deque(
            front.hand_over(lambda line: loop.call_soon_threadsafe(self._lines.put_nowait, line))
        )
        answered = front.answered
        # The answers to intercept: the replayed initialize's, and the list asked again.
        self._expected: dict[str, Any] = {}
        if answered.initialize_result is not None:
            self._expected["initialize"] = answered.initialize_id
        if answered.tools is not None:
            self._expected["tools/list"] = _LIST_AGAIN_ID
            self._replay.append(message_line({"jsonrpc": "2.0", "id": _LIST_AGAIN_ID, "method": "tools/list"}))
        self._initialize_id = _initialize_id(self._replay[0]) if self._replay else None
        self._initialized = asyncio.Event()
        if self._initialize_id is None:
            self._initialized.set()
        self._given = 0

    def __aiter__(self) -> _FrontStdio:
        return self

    async def __anext__(self) -> str:
        if self._replay:
            if self._given:
                await self._initialized.wait()
            line: bytes | None = self._replay.popleft()
            self._given += 1
        else:
            line = await self._lines.get()
        if line is None:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")

    async def write(self, text: str) -> None:
        if (self._expected or not self._initialized.is_set()) and self._intercepted(text):
            return
        await anyio.to_thread.run_sync(self._front.write, text.encode())

    async def flush(self) -> None:
        await anyio.lowlevel.checkpoint()

    def _intercepted(self, text: str) -> bool:
        message = json.loads(text)
        if not isinstance(message, dict) or "method" in message:
            return False
        ident = message.get("id")
        if _same_id(ident, self._initialize_id):
            self._initialized.set()
        for method, expected in list(self._expected.items()):
            if _same_id(ident, expected):
                del self._expected[method]
                self._compare(method, message.get("result"))
                return True
        return False

    def _compare(self, method: str, result: Any) -> None:
        answered = self._front.answered
        if method == "initialize":
            if result != answered.initialize_result:
                logger.warning(
                    "Gateway front: its initialize answer differs from the gateway's (%s against %s)",
                    json.dumps(answered.initialize_result),
                    json.dumps(result),
                )
            return
        listed = result.get("tools") if isinstance(result, dict) else None
        if not isinstance(listed, list):
            return  # no list (the host left meanwhile): nothing to compare, nobody to tell
        if _by_name(listed) != _by_name(answered.tools):
            logger.warning(
                "Gateway front: the tools the host got at start-up differ from the gateway's now; "
                "the host is told (tools/list_changed)"
            )
            self._front.write(message_line({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))


def _initialize_id(line: bytes) -> Any:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) and message.get("method") == "initialize" else None


def _same_id(one: Any, other: Any) -> bool:
    return other is not None and type(one) is type(other) and one == other


def _by_name(tools: list[Any] | None) -> list[Any]:
    return sorted(tools or [], key=lambda tool: str(tool.get("name")) if isinstance(tool, dict) else "")


def run_gateway(
    path: Path,
    settings: ProxySettings,
    *,
    entries: Sequence[ServerEntry],
    early: Mapping[str, EarlyStart],
    http: tuple[str, int] | None,
    startup_seconds: float,
    require_all: bool,
    front: Front | None = None,
) -> None:
    """`mcp-errors proxy --config FILE`: serve the gateway of `entries` until stopped, exit as the proxy does.

    `early` holds the stdio servers the command started before its imports (`_spawn.EarlyStart`);
    `front`, the stdio front that answered the host meanwhile (`_front.Front`).
    """
    import functools
    import sys

    import typer

    try:
        gateway = Gateway(
            servers_of(entries, early), settings, startup_seconds=startup_seconds, require_all=require_all
        )
    except (HostConfigError, RulesError, OSError, UnicodeDecodeError, ValueError) as exc:
        print(f"mcp-errors proxy: {path}: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    try:
        anyio.run(functools.partial(serve_gateway, gateway, http=http, front=front))
    except StartupError as exc:
        print(f"mcp-errors proxy: --require-all: these servers did not start:\n{exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
