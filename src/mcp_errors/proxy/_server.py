"""Build and run the proxy: fastmcp's `ProxyProvider` to the upstream, the contract on top.

The proxy is a fastmcp server whose components all come from one `ProxyProvider`:
tools, resources, templates and prompts are the upstream's, and fastmcp forwards
progress, logging, list-changed notifications, cancellation, sampling, elicitation and
roots, and application `_meta` keys. Middleware adds, outermost first: who the caller is
(`_sessions`), the restart notice (`_restarts`), the repeat guard (`_guard`, opt-in),
idempotency replay (opt-in, in a shared store when given, scoped by the caller), the circuit
breaker (`_breaker`), resends (`_recovery`, opt-in), the contract (`_middleware`), and
inside it the breaker's probe and, for an HTTP upstream, the resend of a request that never
reached it (`_sessions`). Four things differ from `fastmcp.server.create_proxy`:

- the backend speaks the 2025-11-25 handshake whatever the front negotiated: every server
  speaks it, one stdio child has one session, and its server-initiated requests (sampling,
  elicitation) can then reach a host on the same era; mirroring the front's era per request
  would restart the child when it changed;
- all the proxy's clients share the context that forwards the child's requests to the
  front: the stdio session lives on across requests, so its handlers must see the current
  request, not the first one (fastmcp binds them per client copy);
- a tools/list that fails while the child restarts answers with the last good list, not an
  empty one: a host that caches the list would otherwise lose every tool;
- an HTTP upstream keeps one session per front session (`_sessions`), where fastmcp opens
  one per request.
"""

from __future__ import annotations

import inspect
import logging
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import anyio
from fastmcp import FastMCP
from fastmcp.server.providers.proxy import ProxyMetadataMiddleware, ProxyProvider
from fastmcp.tools import Tool

from mcp_errors._client.budget import RetryBudget
from mcp_errors._server.fastmcp import ReplayMiddleware, replay_middleware
from mcp_errors._server.replay import as_store
from mcp_errors._shared.advice import seconds_in_words
from mcp_errors._shared.sanitize import ROOTS_TOOL, redact_url, redact_urls
from mcp_errors.proxy._breaker import Breaker, BreakerSettings
from mcp_errors.proxy._calls import ProxyCallMiddleware
from mcp_errors.proxy._child import ChildProcess
from mcp_errors.proxy._middleware import Contract
from mcp_errors.proxy._restarts import RestartNotice, Restarts
from mcp_errors.proxy._sessions import (
    CallerMiddleware,
    KeptSessions,
    SessionMiddleware,
    UpstreamClient,
    current_front_session,
    http_transport,
    is_session_dropped,
)

if TYPE_CHECKING:
    from mcp_errors.proxy._rules import Rules  # the rules file's module loads with the classification chain
    from mcp_errors.stores import IdempotencyStore  # the store's module loads with a store

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
        store: Where those keys live: an `IdempotencyStore` or a URL for `open_store`
            (`sqlite:///keys.sqlite3`, `postgresql://...`, `redis://...`); the proxy's
            memory when omitted.
        store_namespace: Keeps this proxy's keys apart from those of proxies of other
            upstreams in the same store; `proxy/<the upstream's serverInfo name>` when omitted
            (named by `check_upstream`).
        tool_failure_meta: Also write SEP-3313 `_meta["io.modelcontextprotocol/toolFailure"]`.
        disguised_failures: Also rewrite a success that plainly reads as a failure.
        breaker_failures: Transient failures in a row that open a circuit (0: no breaker).
        breaker_window: Seconds within which that run of failures must fall.
        breaker_cooldown: Seconds an open circuit answers at once before it lets a probe through.
        breaker_probe_timeout: Seconds that probe may take before it counts as failed (`None`:
            the cool-down).
        repeat_guard: Seconds during which the identical resend of a call that failed with a
            non-retryable verdict is answered by the proxy (0: off).
        tenant_header: On the `--http` front, the header that names the caller: callers are told
            apart by it alone, and it is the only one of their headers an HTTP upstream gets;
            by default, by their credentials and every header forwarded upstream.
        name: The proxy's name before the upstream's is known.
    """

    rules: Rules | None = None
    retry: int = 0
    retry_deadline: float = 30.0
    idempotency_keys: bool = False
    store: IdempotencyStore | str | None = None
    store_namespace: str | None = None
    tool_failure_meta: bool = False
    disguised_failures: bool = False
    breaker_failures: int = 5
    breaker_window: float = 30.0
    breaker_cooldown: float = 30.0
    breaker_probe_timeout: float | None = None
    repeat_guard: float = 0.0
    tenant_header: str | None = None
    name: str = "mcp-errors proxy"

    def __post_init__(self) -> None:
        if self.retry < 0 or self.retry_deadline <= 0:
            raise ValueError("retry must be >= 0 and retry_deadline > 0")
        if self.repeat_guard < 0:
            raise ValueError("repeat_guard must be >= 0 seconds")
        if self.tenant_header is not None and not _is_header_name(self.tenant_header):
            raise ValueError(f"tenant_header must be an HTTP header name, not {self.tenant_header!r}")
        if self.store is not None and not self.idempotency_keys:
            raise ValueError("a store is for idempotency keys: set idempotency_keys=True too")
        _breaker_settings(self)  # its own checks of the thresholds


def _is_header_name(name: str) -> bool:
    return 0 < len(name) <= 256 and all(char.isascii() and (char.isalnum() or char in _TOKEN_MARKS) for char in name)


_TOKEN_MARKS: Final = "!#$%&'*+-.^_`|~"
"""What an HTTP header name (RFC 9110's token) may hold besides letters and digits."""


def _breaker_settings(settings: ProxySettings) -> BreakerSettings:
    return BreakerSettings(
        failures=settings.breaker_failures,
        window=settings.breaker_window,
        cooldown=settings.breaker_cooldown,
        probe_timeout=settings.breaker_probe_timeout,
    )


class StartupError(Exception):
    """The upstream could not be started or reached; the message says why, for a person."""


def build_proxy(
    upstream: Upstream, settings: ProxySettings | None = None, *, headers: Mapping[str, str] | None = None
) -> FastMCP[Any]:
    """A fastmcp server that proxies `upstream` with the error contract in front of it.

    Args:
        upstream: A `ChildProcess` (a stdio server) or a streamable HTTP URL.
        settings: The opt-in behaviours; none by default.
        headers: Sent to an HTTP upstream with every request, whoever calls (a host
            configuration's `headers`: its credentials); a caller's header of the same name
            does not replace one. Each caller's own headers still reach it as its own.

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
    base = UpstreamClient(
        upstream if isinstance(upstream, ChildProcess) else http_transport(upstream, headers), mode=_BACKEND_ERA
    )
    restarts: Restarts
    sessions: KeptSessions | None = None
    if isinstance(upstream, ChildProcess):
        # The transport keeps the child's one session; every copy of the client reuses it.
        provider = _LastGoodToolsProvider(base.new, **_UPSTREAM_IDENTITY)
        restarts = upstream
    else:
        sessions = KeptSessions(base)
        provider = _LastGoodToolsProvider(sessions.client, **_UPSTREAM_IDENTITY)
        provider.sessions = restarts = sessions
    server: FastMCP[Any] = FastMCP(settings.name)
    server.add_provider(provider)
    # First added is outermost. Who calls is read before anything kept per caller; whatever
    # answers a call, its front session learns of a restart; a guarded repeat and a replayed
    # key need no upstream, not even a closed circuit; the breaker sees a call's final answer
    # (its resends count once); resends read contract results; the contract sees the
    # upstream's answers first; inside it, the upstream's exceptions are still exceptions.
    # The steps of tools/call run in one middleware (`_calls.py`), in two around the replay.
    server.add_middleware(CallerMiddleware(settings.tenant_header, sessions=sessions))
    server.add_middleware(ProxyMetadataMiddleware(provider, **_UPSTREAM_IDENTITY))
    retry = None
    if settings.retry:
        # Imported only when asked for: the recovery policy (tenacity and the client side)
        # is start-up time a proxy without `--retry` need not spend (docs/performance.md).
        from mcp_errors.proxy._recovery import RetryMiddleware

        retry = RetryMiddleware(resends=settings.retry, deadline=settings.retry_deadline, budget=RetryBudget())
    contract = Contract(
        settings.rules,
        child=upstream if isinstance(upstream, ChildProcess) else None,
        tool_failure_meta=settings.tool_failure_meta,
        disguised_failures=settings.disguised_failures,
    )
    # A 2026-07-28 front never gets the codes that revision retired (-32042, -32002).
    notice = RestartNotice(restarts)
    guard = None
    if settings.repeat_guard:
        from mcp_errors.proxy._guard import RepeatGuard  # opt-in: a proxy without it starts without the module

        guard = RepeatGuard(settings.repeat_guard)
    breaker = Breaker(_breaker_settings(settings)) if settings.breaker_failures else None
    if settings.idempotency_keys:
        store = as_store("memory://" if settings.store is None else settings.store)
        server.add_middleware(ProxyCallMiddleware(modern_front=True, restarts=notice, guard=guard))
        # Keys are the caller's: another caller sending the same key runs its own call.
        server.add_middleware(replay_middleware(store, namespace=settings.store_namespace, caller=_caller_identity))
        server.add_middleware(ProxyCallMiddleware(breaker=breaker, retry=retry, contract=contract))
    else:
        server.add_middleware(
            ProxyCallMiddleware(
                modern_front=True, restarts=notice, guard=guard, breaker=breaker, retry=retry, contract=contract
            )
        )
    if not isinstance(upstream, ChildProcess):
        server.add_middleware(SessionMiddleware())
    return server


_BACKEND_ERA: Final = "legacy"


def _caller_identity() -> str | None:
    return current_front_session().caller.identity


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
            client = await _client_of(provider)
            async with client:
                info = client.initialize_result.server_info if client.initialize_result is not None else None
            # Listed through the provider, whose cache then finds a called tool while the
            # upstream is down (the call fails as unavailable, not as an unknown tool).
            tools = await provider.list_tools()
            names = [tool.name for tool in tools]
        _name_key_namespace(server, info.name if info is not None else None)
        await _learn_roots(server, provider, tools)
        return names
    except TimeoutError:
        raise handshake_timeout(upstream, seconds) from None
    except Exception as exc:
        if isinstance(upstream, ChildProcess):
            raise StartupError(_startup_message(upstream, upstream.describe_exit())) from exc
        raise StartupError(_startup_message(upstream, f"is not reachable ({type(exc).__name__}: {exc})")) from exc


def handshake_timeout(upstream: Upstream, seconds: float) -> StartupError:
    """The start-up failure of an upstream that did not answer its handshake and listing in time."""
    reason = f"did not answer the MCP handshake within {seconds_in_words(seconds)}"
    if isinstance(upstream, ChildProcess):
        reason += " (is it an MCP server that speaks stdio?)"
    return StartupError(_startup_message(upstream, reason))


async def _learn_roots(server: FastMCP[Any], provider: Any, tools: Sequence[Tool]) -> None:
    """Ask the upstream once which places it announces as its own (`list_allowed_directories`,
    read-only, no arguments), so that its failures may name them to the agent. Best effort: a
    server without such a tool, or one that does not answer in time, is left as it is."""
    contract = next((m.contract for m in server.middleware if isinstance(m, ProxyCallMiddleware) and m.contract), None)
    listing = next(
        (
            tool
            for tool in tools
            if ROOTS_TOOL.fullmatch(tool.name.lower().replace("-", "_"))
            and tool.annotations is not None
            and tool.annotations.read_only_hint is True
            and not (tool.parameters or {}).get("required")
        ),
        None,
    )
    if contract is None or listing is None:
        return
    try:
        with anyio.fail_after(_ROOTS_SECONDS):
            client = await _client_of(provider)
            async with client:
                answer = await client.call_tool_mcp(listing.name, {})
    except Exception:  # the proxy works without them: only fewer paths are kept
        logger.debug("the upstream's roots could not be read", exc_info=True)
        return
    if not answer.is_error:
        contract.learn_roots(listing.name, answer.content)


_ROOTS_SECONDS: Final = 5.0


async def _client_of(provider: Any) -> Any:
    """A client of the provider's own factory: the session it opens is the one calls use."""
    client = provider.client_factory()
    return await client if inspect.isawaitable(client) else client


def _name_key_namespace(server: FastMCP[Any], upstream_name: str | None) -> None:
    """Give the proxy's idempotency keys their namespace, unless the settings named one."""
    for middleware in server.middleware:
        if isinstance(middleware, ReplayMiddleware) and middleware.namespace is None:
            middleware.namespace = f"proxy/{upstream_name or 'unnamed'}"


def _startup_message(upstream: Upstream, reason: str) -> str:
    # The host keeps this line in its log: an upstream URL's credentials stay out of it.
    reason = redact_urls(reason)
    if isinstance(upstream, str):
        return f"The upstream server {redact_url(upstream)} {reason}."
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
        with anyio.CancelScope(shield=True):
            await close_upstream(server, upstream)


async def close_upstream(server: FastMCP[Any], upstream: Upstream) -> None:
    """Stop the child, or close the sessions kept to an HTTP upstream, and the key store."""
    for provider in server.providers:
        sessions = getattr(provider, "sessions", None)
        if sessions is not None:
            await sessions.aclose()
    if isinstance(upstream, ChildProcess):
        await upstream.close()
    for middleware in server.middleware:
        replay = getattr(middleware, "replay", None)
        if replay is not None:
            await replay.store.aclose()


class _LastGoodToolsProvider(ProxyProvider):
    """fastmcp's `ProxyProvider`, answering tools/list from the last good list while the upstream is down."""

    sessions: KeptSessions | None = None
    """The sessions kept to an HTTP upstream, closed with the proxy."""

    async def _list_tools(self) -> Sequence[Tool]:
        try:
            return await super()._list_tools()
        except Exception as exc:
            cache = self._tools_cache
            if cache is None or is_session_dropped(exc):
                raise  # a dropped session is opened again and the listing sent once more
            return cache.items


# fastmcp 4.2 lets results keep the upstream's identity; 4.1 (which `fastmcp-tasks` pins) has no choice.
_UPSTREAM_IDENTITY: Final[dict[str, Any]] = (
    {"identity": "upstream"} if "identity" in inspect.signature(ProxyProvider.__init__).parameters else {}
)
