"""The proxy's tools/call path: its steps in one middleware, in their order, each still doing its part."""

from __future__ import annotations

import sys

import pytest
from fastmcp.server.providers.proxy import ProxyMetadataMiddleware

from mcp_errors import read_result
from mcp_errors._server.fastmcp import ReplayMiddleware
from mcp_errors._shared.contract import ErrorCategory
from mcp_errors.proxy import ChildProcess, ProxySettings, build_proxy
from mcp_errors.proxy._calls import ProxyCallMiddleware
from mcp_errors.proxy._guard import REPEAT_OF_META
from mcp_errors.proxy._sessions import CallerMiddleware, SessionMiddleware
from proxying import UPSTREAM, proxied

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


@pytest.mark.anyio
async def test_with_every_step_on_a_call_is_resent_replayed_and_guarded_as_with_each_alone(mode: str) -> None:
    settings = ProxySettings(idempotency_keys=True, repeat_guard=60, retry=2)
    async with proxied(mode, settings) as client:
        read = await client.call_tool("flaky_read", {"key": "r", "failures": 2})
        refused = await client.call_tool("refuse", {"key": "w"})
        again = await client.call_tool("refuse", {"key": "w"})
        reads = await client.call_tool("attempts", {"key": "r"})
        writes = await client.call_tool("attempts", {"key": "w"})
    assert (read.is_error, reads.structured_content) == (False, {"result": 3})  # resent twice, then read
    assert read_result(refused).category is ErrorCategory.VALIDATION
    assert REPEAT_OF_META in (again.meta or {})  # the guard answered the repeat
    assert writes.structured_content == {"result": 1}
