"""Build and run the proxy: fastmcp's `ProxyProvider` to the upstream, the contract on top.

The proxy is a fastmcp server whose components all come from one `ProxyProvider`:
tools, resources, templates and prompts are the upstream's, and fastmcp forwards
progress, logging, list-changed notifications, cancellation, sampling, elicitation and
roots, and application `_meta` keys. Middleware adds the contract (`_middleware`) and,
when asked for, recovery (`_recovery`). Three things differ from `fastmcp.server.create_proxy`:

- the backend speaks the 2025-11-25 handshake whatever the front negotiated: every server
  speaks it, one stdio child has one session, and its server-initiated requests (sampling,
  elicitation) can then reach a host on the same era; mirroring the front's era per request
  would restart the child when it changed;
- all the proxy's clients share the context that forwards the child's requests to the
  front: the stdio session lives on across requests, so its handlers must see the current
  request, not the first one (fastmcp binds them per client copy);
- a tools/list that fails while the child restarts answers with the last good list, not an
  empty one: a host that caches the list would otherwise lose every tool.
"""

from __future__ import annotations

import inspect
import logging
import shlex
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

import anyio
from fastmcp import FastMCP
from fastmcp.client import Client
from fastmcp.client.logging import LogMessage
from fastmcp.server.dependencies import get_context
from fastmcp.server.providers.proxy import (
    ProxyClient,
    ProxyMetadataMiddleware,
    ProxyProvider,
    _restore_request_context,
    default_proxy_log_handler,
)
from fastmcp.tools import Tool
from mcp_types import PromptListChangedNotification, ResourceListChangedNotification, ToolListChangedNotification

from mcp_errors._client.budget import RetryBudget
from mcp_errors._server.fastmcp import replay_middleware
from mcp_errors._shared.words import seconds_in_words
from mcp_errors.proxy._child import ChildProcess
from mcp_errors.proxy._classify import UpstreamClassifier
from mcp_errors.proxy._middleware import ContractMiddleware
from mcp_errors.proxy._recovery import RetryMiddleware
from mcp_errors.proxy._rules import Rules
from mcp_errors.stores import MemoryStore

__all__ = ["ProxySettings", "StartupError", "build_proxy", "check_upstream", "serve"]

logger = logging.getLogger("mcp_errors.proxy")

Upstream = ChildProcess | str
"""A wrapped stdio server, or the URL of a streamable HTTP server."""


@dataclass(frozen=True, kw_only=True)
class ProxySettings:
    """What the proxy does besides the contract; every field is opt-in.

    Args:
        rules: The user's rules file, tried after what the upstream itself declares.
        retry: Resend a safe transient failure at most this many times (0: never).
        retry_deadline: Seconds after the first answer by which resends must be done.
        idempotency_keys: Replay the first answer for a repeated idempotency key.
        tool_failure_meta: Also write SEP-3313 `_meta["io.modelcontextprotocol/toolFailure"]`.
        disguised_failures: Also rewrite a success that plainly reads as a failure.
        name: The proxy's name before the upstream's is known.
    """

    rules: Rules | None = None
    retry: int = 0
    retry_deadline: float = 30.0
    idempotency_keys: bool = False
    tool_failure_meta: bool = False
    disguised_failures: bool = False
    name: str = "mcp-errors proxy"

    def __post_init__(self) -> None:
        if self.retry < 0 or self.retry_deadline <= 0:
            raise ValueError("retry must be >= 0 and retry_deadline > 0")


class StartupError(Exception):
    """The upstream could not be started or reached; the message says why, for a person."""


def build_proxy(upstream: Upstream, settings: ProxySettings | None = None) -> FastMCP[Any]:
    """A fastmcp server that proxies `upstream` with the error contract in front of it.

    Args:
        upstream: A `ChildProcess` (a stdio server) or a streamable HTTP URL.
        settings: The opt-in behaviours; none by default.

    Returns:
        The proxy server, not yet running. Start it with `serve`, or connect a client to it.

    Example:
        ```python
        import sys

        from mcp_errors.proxy import ChildProcess, ProxySettings, build_proxy

        proxy = build_proxy(
            ChildProcess(sys.executable, ["-m", "mcp_server_time"]),
            ProxySettings(tool_failure_meta=True),
        )
        ```
    """
    settings = settings or ProxySettings()
    base = _SharedContextClient(upstream, mode=_BACKEND_ERA)
    provider = _LastGoodToolsProvider(base.new, **_UPSTREAM_IDENTITY)
    server: FastMCP[Any] = FastMCP(settings.name)
    server.add_provider(provider)
    server.add_middleware(ProxyMetadataMiddleware(provider, **_UPSTREAM_IDENTITY))
    # First added is outermost: the key store keeps final answers, resends read contract
    # results, and the contract sees the upstream's answers first.
    if settings.idempotency_keys:
        server.add_middleware(replay_middleware(MemoryStore()))
    if settings.retry:
        server.add_middleware(
            RetryMiddleware(resends=settings.retry, deadline=settings.retry_deadline, budget=RetryBudget())
        )
    server.add_middleware(
        ContractMiddleware(
            UpstreamClassifier(settings.rules),
            child=upstream if isinstance(upstream, ChildProcess) else None,
            tool_failure_meta=settings.tool_failure_meta,
            disguised_failures=settings.disguised_failures,
        )
    )
    return server


_BACKEND_ERA: Final = "legacy"


async def check_upstream(server: FastMCP[Any], upstream: Upstream, *, seconds: float) -> list[str]:
    """Start (or reach) the upstream and list its tools, before the proxy serves anyone.

    Args:
        server: A proxy from `build_proxy(upstream)`.
        upstream: The same upstream.
        seconds: How long the start and the listing may take.

    Returns:
        The upstream's tool names.

    Raises:
        StartupError: If the upstream does not answer in time, exits, or cannot be reached;
            the message gives the exit status and the last lines of its stderr.
    """
    provider = next(p for p in server.providers if isinstance(p, _LastGoodToolsProvider))
    try:
        with anyio.fail_after(seconds):
            # Through the provider's own client: the session it opens is the one calls use.
            async with cast(Client[Any], provider.client_factory()) as client:
                return [tool.name for tool in await client.list_tools()]
    except TimeoutError:
        reason = f"did not answer the MCP handshake within {seconds_in_words(seconds)}"
        if isinstance(upstream, ChildProcess):
            reason += " (is it an MCP server that speaks stdio?)"
        raise StartupError(_startup_message(upstream, reason)) from None
    except Exception as exc:
        if isinstance(upstream, ChildProcess):
            raise StartupError(_startup_message(upstream, upstream.describe_exit())) from exc
        raise StartupError(_startup_message(upstream, f"is not reachable ({type(exc).__name__}: {exc})")) from exc


def _startup_message(upstream: Upstream, reason: str) -> str:
    if isinstance(upstream, str):
        return f"The upstream server {upstream} {reason}."
    message = f"The upstream server `{shlex.join(upstream.server_command)}` {reason}."
    lines = upstream.tail.last_lines()
    if lines:
        message += "\nIts last lines on stderr:\n" + "\n".join(f"  {line}" for line in lines)
    return message


async def serve(
    upstream: Upstream,
    settings: ProxySettings | None = None,
    *,
    http: tuple[str, int] | None = None,
    startup_seconds: float = 30.0,
) -> None:
    """Check the upstream, then serve the proxy over stdio (or streamable HTTP) until stopped.

    Args:
        upstream: A `ChildProcess` or a streamable HTTP URL.
        settings: The opt-in behaviours.
        http: Serve streamable HTTP (stateless, JSON responses) on this host and port
            instead of stdio.
        startup_seconds: How long the upstream may take to start and list its tools.

    Raises:
        StartupError: If the upstream cannot be started or reached.
    """
    server = build_proxy(upstream, settings)
    try:
        await check_upstream(server, upstream, seconds=startup_seconds)
        if http is None:
            await server.run_stdio_async(show_banner=False)
        else:
            host, port = http
            await server.run_http_async(
                show_banner=False, host=host, port=port, stateless_http=True, json_response=True
            )
    finally:
        if isinstance(upstream, ChildProcess):
            with anyio.CancelScope(shield=True):
                await upstream.close()


class _SharedContextClient(ProxyClient[Any]):
    """fastmcp's proxy client, whose copies share the context that forwards the child's requests.

    fastmcp binds each copy's forwarding handlers to that copy's own slot, but a kept-alive
    stdio session keeps the handlers of the copy that opened it: without one shared slot,
    the child's sampling and elicitation requests would go to a request that has ended.
    Notifications and log messages the child sends before the host's first request have no
    request to travel with: they are dropped (logged at debug), not raised in the session.
    """

    def __init__(self, target: Any, **kwargs: Any) -> None:
        kwargs.setdefault("message_handler", self._forward_notification)
        kwargs.setdefault("log_handler", self._forward_log)
        super().__init__(target, **kwargs)

    async def _forward_notification(self, message: Any) -> None:
        await self._forward(_forward_list_changed, message)

    async def _forward_log(self, message: LogMessage) -> None:
        await self._forward(default_proxy_log_handler, message)

    async def _forward(self, handler: Callable[[Any], Awaitable[None]], message: Any) -> None:
        _restore_request_context(self._proxy_rc_ref)
        try:
            await handler(message)
        except RuntimeError:  # fastmcp's "No active context found": no host request yet
            logger.debug("dropped a message of the upstream that came outside any request: %r", message)

    def new(self) -> _SharedContextClient:
        # fastmcp's `Client.new` copies the client with its session handlers, which are bound
        # to this client's forwarding slot; `ProxyClient.new` would give the copy a slot of
        # its own, which the kept-alive session never reads.
        return cast(_SharedContextClient, Client.new(self))


class _LastGoodToolsProvider(ProxyProvider):
    """fastmcp's `ProxyProvider`, answering tools/list from the last good list while the upstream is down."""

    async def _list_tools(self) -> Sequence[Tool]:
        try:
            return await super()._list_tools()
        except Exception:
            cache = self._tools_cache
            if cache is None:
                raise
            return cache.items


async def _forward_list_changed(message: Any) -> None:
    """Send the host the upstream's list-changed notifications (what fastmcp 4.2's proxy does;
    4.1, which `fastmcp-tasks` pins, has no handler for them)."""
    if isinstance(message, _LIST_CHANGED):
        await get_context().send_notification(message)


_LIST_CHANGED: Final = (ToolListChangedNotification, ResourceListChangedNotification, PromptListChangedNotification)


# fastmcp 4.2 lets results keep the upstream's identity; 4.1 (which `fastmcp-tasks` pins) has no choice.
_UPSTREAM_IDENTITY: Final[dict[str, Any]] = (
    {"identity": "upstream"} if "identity" in inspect.signature(ProxyProvider.__init__).parameters else {}
)
