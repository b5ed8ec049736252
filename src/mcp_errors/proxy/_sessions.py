"""Who calls the proxy (its front sessions), and the upstream sessions kept for them.

A *front session* is what the proxy's callers hold. A connection of the 2025-11-25 protocol
(a host over stdio, a client in memory, a stateful HTTP session) lasts across its requests.
A 2026-07-28 request, and a request to the stateless `--http` front, is a session of one
request: such requests are grouped by their *caller*, an identity read from the headers they
carry (`Caller`): the credentials and every header fastmcp's proxy transport would forward
upstream (`Authorization`, `X-Api-Key`, custom headers) and the `Cookie`, hashed; or, with
`--tenant-header NAME`, that one header. All requests without any such header are one caller.
The proxy keeps per front session what must not pass from one caller to the next: its
upstream session, the repeat guard's memory, the restarts it was told of; idempotency keys
are scoped by the caller too.

An HTTP upstream gets one MCP session per front session: opened at the front session's
first request, kept open, and closed when the front session ends. (fastmcp's proxy opens a
new session per request: a handshake and a DELETE around every call, and a stateful server
forgets what the caller built up between two calls.) A session carries the headers of the
caller it was opened for, and only those (`Caller.headers`), which every request of that
caller sends alike. Where the upstream is stateless (it gave no `Mcp-Session-Id` when the
first session opened), a session holds nothing to keep apart, and one session serves every
front session of the same caller. A session the
upstream dropped (HTTP 404, "Session terminated": it restarted, or expired the session) is
opened again, and the request is sent once more: the upstream refused it unread. A stdio
child has one session whatever the front (`_child.py`).

The sessions kept for sessionless callers are bounded (`_MAX_KEPT_SESSIONLESS`). A session
with a request in flight is never closed to make room: a newcomer takes the place of the
least recently used idle one, waits (`_ROOM_WAIT_SECONDS`) for one to become idle, or is
refused as `transient`, `UPSTREAM_BUSY`, `not_executed` (`UpstreamBusyError`), which is no
failure of the upstream. A caller whose idle session was closed is told on its next result,
like a restart: what the upstream kept for it is gone.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

import anyio
import httpx2
from fastmcp.client import Client
from fastmcp.client.logging import LogMessage
from fastmcp.client.transports import StreamableHttpTransport
from fastmcp.server.dependencies import (
    _background_task_headers,
    fastmcp_request_ctx,
    get_context,
    get_http_headers,
)
from fastmcp.server.http import _current_http_request
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.server.providers.proxy import (
    ProxyClient,
    _restore_request_context,
    default_proxy_log_handler,
)
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    INVALID_REQUEST,
    PromptListChangedNotification,
    ResourceListChangedNotification,
    ToolListChangedNotification,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_errors._shared.causes import causes
from mcp_errors._shared.sanitize import redact_url
from mcp_errors._shared.telemetry import record_proxy_decision

__all__ = [
    "Caller",
    "CallerMiddleware",
    "FrontSession",
    "KeptSessions",
    "RequestNotSentError",
    "SessionMiddleware",
    "ToolCallMiddleware",
    "UpstreamBusyError",
    "UpstreamClient",
    "caller_of_request",
    "current_front_session",
    "http_transport",
    "is_session_dropped",
    "is_unsent",
    "new_slot",
]

logger = logging.getLogger("mcp_errors.proxy")


@dataclass(frozen=True)
class Caller:
    """Who sends the current request, as the headers it carries tell.

    Args:
        identity: A hash of the headers that tell callers apart; `None` for a request without
            any (over stdio, in memory, or an HTTP request with no credentials).
        headers: What an upstream session opened for this caller forwards: the same for every
            request of this identity, so that no caller's header reaches another's calls.
    """

    identity: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


ANONYMOUS: Final = Caller()


def caller_of_request(tenant_header: str | None = None) -> Caller:
    """The caller of the current HTTP request (`ANONYMOUS` outside one).

    Args:
        tenant_header: The one header that names the caller (`--tenant-header`), and the only
            one forwarded upstream; by default every header fastmcp's proxy forwards (the
            credentials among them), less those that describe one request or one hop, and the
            cookie (which identifies the caller but is not forwarded, as in fastmcp).
    """
    if _without_headers():
        return ANONYMOUS  # what the headers below would say, without reading them
    if tenant_header is not None:
        name = tenant_header.lower()
        value = get_http_headers(include={name}).get(name)
        return ANONYMOUS if value is None else Caller(_digest([(name, value)]), {name: value})
    # What fastmcp's proxy transport forwards (`_get_forwardable_http_headers`: the request's
    # headers less the hop's own and the cookie, the `Authorization` kept, less `mcp-*`).
    # One reading of the headers (each reading filters them all again): the cookie is in
    # `_PER_REQUEST`, so it is read here but not forwarded.
    headers = get_http_headers(include=_CREDENTIALS)
    forwarded = {
        name: value
        for name, value in headers.items()
        if not (name.startswith(_PER_REQUEST_PREFIXES) or name in _PER_REQUEST)
    }
    identifying = sorted(forwarded.items())
    cookie = headers.get("cookie")
    if cookie is not None:
        identifying.append(("cookie", cookie))
    return Caller(_digest(identifying), forwarded) if identifying else ANONYMOUS


def _without_headers() -> bool:
    """Whether `get_http_headers` has no headers to read: no HTTP request (over stdio, in
    memory) and no task carrying one's headers.

    Its own checks, in its order, without building its exclusion set and raising and catching
    `RuntimeError` on every request of a stdio or in-memory front.
    """
    context = fastmcp_request_ctx.get()
    return (
        (context is None or context.request is None)
        and _current_http_request.get() is None
        and _background_task_headers.get() is None
    )


_CREDENTIALS: Final = {"authorization", "cookie"}
"""The headers fastmcp leaves out unless asked for that say who the caller is."""


def _digest(headers: list[tuple[str, str]]) -> str:
    # The same for the same headers in every replica: keys claimed in a shared store match.
    return hashlib.sha256(json.dumps(headers).encode()).hexdigest()


_PER_REQUEST: Final = frozenset(
    {
        "accept-encoding",
        "accept-language",
        "baggage",
        "b3",
        "cookie",
        "dnt",
        "forwarded",
        "last-event-id",
        "origin",
        "pragma",
        "priority",
        "referer",
        "sentry-trace",
        "traceparent",
        "tracestate",
        "true-client-ip",
        "user-agent",
        "via",
        "x-amzn-trace-id",
        "x-cloud-trace-context",
        "x-correlation-id",
        "x-real-ip",
        "x-request-id",
    }
)
"""Headers that describe one request, one hop or the client's software, not who calls: neither
part of a caller's identity (each request would be a caller of its own) nor forwarded."""
_PER_REQUEST_PREFIXES: Final = ("mcp-", "sec-", "cache-", "x-forwarded-", "x-b3-", "x-datadog-", "x-envoy-", "cf-")


@dataclass(eq=False)
class FrontSession:
    """One caller of the proxy, as far as state goes.

    Args:
        key: Its identity: the front connection, or the caller of a sessionless request.
        state: Scratch state that lives as long as the front session (each user takes a
            slot of its own, `new_slot()`).
        caller: Who sends the current request (`caller_of_request`).
        on_end: Registers a callback run when the front session ends; `None` for sessionless
            callers, whose state is dropped oldest first instead.
    """

    key: Hashable
    state: dict[str, Any]
    caller: Caller = ANONYMOUS
    on_end: Callable[[Callable[[], Awaitable[None]]], None] | None = None


def new_slot() -> str:
    """A key of `FrontSession.state` that belongs to one user (a middleware, a session keeper) only."""
    return f"mcp-errors/{uuid.uuid4().hex}"


_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("mcp_errors_proxy_caller", default=None)
"""The current request's caller, as `CallerMiddleware` read it (with the proxy's `--tenant-header`)."""


class CallerMiddleware(Middleware):
    """Reads who sends each request once, before anything kept per caller is looked up.

    The outermost of the proxy's middlewares. For an HTTP upstream, it also holds the caller's
    kept session for the whole request, so that it is not closed to make room meanwhile.

    Args:
        tenant_header: The header that names the caller (`--tenant-header`); `None`: the
            credentials and forwarded headers.
        sessions: The sessions kept to an HTTP upstream; `None` for a stdio child.
    """

    def __init__(self, tenant_header: str | None = None, *, sessions: KeptSessions | None = None) -> None:
        self.tenant_header = tenant_header
        self.sessions = sessions

    async def __call__(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        token = _caller.set(caller_of_request(self.tenant_header))
        method = context.method or ""
        metadata = _reading_metadata.set(method in _METADATA_METHODS)
        state = _may_leave_state.set(not (method in _METADATA_METHODS or method.endswith("/list")))
        try:
            if self.sessions is None:
                return await call_next(context)
            async with self.sessions.in_use():
                return await call_next(context)
        finally:
            _may_leave_state.reset(state)
            _reading_metadata.reset(metadata)
            _caller.reset(token)


_reading_metadata: contextvars.ContextVar[bool] = contextvars.ContextVar("mcp_errors_proxy_metadata", default=False)
"""Whether the current request only reads the upstream's metadata (its name, its instructions)."""
_may_leave_state: contextvars.ContextVar[bool] = contextvars.ContextVar("mcp_errors_proxy_state", default=False)
"""Whether the current request may leave state upstream for its caller (a call, a read; not a listing)."""
_METADATA_METHODS: Final = frozenset({"initialize", "server/discover"})


def current_front_session() -> FrontSession:
    """The front session of the request being served (the sessionless caller outside any request)."""
    try:
        context = get_context()
    except RuntimeError:
        return _sessionless(ANONYMOUS)
    caller = _caller.get() or caller_of_request()
    request_context = context.request_context
    connection = getattr(request_context.session, "_connection", None) if request_context is not None else None
    if connection is not None and _lasts(connection, context.transport):
        return FrontSession(
            key=connection, state=connection.state, caller=caller, on_end=connection.exit_stack.push_async_callback
        )
    return _sessionless(caller)


def _lasts(connection: Any, transport: str | None) -> bool:
    """Whether a front connection outlives its request (a 2025-11-25 session, not a stateless HTTP request)."""
    if connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    return connection.session_id is not None or transport not in ("streamable-http", "sse")


_MAX_SESSIONLESS: Final = 1024
"""Sessionless callers remembered (by their identity, a hash); the oldest are forgotten first."""
_sessionless_states: collections.OrderedDict[Hashable, dict[str, Any]] = collections.OrderedDict()


def _sessionless(caller: Caller) -> FrontSession:
    key: Hashable = ("sessionless", caller.identity)
    state = _sessionless_states.get(key)
    if state is None:
        state = _sessionless_states[key] = {}
        while len(_sessionless_states) > _MAX_SESSIONLESS:
            _sessionless_states.popitem(last=False)
    else:
        _sessionless_states.move_to_end(key)
    return FrontSession(key=key, state=state, caller=caller)


def is_session_dropped(exc: BaseException) -> bool:
    """Whether `exc` says the upstream no longer knows our session (HTTP 404 on a session id).

    The SDK's streamable HTTP client turns that 404 into this JSON-RPC error; the upstream
    refused the request without running it.
    """
    return any(
        isinstance(cause, MCPError) and cause.code == INVALID_REQUEST and cause.error.message == _DROPPED
        for cause in causes(exc)
    )


class RequestNotSentError(Exception):
    """A request on a kept HTTP session whose connection was refused: no byte of it reached the upstream.

    The SDK's client reports it as a lost connection (as if the request might have run); the
    connection attempt that failed shows it never left.
    """


def is_unsent(exc: BaseException) -> bool:
    """Whether `exc` says the request never reached the upstream (a dropped session, a refused connection)."""
    return is_session_dropped(exc) or any(isinstance(cause, RequestNotSentError) for cause in causes(exc))


class UpstreamClient(ProxyClient[Any]):
    """fastmcp's proxy client, whose copies share the context that forwards the upstream's requests.

    fastmcp binds each copy's forwarding handlers to that copy's own slot, but a kept
    session keeps the handlers of the copy that opened it: without one shared slot, the
    upstream's sampling and elicitation requests would go to a request that has ended.
    Notifications and log messages the upstream sends before the host's first request have no
    request to travel with: they are dropped (logged at debug), not raised in the session.
    A copy also notes when the upstream dropped its session, so that it is not used again.

    fastmcp's forwarding of the inbound request's headers is off: a kept session would keep
    those of whichever request opened it for every later one. A kept HTTP session carries its
    caller's headers instead (`forwarded`, set when it opens).
    """

    def __init__(self, target: Any, **kwargs: Any) -> None:
        kwargs.setdefault("message_handler", self._forward_notification)
        kwargs.setdefault("log_handler", self._forward_log)
        kwargs.setdefault("forward_incoming_headers", False)
        super().__init__(target, **kwargs)
        self.forwarded: Mapping[str, str] = {}
        """The headers of the caller this client's session is for, sent on its every request."""
        self.dropped = False
        """Whether the upstream answered this client's session with "Session terminated"."""
        self.refused_request = False
        """Whether the connection for one of this session's requests was refused (HTTP only)."""
        self._in_flight = 0

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

    async def _await_with_session_monitoring(self, coro: Any) -> Any:
        # Every request of the client passes here (fastmcp's own hook for session failures).
        self._in_flight += 1
        try:
            return await super()._await_with_session_monitoring(coro)
        except MCPError as exc:
            if is_session_dropped(exc):
                self.dropped = True
            elif exc.code == CONNECTION_CLOSED and self.refused_request and self._in_flight == 1:
                # The SDK ends a session whose request could not connect, and fails what is
                # pending as "Connection closed". With one request in flight, the refused one
                # was this one: it never left.
                raise RequestNotSentError("the connection to the upstream server was refused") from exc
            raise
        finally:
            self._in_flight -= 1

    def new(self) -> UpstreamClient:
        # fastmcp's `Client.new` copies the client with its session handlers, which are bound
        # to this client's forwarding slot; `ProxyClient.new` would give the copy a slot of
        # its own, which a kept session never reads.
        copy = cast(UpstreamClient, Client.new(self))
        copy.dropped = copy.refused_request = False
        copy._in_flight = 0
        copy.forwarded = {}
        return copy


_opening: contextvars.ContextVar[UpstreamClient | None] = contextvars.ContextVar(
    "mcp_errors_proxy_opening", default=None
)
"""The client whose session is being opened: its HTTP connections are made in that context."""


def http_transport(url: str, headers: Mapping[str, str] | None = None) -> StreamableHttpTransport:
    """fastmcp's streamable HTTP transport to `url`, whose connections tell a refused request apart.

    `headers` go with every request, whoever calls (a host configuration's `headers`); a
    caller's own header of the same name does not replace them.
    """
    return StreamableHttpTransport(url, headers=dict(headers or {}), httpx_client_factory=_http_client)


def _http_client(
    headers: dict[str, str] | None = None,
    timeout: httpx2.Timeout | None = None,
    auth: httpx2.Auth | None = None,
    **_: Any,
) -> httpx2.AsyncClient:
    # The SDK's defaults (`create_mcp_http_client`): 30 s to connect, write and wait for the
    # pool, 300 s to read, redirects left to the SDK's own same-origin rule.
    client = _opening.get()
    inner = httpx2.AsyncHTTPTransport()
    transport: httpx2.AsyncBaseTransport = inner if client is None else _UnsentNotingTransport(inner, client)
    if client is not None:
        # The session's caller's headers, under those the transport was configured with.
        configured = {name.lower() for name in headers or {}}
        forwarded = {name: value for name, value in client.forwarded.items() if name not in configured}
        headers = {**forwarded, **(headers or {})}
    return httpx2.AsyncClient(
        headers=headers, timeout=timeout or httpx2.Timeout(30.0, read=300.0), auth=auth, transport=transport
    )


class _UnsentNotingTransport(httpx2.AsyncBaseTransport):
    """Tells, for its client, the requests of a kept session that never reached the upstream.

    - A request whose connection was refused (nothing of it was sent) is noted on the client.
    - A request the upstream answered with 404 on our session id (it restarted, or expired
      the session, and refused the request unread) is answered "Session terminated", the
      SDK's own words for it, whatever the upstream's body said (the SDK's server says
      "Session not found", other servers other things), so that `is_session_dropped` knows it.
    """

    def __init__(self, inner: httpx2.AsyncBaseTransport, client: UpstreamClient) -> None:
        self._inner = inner
        self._client = client

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await self._inner.handle_async_request(request)
        except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout):
            if request.method == "POST" and _request_id(request) is not None:
                self._client.refused_request = True
            raise
        if response.status_code != 404 or "mcp-session-id" not in request.headers or request.method != "POST":
            return response
        request_id = _request_id(request)
        if request_id is None:
            return response
        await response.aclose()
        self._client.dropped = True
        error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": INVALID_REQUEST, "message": _DROPPED}}
        return httpx2.Response(404, json=error, request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


_DROPPED: Final = "Session terminated"


def _request_id(request: httpx2.Request) -> object:
    """The JSON-RPC id of a POST that carries a request (not a notification, not an answer to the upstream)."""
    try:
        message = json.loads(request.content)
    except ValueError:
        return None
    if isinstance(message, dict) and "method" in message:
        return message.get("id")
    return None


class UpstreamBusyError(Exception):
    """Every upstream session the proxy may keep had a call in flight for as long as a newcomer may wait.

    The newcomer's request was not sent. No failure of the upstream: the breaker does not count it.
    """

    def __init__(self, retry_after: float) -> None:
        super().__init__("every session this proxy keeps to the upstream server is busy with a call")
        self.retry_after = retry_after


@dataclass(eq=False)
class _Kept:
    """An upstream session kept open for one front session (or for all, when the upstream is stateless)."""

    client: UpstreamClient
    opened: int = 1
    """Sessions opened for this front session so far: more than one means state was lost."""
    lost: str = ""
    """How the last session ended, for the restart notice."""
    served: bool = False
    """Whether a request that may leave state upstream (not a handshake, not a listing) used the session."""


_MAX_KEPT_SESSIONLESS: Final = 64
"""Sessions kept open for sessionless callers (one per caller); an idle one makes room for a newcomer."""
_ROOM_WAIT_SECONDS: Final = 10.0
"""How long a newcomer waits for a kept session to become idle when all are busy, before it is refused."""
_BUSY_RETRY_AFTER: Final = 2.0
_MAX_CLOSED: Final = 1024
"""Callers whose idle session was closed to make room, remembered for the restart notice."""
_CLOSED_TO_MAKE_ROOM: Final = (
    "lost what it kept for this session: this proxy closed that idle session with it to serve other callers, "
    "and opened a new one"
)


@dataclass(eq=False)
class KeptSessions:
    """The proxy's client factory for an HTTP upstream: one kept session per front session.

    Args:
        base: The client every session is a copy of.
        max_sessionless: Sessions kept open for sessionless callers at once.
        room_wait: Seconds a newcomer waits for one of them to become idle when all are busy.
    """

    base: UpstreamClient
    max_sessionless: int = _MAX_KEPT_SESSIONLESS
    room_wait: float = _ROOM_WAIT_SECONDS
    stateless: bool | None = None
    """Whether the upstream keeps no session state (it gave no session id); `None` until a session opened."""
    _kept: dict[Hashable, _Kept] = field(default_factory=dict)
    """Open sessions, the least recently used first."""
    _closed: collections.OrderedDict[Hashable, _Kept] = field(default_factory=collections.OrderedDict)
    _opening: dict[Hashable, anyio.Lock] = field(default_factory=dict)
    _busy: collections.Counter[Hashable] = field(default_factory=collections.Counter)
    """Requests in flight per front session: its session is not closed to make room meanwhile."""
    _reserved: set[Hashable] = field(default_factory=set)
    """Sessionless callers whose session is being opened: each holds a place."""
    _idle: anyio.Event | None = None
    """Set when a request ends, for newcomers waiting for room (made when one waits)."""

    @contextlib.asynccontextmanager
    async def in_use(self) -> AsyncIterator[None]:
        """Hold the current front session's upstream session for one request: it stays open meanwhile."""
        key = self._key(current_front_session())
        self._busy[key] += 1
        try:
            yield
        finally:
            self._busy[key] -= 1
            if not self._busy[key]:
                del self._busy[key]
                if self._idle is not None:
                    self._idle.set()
                    self._idle = None

    async def client(self) -> UpstreamClient:
        """The current front session's upstream client, connected (fastmcp's `client_factory`).

        Raises:
            UpstreamBusyError: If every session that may be kept stayed busy while this one waited.
            Exception: What connecting raised, when the upstream cannot be reached.
        """
        front = current_front_session()
        key = self._key(front)
        kept = self._kept.get(key)
        if kept is not None and _usable(kept.client):
            self._kept[key] = self._kept.pop(key)  # the most recently used
            kept.served = kept.served or _may_leave_state.get()
            return kept.client
        lock = self._opening.setdefault(key, anyio.Lock())
        async with lock:
            kept = self._kept.get(key)
            if kept is not None and _usable(kept.client):
                kept.served = kept.served or _may_leave_state.get()
                return kept.client
            if kept is None and isinstance(key, tuple):
                if _reading_metadata.get() and not self._has_free_place():
                    # A handshake needs only the upstream's name and instructions: it neither
                    # waits for a place nor takes an idle caller's. A session of its own, with
                    # nobody's headers, opened and closed around the reading (fastmcp's
                    # `ProxyMetadataMiddleware`).
                    return self.base.new()
                await self._make_room(key)
            client = self.base.new()
            client.forwarded = front.caller.headers
            token = _opening.set(client)
            try:
                # Held until the front session ends (`_close`); fastmcp leaves `__aenter__` unannotated.
                await client.__aenter__()  # type: ignore[no-untyped-call]
            finally:
                _opening.reset(token)
                self._reserved.discard(key)
            if self.stateless is None:
                self.stateless = client.transport.get_session_id() is None
            if kept is None:
                kept = self._closed.pop(key, None)
                if kept is None:
                    self._kept[key] = _Kept(client, served=_may_leave_state.get())
                    if front.on_end is not None and not self.stateless:
                        front.on_end(lambda: self._end(key))
                    return client
                self._kept[key] = kept
            else:
                await self._close(kept.client)
                kept.lost = (
                    "ended its session with this proxy, which opened a new one"
                    if kept.client.dropped
                    else "closed its connection to this proxy, which opened a new session"
                )
            kept.client, kept.opened = client, kept.opened + 1
            kept.served = _may_leave_state.get()
            if not self.stateless:
                url = redact_url(str(getattr(self.base.transport, "url", "")))
                logger.warning("The upstream server %s %s.", url, kept.lost)
                record_proxy_decision("session_reopened")
        return client

    def restarts_for(self, front: FrontSession) -> tuple[int, str]:
        """How often `front`'s upstream session was opened again, and how the last one ended.

        Always 0 for a stateless upstream: a new session of it has lost nothing.
        """
        key = self._key(front)
        kept = self._kept.get(key) or self._closed.get(key)
        if kept is None or self.stateless:
            return 0, ""
        return kept.opened - 1, kept.lost

    async def aclose(self) -> None:
        """Close every kept session (at the proxy's shutdown)."""
        self._closed.clear()
        while self._kept:
            _, kept = self._kept.popitem()
            await self._close(kept.client)

    def _key(self, front: FrontSession) -> Hashable:
        if self.stateless and not isinstance(front.key, tuple):
            # Nothing to keep apart but the caller's headers: one session for every front
            # session of this caller (none, over stdio and in memory).
            return ("sessionless", front.caller.identity)
        return front.key

    def _has_free_place(self) -> bool:
        sessionless = sum(1 for key in self._kept if isinstance(key, tuple))
        return sessionless + len(self._reserved) < self.max_sessionless

    async def _make_room(self, key: Hashable) -> None:
        """Hold a place for `key`'s new session: a free one, an idle session's, or one that becomes idle in time.

        Raises:
            UpstreamBusyError: If every kept session stayed busy for `room_wait` seconds.
        """
        with anyio.move_on_after(self.room_wait):
            while True:
                sessionless = [other for other in self._kept if isinstance(other, tuple)]
                if len(sessionless) + len(self._reserved) < self.max_sessionless:
                    self._reserved.add(key)
                    return
                idle = next((other for other in sessionless if not self._busy.get(other)), None)
                if idle is not None:
                    self._reserved.add(key)
                    await self._close_idle(idle)
                    return
                if self._idle is None:
                    self._idle = anyio.Event()
                await self._idle.wait()
        logger.warning(
            "All %d sessions kept to the upstream server have a call in flight: a newcomer was refused.",
            self.max_sessionless,
        )
        raise UpstreamBusyError(_BUSY_RETRY_AFTER)

    async def _close_idle(self, key: Hashable) -> None:
        kept = self._kept.pop(key)
        self._opening.pop(key, None)
        if kept.served and not self.stateless:
            # Its caller is told on its next result, as after a restart.
            kept.lost = _CLOSED_TO_MAKE_ROOM
            self._closed[key] = kept
            while len(self._closed) > _MAX_CLOSED:
                self._closed.popitem(last=False)
        await self._close(kept.client)

    async def _end(self, key: Hashable) -> None:
        kept = self._kept.pop(key, None)
        self._opening.pop(key, None)
        if kept is not None:
            await self._close(kept.client)

    @staticmethod
    async def _close(client: UpstreamClient) -> None:
        with anyio.CancelScope(shield=True):
            try:
                await client._disconnect(force=True)
            except Exception:  # a session that already failed has nothing left to close
                logger.debug("closing an upstream session failed", exc_info=True)


def _usable(client: UpstreamClient) -> bool:
    if not client.is_connected() or client.dropped:
        return False
    # A connection the upstream closed leaves the session's dispatcher closed before the
    # session task notices (fastmcp's stdio transport reads the same flag for the same reason):
    # a request sent on it would fail as if lost mid-call.
    dispatcher = getattr(client.session, "_dispatcher", None)
    return not getattr(dispatcher, "_closed", False)


class ToolCallMiddleware(Middleware):
    """A middleware that acts on tools/call only, entered once per message.

    fastmcp's base class builds three wrappers per message and middleware (`on_message`,
    `on_request`, then the method's hook); the proxy's own middlewares take the documented
    `__call__` form instead, which keeps the relay's added time down (benchmarks/proxy.py).
    """

    async def __call__(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        if context.method == "tools/call":
            return await self.on_call_tool(context, call_next)
        return await call_next(context)


class SessionMiddleware(Middleware):
    """Sends a request once more, on a new session, when it never reached the upstream.

    That is when the upstream dropped the session (it refused the request unread), or when
    the kept session's connection was refused: the new session then fails to connect the way
    a first connection does, which says "not executed", or finds the upstream back.

    The innermost middleware, so that it sees the upstream's error before anything reads it.
    """

    async def __call__(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        try:
            return await call_next(context)
        except Exception as exc:
            if not is_unsent(exc):
                raise
        return await call_next(context)


async def _forward_list_changed(message: Any) -> None:
    """Send the host the upstream's list-changed notifications (what fastmcp 4.2's proxy does;
    4.1, which `fastmcp-tasks` pins, has no handler for them)."""
    if isinstance(message, _LIST_CHANGED):
        await get_context().send_notification(message)


_LIST_CHANGED: Final = (ToolListChangedNotification, ResourceListChangedNotification, PromptListChangedNotification)
