"""The gateway: every server of a host's configuration behind the contract, from one process.

`mcp-errors proxy --config FILE` builds one proxy per server with `build_proxy` (each with
its own rules, circuit breaker, restart notice, repeat guard and key namespace
`proxy/<server>`) and mounts them on one fastmcp server, which names their tools
`<server>_<tool>` as fastmcp's multi-server configurations do. The command starts the stdio
servers before it imports fastmcp (`_gateway_config`, `_spawn`); their transports adopt them.

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

import dataclasses
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
        self.server: FastMCP[Any] = FastMCP("mcp-errors gateway")
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
        try:
            tools = await check_upstream(member.proxy, member.server.upstream, seconds=self.startup_seconds)
        except StartupError as exc:
            member.reason = str(exc)
            logger.warning(
                "Gateway: server %r did not start; the others serve without it, and it is tried again. %s", name, exc
            )
            upstream = member.server.upstream
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
) -> None:
    """Start the gateway's servers, then serve it over stdio (or streamable HTTP) until stopped.

    Raises:
        StartupError: With `require_all`, if a server did not start.
    """
    try:
        async with anyio.create_task_group() as background:
            await gateway.start(background=background)
            if http is None:
                await gateway.server.run_stdio_async(show_banner=False)
            else:
                host, port = http
                await gateway.server.run_http_async(
                    show_banner=False, host=host, port=port, stateless_http=True, json_response=True
                )
            background.cancel_scope.cancel()
    finally:
        await gateway.aclose()


def run_gateway(
    path: Path,
    settings: ProxySettings,
    *,
    entries: Sequence[ServerEntry],
    early: Mapping[str, EarlyStart],
    http: tuple[str, int] | None,
    startup_seconds: float,
    require_all: bool,
) -> None:
    """`mcp-errors proxy --config FILE`: serve the gateway of `entries` until stopped, exit as the proxy does.

    `early` holds the stdio servers the command started before its imports (`_spawn.EarlyStart`).
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
        anyio.run(functools.partial(serve_gateway, gateway, http=http))
    except StartupError as exc:
        print(f"mcp-errors proxy: --require-all: these servers did not start:\n{exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
