"""Upstream sessions: an HTTP upstream keeps one MCP session per front session, opened again when dropped.

The upstream is `tests/servers/proxy_upstream.py` over streamable HTTP; its `remember` and
`recall` tools keep notes per MCP session, as a stateful server does.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors.proxy._restarts import RESTARTED_META
from mcp_errors.proxy._sessions import current_front_session, is_session_dropped
from proxying import PROXY, STARTUP_SECONDS, command_params, front, http_upstream, served
from services import free_port


@contextlib.asynccontextmanager
async def upstream_on_one_port() -> AsyncIterator[tuple[str, Callable[..., Awaitable[Any]]]]:
    """The HTTP upstream, and a function that stops it and starts it again on the same port.

    `restart(while_down=call)` awaits `call()` while the upstream is stopped and returns its result.
    """
    port = str(free_port())
    async with contextlib.AsyncExitStack() as stack:
        url, process = await stack.enter_async_context(http_upstream("http", port))
        running = [process]

        async def restart(while_down: Callable[[], Awaitable[Any]] | None = None) -> Any:
            running[0].terminate()
            await running[0].wait()
            result = await while_down() if while_down is not None else None
            running[0] = (await stack.enter_async_context(http_upstream("http", port)))[1]
            return result

        yield url, restart


@pytest.mark.anyio
async def test_a_stateful_http_upstream_keeps_its_state_across_calls_through_the_command(mode: str) -> None:
    async with http_upstream() as (url, _), Client(command_params(url), mode=mode) as client:
        with anyio.fail_after(STARTUP_SECONDS):
            await client.call_tool("remember", {"text": "the user is Ada"})
            await client.call_tool("remember", {"text": "she wants a refund"})
            recalled = await client.call_tool("recall", {})
    assert recalled.structured_content == {"result": ["the user is Ada", "she wants a refund"]}


@pytest.mark.anyio
async def test_each_front_session_has_its_own_upstream_session() -> None:
    async with http_upstream() as (url, _), served(url) as server, front(server) as first, front(server) as second:
        await first.call_tool("remember", {"text": "first's note"})
        await second.call_tool("remember", {"text": "second's note"})
        mine = await first.call_tool("recall", {})
        theirs = await second.call_tool("recall", {})
    assert mine.structured_content == {"result": ["first's note"]}
    assert theirs.structured_content == {"result": ["second's note"]}


@pytest.mark.anyio
async def test_a_session_the_upstream_dropped_is_opened_again_the_call_resent_and_the_loss_told(mode: str) -> None:
    async with upstream_on_one_port() as (url, restart), Client(command_params(url), mode=mode) as client:
        await client.call_tool("remember", {"text": "before the restart"})
        await restart()  # the same server on the same port: it knows no session of before
        with anyio.fail_after(STARTUP_SECONDS):
            remembered = await client.call_tool("remember", {"text": "after the restart"})
            recalled = await client.call_tool("recall", {})
    assert not remembered.is_error
    assert remembered.content[0].text == "1 note(s)"  # type: ignore[union-attr]  # sent once, on the new session
    assert (remembered.meta or {})[RESTARTED_META]["restarts"] == 1
    assert "ended its session" in remembered.content[-1].text  # type: ignore[union-attr]
    assert recalled.structured_content == {"result": ["after the restart"]}
    assert RESTARTED_META not in (recalled.meta or {})  # told once


@pytest.mark.anyio
async def test_a_stateless_upstream_serves_every_front_session_on_one_shared_session() -> None:
    async with http_upstream("http-stateless") as (url, _), served(url) as server:
        async with front(server) as first, front(server) as second:
            one = await first.call_tool("echo", {"text": "one"})
            two = await second.call_tool("echo", {"text": "two"})
        sessions = next(p.sessions for p in server.providers if getattr(p, "sessions", None) is not None)
        kept = len(sessions._kept)
    assert (one.structured_content, two.structured_content) == ({"result": "one"}, {"result": "two"})
    assert sessions.stateless is True
    assert kept == 1


@pytest.mark.anyio
async def test_an_http_upstream_that_went_away_between_calls_answers_not_executed_then_comes_back(
    mode: str,
) -> None:
    async with upstream_on_one_port() as (url, restart), Client(command_params(url), mode=mode) as client:
        await client.call_tool("echo", {"text": "hello"})
        with anyio.fail_after(STARTUP_SECONDS):
            gone = await restart(while_down=lambda: client.call_tool("count_write", {"key": "w"}))
        with anyio.fail_after(STARTUP_SECONDS):
            back = await client.call_tool("echo", {"text": "back"})
    outcome = read_result(gone)
    # The kept session's connection was refused: the write never left, and says so.
    assert (outcome.category, outcome.code, outcome.execution_state) == (
        ErrorCategory.TRANSIENT,
        "UPSTREAM_UNAVAILABLE",
        ExecutionState.NOT_EXECUTED,
    )
    assert back.structured_content == {"result": "back"}


def test_sessionless_callers_are_told_apart_by_their_credentials_only() -> None:
    # Outside any request: the sessionless caller without credentials, the same one each time.
    assert current_front_session().key == current_front_session().key == ("sessionless", None)


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


# -- the host's log: an HTTP upstream's URL credentials never reach it --

_PASSWORD, _API_KEY = "s3cret-pw-4417", "k3y-secret-9021"


def _with_credentials(url: str) -> str:
    return url.replace("http://", f"http://alice:{_PASSWORD}@") + f"?api_key={_API_KEY}"


@pytest.mark.anyio
async def test_the_upstream_urls_credentials_are_not_logged_at_start_up_or_when_its_session_is_reopened(
    tmp_path: Path,
) -> None:
    log = tmp_path / "server.log"
    async with upstream_on_one_port() as (url, restart):
        logged = StdioServerParameters(
            command="sh",
            args=["-c", 'exec "$@" 2>"$SERVER_LOG"', "sh", *PROXY, _with_credentials(url)],
            env={**os.environ, "SERVER_LOG": str(log)},
        )
        async with Client(logged, mode="legacy") as client:
            with anyio.fail_after(STARTUP_SECONDS):
                await client.call_tool("remember", {"text": "before the restart"})
                await restart()
                remembered = await client.call_tool("remember", {"text": "after the restart"})
    assert (remembered.meta or {})[RESTARTED_META]["restarts"] == 1
    written = log.read_text()
    assert "ended its session" in written  # the reopen was logged, with the upstream named
    assert "127.0.0.1" in written
    assert _PASSWORD not in written
    assert _API_KEY not in written


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
