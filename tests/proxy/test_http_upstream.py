"""`mcp-errors proxy` in front of a streamable HTTP upstream.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract; the shared
clients (`client`, `stdio_client`) are in `tests/proxy/conftest.py`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import anyio.abc
import pytest
from mcp import Client

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors.proxy import StartupError, build_proxy
from mcp_errors.proxy._server import check_upstream
from proxying import STARTUP_SECONDS, http_upstream, served, wire
from servers.checks import check_error
from services import free_port

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one proxy (`client`, `tests/proxy/conftest.py`)."""
    return "asyncio"


# --- a streamable HTTP upstream --------------------------------------------------------------


@contextlib.asynccontextmanager
async def http_upstream_behind_a_proxy(mode: str) -> AsyncIterator[tuple[anyio.abc.Process, Client]]:
    """The test upstream served over streamable HTTP, a proxy in this process, and a client of it."""
    async with (
        http_upstream() as (url, upstream),
        served(url) as server,
        Client(server._mcp_server, mode=mode) as client,
    ):
        yield upstream, client


@pytest.mark.anyio
async def test_a_streamable_http_upstream_is_proxied_and_its_loss_is_a_transient_not_executed_failure(
    mode: str,
) -> None:
    async with http_upstream_behind_a_proxy(mode) as (upstream, client):
        ok = await client.call_tool("echo", {"text": "over http"})
        failed = await client.call_tool("fail", {"message": "upstream timed out"})
        upstream.terminate()
        await upstream.wait()
        lost = await client.call_tool("echo", {"text": "anyone there?"})
    assert ok.structured_content == {"result": "over http"}
    assert check_error(wire(failed), None)["code"] == "UPSTREAM_TIMEOUT"
    outcome = read_result(lost)
    assert (outcome.category, outcome.execution_state, outcome.code) == (
        ErrorCategory.TRANSIENT,
        ExecutionState.NOT_EXECUTED,
        "UPSTREAM_UNAVAILABLE",
    )


@pytest.mark.anyio
async def test_an_http_upstream_that_dies_in_the_middle_of_a_write_is_transient_with_an_unknown_outcome(
    mode: str,
) -> None:
    async with http_upstream_behind_a_proxy(mode) as (upstream, client):
        with anyio.fail_after(30):
            died = await client.call_tool("crash", {})
        await upstream.wait()
    outcome = read_result(died)
    assert (outcome.category, outcome.execution_state, outcome.is_retryable) == (
        ErrorCategory.TRANSIENT,
        ExecutionState.OUTCOME_UNKNOWN,
        True,
    )


@pytest.mark.anyio
async def test_an_http_upstream_that_cannot_be_reached_is_a_startup_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(StartupError, match="not reachable"):
        await check_upstream(build_proxy(url), url, seconds=STARTUP_SECONDS)
