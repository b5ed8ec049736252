"""The proxy's tools/call path: its steps in one middleware, in their order, each still doing its part."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastmcp import FastMCP
from fastmcp.server.providers.proxy import ProxyMetadataMiddleware
from mcp import Client

from mcp_errors import read_result
from mcp_errors._server.fastmcp import ReplayMiddleware
from mcp_errors._shared.contract import ErrorCategory
from mcp_errors.proxy import ChildProcess, ProxySettings, build_proxy
from mcp_errors.proxy._calls import ProxyCallMiddleware
from mcp_errors.proxy._guard import REPEAT_OF_META
from mcp_errors.proxy._sessions import CallerMiddleware, SessionMiddleware
from proxying import UPSTREAM, served_upstream

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


def test_by_default_every_step_of_a_call_runs_in_one_middleware_after_the_callers_and_fastmcps() -> None:
    server = build_proxy(ChildProcess(sys.executable, [UPSTREAM]), ProxySettings(repeat_guard=60, retry=2))
    kinds = [type(middleware) for middleware in server.middleware]
    assert kinds[kinds.index(CallerMiddleware) :] == [  # after fastmcp's own (ref dereferencing)
        CallerMiddleware,
        ProxyMetadataMiddleware,
        ProxyCallMiddleware,
    ]
    (calls,) = [middleware for middleware in server.middleware if isinstance(middleware, ProxyCallMiddleware)]
    steps = (calls.restarts, calls.guard, calls.breaker, calls.retry, calls.contract)
    assert calls.modern_front
    assert None not in steps


def test_with_idempotency_keys_the_replay_sits_between_the_guard_and_the_breaker() -> None:
    server = build_proxy("http://127.0.0.1:9/mcp", ProxySettings(idempotency_keys=True, repeat_guard=60))
    kinds = [type(middleware) for middleware in server.middleware]
    assert kinds[kinds.index(CallerMiddleware) :] == [
        CallerMiddleware,
        ProxyMetadataMiddleware,
        ProxyCallMiddleware,
        ReplayMiddleware,
        ProxyCallMiddleware,
        SessionMiddleware,
    ]
    outer, inner = (middleware for middleware in server.middleware if isinstance(middleware, ProxyCallMiddleware))
    assert outer.modern_front
    assert (outer.restarts is None, outer.guard is None, outer.breaker, outer.contract) == (False, False, None, None)
    assert (inner.restarts, inner.guard, inner.breaker is None, inner.contract is None) == (None, None, False, False)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that both modes' tests can share one proxy (`every_step_proxy`)."""
    return "asyncio"


@pytest.fixture(scope="module")
async def every_step_proxy() -> AsyncIterator[FastMCP[Any]]:
    """A proxy with every step of a call on (keys, the repeat guard, retry), for both modes, each with its own keys."""
    settings = ProxySettings(idempotency_keys=True, repeat_guard=60, retry=2)
    async with served_upstream(settings) as server:
        yield server


@pytest.mark.anyio
async def test_with_every_step_on_a_call_is_resent_replayed_and_guarded_as_with_each_alone(
    mode: str, every_step_proxy: FastMCP[Any]
) -> None:
    read_key, write_key = f"r-{mode}", f"w-{mode}"  # the upstream counts calls per key
    async with Client(every_step_proxy._mcp_server, mode=mode) as client:
        read = await client.call_tool("flaky_read", {"key": read_key, "failures": 2})
        refused = await client.call_tool("refuse", {"key": write_key})
        again = await client.call_tool("refuse", {"key": write_key})
        reads = await client.call_tool("attempts", {"key": read_key})
        writes = await client.call_tool("attempts", {"key": write_key})
    assert (read.is_error, reads.structured_content) == (False, {"result": 3})  # resent twice, then read
    assert read_result(refused).category is ErrorCategory.VALIDATION
    assert REPEAT_OF_META in (again.meta or {})  # the guard answered the repeat
    assert writes.structured_content == {"result": 1}
