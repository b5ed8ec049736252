"""Helpers for the proxy's tests: its upstream as a child or over HTTP, and the proxy in front of it.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract. A proxy
is built in this process (`proxied`) and reached in memory by `mcp.Client`, or run as the
real command (`command_params`, `PROXY`) over stdio, as a host runs it, or with its shared
`--http` front (`http_front`), which callers reach with their own headers (`http_caller`).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from fastmcp import FastMCP
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult

from mcp_errors.proxy import ChildProcess, ProxySettings, build_proxy
from mcp_errors.proxy._child import RestartBackoff
from mcp_errors.proxy._server import check_upstream, close_upstream
from servers import proxy_upstream, tenant_upstream
from services import free_port

UPSTREAM = str(Path(proxy_upstream.__file__))
TENANT_UPSTREAM = str(Path(tenant_upstream.__file__))
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
    async with served(child, settings) as server, Client(server._mcp_server, mode=mode) as client:
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


def served_upstream(settings: ProxySettings | None = None) -> contextlib.AbstractAsyncContextManager[FastMCP[Any]]:
    """A proxy in this process in front of a fresh child of the test upstream (`UPSTREAM`), as `served` gives it."""
    return served(ChildProcess(sys.executable, [UPSTREAM]), settings)


def front(server: FastMCP[Any]) -> Client:
    """A new front session of `server`: an in-memory client of the 2025-11-25 protocol."""
    return Client(server._mcp_server, mode="legacy")  # fastmcp's low-level server


def command_params(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> StdioServerParameters:
    """`mcp-errors proxy <args>` as a stdio server (with this process's environment unless `env` is given)."""
    return StdioServerParameters(
        command=PROXY[0], args=[*PROXY[1:], *args], env=dict(os.environ) if env is None else env, cwd=cwd
    )


@contextlib.asynccontextmanager
async def http_upstream(
    *args: str, env: dict[str, str] | None = None, script: str = UPSTREAM
) -> AsyncIterator[tuple[str, Process]]:
    """The upstream served over streamable HTTP (`http`, `http PORT` or `http-stateless`): its URL and process.

    `script` serves another test server (`TENANT_UPSTREAM`, whose arguments are `[PORT]`).
    """
    command = [sys.executable, script, *(args or (() if script != UPSTREAM else ("http",)))]
    async with await anyio.open_process(command, env=env) as process:
        try:
            assert process.stdout is not None
            with anyio.fail_after(STARTUP_SECONDS):
                port = int((await process.stdout.receive()).decode().split()[0])
            yield f"http://127.0.0.1:{port}/mcp", process
        finally:
            if process.returncode is None:
                process.terminate()
                with anyio.move_on_after(5, shield=True):
                    await process.wait()
                if process.returncode is None:  # still in its shutdown: not this test's to wait for
                    process.kill()


@contextlib.asynccontextmanager
async def http_front(*args: str) -> AsyncIterator[str]:
    """`mcp-errors proxy --http PORT <args>`, the real command: the URL of its shared front.

    Its stderr is read all along (a full pipe would stop the proxy).
    """
    port = free_port()
    command = [*PROXY, "--http", str(port), *args]
    async with (
        await anyio.open_process(command, stdout=subprocess.DEVNULL) as process,
        anyio.create_task_group() as tasks,
    ):
        assert process.stderr is not None
        listening = anyio.Event()

        async def read_stderr() -> None:
            seen = ""
            async for chunk in TextReceiveStream(process.stderr):  # type: ignore[arg-type]
                if not listening.is_set():
                    seen += chunk
                    if "Uvicorn running on" in seen:  # uvicorn says so once it listens
                        listening.set()

        tasks.start_soon(read_stderr)
        try:
            with anyio.fail_after(STARTUP_SECONDS):
                await listening.wait()
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()


@contextlib.asynccontextmanager
async def http_caller(url: str, headers: dict[str, str], *, mode: str = "legacy") -> AsyncIterator[Client]:
    """A client of the HTTP front at `url` whose every request carries `headers` (a caller's credentials)."""
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def http_served(server: FastMCP[Any]) -> AsyncIterator[str]:
    """`server` (a proxy built in this process) behind the stateless HTTP front `--http` runs: the front's URL."""
    import socket

    import uvicorn

    # Bound before the first caller connects: the kernel queues connections until uvicorn accepts.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    app = server.http_app(stateless_http=True, json_response=True)
    front = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(front.serve, [sock])
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        finally:
            front.should_exit = True


async def schemas(client: Client) -> dict[str, dict[str, Any] | None]:
    """Each tool's output schema as `client` lists it."""
    return {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}


def run_proxy(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`mcp-errors proxy ARGS` run to its end, its output captured."""
    return subprocess.run([*PROXY, *args], capture_output=True, text=True, timeout=timeout, check=False)
