"""`mcp-errors proxy`: idempotency keys in a shared store.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract, over
streamable HTTP: one for the module (`upstream`), shared by tests that each count keys of their
own, behind proxies (and stores) of each test's own.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.abc
import pytest
from mcp import Client
from mcp_types import (
    CallToolResult,
)

from mcp_errors.proxy import ProxySettings
from proxying import STARTUP_SECONDS, command_params, front, http_upstream, run_proxy, served

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one upstream (`upstream`)."""
    return "asyncio"


@pytest.fixture(scope="module")
async def upstream() -> AsyncIterator[str]:
    """The URL of one HTTP upstream (named `proxy-upstream`) for the module's tests, each writing keys of its own."""
    async with http_upstream() as (url, _):
        yield url


# --- idempotency keys in a shared store ------------------------------------------------------

SHARED_STORES = ["sqlite", "postgres", "redis"]


def shared_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path}/keys.sqlite3"
    # Keys are random per test (and namespaced per upstream), so tests share the server's table.
    return str(request.getfixturevalue("postgres_url" if backend == "postgres" else "redis_url"))


@pytest.mark.anyio
@pytest.mark.parametrize("backend", SHARED_STORES)
async def test_three_proxy_replicas_sharing_a_store_run_a_keyed_write_once(
    backend: str, upstream: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    store = shared_store(backend, request, tmp_path)
    key = {"mcp-errors/idempotencyKey": f"charge-{uuid.uuid4()}"}
    answers: list[CallToolResult] = []
    url = upstream
    async with contextlib.AsyncExitStack() as stack:
        if backend == "sqlite":  # three `mcp-errors proxy --store` processes on one host and file
            replicas = [
                await stack.enter_async_context(Client(command_params("--idempotency-keys", "--store", store, url)))
                for _ in range(3)
            ]
        else:  # a database server sees three connections, whichever processes they come from
            settings = ProxySettings(idempotency_keys=True, store=store)
            servers = [await stack.enter_async_context(served(url, settings)) for _ in range(3)]
            replicas = [await stack.enter_async_context(front(server)) for server in servers]

        async def send(client: Client) -> None:
            answers.append(await client.call_tool("count_write", {"key": key["mcp-errors/idempotencyKey"]}, meta=key))  # type: ignore[arg-type]

        with anyio.fail_after(STARTUP_SECONDS):
            async with anyio.create_task_group() as group:  # the same write, to every replica at once
                for client in replicas:
                    group.start_soon(send, client)
            ran = await replicas[0].call_tool("attempts", {"key": key["mcp-errors/idempotencyKey"]})
    assert ran.structured_content == {"result": 1}
    assert [answer.structured_content for answer in answers] == [{"result": "ran 1 time(s)"}] * 3
    assert sum(bool((answer.meta or {}).get("mcp-errors/replayed")) for answer in answers) == 2


@pytest.mark.anyio
async def test_a_restarted_proxy_replays_a_keyed_write_from_its_store(upstream: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/keys.sqlite3"
    key = {"mcp-errors/idempotencyKey": "refund-42"}
    async with Client(command_params("--idempotency-keys", "--store", store, upstream)) as before:
        first = await before.call_tool("count_write", {"key": "refund-42"}, meta=key)  # type: ignore[arg-type]
    async with Client(command_params("--idempotency-keys", "--store", store, upstream)) as after:
        again = await after.call_tool("count_write", {"key": "refund-42"}, meta=key)  # type: ignore[arg-type]
        ran = await after.call_tool("attempts", {"key": "refund-42"})
    assert again.structured_content == first.structured_content == {"result": "ran 1 time(s)"}
    assert (again.meta or {}).get("mcp-errors/replayed") is True
    assert ran.structured_content == {"result": 1}


@pytest.mark.anyio
async def test_proxies_of_different_upstreams_keep_their_keys_apart_in_one_store(upstream: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/keys.sqlite3"
    key = {"mcp-errors/idempotencyKey": "ticket-1"}
    answers: dict[str, list[CallToolResult]] = {}
    # The module's upstream (`proxy-upstream`) and another named `jira`, the second proxied twice.
    async with http_upstream(env={**os.environ, "PROXY_UPSTREAM_NAME": "jira"}) as (jira, _):
        for name, url in (("proxy-upstream", upstream), ("jira", jira), ("jira", jira)):
            settings = ProxySettings(idempotency_keys=True, store=store)
            async with served(url, settings) as server, front(server) as client:
                answers.setdefault(name, []).append(
                    await client.call_tool("count_write", {"key": "ticket-write"}, meta=key)  # type: ignore[arg-type]
                )
    # Each upstream ran its own write once; the second jira proxy replayed jira's answer, never the other's.
    assert [(answer.meta or {}).get("mcp-errors/replayed") for answer in answers["proxy-upstream"]] == [None]
    assert [(answer.meta or {}).get("mcp-errors/replayed") for answer in answers["jira"]] == [None, True]


def test_a_store_without_idempotency_keys_or_with_an_unknown_scheme_is_refused_before_the_upstream_starts(
    tmp_path: Path,
) -> None:
    started = tmp_path / "started"
    upstream = ("sh", "-c", f"touch {shlex.quote(str(started))}; exec sleep 60")  # leaves a mark if started
    alone = run_proxy("--store", "sqlite:///keys.sqlite3", "--", *upstream)
    unknown = run_proxy("--idempotency-keys", "--store", "mongodb://db/keys", "--", *upstream)
    assert (alone.returncode, unknown.returncode) == (2, 2)
    assert "--idempotency-keys" in alone.stderr
    assert "mongodb://" in unknown.stderr
    assert not started.exists()  # neither started the upstream only to stop it
