"""Idempotency keys on the server: replay the first result, reject a reused key."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from mcp_errors import BusinessRuleError, IdempotencyStore, TransientError, install
from mcp_errors._idempotency_keys import HONOURS_IDEMPOTENCY_META, IDEMPOTENCY_KEY_META, REPLAYED_META
from mcp_errors._replay import StoredResult


def build(store: IdempotencyStore) -> tuple[MCPServer[Any], list[int]]:
    server: MCPServer[Any] = MCPServer("pay")
    install(server, idempotency=store)
    charges: list[int] = []

    @server.tool()
    def charge(amount: int) -> str:
        charges.append(amount)
        return f"charge #{len(charges)}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def balance() -> int:
        return sum(charges)

    @server.tool()
    def flaky_write(amount: int) -> str:
        charges.append(amount)
        if len(charges) == 1:
            raise TransientError("Busy", description="Not applied; resend.", execution_state="not_executed")
        return "ok"

    @server.tool()
    def lost_answer_write(amount: int) -> str:
        charges.append(amount)
        if len(charges) == 1:
            raise TransientError("Timed out", description="Unknown; resend.", execution_state="outcome_unknown")
        return f"applied {amount}"

    @server.tool()
    def overdrawn_write(amount: int) -> str:
        charges.append(amount)
        raise BusinessRuleError("Insufficient funds", description="The account cannot cover it.", code="NO_FUNDS")

    return server, charges


def key(value: str) -> dict[str, Any]:
    return {IDEMPOTENCY_KEY_META: value}


@pytest.mark.anyio
async def test_a_repeated_key_replays_the_first_result_without_running_again(mode: str) -> None:
    server, charges = build(IdempotencyStore())
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        first = await client.call_tool("charge", {"amount": 5}, meta=key("k1"))  # type: ignore[arg-type]
        again = await client.call_tool("charge", {"amount": 5}, meta=key("k1"))  # type: ignore[arg-type]
        other = await client.call_tool("charge", {"amount": 5}, meta=key("k2"))  # type: ignore[arg-type]
        unkeyed = await client.call_tool("charge", {"amount": 5})
    assert first.content == again.content
    assert other.content != first.content
    assert unkeyed.content != first.content
    assert charges == [5, 5, 5]


@pytest.mark.anyio
async def test_a_key_reused_with_other_arguments_is_a_validation_error(mode: str) -> None:
    server, charges = build(IdempotencyStore())
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        await client.call_tool("charge", {"amount": 5}, meta=key("k1"))  # type: ignore[arg-type]
        reused = await client.call_tool("charge", {"amount": 6}, meta=key("k1"))  # type: ignore[arg-type]
    assert reused.is_error
    assert reused.structured_content is not None
    assert (reused.structured_content["errorCategory"], reused.structured_content["code"]) == (
        "validation",
        "IDEMPOTENCY_KEY_REUSED",
    )
    assert reused.structured_content["errorId"]  # like every failure, tied to a log line
    assert charges == [5]


@pytest.mark.anyio
async def test_only_tools_that_write_advertise_honouring_keys(mode: str) -> None:
    server, _ = build(IdempotencyStore())
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        tools = {
            tool.name: (tool.meta or {}).get(HONOURS_IDEMPOTENCY_META) for tool in (await client.list_tools()).tools
        }
    assert tools == {
        "charge": True,
        "balance": None,
        "flaky_write": True,
        "lost_answer_write": True,
        "overdrawn_write": True,
    }


@pytest.mark.anyio
async def test_an_error_that_did_not_execute_is_not_stored_so_the_resend_runs() -> None:
    server, charges = build(IdempotencyStore())
    async with Client(server) as client:
        first = await client.call_tool("flaky_write", {"amount": 1}, meta=key("k"))  # type: ignore[arg-type]
        second = await client.call_tool("flaky_write", {"amount": 1}, meta=key("k"))  # type: ignore[arg-type]
        third = await client.call_tool("flaky_write", {"amount": 1}, meta=key("k"))  # type: ignore[arg-type]
    assert first.is_error
    assert not second.is_error
    assert third.content == second.content
    assert len(charges) == 2


@pytest.mark.anyio
async def test_an_unknown_outcome_is_replayed_so_a_keyed_resend_never_applies_twice(mode: str) -> None:
    server, charges = build(IdempotencyStore())
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        first = await client.call_tool("lost_answer_write", {"amount": 3}, meta=key("k"))  # type: ignore[arg-type]
        again = await client.call_tool("lost_answer_write", {"amount": 3}, meta=key("k"))  # type: ignore[arg-type]
    assert first.is_error
    assert first.structured_content is not None
    assert first.structured_content["executionState"] == "outcome_unknown"
    assert again.structured_content == first.structured_content
    assert charges == [3], "the write ran once: its resend got the stored answer"


@pytest.mark.anyio
async def test_an_error_that_applied_nothing_is_not_stored_so_the_keyed_resend_runs(mode: str) -> None:
    server, charges = build(IdempotencyStore())
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        first = await client.call_tool("flaky_write", {"amount": 4}, meta=key("k"))  # type: ignore[arg-type]
        second = await client.call_tool("flaky_write", {"amount": 4}, meta=key("k"))  # type: ignore[arg-type]
        third = await client.call_tool("flaky_write", {"amount": 4}, meta=key("k"))  # type: ignore[arg-type]
    assert first.is_error
    assert not second.is_error
    assert third.content == second.content, "the success is then replayed"
    assert len(charges) == 2


@pytest.mark.anyio
async def test_a_business_error_is_replayed_for_the_same_key(mode: str) -> None:
    server, charges = build(IdempotencyStore())
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        first = await client.call_tool("overdrawn_write", {"amount": 9}, meta=key("k"))  # type: ignore[arg-type]
        again = await client.call_tool("overdrawn_write", {"amount": 9}, meta=key("k"))  # type: ignore[arg-type]
    assert first.is_error
    assert first.structured_content is not None
    assert (first.structured_content["errorCategory"], first.structured_content["code"]) == ("business", "NO_FUNDS")
    assert again.content == first.content
    assert again.structured_content == first.structured_content
    assert charges == [9]


@pytest.mark.anyio
async def test_a_hung_keyed_call_is_cancelled_when_the_client_gives_up(mode: str) -> None:
    server: MCPServer[Any] = MCPServer("hung")
    install(server, idempotency=IdempotencyStore())
    started, cancelled, release = anyio.Event(), anyio.Event(), anyio.Event()

    @server.tool()
    async def write() -> str:
        started.set()
        try:
            await release.wait()
        except anyio.get_cancelled_exc_class():
            cancelled.set()
            raise
        return "finished"

    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        try:
            with anyio.move_on_after(10) as gave_up:
                async with anyio.create_task_group() as tg:

                    async def send() -> None:
                        await client.call_tool("write", {}, meta=key("k"))  # type: ignore[arg-type]

                    tg.start_soon(send)
                    await started.wait()
                    tg.cancel_scope.cancel()
            assert not gave_up.cancelled_caught
            with anyio.fail_after(10):
                await cancelled.wait()
        finally:
            release.set()  # a tool that was not cancelled ends, so the test fails instead of hanging


@pytest.mark.anyio
async def test_a_resend_during_the_first_call_waits_for_its_result() -> None:
    server: MCPServer[Any] = MCPServer("slow")
    install(server, idempotency=IdempotencyStore())
    release = anyio.Event()
    runs: list[int] = []

    @server.tool()
    async def write() -> str:
        runs.append(1)
        await release.wait()
        return f"run {len(runs)}"

    results: list[Any] = []
    async with Client(server) as client:

        async def send() -> None:
            results.append(await client.call_tool("write", {}, meta=key("k")))  # type: ignore[arg-type]

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(send)
                tg.start_soon(send)
                while not runs:
                    await anyio.lowlevel.checkpoint()
                release.set()
    assert len(runs) == 1
    assert results[0].content == results[1].content


@pytest.mark.anyio
async def test_the_memory_store_is_bounded_in_size_and_age() -> None:
    store = IdempotencyStore(max_entries=2, ttl_seconds=3600)
    for name in ("a", "b", "c"):
        await store.put(name, StoredResult(fingerprint=name, result={"content": []}))
    assert len(store) == 2
    assert await store.get("a") is None
    assert await store.get("c") is not None
    expired = IdempotencyStore(ttl_seconds=1e-9)
    await expired.put("a", StoredResult(fingerprint="a", result={"content": []}))
    await anyio.lowlevel.checkpoint()
    assert await expired.get("a") is None


def test_replay_refuses_servers_it_cannot_wrap() -> None:
    from mcp_errors._replay import enable_replay

    with pytest.raises(TypeError):
        enable_replay(object(), IdempotencyStore())  # type: ignore[arg-type]


def test_idempotency_on_a_fastmcp_server_is_refused_before_anything_changes() -> None:
    from fastmcp import FastMCP

    from mcp_errors import install

    server = FastMCP("not-supported")
    middleware_before = list(server.middleware)
    with pytest.raises(TypeError):
        install(server, idempotency=IdempotencyStore())
    assert list(server.middleware) == middleware_before


@pytest.mark.anyio
async def test_a_tools_own_transient_error_is_not_stored_so_the_keyed_resend_reaches_it(mode: str) -> None:
    """ "Rate limited, retry shortly" said nothing was applied or unknown: the resend must run."""
    server: MCPServer[Any] = MCPServer("limits")
    install(server, idempotency=IdempotencyStore())
    calls: list[int] = []

    @server.tool()
    def send(amount: int) -> str:
        calls.append(amount)
        if len(calls) == 1:
            raise TransientError("Rate limited", description="Resend in a moment.", retry_after_seconds=0)
        return "sent"

    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        first = await client.call_tool("send", {"amount": 1}, meta=key("k"))  # type: ignore[arg-type]
        second = await client.call_tool("send", {"amount": 1}, meta=key("k"))  # type: ignore[arg-type]
    assert first.is_error
    assert not second.is_error
    assert calls == [1, 1]


@pytest.mark.anyio
async def test_a_replayed_answer_says_it_is_a_replay() -> None:
    server, charges = build(IdempotencyStore())
    async with Client(server) as client:
        first = await client.call_tool("lost_answer_write", {"amount": 3}, meta=key("k"))  # type: ignore[arg-type]
        again = await client.call_tool("lost_answer_write", {"amount": 3}, meta=key("k"))  # type: ignore[arg-type]
    assert REPLAYED_META not in (first.meta or {})
    assert (again.meta or {})[REPLAYED_META] is True
    assert charges == [3]
