"""Helpers for the proxy's tests: its upstream as a child or over HTTP, and the proxy in front of it.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract. A proxy
is built in this process (`proxied`) and reached in memory by `mcp.Client`, or run as the
real command (`command_params`, `PROXY`) over stdio, as a host runs it.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from fastmcp import FastMCP
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult

from mcp_errors.proxy import ChildProcess, ProxySettings, build_proxy
from mcp_errors.proxy._child import RestartBackoff
from mcp_errors.proxy._server import check_upstream, close_upstream
from servers import proxy_upstream

UPSTREAM = str(Path(proxy_upstream.__file__))
PROXY = (sys.executable, "-m", "mcp_errors", "proxy")
STARTUP_SECONDS = 60.0


def wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


@contextlib.asynccontextmanager
async def proxied(
    mode: str,
    settings: ProxySettings | None = None,
    *,
    backoff: RestartBackoff | None = None,
    stderr: io.StringIO | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    """A proxy in this process in front of a fresh upstream child, and a client connected to it."""
    child = ChildProcess(sys.executable, [UPSTREAM], backoff=backoff, stderr=stderr, env=env)
    # fastmcp's own in-memory transport connects to the same low-level server.
    async with served(child, settings) as server, Client(server._mcp_server, mode=mode) as client:  # type: ignore[arg-type]
        yield client


@contextlib.asynccontextmanager
async def served(upstream: ChildProcess | str, settings: ProxySettings | None = None) -> AsyncIterator[FastMCP[Any]]:
    """A proxy in this process for `upstream` (a child or a URL), checked, and closed with its upstream at the end."""
    server = build_proxy(upstream, settings)
    try:
        await check_upstream(server, upstream, seconds=STARTUP_SECONDS)
        yield server
    finally:
        await close_upstream(server, upstream)


def front(server: FastMCP[Any]) -> Client:
    """A new front session of `server`: an in-memory client of the 2025-11-25 protocol."""
    return Client(server._mcp_server, mode="legacy")  # type: ignore[arg-type]  # fastmcp's low-level server


def command_params(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> StdioServerParameters:
    """`mcp-errors proxy <args>` as a stdio server (with this process's environment unless `env` is given)."""
    return StdioServerParameters(
        command=PROXY[0], args=[*PROXY[1:], *args], env=dict(os.environ) if env is None else env, cwd=cwd
    )


@contextlib.asynccontextmanager
async def http_upstream(*args: str, env: dict[str, str] | None = None) -> AsyncIterator[tuple[str, Process]]:
    """The upstream served over streamable HTTP (`http`, `http PORT` or `http-stateless`): its URL and process."""
    command = [sys.executable, UPSTREAM, *(args or ("http",))]
    async with await anyio.open_process(command, env=env) as process:
        try:
            assert process.stdout is not None
            with anyio.fail_after(STARTUP_SECONDS):
                port = int((await process.stdout.receive()).decode().split()[0])
            yield f"http://127.0.0.1:{port}/mcp", process
        finally:
            if process.returncode is None:
                process.terminate()
