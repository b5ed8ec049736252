"""Idempotency keys on the server: claim before running, replay the first answer, reject reuse.

Every behaviour runs end to end through a real client, on an `MCPServer` in both connection
modes and on a fastmcp server (`flavour`), with the in-memory store; the shared stores get
the same end-to-end check once each (their claim semantics are `tests/stores/test_stores.py`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import unicodedata
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client as FastMCPClient
from fastmcp import FastMCP
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import URL_ELICITATION_REQUIRED, CallToolResult, TextContent, Tool

from mcp_errors import Decision, RecoveryPolicy, call_tool_with_recovery, install
from mcp_errors._server.replay import canonical_arguments, fingerprint, scope_key
from mcp_errors._shared.contract import HONOURS_IDEMPOTENCY_META, IDEMPOTENCY_KEY_META, REPLAYED_META
from mcp_errors.stores import Claim, IdempotencyStore, MemoryStore, PostgresStore, RedisStore, SQLiteStore, Won
from servers.checks import memory_kept_per_batch
from servers.keyed_writes import ServerKind, build
from services import free_port, redis_process

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

FLAVOURS = [("mcpserver", "legacy"), ("mcpserver", "auto"), ("fastmcp", None)]


@dataclass
class Session:
    """One connected client, whatever its kind."""

    client: Any
    call_fn: Callable[[str, dict[str, Any], dict[str, Any] | None], Awaitable[CallToolResult]]
    list_fn: Callable[[], Awaitable[list[Tool]]]

    async def call(self, name: str, arguments: dict[str, Any], key: str | None = None) -> CallToolResult:
        return await self.call_fn(name, arguments, {IDEMPOTENCY_KEY_META: key} if key is not None else None)


@pytest.fixture(params=FLAVOURS, ids=["mcpserver-legacy", "mcpserver-auto", "fastmcp"])
def flavour(request: pytest.FixtureRequest) -> tuple[ServerKind, str | None]:
    value: tuple[ServerKind, str | None] = request.param
    return value


@contextlib.asynccontextmanager
async def connect(flavour: tuple[ServerKind, str | None], server: Any) -> AsyncIterator[Session]:
    kind, mode = flavour
    if kind == "mcpserver":
        async with Client(server, mode=mode) as client:  # type: ignore[arg-type]

            async def call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
                return await client.call_tool(name, arguments, meta=meta)  # type: ignore[arg-type]

            async def tools() -> list[Tool]:
                return (await client.list_tools()).tools

            yield Session(client, call, tools)
    else:
        async with FastMCPClient(server) as fast_client:

            async def fast_call(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
                result: CallToolResult = await fast_client.call_tool_mcp(name, arguments, meta=meta)
                return result

            async def fast_tools() -> list[Tool]:
                return list(await fast_client.list_tools())

            yield Session(fast_client, fast_call, fast_tools)


def envelope(result: CallToolResult) -> tuple[str, str | None, str | None]:
    assert result.is_error
    assert isinstance(result.structured_content, dict)
    data = result.structured_content
    return data["errorCategory"], data.get("code"), data.get("executionState")


def replayed(result: CallToolResult) -> bool:
    return (result.meta or {}).get(REPLAYED_META) is True


@pytest.mark.anyio
async def test_a_repeated_key_replays_the_first_answer_without_running_again(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        first = await session.call("charge", {"amount": 5}, "k1")
        again = await session.call("charge", {"amount": 5}, "k1")
        other = await session.call("charge", {"amount": 5}, "k2")
        unkeyed = await session.call("charge", {"amount": 5})
    assert again.content == first.content
    assert again.structured_content == first.structured_content
    assert (replayed(first), replayed(again)) == (False, True)
    assert other.content != first.content
    assert unkeyed.content != first.content
    assert effects.writes == ["charge 5"] * 3


INVENTED_NAME_CHARS = 10_000
# Per batch: a cache entry per name would keep 1 MB a batch, 20 times what the test allows;
# what the server keeps for its own reasons measures 3 to 6 KB.
INVENTED_PER_BATCH = 100


@pytest.mark.anyio
async def test_keyed_calls_to_invented_tool_names_do_not_grow_the_server(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:

        async def invent(batch: int) -> None:
            for number in range(INVENTED_PER_BATCH):
                name = "x" * INVENTED_NAME_CHARS + f"{batch}-{number}"  # the agent sees only its head
                result = await session.call(name, {}, key=f"op-{batch}-{number}")
                assert envelope(result)[1] == "UNKNOWN_TOOL"

        kept = await memory_kept_per_batch(invent)

    assert kept < INVENTED_PER_BATCH * INVENTED_NAME_CHARS / 20
    assert effects.writes == []


@pytest.mark.anyio
async def test_a_key_reused_with_other_arguments_is_a_validation_error(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        await session.call("charge", {"amount": 5}, "k1")
        reused = await session.call("charge", {"amount": 6}, "k1")
    assert envelope(reused) == ("validation", "IDEMPOTENCY_KEY_REUSED", "not_executed")
    assert reused.structured_content is not None
    assert reused.structured_content["errorId"]
    assert effects.writes == ["charge 5"]


@pytest.mark.anyio
async def test_the_same_amount_written_as_a_float_under_one_key_is_a_replay_not_a_reused_key(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        first = await session.call("charge", {"amount": 100}, "pay-1")
        again = await session.call("charge", {"amount": 100.0}, "pay-1")
    assert not again.is_error
    assert (replayed(again), again.content) == (True, first.content)
    assert effects.writes == ["charge 100"]


JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


def respelled(value: Any) -> Any:
    """The same JSON value written otherwise: integral numbers as floats, strings in NFD, keys reversed."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int) and abs(value) <= 2**53:
        return float(value)
    if isinstance(value, str):
        return unicodedata.normalize("NFD", value)
    if isinstance(value, dict):
        return {respelled(key): respelled(item) for key, item in reversed(value.items())}
    if isinstance(value, list):
        return [respelled(item) for item in value]
    return value


def nfc_keys_distinct(value: Any) -> bool:
    """Whether no object in `value` has two keys that are one string in NFC (then one spelling must win)."""
    if isinstance(value, dict):
        keys = [unicodedata.normalize("NFC", key) for key in value]
        return len(set(keys)) == len(keys) and all(nfc_keys_distinct(item) for item in value.values())
    if isinstance(value, list):
        return all(nfc_keys_distinct(item) for item in value)
    return True


@given(st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=5).filter(nfc_keys_distinct))
def test_arguments_that_mean_the_same_json_hash_the_same(arguments: dict[str, Any]) -> None:
    assert fingerprint(respelled(arguments)) == fingerprint(arguments)
    assert canonical_arguments(canonical_arguments(arguments)) == canonical_arguments(arguments)


@given(JSON_SCALARS, JSON_SCALARS)
def test_scalars_hash_apart_exactly_when_they_are_other_values(one: Any, other: Any) -> None:
    def meaning(value: Any) -> tuple[str, Any]:
        if isinstance(value, bool) or value is None:
            return ("literal", value)
        if isinstance(value, int | float):
            return ("number", value)
        return ("string", unicodedata.normalize("NFC", value))

    same = meaning(one) == meaning(other)  # Python compares int and float by exact value
    assert (fingerprint({"x": one}) == fingerprint({"x": other})) is same


def test_numbers_keep_their_exact_value_and_booleans_are_not_numbers() -> None:
    assert fingerprint({"n": 2**53 + 1}) != fingerprint({"n": float(2**53 + 1)})  # the float is 2**53
    assert fingerprint({"n": 2**64}) == fingerprint({"n": 2.0**64})
    assert fingerprint({"n": 1}) != fingerprint({"n": True})
    assert fingerprint({"n": 0}) == fingerprint({"n": -0.0})
    assert fingerprint({"n": 0.5}) != fingerprint({"n": 0})
    assert fingerprint({"caf\u00e9": "\u00e9"}) == fingerprint({"cafe\u0301": "e\u0301"})


@pytest.mark.anyio
@pytest.mark.parametrize("bad_key", [42, "", "k" * 256], ids=["number", "empty", "too-long"])
async def test_an_unusable_key_is_refused_instead_of_running_unprotected(flavour: Any, bad_key: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        result = await session.call_fn("charge", {"amount": 5}, {IDEMPOTENCY_KEY_META: bad_key})
    assert envelope(result) == ("validation", "IDEMPOTENCY_KEY_INVALID", "not_executed")
    assert effects.writes == []


@pytest.mark.anyio
async def test_the_same_key_on_another_tool_is_another_operation(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        await session.call("charge", {"amount": 5}, "k")
        refund = await session.call("refund", {"amount": 5}, "k")
    assert not refund.is_error
    assert effects.writes == ["charge 5", "refund 5"]


@pytest.mark.anyio
async def test_keys_are_scoped_to_the_authenticated_caller(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    answers = []
    for client_id in ("alice", "bob", "alice"):
        token = AccessToken(token=f"t-{client_id}", client_id=client_id, scopes=[])
        # The in-memory server's tasks start in this context, as behind the SDK's auth middleware.
        reset = auth_context_var.set(AuthenticatedUser(token))
        try:
            async with connect(flavour, server) as session:
                answers.append(await session.call("charge", {"amount": 1}, "shared-key"))
        finally:
            auth_context_var.reset(reset)
    assert effects.writes == ["charge 1", "charge 1"], "bob's key is not alice's"
    assert answers[2].content == answers[0].content
    assert replayed(answers[2])


@pytest.mark.anyio
async def test_only_tools_that_write_advertise_honouring_keys(flavour: Any) -> None:
    server, _ = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        flags = {tool.name: (tool.meta or {}).get(HONOURS_IDEMPOTENCY_META) for tool in await session.list_fn()}
    assert flags.pop("balance") is None
    assert flags.pop("own_keys_write") is True, "its own declaration, kept"
    assert set(flags.values()) == {True}


@pytest.mark.anyio
async def test_a_tool_that_keeps_its_own_keys_is_left_to_do_so(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        first = await session.call("own_keys_write", {"amount": 1}, "k")
        second = await session.call("own_keys_write", {"amount": 1}, "k")
    assert not replayed(second)
    assert second.content != first.content
    assert effects.writes == ["own 1", "own 1"]


@pytest.mark.anyio
async def test_an_error_that_applied_nothing_releases_the_key_so_the_resend_runs(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        first = await session.call("flaky_write", {"amount": 4}, "k")
        second = await session.call("flaky_write", {"amount": 4}, "k")
        third = await session.call("flaky_write", {"amount": 4}, "k")
    assert envelope(first)[0] == "transient"
    assert not second.is_error
    assert third.content == second.content, "the success is then replayed"
    assert replayed(third)
    assert len(effects.writes) == 2


@pytest.mark.anyio
async def test_a_call_that_asks_the_client_to_act_first_releases_its_key_for_the_resend(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        with pytest.raises(MCPError) as raised:
            await session.call("authorised_write", {"amount": 5}, "k")
        effects.authorised = True  # the user completed the URL elicitation
        resend = await session.call("authorised_write", {"amount": 5}, "k")
    assert raised.value.code == URL_ELICITATION_REQUIRED
    assert not resend.is_error
    assert effects.writes == ["authorised 5"]


class ReleaseAnsweredLate(MemoryStore):
    """A release whose reply comes back only after another claimer won the key (a network store)."""

    def __init__(self) -> None:
        super().__init__()
        self.wins = 0
        self.second_win = anyio.Event()

    async def claim(self, key: str, fingerprint: str, *, lease_seconds: float) -> Claim:  # type: ignore[override]
        claim = await super().claim(key, fingerprint, lease_seconds=lease_seconds)
        if isinstance(claim, Won):
            self.wins += 1
            if self.wins == 2:
                self.second_win.set()
        return claim

    async def release(self, key: str, token: str) -> bool:
        released = await super().release(key, token)
        await self.second_win.wait()
        return released


@pytest.mark.anyio
async def test_a_duplicate_that_wins_a_released_key_while_the_release_is_answered_gets_its_own_answer(
    flavour: Any,
) -> None:
    server, effects = build(flavour[0], ReleaseAnsweredLate())
    results: list[CallToolResult] = []
    async with connect(flavour, server) as session:

        async def send() -> None:
            results.append(await session.call("flaky_write", {"amount": 4}, "k"))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(send)
                await anyio.wait_all_tasks_blocked()
                tg.start_soon(send)
    assert effects.writes == ["flaky 4", "flaky 4"]
    assert [result.is_error for result in results] == [True, False]
    assert envelope(results[0])[2] == "not_executed"


@pytest.mark.anyio
async def test_an_unknown_outcome_is_replayed_so_a_keyed_resend_never_applies_twice(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        first = await session.call("lost_answer_write", {"amount": 3}, "k")
        again = await session.call("lost_answer_write", {"amount": 3}, "k")
    assert envelope(first) == ("transient", None, "outcome_unknown")
    assert again.structured_content == first.structured_content
    assert effects.writes == ["lost 3"], "the write ran once: its resend got the stored answer"


@pytest.mark.anyio
async def test_a_business_error_is_replayed_for_the_same_key(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        first = await session.call("overdrawn_write", {"amount": 9}, "k")
        again = await session.call("overdrawn_write", {"amount": 9}, "k")
    assert envelope(first)[:2] == ("business", "NO_FUNDS")
    assert (again.content, again.structured_content) == (first.content, first.structured_content)
    assert effects.writes == ["overdrawn 9"]


@pytest.mark.anyio
async def test_a_tools_own_transient_error_is_not_kept_so_the_keyed_resend_reaches_it(flavour: Any) -> None:
    """ "Rate limited, retry shortly" said nothing was applied or unknown: the resend must run."""
    server, effects = build(flavour[0], MemoryStore())
    async with connect(flavour, server) as session:
        first = await session.call("rate_limited_write", {"amount": 1}, "k")
        second = await session.call("rate_limited_write", {"amount": 1}, "k")
    assert envelope(first)[0] == "transient"
    assert not second.is_error
    assert effects.writes == ["limited 1", "limited 1"]


@pytest.mark.anyio
async def test_a_resend_during_the_first_call_waits_for_its_answer(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore())
    results: list[CallToolResult] = []
    async with connect(flavour, server) as session:

        async def send() -> None:
            results.append(await session.call("held_write", {"amount": 1}, "k"))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(send)
                await effects.started.wait()
                tg.start_soon(send)
                await anyio.wait_all_tasks_blocked()
                effects.release.set()
    assert effects.writes == ["held 1"]
    assert results[0].content == results[1].content
    assert sorted(map(replayed, results)) == [False, True]


@pytest.mark.anyio
async def test_a_resend_that_waits_too_long_is_told_the_call_is_in_progress(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore(wait_seconds=0.05, lease_seconds=1.5))
    async with connect(flavour, server) as session:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.call, "held_write", {"amount": 1}, "k")
                await effects.started.wait()
                busy = await session.call("held_write", {"amount": 1}, "k")
                effects.release.set()
        after = await session.call("held_write", {"amount": 1}, "k")
    assert envelope(busy) == ("transient", "IN_PROGRESS", "not_executed")
    assert busy.structured_content is not None
    assert 0 < busy.structured_content["retryAfterSeconds"] <= 1.5
    assert not replayed(busy)
    assert after.content[0].text == "held write 1 done"  # type: ignore[union-attr]
    assert effects.writes == ["held 1"]


@pytest.mark.anyio
async def test_a_call_that_outlives_its_lease_keeps_its_claim_by_renewing_it(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore(lease_seconds=0.15, wait_seconds=0))
    async with connect(flavour, server) as session:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.call, "held_write", {"amount": 1}, "k")
                await effects.started.wait()
                await anyio.sleep(0.5)  # over three leases: only renewals keep the claim
                busy = await session.call("held_write", {"amount": 1}, "k")
                effects.release.set()
    assert envelope(busy)[1] == "IN_PROGRESS", "not taken for a dead runner"
    assert effects.writes == ["held 1"]


@pytest.mark.anyio
@pytest.mark.parametrize("tool", ["write_then_wait", "wait_then_write"])
async def test_a_keyed_write_that_outlasts_the_callers_timeout_runs_once_and_answers_the_resend(
    flavour: Any, tool: str, zero_wait: None
) -> None:
    """Issue 12, finding 2: with `attempt_timeout` shorter than the tool, resends with the same key."""
    server, effects = build(flavour[0], MemoryStore())
    policy = RecoveryPolicy(attempt_timeout=0.1, max_attempts=10, deadline=10)
    async with connect(flavour, server) as session:
        with anyio.fail_after(10):
            report = await call_tool_with_recovery(session.client, tool, {"amount": 7}, policy=policy)
    assert effects.writes == ["write 7"]
    assert report.decision is Decision.DONE
    assert report.outcome.message == "written 7"


@pytest.mark.anyio
async def test_a_hung_keyed_call_is_stopped_after_its_grace_and_its_key_answers_outcome_unknown(
    flavour: Any,
) -> None:
    server, effects = build(flavour[0], MemoryStore(grace_seconds=0.05))
    async with connect(flavour, server) as session:
        with anyio.fail_after(10):
            with anyio.move_on_after(5) as gave_up:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(session.call, "held_write", {"amount": 1}, "k")
                    await effects.started.wait()
                    tg.cancel_scope.cancel()
            assert not gave_up.cancelled_caught
            await effects.cancelled.wait()
            resend = await session.call("held_write", {"amount": 1}, "k")
    assert envelope(resend) == ("transient", "OUTCOME_UNKNOWN", "outcome_unknown")
    assert replayed(resend), "the client policy escalates instead of resending into the store"
    assert effects.writes == ["held 1"]


class SlowGrants(MemoryStore):
    """A store whose grants take a while to come back, as over a slow network."""

    async def claim(self, key: str, fingerprint: str, *, lease_seconds: float) -> Claim:  # type: ignore[override]
        granted = await super().claim(key, fingerprint, lease_seconds=lease_seconds)
        await anyio.sleep(0.2)
        return granted


@pytest.mark.anyio
async def test_a_caller_that_leaves_while_its_claim_is_granted_still_gets_the_call_run_once(flavour: Any) -> None:
    server, effects = build(flavour[0], SlowGrants(lease_seconds=60, wait_seconds=5))
    async with connect(flavour, server) as session:
        with anyio.move_on_after(0.05):
            await session.call("charge", {"amount": 3}, "k")
        with anyio.fail_after(10):
            resend = await session.call("charge", {"amount": 3}, "k")
    assert not resend.is_error, "not an unknown outcome for a key nobody held"
    assert replayed(resend)
    assert effects.writes == ["charge 3"]


@pytest.mark.anyio
async def test_an_answer_larger_than_the_store_keeps_is_answered_once_and_never_run_again(flavour: Any) -> None:
    server, effects = build(flavour[0], MemoryStore(max_result_bytes=4096))
    effects.answer_bytes = 10_000
    async with connect(flavour, server) as session:
        first = await session.call("echo_write", {"text": "x"}, "k")
        again = await session.call("echo_write", {"text": "x"}, "k")
    assert not first.is_error
    assert isinstance(first.content[0], TextContent)
    assert len(first.content[0].text) == 10_000
    assert envelope(again)[:2] == ("business", "ANSWER_NOT_KEPT")
    assert replayed(again)
    assert effects.writes == ["echo"]


@pytest.mark.anyio
async def test_an_unreachable_store_refuses_the_call_before_it_runs(flavour: Any) -> None:
    pytest.importorskip("redis")
    server, effects = build(flavour[0], RedisStore(f"redis://127.0.0.1:{free_port()}/0"))
    async with connect(flavour, server) as session:
        result = await session.call("charge", {"amount": 1}, "k")
        unkeyed = await session.call("charge", {"amount": 1})
    assert envelope(result) == ("transient", "IDEMPOTENCY_STORE_UNAVAILABLE", "not_executed")
    assert not unkeyed.is_error
    assert effects.writes == ["charge 1"], "only the unkeyed call ran"


@contextlib.contextmanager
def read_only_folder(folder: Path) -> Iterator[Path]:
    """`folder`, which nobody may write into while the block runs (root included: `chattr +i`)."""
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
    elif subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False).returncode != 0:
        pytest.skip("root ignores folder permissions, and chattr +i is not available here")
    try:
        yield folder
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


@pytest.mark.anyio
async def test_a_read_only_store_folder_is_a_failure_to_escalate_not_to_resend(flavour: Any, tmp_path: Path) -> None:
    with read_only_folder(tmp_path / "keys") as folder:
        server, effects = build(flavour[0], SQLiteStore(folder / "keys.sqlite3"))
        async with connect(flavour, server) as session:
            refused = await session.call("charge", {"amount": 1}, "k")
            again = await session.call("charge", {"amount": 1}, "k")
    assert envelope(refused) == envelope(again) == ("business", "IDEMPOTENCY_STORE_UNWRITABLE", "not_executed")
    assert refused.structured_content["isRetryable"] is False
    assert effects.writes == []


@pytest.mark.anyio
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, a device whose every write is ENOSPC")
async def test_a_full_disk_under_the_store_is_a_failure_to_escalate_not_to_resend(flavour: Any) -> None:
    server, effects = build(flavour[0], SQLiteStore("/dev/full"))
    async with connect(flavour, server) as session:
        refused = await session.call("charge", {"amount": 1}, "k")
    assert envelope(refused) == ("business", "IDEMPOTENCY_STORE_UNWRITABLE", "not_executed")
    assert effects.writes == []


class QuotaError(Exception):
    """A failure only its own store knows the meaning of."""


class QuotaStore(MemoryStore):
    """A store whose claims fail with `QuotaError`, which it may call "cannot be written"."""

    def __init__(self, *, says_unwritable: bool) -> None:
        super().__init__()
        self.says_unwritable = says_unwritable

    async def claim(self, key: str, fingerprint: str, *, lease_seconds: float, token: str | None = None) -> Claim:
        raise RuntimeError("claim failed") from QuotaError("quota of keys used up")

    def is_unwritable(self, error: BaseException) -> bool:
        return self.says_unwritable and isinstance(error, QuotaError)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("says_unwritable", "expected"),
    [(True, ("business", "IDEMPOTENCY_STORE_UNWRITABLE")), (False, ("transient", "IDEMPOTENCY_STORE_UNAVAILABLE"))],
)
async def test_replay_asks_the_store_whether_what_it_raised_means_it_cannot_be_written(
    says_unwritable: bool, expected: tuple[str, str]
) -> None:
    server, effects = build("mcpserver", QuotaStore(says_unwritable=says_unwritable))
    async with connect(("mcpserver", "auto"), server) as session:
        refused = await session.call("charge", {"amount": 1}, "k")
    assert envelope(refused) == (*expected, "not_executed")
    assert effects.writes == []


@pytest.mark.anyio
async def test_a_sqlite_store_locked_by_another_process_answers_within_its_timeout_and_resends_run(
    tmp_path: Path,
) -> None:
    path = tmp_path / "keys.sqlite3"
    # Waiting for the lock is bounded by the operation's timeout, not by `busy_timeout`; the
    # worker thread cannot be cancelled, so it must stop on its own, its queue included.
    server, effects = build("mcpserver", SQLiteStore(path, busy_timeout=60, timeout_seconds=1))
    async with Client(server) as client:

        async def charge(amount: int) -> CallToolResult:
            return await client.call_tool("charge", {"amount": amount}, meta={IDEMPOTENCY_KEY_META: f"op-{amount}"})  # type: ignore[arg-type]

        await charge(1)  # the file and its table exist
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")  # another process's long write
        refused: list[CallToolResult] = []
        with anyio.fail_after(10):
            async with anyio.create_task_group() as calls:
                for amount in (2, 3, 4):  # queued behind each other for the one worker thread
                    calls.start_soon(lambda amount=amount: _append(refused, charge(amount)))  # type: ignore[misc]
        holder.execute("ROLLBACK")
        holder.close()
        resent = [await charge(amount) for amount in (2, 3, 4)]
    assert [envelope(result) for result in refused] == [
        ("transient", "IDEMPOTENCY_STORE_UNAVAILABLE", "not_executed")
    ] * 3
    assert [result.is_error for result in resent] == [False] * 3
    assert effects.writes == ["charge 1", "charge 2", "charge 3", "charge 4"]


async def _append(results: list[CallToolResult], call: Awaitable[CallToolResult]) -> None:
    results.append(await call)


@pytest.mark.anyio
async def test_a_postgres_claim_held_up_by_a_lock_is_cancelled_by_the_database_so_the_resend_runs(
    postgres_url: str,
) -> None:
    psycopg = pytest.importorskip("psycopg")
    table = f"keys_{uuid.uuid4().hex[:12]}"
    server, effects = build("mcpserver", PostgresStore(postgres_url, table=table, timeout_seconds=1))
    key = {IDEMPOTENCY_KEY_META: "op-2"}
    async with Client(server) as client:
        await client.call_tool("charge", {"amount": 1}, meta={IDEMPOTENCY_KEY_META: "op-1"})  # type: ignore[arg-type]
        async with await psycopg.AsyncConnection.connect(postgres_url) as other:
            await other.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")  # another session's long write
            with anyio.fail_after(10):
                refused = await client.call_tool("charge", {"amount": 2}, meta=key)  # type: ignore[arg-type]
            await other.rollback()
        # Told "not executed, resend with the same key": the resend must run it, not find a
        # claim that committed after the answer and is held by nobody.
        resent = await client.call_tool("charge", {"amount": 2}, meta=key)  # type: ignore[arg-type]
    assert envelope(refused) == ("transient", "IDEMPOTENCY_STORE_UNAVAILABLE", "not_executed")
    assert (resent.is_error, replayed(resent)) == (False, False)
    assert effects.writes == ["charge 1", "charge 2"]


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["mcpserver", "fastmcp"])
async def test_a_claim_given_up_while_redis_was_frozen_is_released_so_the_resend_runs_once(kind: ServerKind) -> None:
    pytest.importorskip("redis")
    with redis_process() as (url, redis):
        server, effects = build(kind, RedisStore(url, timeout_seconds=0.5, wait_seconds=1))
        async with connect((kind, "legacy" if kind == "mcpserver" else None), server) as session:
            with anyio.fail_after(30):
                await session.call("charge", {"amount": 1}, "op-1")  # the store's connection is open
                redis.send_signal(signal.SIGSTOP)
                try:
                    frozen = await session.call("charge", {"amount": 2}, "op-2")  # its claim waits in Redis
                finally:
                    redis.send_signal(signal.SIGCONT)
                # Told "not executed, resend with the same key": that must be true.
                resent = await session.call("charge", {"amount": 2}, "op-2")
                again = await session.call("charge", {"amount": 2}, "op-2")
    assert envelope(frozen) == ("transient", "IDEMPOTENCY_STORE_UNAVAILABLE", "not_executed")
    assert (resent.is_error, replayed(resent)) == (False, False)
    assert (again.is_error, replayed(again), again.content) == (False, True, resent.content)
    assert effects.writes == ["charge 1", "charge 2"]


@pytest.mark.anyio
async def test_a_key_whose_runner_died_answers_outcome_unknown_and_never_runs_again(flavour: Any) -> None:
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    server, effects = build(flavour[0], store)
    # What a replica that died mid-call leaves: a claim nobody renews.
    claim = await store.claim(scope_key(server.name, None, "charge", "k"), fingerprint({"amount": 1}), lease_seconds=30)
    assert isinstance(claim, Won)
    now[0] += 31
    async with connect(flavour, server) as session:
        result = await session.call("charge", {"amount": 1}, "k")
    assert envelope(result) == ("transient", "OUTCOME_UNKNOWN", "outcome_unknown")
    assert replayed(result)
    assert effects.writes == []


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["sqlite", "postgres", "redis"])
async def test_replay_works_the_same_on_every_shared_store(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = {  # type: ignore[no-untyped-call]
        "sqlite": lambda: f"sqlite:///{tmp_path}/keys.sqlite3",
        "postgres": lambda: request.getfixturevalue("postgres_url"),
        "redis": lambda: request.getfixturevalue("redis_url"),
    }[backend]()
    server, effects = build("mcpserver", url)
    async with Client(server) as client:
        key = f"k-{tmp_path.name}"  # the servers outlive one test
        first = await client.call_tool("charge", {"amount": 2}, meta={IDEMPOTENCY_KEY_META: key})  # type: ignore[arg-type]
        again = await client.call_tool("charge", {"amount": 2}, meta={IDEMPOTENCY_KEY_META: key})  # type: ignore[arg-type]
        reused = await client.call_tool("charge", {"amount": 3}, meta={IDEMPOTENCY_KEY_META: key})  # type: ignore[arg-type]
    assert again.content == first.content
    assert replayed(again)
    assert envelope(reused)[1] == "IDEMPOTENCY_KEY_REUSED"
    assert effects.writes == ["charge 2"]


@pytest.mark.anyio
@pytest.mark.parametrize("kinds", [("mcpserver", "mcpserver"), ("mcpserver", "fastmcp"), ("fastmcp", "fastmcp")])
async def test_two_servers_sharing_one_store_file_keep_their_keys_apart(
    kinds: tuple[ServerKind, ServerKind], tmp_path: Path
) -> None:
    store = f"sqlite:///{tmp_path}/shared.sqlite3"  # one file, one table, a store each
    tickets: dict[str, list[str]] = {"zendesk": [], "jira": []}

    def ticket_tool(name: str) -> Callable[[str], str]:
        def create_ticket(title: str) -> str:
            """Open a ticket."""
            tickets[name].append(title)
            return f"{name} ticket #{len(tickets[name])}: {title}"

        return create_ticket

    servers = []
    for kind, name in zip(kinds, tickets, strict=True):
        server: Any = install(MCPServer(name) if kind == "mcpserver" else FastMCP(name), idempotency=store)
        server.tool()(ticket_tool(name)) if kind == "mcpserver" else server.tool(ticket_tool(name))
        servers.append((kind, server))

    answers: dict[str, list[str]] = {}
    for (kind, server), name in zip(servers, tickets, strict=True):
        async with connect((kind, None if kind == "fastmcp" else "legacy"), server) as session:
            for _ in range(2):  # the call and its resend
                result = await session.call("create_ticket", {"title": "Printer on fire"}, key="op-1")
                answers.setdefault(name, []).append(result.content[0].text)  # type: ignore[union-attr]
    assert tickets == {"zendesk": ["Printer on fire"], "jira": ["Printer on fire"]}  # each server's tool ran once
    assert answers["zendesk"] == ["zendesk ticket #1: Printer on fire"] * 2
    assert answers["jira"] == ["jira ticket #1: Printer on fire"] * 2


@pytest.mark.anyio
async def test_installing_again_swaps_the_store(tmp_path: Path) -> None:
    server, effects = build("mcpserver", MemoryStore())
    install(server, idempotency=SQLiteStore(tmp_path / "keys.sqlite3"))
    async with Client(server) as client:
        await client.call_tool("charge", {"amount": 1}, meta={IDEMPOTENCY_KEY_META: "k"})  # type: ignore[arg-type]
    async with SQLiteStore(tmp_path / "keys.sqlite3") as reopened:
        claim = await reopened.claim(
            scope_key(server.name, None, "charge", "k"), fingerprint({"amount": 1}), lease_seconds=1
        )
    assert json.loads(claim.result)["content"][0]["text"] == "charge #1 of 1"  # type: ignore[union-attr]
    assert effects.writes == ["charge 1"]


@pytest.mark.parametrize("kind", ["mcpserver", "fastmcp"])
@pytest.mark.parametrize(("idempotency", "error"), [(42, TypeError), ("mysql://db/keys", ValueError)])
def test_a_bad_store_is_refused_before_anything_changes(kind: ServerKind, idempotency: Any, error: type) -> None:
    server: Any = MCPServer("x") if kind == "mcpserver" else FastMCP("x")
    before = (server.call_tool, list(getattr(server, "middleware", [])))
    with pytest.raises(error):
        install(server, idempotency=idempotency)
    assert (server.call_tool, list(getattr(server, "middleware", []))) == before


def test_replay_refuses_servers_it_cannot_wrap() -> None:
    with pytest.raises(TypeError):
        install(object(), idempotency=MemoryStore())


def test_a_store_is_an_idempotency_store() -> None:
    assert isinstance(MemoryStore(), IdempotencyStore)
