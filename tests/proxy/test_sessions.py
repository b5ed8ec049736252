"""Upstream sessions: an HTTP upstream keeps one MCP session per front session, opened again when dropped.

The upstream is `tests/servers/proxy_upstream.py` over streamable HTTP; its `remember` and
`recall` tools keep notes per MCP session, as a stateful server does.

Processes are few on purpose (each start costs a second or two of CPU): the tests that only
read share one upstream of each kind for the module (`stateful`, `tenants`), each test with
proxies and sessions of its own (and its own write keys); a test that restarts its upstream
starts its own, and checks the proxy in memory in both connection modes and the command over
stdio on that one restart.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META, REPLAYED_META
from mcp_errors.proxy import ProxySettings, _sessions
from mcp_errors.proxy._guard import REPEAT_OF_META
from mcp_errors.proxy._restarts import RESTARTED_META
from mcp_errors.proxy._sessions import ANONYMOUS, caller_of_request, current_front_session, is_session_dropped
from proxying import (
    PROXY,
    STARTUP_SECONDS,
    TENANT_UPSTREAM,
    UPSTREAM,
    command_params,
    front,
    http_caller,
    http_front,
    http_served,
    http_upstream,
    served,
)
from services import free_port

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

MODES = ("legacy", "auto")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one upstream (`stateful`, `tenants`)."""
    return "asyncio"


@pytest.fixture(scope="module")
async def stateful() -> AsyncIterator[str]:
    """The URL of one stateful HTTP upstream shared by the module's tests: each keeps notes in sessions of its own."""
    async with http_upstream() as (url, _):
        yield url


@pytest.fixture(scope="module")
async def tenants() -> AsyncIterator[str]:
    """The URL of one tenant upstream shared by the module's tests, each writing keys of its own."""
    async with http_upstream(script=TENANT_UPSTREAM) as (url, _):
        yield url


@contextlib.asynccontextmanager
async def upstream_on_one_port(*, tenants: bool = False) -> AsyncIterator[tuple[str, Callable[..., Awaitable[Any]]]]:
    """The HTTP upstream (`tenants`: the one that tells whose headers reached it), and a function that
    stops it and starts it again on the same port.

    `restart(while_down=call)` awaits `call()` while the upstream is stopped and returns its result.
    """
    port = str(free_port())
    args, script = ((port,), TENANT_UPSTREAM) if tenants else (("http", port), UPSTREAM)
    async with contextlib.AsyncExitStack() as stack:
        url, process = await stack.enter_async_context(http_upstream(*args, script=script))
        running = [process]

        async def restart(while_down: Callable[[], Awaitable[Any]] | None = None) -> Any:
            running[0].terminate()
            await running[0].wait()
            result = await while_down() if while_down is not None else None
            running[0] = (await stack.enter_async_context(http_upstream(*args, script=script)))[1]
            return result

        yield url, restart


@pytest.mark.anyio
async def test_a_stateful_http_upstream_keeps_its_state_across_calls_through_the_command(stateful: str) -> None:
    # One connection mode over stdio ("auto"; the dropped-session test below runs "legacy"): the
    # state kept across calls is proved in memory in both modes there too (its notes after the restart).
    async with Client(command_params(stateful), mode="auto") as client:
        with anyio.fail_after(STARTUP_SECONDS):
            await client.call_tool("remember", {"text": "the user is Ada"})
            await client.call_tool("remember", {"text": "she wants a refund"})
            recalled = await client.call_tool("recall", {})
    assert recalled.structured_content == {"result": ["the user is Ada", "she wants a refund"]}


@pytest.mark.anyio
async def test_each_front_session_has_its_own_upstream_session(stateful: str) -> None:
    async with served(stateful) as server, front(server) as first, front(server) as second:
        await first.call_tool("remember", {"text": "first's note"})
        await second.call_tool("remember", {"text": "second's note"})
        mine = await first.call_tool("recall", {})
        theirs = await second.call_tool("recall", {})
    assert mine.structured_content == {"result": ["first's note"]}
    assert theirs.structured_content == {"result": ["second's note"]}


# -- the host's log: an HTTP upstream's URL credentials never reach it --

_PASSWORD, _API_KEY = "s3cret-pw-4417", "k3y-secret-9021"


def _with_credentials(url: str) -> str:
    return url.replace("http://", f"http://alice:{_PASSWORD}@") + f"?api_key={_API_KEY}"


@pytest.mark.anyio
async def test_a_session_the_upstream_dropped_is_opened_again_the_call_resent_and_the_loss_told_and_logged_without_the_urls_credentials(  # noqa: E501
    tmp_path: Path,
) -> None:
    """One restart of the upstream, seen by the proxy in memory in both connection modes and by the
    command over stdio (one mode, "legacy": the front is the same in both), whose log is read."""
    log = tmp_path / "server.log"
    async with upstream_on_one_port() as (url, restart), served(url) as server:
        logged = StdioServerParameters(
            command="sh",
            args=["-c", 'exec "$@" 2>"$SERVER_LOG"', "sh", *PROXY, _with_credentials(url)],
            env={**os.environ, "SERVER_LOG": str(log)},
        )
        async with (
            Client(server._mcp_server, mode="legacy") as legacy,  # fastmcp's low-level server
            Client(server._mcp_server, mode="auto") as auto,
            Client(logged, mode="legacy") as command,
        ):
            clients = {"legacy": legacy, "auto": auto, "command": command}
            with anyio.fail_after(STARTUP_SECONDS):
                for client in clients.values():
                    await client.call_tool("remember", {"text": "before the restart"})
                await restart()  # the same server on the same port: it knows no session of before
                remembered = {
                    name: await client.call_tool("remember", {"text": "after the restart"})
                    for name, client in clients.items()
                }
                recalled = {name: await client.call_tool("recall", {}) for name, client in clients.items()}
    for name in clients:
        assert not remembered[name].is_error, name
        assert remembered[name].content[0].text == "1 note(s)", name  # type: ignore[union-attr]  # sent once, on the new session
        assert (remembered[name].meta or {})[RESTARTED_META]["restarts"] == 1, name
        assert "ended its session" in remembered[name].content[-1].text, name  # type: ignore[union-attr]
        assert recalled[name].structured_content == {"result": ["after the restart"]}, name
        assert RESTARTED_META not in (recalled[name].meta or {}), name  # told once
    written = log.read_text()
    assert "ended its session" in written  # the reopen was logged, with the upstream named
    assert "127.0.0.1" in written
    assert _PASSWORD not in written
    assert _API_KEY not in written


@pytest.mark.anyio
async def test_a_stateless_upstream_serves_every_front_session_on_one_shared_session() -> None:
    async with http_upstream("http-stateless") as (url, _), served(url) as server:
        async with front(server) as first, front(server) as second:
            one = await first.call_tool("echo", {"text": "one"})
            two = await second.call_tool("echo", {"text": "two"})
        sessions = next(p.sessions for p in server.providers if getattr(p, "sessions", None) is not None)  # type: ignore[attr-defined]
        kept = len(sessions._kept)
    assert (one.structured_content, two.structured_content) == ({"result": "one"}, {"result": "two"})
    assert sessions.stateless is True
    assert kept == 1


@pytest.mark.anyio
async def test_an_http_upstream_that_went_away_between_calls_answers_not_executed_then_comes_back() -> None:
    """One stop of the upstream, seen by the proxy in memory in both connection modes and by the
    command over stdio (one mode, "auto"; the dropped-session test above runs "legacy")."""
    async with (
        upstream_on_one_port() as (url, restart),
        served(url) as server,
        Client(server._mcp_server, mode="legacy") as legacy,  # fastmcp's low-level server
        Client(server._mcp_server, mode="auto") as auto,
        Client(command_params(url), mode="auto") as command,
    ):
        clients = {"legacy": legacy, "auto": auto, "command": command}

        async def write_each() -> dict[str, CallToolResult]:
            return {name: await client.call_tool("count_write", {"key": "w"}) for name, client in clients.items()}

        with anyio.fail_after(STARTUP_SECONDS):
            for client in clients.values():
                await client.call_tool("echo", {"text": "hello"})
            gone = await restart(while_down=write_each)
            back = {name: await client.call_tool("echo", {"text": "back"}) for name, client in clients.items()}
    for name in clients:
        outcome = read_result(gone[name])
        # The kept session's connection was refused: the write never left, and says so.
        assert (outcome.category, outcome.code, outcome.execution_state) == (
            ErrorCategory.TRANSIENT,
            "UPSTREAM_UNAVAILABLE",
            ExecutionState.NOT_EXECUTED,
        ), name
        assert back[name].structured_content == {"result": "back"}, name


# --- the shared `--http` front: callers told apart by who they are ---------------------------

TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
ALICE = {"Authorization": "Bearer alice", "X-Api-Key": "key-alice"}
CAROL = {"Authorization": "Bearer alice", "X-Api-Key": "key-carol"}  # Alice's bearer token, her own key
BOB = {"Authorization": "Bearer bob", "X-Api-Key": "key-bob", "traceparent": TRACE}
DAVE = {"Cookie": "sid=dave"}
NOBODY: dict[str, str] = {}


async def whoami(url: str, headers: dict[str, str], mode: str = "legacy") -> dict[str, Any]:
    """What the upstream saw of `headers`, asked through the proxy at `url` by a caller sending them."""
    async with http_caller(url, headers, mode=mode) as client:
        result = await client.call_tool("whoami", {})
    assert not result.is_error, result
    seen: dict[str, Any] = result.structured_content or {}
    return {
        name: value for name, value in seen.items() if name in ("authorization", "x-api-key", "cookie", "traceparent")
    }


def own(headers: dict[str, str]) -> dict[str, Any]:
    """What the upstream must see of a caller: its credentials, and neither its cookie nor its trace context."""
    return {
        "authorization": headers.get("Authorization"),
        "x-api-key": headers.get("X-Api-Key"),
        "cookie": None,
        "traceparent": None,
    }


@pytest.mark.anyio
async def test_each_caller_of_the_http_front_reaches_the_upstream_with_its_own_headers_also_after_a_restart() -> None:
    callers = [ALICE, CAROL, BOB, DAVE, NOBODY]
    # In process, behind the front `--http` serves: the command's front is proved by the tenant-header test below.
    # One proxy per connection mode of the callers, both in front of the one upstream that restarts.
    async with (
        upstream_on_one_port(tenants=True) as (url, restart),
        served(url) as legacy_server,
        served(url) as auto_server,
        http_served(legacy_server) as legacy_proxy,
        http_served(auto_server) as auto_proxy,
    ):
        proxies = {"legacy": legacy_proxy, "auto": auto_proxy}
        with anyio.fail_after(STARTUP_SECONDS):
            before = {
                mode: [await whoami(proxy, headers, mode) for headers in callers] for mode, proxy in proxies.items()
            }
            await restart()  # every kept session is gone: the next call of each caller opens one
            # Bob first: the session he opens must not serve anyone else.
            after = {
                mode: [await whoami(proxy, headers, mode) for headers in (BOB, ALICE, CAROL, DAVE, NOBODY)]
                for mode, proxy in proxies.items()
            }
            again = {
                mode: [await whoami(proxy, headers, mode) for headers in callers] for mode, proxy in proxies.items()
            }
    for mode in MODES:
        assert before[mode] == again[mode] == [own(headers) for headers in callers], mode
        assert after[mode] == [own(headers) for headers in (BOB, ALICE, CAROL, DAVE, NOBODY)], mode


@pytest.mark.anyio
async def test_with_a_tenant_header_its_callers_share_a_session_and_only_that_header_reaches_the_upstream(
    tenants: str,
) -> None:
    acme_one = {"X-Tenant": "acme", "Authorization": "Bearer one"}
    acme_two = {"X-Tenant": "acme", "Authorization": "Bearer two"}
    globex = {"X-Tenant": "globex", "Authorization": "Bearer three"}
    async with http_front("--tenant-header", "X-Tenant", tenants) as proxy:
        with anyio.fail_after(STARTUP_SECONDS):
            async with http_caller(proxy, acme_one) as client:
                await client.call_tool("remember", {"text": "acme's note"})
            async with http_caller(proxy, acme_two) as client:
                acme = await client.call_tool("recall", {})
                seen = (await client.call_tool("whoami", {})).structured_content or {}
            async with http_caller(proxy, globex) as client:
                other = await client.call_tool("recall", {})
                seen_other = (await client.call_tool("whoami", {})).structured_content or {}
    assert acme.structured_content == {"result": ["acme's note"]}  # one tenant, one upstream session
    assert (other.structured_content or {})["result"] == []
    assert (seen["x-tenant"], seen["authorization"]) == ("acme", None)
    assert (seen_other["x-tenant"], seen_other["authorization"]) == ("globex", None)


@pytest.mark.anyio
async def test_an_idempotency_key_is_the_callers_own_on_the_http_front_also_across_replicas_sharing_a_store(
    tenants: str, tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path / 'keys.sqlite3'}"
    key = {IDEMPOTENCY_KEY_META: "order-laptop"}  # derived from the business operation: every caller's
    async with (
        http_front("--idempotency-keys", "--store", store, tenants) as first,
        http_front("--idempotency-keys", "--store", store, tenants) as second,
    ):
        with anyio.fail_after(STARTUP_SECONDS):
            async with http_caller(first, ALICE) as alice:
                hers = await alice.call_tool("charge", {"order": "laptop"}, meta=key)  # type: ignore[arg-type]
            async with http_caller(second, BOB) as bob:
                his = await bob.call_tool("charge", {"order": "laptop"}, meta=key)  # type: ignore[arg-type]
            async with http_caller(second, ALICE) as alice:
                resent = await alice.call_tool("charge", {"order": "laptop"}, meta=key)  # type: ignore[arg-type]
            async with http_caller(first, NOBODY) as anyone:
                written = (await anyone.call_tool("written", {})).structured_content
    assert hers.content[0].text == "laptop charged to the card of key-alice"  # type: ignore[union-attr]
    assert his.content[0].text == "laptop charged to the card of key-bob"  # type: ignore[union-attr]
    assert REPLAYED_META not in (his.meta or {})
    # The same caller on another replica: her first answer, not a second charge.
    assert resent.content[0].text == "laptop charged to the card of key-alice"  # type: ignore[union-attr]
    assert (resent.meta or {}).get(REPLAYED_META) is True
    # The upstream is the module's: the other tests write other orders and keys.
    assert {write: count for write, count in (written or {}).items() if write.startswith("laptop ")} == {
        "laptop for key-alice": 1,
        "laptop for key-bob": 1,
    }


@pytest.mark.anyio
async def test_the_repeat_guard_on_the_http_front_keeps_each_callers_failures_apart(tenants: str) -> None:
    frank = {"Authorization": "Bearer team"}  # no card of his own
    grace = {"Authorization": "Bearer team", "X-Api-Key": "key-grace"}  # the same team token, her own card
    # In process: `tests/proxy/test_guard.py` proves the command's `--repeat-guard` (over stdio).
    async with served(tenants, ProxySettings(repeat_guard=60)) as server, http_served(server) as proxy:
        with anyio.fail_after(STARTUP_SECONDS):
            async with http_caller(proxy, frank) as client:
                refused = await client.call_tool("charge", {"order": "book"})
                repeated = await client.call_tool("charge", {"order": "book"})
            async with http_caller(proxy, grace) as client:
                hers = await client.call_tool("charge", {"order": "book"})
    assert read_result(refused).category is ErrorCategory.BUSINESS
    assert REPEAT_OF_META in (repeated.meta or {})  # the guard is on, for Frank
    assert not hers.is_error
    assert hers.content[0].text == "book charged to the card of key-grace"  # type: ignore[union-attr]


KEPT_SESSIONS = 4
"""The sessions kept for sessionless callers in the tests: the command keeps 64, four prove the same with less work."""


@pytest.mark.anyio
async def test_more_tenants_at_once_than_sessions_kept_lose_no_call_in_flight_and_every_write_runs_exactly_once(
    tenants: str,
) -> None:
    results: dict[str, CallToolResult] = {}

    async def tenant(number: int) -> None:
        async with http_caller(proxy, {"Authorization": f"Bearer tenant-{number}"}) as client:
            results[f"t{number}"] = await client.call_tool("slow_write", {"key": f"t{number}", "seconds": 1})

    async with served(tenants) as server:
        sessions = next(p.sessions for p in server.providers if getattr(p, "sessions", None) is not None)  # type: ignore[attr-defined]
        sessions.max_sessionless = KEPT_SESSIONS
        async with http_served(server) as proxy:
            with anyio.fail_after(STARTUP_SECONDS * 5):  # many clients and handshakes on a busy machine
                async with anyio.create_task_group() as tasks:
                    for number in range(KEPT_SESSIONS * 5 // 2):  # as 100 tenants are to the command's 64, and more
                        tasks.start_soon(tenant, number)
                async with http_caller(proxy, NOBODY) as anyone:
                    written = (await anyone.call_tool("written", {})).structured_content or {}
    outcomes = {key: read_result(result) for key, result in results.items()}
    failed = {key: (found.code, found.execution_state) for key, found in outcomes.items() if found.kind == "error"}
    # No call in flight was cut (UPSTREAM_CONNECTION_LOST), nor refused by a breaker that counted such cuts
    # (UPSTREAM_UNAVAILABLE): a newcomer waits for a session to become idle, or is refused before it is sent.
    assert set(failed.values()) <= {("UPSTREAM_BUSY", ExecutionState.NOT_EXECUTED)}
    assert {key: written.get(key, 0) for key in outcomes} == {key: 0 if key in failed else 1 for key in outcomes}
    assert len(outcomes) - len(failed) >= KEPT_SESSIONS


class InFlight(Middleware):
    """Sets `event` once `calls` tools/call requests are in flight at once."""

    def __init__(self, event: anyio.Event, *, calls: int) -> None:
        self.event, self.calls, self.running = event, calls, 0

    async def on_call_tool(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        self.running += 1
        if self.running >= self.calls:
            self.event.set()
        try:
            return await call_next(context)
        finally:
            self.running -= 1


@pytest.mark.anyio
async def test_a_newcomer_finding_every_kept_session_busy_is_refused_unsent_and_the_breaker_does_not_count_it(
    tenants: str,
) -> None:
    settings = ProxySettings(breaker_failures=1)  # one counted failure would open the circuit
    results: dict[str, CallToolResult] = {}

    async def writer(name: str) -> None:
        async with http_caller(proxy, {"Authorization": f"Bearer {name}"}) as client:
            results[name] = await client.call_tool("slow_write", {"key": name, "seconds": 5})

    async with served(tenants, settings) as server:
        sessions = next(p.sessions for p in server.providers if getattr(p, "sessions", None) is not None)  # type: ignore[attr-defined]
        sessions.max_sessionless, sessions.room_wait = 2, 0.5  # two places; a short wait for one
        both_in_flight = anyio.Event()
        server.add_middleware(InFlight(both_in_flight, calls=2))  # the innermost: the writes are being sent
        async with http_served(server) as proxy, anyio.create_task_group() as tasks:
            with anyio.fail_after(STARTUP_SECONDS):
                for name in ("ann", "ben"):
                    tasks.start_soon(writer, name)
                await both_in_flight.wait()
                async with http_caller(proxy, {"Authorization": "Bearer cy"}) as client:
                    refused = await client.call_tool("slow_write", {"key": "cy", "seconds": 0})
        async with http_served(server) as proxy, http_caller(proxy, {"Authorization": "Bearer cy"}) as client:
            with anyio.fail_after(STARTUP_SECONDS):
                later = await client.call_tool("slow_write", {"key": "cy", "seconds": 0})
                written = (await client.call_tool("written", {})).structured_content
    outcome = read_result(refused)
    assert (outcome.category, outcome.code, outcome.execution_state) == (
        ErrorCategory.TRANSIENT,
        "UPSTREAM_BUSY",
        ExecutionState.NOT_EXECUTED,
    )
    assert outcome.retry_after_seconds is not None
    assert [results[name].is_error for name in ("ann", "ben")] == [False, False]  # neither cut mid-call
    assert not later.is_error  # no circuit opened by the refusal
    # The upstream is the module's: the other tests write other keys.
    assert {key: count for key, count in (written or {}).items() if key in ("ann", "ben", "cy")} == {
        "ann": 1,
        "ben": 1,
        "cy": 1,
    }


@pytest.mark.anyio
async def test_a_caller_whose_idle_session_was_closed_to_make_room_is_told_as_after_a_restart(tenants: str) -> None:
    ada = {"Authorization": "Bearer ada"}

    async def newcomer(number: int) -> None:
        async with http_caller(proxy, {"Authorization": f"Bearer newcomer-{number}"}) as client:
            await client.call_tool("whoami", {})

    async with served(tenants) as server:
        sessions = next(p.sessions for p in server.providers if getattr(p, "sessions", None) is not None)  # type: ignore[attr-defined]
        sessions.max_sessionless = KEPT_SESSIONS
        async with http_served(server) as proxy:
            with anyio.fail_after(STARTUP_SECONDS * 5):
                async with http_caller(proxy, ada) as client:
                    await client.call_tool("remember", {"text": "Ada's draft"})
                async with anyio.create_task_group() as tasks:
                    for number in range(sessions.max_sessionless + 2):  # more callers than the sessions kept
                        tasks.start_soon(newcomer, number)
                async with http_caller(proxy, ada) as client:
                    recalled = await client.call_tool("recall", {})
                    again = await client.call_tool("recall", {})
    assert (recalled.structured_content or {})["result"] == []  # her session's state is gone...
    assert (recalled.meta or {})[RESTARTED_META]["restarts"] == 1  # ...and she is told
    assert RESTARTED_META not in (again.meta or {})


def test_sessionless_callers_are_told_apart_by_their_credentials_only() -> None:
    # Outside any request: the sessionless caller without credentials, the same one each time.
    assert current_front_session().key == current_front_session().key == ("sessionless", None)


def test_a_caller_over_stdio_or_in_memory_is_anonymous_without_reading_any_headers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Read on every request: fastmcp's header reading builds its exclusion set and raises and
    # catches an error when there is no HTTP request (benchmarks/proxy.py, issue 36).
    def read_headers(**kwargs: Any) -> dict[str, str]:
        raise AssertionError("headers read outside an HTTP request")

    monkeypatch.setattr(_sessions, "get_http_headers", read_headers)
    assert caller_of_request() is ANONYMOUS
    assert caller_of_request("X-Tenant") is ANONYMOUS


def _http_request(headers: dict[str, str]) -> Any:
    from starlette.requests import Request

    raw = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
    return Request({"type": "http", "method": "POST", "path": "/mcp", "headers": raw})


def test_an_http_requests_credentials_and_a_tasks_carried_headers_still_tell_their_caller() -> None:
    from fastmcp.server.dependencies import _background_task_headers
    from fastmcp.server.http import _current_http_request

    token = _current_http_request.set(_http_request({"Authorization": "Bearer alice", "X-Tenant": "acme"}))
    try:
        alice, tenant = caller_of_request(), caller_of_request("X-Tenant")
    finally:
        _current_http_request.reset(token)
    assert alice.identity is not None
    assert alice.headers["authorization"] == "Bearer alice"
    assert tenant.identity is not None
    assert tenant.headers == {"x-tenant": "acme"}
    carried = _background_task_headers.set({"authorization": "Bearer bob"})
    try:
        bob = caller_of_request()
    finally:
        _background_task_headers.reset(carried)
    assert bob.identity not in (None, alice.identity)
    assert bob.headers == {"authorization": "Bearer bob"}


def test_only_a_404_on_a_session_counts_as_a_dropped_session() -> None:
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED, INVALID_REQUEST

    dropped = MCPError(INVALID_REQUEST, "Session terminated")
    assert is_session_dropped(RuntimeError("wrapped")) is False
    assert is_session_dropped(dropped)
    wrapped = RuntimeError("tool failed")
    wrapped.__cause__ = dropped
    assert is_session_dropped(wrapped)
    assert not is_session_dropped(MCPError(CONNECTION_CLOSED, "Connection closed"))
    assert not is_session_dropped(MCPError(INVALID_REQUEST, "Bad request"))


@pytest.mark.anyio
async def test_an_unreachable_upstreams_credentials_are_not_in_the_start_up_error() -> None:
    unreachable = _with_credentials(f"http://127.0.0.1:{free_port()}/mcp")
    with anyio.fail_after(STARTUP_SECONDS):
        done = await anyio.run_process([*PROXY, "--startup-timeout", "5", unreachable], check=False)
    said = done.stderr.decode()
    assert done.returncode == 1
    assert "not reachable" in said
    assert _PASSWORD not in said
    assert _API_KEY not in said
