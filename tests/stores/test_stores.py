"""The store conformance suite: every backend, unchanged, against the claim protocol.

Each test gets a `make_store` factory whose stores share one backing (one memory store,
one SQLite file, one PostgreSQL table, one Redis key prefix), each with its own connection,
so "concurrent claimers" are really concurrent: threads for SQLite, connections for the
servers. PostgreSQL and Redis are real servers (see `tests/services.py`).
"""

from __future__ import annotations

import errno
import itertools
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_errors.stores import (
    Abandoned,
    Claim,
    Finished,
    IdempotencyStore,
    InProgress,
    MemoryStore,
    Mismatch,
    PostgresStore,
    RedisStore,
    SQLiteStore,
    Won,
    open_store,
)
from mcp_errors.stores._protocol import new_token
from services import free_port, running_redis

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

MakeStore = Callable[..., IdempotencyStore]
BACKENDS = ["memory", "sqlite", "postgres", "redis"]
LEASE = 30.0
# Every byte value, a NUL, invalid UTF-8 and Lua/SQL-looking text: stored as they are.
ANSWER = bytes(range(256)) * 4 + b'\x00{"content":[]}\xff\xfe:D:R' + "é 🎉".encode()


@pytest.fixture(params=BACKENDS)
async def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MakeStore]:
    backend: str = request.param
    made: list[IdempotencyStore] = []
    shared: dict[str, MemoryStore] = {}
    name = f"t_{uuid.uuid4().hex[:12]}"

    def make(**options: Any) -> IdempotencyStore:
        store: IdempotencyStore
        if backend == "memory":
            if "memory" not in shared:
                shared["memory"] = MemoryStore(**options)
            return shared["memory"]
        if backend == "sqlite":
            store = SQLiteStore(tmp_path / "keys.sqlite3", **options)
        elif backend == "postgres":
            store = PostgresStore(request.getfixturevalue("postgres_url"), table=name, **options)
        else:
            store = RedisStore(request.getfixturevalue("redis_url"), prefix=f"{name}:", **options)
        made.append(store)
        return store

    yield make
    for store in made:
        await store.aclose()


async def claim(store: IdempotencyStore, key: str = "k", fingerprint: str = "f", lease: float = LEASE) -> Claim:
    return await store.claim(key, fingerprint, lease_seconds=lease)


async def won(store: IdempotencyStore, key: str = "k", fingerprint: str = "f", lease: float = LEASE) -> str:
    result = await claim(store, key, fingerprint, lease)
    assert isinstance(result, Won), result
    return result.token


async def eventually(store: IdempotencyStore, kind: type[Claim], key: str = "k", fingerprint: str = "f") -> Claim:
    """Claim again until the answer is of `kind` (for states that only time can reach)."""
    with anyio.fail_after(10):
        # Polled: the store's own clock (a server's, for PostgreSQL and Redis) changes the answer.
        while not isinstance(result := await claim(store, key, fingerprint), kind):  # noqa: ASYNC110
            await anyio.sleep(0.02)
    return result


@pytest.mark.anyio
async def test_exactly_one_of_many_concurrent_claimers_wins(make_store: MakeStore) -> None:
    stores = [make_store() for _ in range(4)]
    answers: list[Claim] = []

    async def claimer(store: IdempotencyStore, key: str) -> None:
        answers.append(await claim(store, key))

    async with anyio.create_task_group() as tg:
        for key in ("a", "b", "c"):
            for index in range(40):
                tg.start_soon(claimer, stores[index % len(stores)], key)
    assert sum(isinstance(answer, Won) for answer in answers) == 3
    assert sum(isinstance(answer, InProgress) for answer in answers) == 3 * 40 - 3


@pytest.mark.anyio
async def test_a_finished_answer_is_replayed_byte_for_byte(make_store: MakeStore) -> None:
    first, other = make_store(), make_store()
    token = await won(first)
    assert await first.finish("k", token, ANSWER)
    replay = await claim(other)
    assert isinstance(replay, Finished)
    assert replay.result == ANSWER
    assert type(replay.result) is bytes


@pytest.mark.anyio
async def test_a_key_held_for_other_arguments_is_a_mismatch_running_or_finished(make_store: MakeStore) -> None:
    store = make_store()
    token = await won(store)
    assert isinstance(await claim(store, fingerprint="other"), Mismatch)
    await store.finish("k", token, b"answer")
    assert isinstance(await claim(store, fingerprint="other"), Mismatch)
    assert isinstance(await claim(store), Finished)


@pytest.mark.anyio
async def test_a_running_call_is_in_progress_with_the_time_its_lease_has_left(make_store: MakeStore) -> None:
    store = make_store()
    await won(store)
    answer = await claim(make_store())
    assert isinstance(answer, InProgress)
    assert 0 < answer.seconds_left <= LEASE


@pytest.mark.anyio
async def test_a_lease_that_ends_before_the_call_finishes_leaves_its_outcome_unknown(make_store: MakeStore) -> None:
    store = make_store()
    token = await won(store, lease=0.2)
    await eventually(store, Abandoned)
    assert isinstance(await claim(store), Abandoned), "never given to a new claimer: it may have been applied"
    assert isinstance(await claim(store, fingerprint="other"), Mismatch)
    # A runner that was only slow (not dead) still records its answer.
    assert await store.finish("k", token, b"late answer")
    assert await claim(store) == Finished(b"late answer")


@pytest.mark.anyio
async def test_renewing_the_lease_keeps_a_slow_call_in_progress(make_store: MakeStore) -> None:
    store = make_store()
    token = await won(store, lease=0.05)
    assert await store.renew("k", token, lease_seconds=LEASE)
    with anyio.fail_after(5):
        await anyio.sleep(0.15)  # three times the first lease: only the renewal keeps the key
    assert isinstance(await claim(store), InProgress)


@pytest.mark.anyio
async def test_only_the_token_that_holds_a_key_can_finish_release_or_renew_it(make_store: MakeStore) -> None:
    store = make_store()
    token = await won(store)
    assert not await store.finish("k", "not-the-token", b"forged")
    assert not await store.release("k", "not-the-token")
    assert not await store.renew("k", "not-the-token", lease_seconds=LEASE)
    assert not await store.finish("unclaimed", token, b"forged")
    assert isinstance(await claim(store), InProgress)
    assert await store.finish("k", token, b"answer")
    assert not await store.finish("k", token, b"second answer"), "an answer is written once"
    assert not await store.release("k", token), "a finished key is not released"
    assert not await store.renew("k", token, lease_seconds=LEASE)
    assert await claim(store) == Finished(b"answer")


@pytest.mark.anyio
async def test_a_released_key_is_claimed_again(make_store: MakeStore) -> None:
    store = make_store()
    token = await won(store)
    assert await store.release("k", token)
    again = await won(make_store(), fingerprint="other arguments are fine after a release")
    assert again != token


@pytest.mark.anyio
async def test_a_claim_won_with_the_callers_token_is_held_and_released_with_it(make_store: MakeStore) -> None:
    store = make_store()
    token = new_token()
    assert await store.claim("k", "fp", lease_seconds=30, token=token) == Won(token)
    assert not await store.release("k", new_token())
    assert await store.release("k", token)
    assert isinstance(await store.claim("k", "fp", lease_seconds=30, token=new_token()), Won)


@pytest.mark.anyio
async def test_a_key_is_free_again_once_its_time_to_live_ends(make_store: MakeStore) -> None:
    store = make_store(ttl_seconds=0.3)
    await store.finish("k", await won(store), b"answer")
    await won(store, key="abandoned", lease=0.1)
    await eventually(store, Won)
    # Its own time to live counts from its later claim (on a loaded machine, long after the
    # first key's): until then other arguments are a mismatch, then the key is free for them.
    await eventually(store, Won, key="abandoned", fingerprint="new arguments")


@pytest.mark.anyio
async def test_a_running_call_keeps_its_key_past_the_time_to_live(make_store: MakeStore) -> None:
    store = make_store(ttl_seconds=0.1)
    token = await won(store, lease=0.1)
    assert await store.renew("k", token, lease_seconds=LEASE)
    await store.finish("done", await won(store, key="done"), b"answer")
    await eventually(store, Won, key="done")  # the time to live has ended
    assert isinstance(await claim(store), InProgress), "a resend must not run the call a second time"
    assert isinstance(await claim(store, fingerprint="other"), Mismatch)
    assert await store.finish("k", token, b"slow answer")
    assert await claim(store) == Finished(b"slow answer")


@pytest.mark.anyio
async def test_keys_are_independent(make_store: MakeStore) -> None:
    store = make_store()
    one, two = await won(store, key="one"), await won(store, key="two")
    await store.finish("one", one, b"1")
    await store.release("two", two)
    assert await claim(store, key="one") == Finished(b"1")
    assert isinstance(await claim(store, key="two"), Won)


@pytest.mark.anyio
async def test_a_store_is_an_async_context_manager_that_closes(make_store: MakeStore) -> None:
    async with make_store() as store:
        await won(store)


# -- one backend at a time: bounds, clean-up and URLs -------------------------------------


@pytest.mark.anyio
async def test_the_memory_store_is_bounded_in_bytes_dropping_the_oldest_finished_answers() -> None:
    store = MemoryStore(max_bytes=64 * 1024, max_result_bytes=16 * 1024)
    running = await won(store, key="running")
    for index in range(20):
        key = f"answer-{index}"
        await store.finish(key, await won(store, key=key), b"x" * 16 * 1024)
    assert store.stored_bytes <= 64 * 1024
    assert await claim(store, key="answer-19") == Finished(b"x" * 16 * 1024)
    assert isinstance(await claim(store, key="answer-0"), Won), "the oldest answer made room"
    assert isinstance(await claim(store, key="running"), InProgress), "a running call is never dropped"
    assert await store.finish("running", running, b"done")


@pytest.mark.anyio
async def test_the_memory_store_is_bounded_in_entries() -> None:
    store = MemoryStore(max_entries=3)
    for key in "abcde":
        await store.finish(key, await won(store, key=key), b"answer")
    assert len(store) == 3
    assert isinstance(await claim(store, key="a"), Won)


@pytest.mark.anyio
async def test_a_sqlite_file_another_process_holds_is_set_up_off_the_event_loop(tmp_path: Path) -> None:
    path = tmp_path / "keys.sqlite3"
    other = sqlite3.connect(path, isolation_level=None)  # another process's writer, as SQLite sees it
    other.execute("PRAGMA journal_mode = WAL")
    other.execute("BEGIN IMMEDIATE")
    store = SQLiteStore(path, busy_timeout=8)
    claims: list[Claim] = []

    async def claim_first_key() -> None:
        claims.append(await claim(store))

    # Far less than the store's busy timeout: a claim that waited on the event loop would
    # hold everything (this deadline included) until SQLite gave up on the lock.
    with anyio.fail_after(4):
        async with anyio.create_task_group() as tg:
            tg.start_soon(claim_first_key)
            await anyio.wait_all_tasks_blocked()
            other.execute("COMMIT")
    other.close()
    await store.aclose()
    assert [type(each) for each in claims] == [Won]


@pytest.mark.anyio
async def test_the_sqlite_store_deletes_expired_keys(tmp_path: Path) -> None:
    now = [1000.0]
    store = SQLiteStore(tmp_path / "keys.sqlite3", ttl_seconds=10, cleanup_interval=5, clock=lambda: now[0])
    for key in "abc":
        await store.finish(key, await won(store, key=key), b"answer")
    now[0] += 11
    await won(store, key="d")
    import sqlite3

    with sqlite3.connect(tmp_path / "keys.sqlite3") as conn:
        keys = [row[0] for row in conn.execute("SELECT key FROM mcp_errors_idempotency")]
    await store.aclose()
    assert keys == ["d"]


@pytest.mark.anyio
async def test_sqlite_claims_from_several_processes_have_one_winner_per_key(tmp_path: Path) -> None:
    import sys

    script = (
        "import anyio, sys\n"
        "from mcp_errors.stores import SQLiteStore, Won\n"
        "async def main():\n"
        "    store = SQLiteStore(sys.argv[1])\n"
        "    wins = [k for k in range(100) if isinstance(await store.claim(str(k), 'f', lease_seconds=30), Won)]\n"
        "    print(' '.join(map(str, wins)))\n"
        "anyio.run(main)\n"
    )
    path = str(tmp_path / "keys.sqlite3")
    outputs: list[str] = []

    async def process() -> None:
        result = await anyio.run_process([sys.executable, "-c", script, path])
        outputs.append(result.stdout.decode())

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(process)
    wins = [int(key) for output in outputs for key in output.split()]
    assert sorted(wins) == list(range(100))


@pytest.mark.anyio
async def test_the_postgres_store_deletes_expired_keys(postgres_url: str) -> None:
    import psycopg

    table = f"t_{uuid.uuid4().hex[:12]}"
    store = PostgresStore(postgres_url, table=table, ttl_seconds=0.2, cleanup_interval=0.2)
    for key in "abc":
        await store.finish(key, await won(store, key=key), b"answer")
    rows: set[str] = set()
    try:
        async with await psycopg.AsyncConnection.connect(postgres_url) as conn:
            with anyio.fail_after(10):
                # Polled: a won claim runs the clean-up, at most every 0.2 s, and only keys the
                # server's clock has expired go.
                for attempt in itertools.count():  # read after the loop
                    await won(store, key=f"later-{attempt}")
                    rows = {row[0] for row in await (await conn.execute(f"SELECT key FROM {table}")).fetchall()}
                    if not rows & set("abc"):
                        break
                    await anyio.sleep(0.05)
    finally:
        await store.aclose()
    assert f"later-{attempt}" in rows, "a key that has not expired is kept"


@pytest.mark.anyio
async def test_redis_expires_keys_itself(redis_url: str) -> None:
    from redis.asyncio import Redis

    prefix = f"t_{uuid.uuid4().hex[:12]}:"
    store = RedisStore(redis_url, prefix=prefix, ttl_seconds=30)
    await store.finish("k", await won(store), b"answer")
    client = Redis.from_url(redis_url)
    try:
        ttl = await client.pttl(prefix + "k")
    finally:
        await client.aclose()
        await store.aclose()
    assert 0 < ttl <= 30_000, "finishing keeps the key's time to live"


def test_open_store_chooses_the_store_by_url(tmp_path: Path) -> None:
    assert isinstance(open_store("memory://"), MemoryStore)
    relative = open_store("sqlite:///keys.sqlite3")
    absolute = open_store(f"sqlite:///{tmp_path}/keys.sqlite3")
    assert isinstance(relative, SQLiteStore)
    assert relative.path == "keys.sqlite3"
    assert isinstance(absolute, SQLiteStore)
    assert absolute.path == f"{tmp_path}/keys.sqlite3"
    assert isinstance(open_store("postgresql://app@db/app", table="keys"), PostgresStore)
    assert isinstance(open_store("postgres://app@db/app"), PostgresStore)
    assert isinstance(open_store("redis://cache:6379/0", ttl_seconds=60), RedisStore)
    assert open_store("memory://", ttl_seconds=5).ttl_seconds == 5


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://app:hun%zzter2@127.0.0.1:1/keys",  # a '%' that starts no escape: libpq quotes the password
        "//app:hun%zzter2@db/keys",  # no scheme
        "app:hun%zzter2@db:5432/keys",
        "db:5432/keys?password=hun%zzter2",
    ],
)
def test_a_store_url_that_cannot_be_used_is_refused_without_echoing_its_password(
    url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(ValueError, match="store") as raised:
        open_store(url, timeout_seconds=1)
    assert "hun%zzter2" not in str(raised.value)
    assert "hun%zzter2" not in caplog.text


@pytest.mark.parametrize("url", ["mysql://db/app", "keys.sqlite3", "sqlite://", "sqlite://host/keys.sqlite3"])
def test_open_store_refuses_urls_that_name_no_store(url: str) -> None:
    with pytest.raises(ValueError, match="sqlite:///"):
        open_store(url)


@pytest.mark.parametrize(
    "options",
    [
        {"ttl_seconds": 0},
        {"lease_seconds": -1},
        {"wait_seconds": float("nan")},
        {"max_result_bytes": 10},
        {"timeout_seconds": 0},
        {"timeout_seconds": float("inf")},
    ],
)
def test_settings_that_cannot_work_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must"):
        MemoryStore(**options)


def test_a_table_name_is_a_plain_identifier() -> None:
    with pytest.raises(ValueError, match="plain identifier"):
        SQLiteStore("keys.sqlite3", table="keys; DROP TABLE users")


# --- ping: a store that cannot be opened says so at start-up -------------------------------


@pytest.mark.anyio
async def test_a_store_that_can_be_opened_answers_a_ping_and_still_works_after_closing(make_store: MakeStore) -> None:
    store = make_store()
    with anyio.fail_after(10):
        await store.ping()
        await store.aclose()  # as the command line does before the calls' own event loop
        await won(store)


@pytest.mark.anyio
async def test_a_sqlite_store_in_a_missing_folder_is_not_created_and_says_the_folder_is_missing(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-folder" / "deeper"
    store = SQLiteStore(missing / "keys.sqlite3")

    with pytest.raises(ConnectionError, match="does not exist") as refused:
        await store.ping()

    assert str(missing) in str(refused.value)
    assert not missing.parent.exists()


@pytest.mark.anyio
@pytest.mark.parametrize("scheme", ["redis", "postgresql"])
async def test_a_store_on_a_closed_port_fails_its_ping_naming_the_url_without_its_password(scheme: str) -> None:
    url = f"{scheme}://app:s3cret-pw@127.0.0.1:{free_port()}/0"
    store = open_store(url, timeout_seconds=10)

    with anyio.fail_after(30), pytest.raises(ConnectionError) as refused:
        await store.ping()
    await store.aclose()

    said = str(refused.value)
    assert "s3cret-pw" not in said
    assert url.replace("s3cret-pw", "***") in said
    assert "\n" not in said


@pytest.mark.anyio
async def test_a_redis_store_with_a_wrong_password_fails_its_ping(redis_url: str) -> None:
    # `redis_url` only proves redis-server is here (or skips); this one asks for a password.
    with running_redis(password="right-password") as url:
        wrong = RedisStore(url.replace("redis://", "redis://:wrong-password@"))
        right = RedisStore(url.replace("redis://", "redis://:right-password@"))
        with anyio.fail_after(10), pytest.raises(ConnectionError) as refused:
            await wrong.ping()
        with anyio.fail_after(10):
            await right.ping()
        await wrong.aclose()
        await right.aclose()

    assert "wrong-password" not in str(refused.value)
    assert "redis://:***@127.0.0.1" in str(refused.value)


@pytest.mark.anyio
async def test_a_postgres_store_for_a_role_that_does_not_exist_fails_its_ping(postgres_url: str) -> None:
    url = postgres_url.replace("postgres@", "nobody:wrong-password@")
    store = PostgresStore(url)

    with anyio.fail_after(10), pytest.raises(ConnectionError) as refused:
        await store.ping()
    await store.aclose()

    assert "wrong-password" not in str(refused.value)
    assert "nobody" in str(refused.value)


def sqlite_read_only_error(tmp_path: Path) -> sqlite3.Error:
    """The error SQLite raises for a write to a database opened read-only."""
    path = tmp_path / "ro.sqlite3"
    sqlite3.connect(path).close()
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.execute("CREATE TABLE t (x)")
    except sqlite3.Error as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError("a read-only database took a write")


def test_each_store_says_which_of_its_own_errors_mean_it_cannot_be_written(tmp_path: Path) -> None:
    psycopg_errors = pytest.importorskip("psycopg.errors")
    redis_exceptions = pytest.importorskip("redis.exceptions")
    full_disk = OSError(errno.ENOSPC, "No space left on device")
    sqlite_store = SQLiteStore(tmp_path / "keys.sqlite3")
    postgres_store = PostgresStore("postgresql://app@127.0.0.1:1/keys")
    redis_store = RedisStore("redis://127.0.0.1:1/0")
    assert sqlite_store.is_unwritable(sqlite_read_only_error(tmp_path))
    assert not sqlite_store.is_unwritable(sqlite3.OperationalError("database is locked"))
    assert postgres_store.is_unwritable(psycopg_errors.ReadOnlySqlTransaction("read-only transaction"))
    assert postgres_store.is_unwritable(psycopg_errors.DiskFull("no space"))
    assert not postgres_store.is_unwritable(psycopg_errors.UniqueViolation("duplicate key"))
    assert redis_store.is_unwritable(redis_exceptions.ReadOnlyError("You can't write against a read only replica."))
    assert redis_store.is_unwritable(
        redis_exceptions.ResponseError("OOM command not allowed when used memory > 'maxmemory'.")
    )
    assert not redis_store.is_unwritable(redis_exceptions.ConnectionError("Connection refused"))
    # What the operating system says is every store's: a full disk, a read-only file system.
    for store in (MemoryStore(), sqlite_store, postgres_store, redis_store):
        assert store.is_unwritable(full_disk)
        assert not store.is_unwritable(OSError(errno.ECONNREFUSED, "Connection refused"))
