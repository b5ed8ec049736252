"""Clients of a proxy shared by the tests of a module (`tests/proxy/test_*.py`).

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract. A module
that takes one of these clients declares a module-wide `anyio_backend`, so that its tests
share the proxy. `shared_client` is `client` with both modes' sessions on one proxy
(`shared_proxy`), whose other front sessions a module's tests may open themselves.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastmcp import FastMCP
from mcp import Client

from mcp_errors.proxy import ProxySettings
from proxying import UPSTREAM, command_params, proxied, served_upstream


@pytest.fixture(scope="module", params=["legacy", "auto"])
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    """A client of one proxy per connection mode, shared by a module's tests that only read.

    Its circuit breaker is off: these tests send one tool failure after another on purpose,
    which an open circuit would answer itself (the breaker's own tests are
    tests/proxy/test_breaker.py).
    """
    async with proxied(request.param, ProxySettings(breaker_failures=0)) as connected:
        yield connected


@pytest.fixture(scope="module", params=["legacy", "auto"])
async def stdio_client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    """`mcp-errors proxy` itself over stdio, as a host runs it, per connection mode.

    Shared by the tests of progress, cancellation and a killed child (`test_upstream_child.py`),
    in that order: the last one kills the upstream, and the proxy starts another.
    """
    async with Client(command_params("--", sys.executable, UPSTREAM), mode=request.param) as client:
        yield client


@pytest.fixture(scope="module")
async def shared_proxy() -> AsyncIterator[FastMCP[Any]]:
    """One proxy in this process (its breaker off, as `client`'s) for a module's tests that only read.

    Its tests open front sessions of it in either mode (`shared_client`, or their own
    `Client(shared_proxy._mcp_server, mode=...)`): one upstream for the module. A test that
    leaves state in the upstream (a counter, a sign-in) uses keys of its own.
    """
    async with served_upstream(ProxySettings(breaker_failures=0)) as server:
        yield server


@pytest.fixture(scope="module", params=["legacy", "auto"])
async def shared_client(request: pytest.FixtureRequest, shared_proxy: FastMCP[Any]) -> AsyncIterator[Client]:
    """As `client`, per connection mode, but both modes are front sessions of one proxy (`shared_proxy`)."""
    async with Client(shared_proxy._mcp_server, mode=request.param) as client:
        yield client
