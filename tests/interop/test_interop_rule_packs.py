"""The shipped rule packs against the real servers, through the real proxy, over stdio.

`mcp-errors proxy --rules docs/proxy-rules/<pack> -- uvx ...` runs exactly as a host would
start it, in front of `mcp-server-sqlite` 2025.4.25 (with `mcp<2`: it does not start on mcp
2.x) and `mcp-server-fetch` 2026.10.24, both from PyPI through `uvx`. Each test makes the
server fail the ways its pack names and asserts the category and code of each rewritten
result, through `mcp.Client` (one connection mode per session, alternating: the packs act on
what the upstream answered, before the front's wire, whose modes tests/proxy covers in memory):

- mcp-server-sqlite answers every failure as a success: a SQL syntax error, an unknown
  table, a duplicate, a statement sent to the wrong tool, a write while another sqlite3
  connection holds the lock, a database the server may not write. Without the pack but with
  `--disguised-failures` the built-in judge reads them from their words (inferred); with
  neither they pass as successes.
- mcp-server-fetch fetches from a local HTTP site on 127.0.0.1 that answers 404, 429, 502
  and 503, closes the connection without an answer and never answers; a closed port, a
  page robots.txt forbids, a private address (without `--allow-private-ips`), a broken
  proxy setting.

The database, the held lock, the read-only mount and the site are the corpus capture's
(`tools/collect_corpus.py`), so the servers fail here as they did when their texts were
collected.

The first run downloads both servers (`uvx` from PyPI); later runs use uv's cache, and the
sessions run offline. Without `uvx`, or when it cannot fetch them, the module fails in CI
(`CI` set) and is skipped, with the reason, elsewhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from collect_corpus import HeldLock, Stub, closed_port, make_sqlite, readonly_mount
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult

from interop.peers import unavailable
from servers.checks import assert_nothing_leaks, check_error

pytestmark = [pytest.mark.interop, pytest.mark.slow]

PACKS = Path(__file__).parents[2] / "docs" / "proxy-rules"
SQLITE = ("--from", "mcp-server-sqlite==2025.4.25", "--with", "mcp<2")
FETCH = ("--from", "mcp-server-fetch==2026.10.24")
SESSION_SECONDS = 180
"""One proxy session: the proxy and `uvx` start (seconds on a loaded machine), then the calls."""
_DOWNLOAD_SECONDS = 600


def uvx_server(spec: Sequence[str]) -> list[str]:
    """`uvx <spec>`, with the server fetched into uv's cache first (the only step that needs PyPI)."""
    uvx = shutil.which("uvx")
    if uvx is None:
        unavailable("The rule-pack interop tests need `uvx` (uv) on PATH to run mcp-server-sqlite and -fetch.")
    assert uvx is not None
    try:
        done = subprocess.run(
            [uvx, *spec, "python", "-c", ""], capture_output=True, text=True, timeout=_DOWNLOAD_SECONDS, check=False
        )
    except subprocess.TimeoutExpired:
        unavailable(f"`uvx {' '.join(spec)}` took over {_DOWNLOAD_SECONDS}s: is pypi.org reachable?")
    if done.returncode != 0:
        head = "\n".join(done.stderr.strip().splitlines()[:8])
        unavailable(f"`uvx {' '.join(spec)}` failed (exit {done.returncode}); it needs PyPI on a cold cache.\n{head}")
    return [uvx, *spec]


@pytest.fixture(scope="module")
def sqlite_server() -> list[str]:
    return [*uvx_server(SQLITE), "mcp-server-sqlite"]


@pytest.fixture(scope="module")
def fetch_server() -> list[str]:
    return [*uvx_server(FETCH), "mcp-server-fetch"]


@contextlib.asynccontextmanager
async def proxied(upstream: Sequence[str], *options: str, mode: str, log: TextIO) -> AsyncIterator[Client]:
    """`mcp-errors proxy <options> -- <upstream>` as a host starts it, its stderr written to `log`."""
    # The whole environment (uv finds its cache through it), offline: the server is cached.
    env = {**os.environ, "UV_OFFLINE": "1"}
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(name, None)  # mcp-server-fetch would send the local site's requests through a proxy
    params = StdioServerParameters(
        # No circuit breaker: these tests send one failure after another on purpose, and an
        # open circuit would answer them itself (its own tests: tests/proxy/test_breaker.py).
        command=sys.executable,
        args=["-m", "mcp_errors", "proxy", "--breaker-failures", "0", *options, "--", *upstream],
        env=env,
    )
    try:
        async with Client(stdio_client(params, errlog=log), mode=mode) as client:
            yield client
    finally:
        log.seek(0)
        print(log.read()[-4000:])  # pytest shows it when the test fails: why a proxy ended, what it logged


def wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def failed(result: CallToolResult, category: str, code: str) -> dict[str, Any]:
    """The envelope of an error result in the whole contract, with this category and code."""
    answer = wire(result)
    envelope = check_error(answer, None)
    assert (envelope["errorCategory"], envelope.get("code")) == (category, code), envelope
    assert_nothing_leaks(answer)
    return envelope


def succeeded(result: CallToolResult) -> str:
    assert not result.is_error, wire(result)
    return "".join(getattr(block, "text", "") for block in result.content)


# --- mcp-server-fetch -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site() -> Iterator[Stub]:
    """The corpus capture's site on 127.0.0.1: robots.txt forbids /private, `/status/<code>` answers that status,
    `/close` closes the connection without an answer, `/hang` never answers, `/page/log` is a log with ERROR lines.
    """
    served = Stub()
    try:
        yield served
    finally:
        served.close()


def fetch_cases(site: Stub) -> list[tuple[str, str, str]]:
    """(url, category, code): each failure of mcp-server-fetch against the site, and what the pack makes of it."""
    return [
        (f"{site.base}/status/404", "validation", "PAGE_NOT_FOUND"),
        (f"{site.base}/status/503", "transient", "UPSTREAM_UNAVAILABLE"),
        (f"{site.base}/status/429", "transient", "UPSTREAM_RATE_LIMITED"),
        (f"{site.base}/status/502", "transient", "UPSTREAM_BAD_GATEWAY"),
        (f"http://127.0.0.1:{closed_port()}/", "transient", "UPSTREAM_UNREACHABLE"),
        (f"{site.base}/close", "transient", "UPSTREAM_UNREACHABLE"),
        (f"{site.base}/private/report", "permission", "ROBOTS_DISALLOWED"),
    ]


@dataclasses.dataclass(frozen=True)
class AllowedFetch:
    """One session of the fetch pack in front of `mcp-server-fetch --allow-private-ips`, running in a thread."""

    cases: list[tuple[str, str, str]]
    answers: Future[list[CallToolResult]]
    """The answers to `cases`, then to a fetch of `/page/log`."""
    hung: Future[CallToolResult]
    """The answer to a fetch of `/hang`, a page that never answers: mcp-server-fetch gives up after its fixed 30 s."""


@pytest.fixture(scope="module")
def allowed_fetch(fetch_server: list[str], site: Stub) -> Iterator[AllowedFetch]:
    """The fetch of the page that never answers starts first; the other calls are made meanwhile, in the same session.

    One proxy for both, in a thread of its own from the module's first test on, so that the
    30 s pass beside the other tests instead of inside one of them; the module's first test
    reads the answers, its last test the hung fetch.
    """
    pack = str(PACKS / "mcp-server-fetch.toml")
    cases = fetch_cases(site)
    answers: Future[list[CallToolResult]] = Future()

    async def one_session() -> CallToolResult:
        hung: list[CallToolResult] = []

        async def fetch_the_hanging_page() -> None:
            hung.append(await client.call_tool("fetch", {"url": f"{site.base}/hang"}))

        try:
            with tempfile.TemporaryFile("w+") as log, anyio.fail_after(SESSION_SECONDS):
                upstream = [*fetch_server, "--allow-private-ips"]
                async with (
                    proxied(upstream, "--rules", pack, mode="legacy", log=log) as client,
                    anyio.create_task_group() as calls,
                ):
                    calls.start_soon(fetch_the_hanging_page)
                    made = [await client.call_tool("fetch", {"url": url}) for url, _, _ in cases]
                    made.append(await client.call_tool("fetch", {"url": f"{site.base}/page/log"}))
                    answers.set_result(made)
        except BaseException as exc:
            if not answers.done():
                answers.set_exception(exc)
            raise
        return hung[0]

    with ThreadPoolExecutor(max_workers=1) as thread:  # leaving it waits for the session
        yield AllowedFetch(cases, answers, thread.submit(anyio.run, one_session))


def test_the_fetch_pack_names_each_failure_of_the_server_against_a_local_site(allowed_fetch: AllowedFetch) -> None:
    # One connection mode, legacy (the session of the hung fetch): the pack rewrites what the
    # upstream answered, before the front's wire, whose two modes are covered in memory
    # (tests/proxy/conftest.py `client`); the private address's session below is auto.
    *results, page = allowed_fetch.answers.result(timeout=SESSION_SECONDS)
    for result, (url, category, code) in zip(results, allowed_fetch.cases, strict=True):
        envelope = failed(result, category, code)
        # fetch only reads: nothing a failure did needs undoing, so a transient one is safe to resend.
        assert envelope["executionState"] == "not_executed", url
        assert "categoryInferred" not in envelope
    assert "503 Service Unavailable" in succeeded(page)  # a log of failures is a success


@pytest.mark.anyio
async def test_the_fetch_pack_says_a_private_address_is_the_servers_policy_and_names_bad_arguments(
    fetch_server: list[str], site: Stub
) -> None:
    pack = str(PACKS / "mcp-server-fetch.toml")
    with tempfile.TemporaryFile("w+") as log, anyio.fail_after(SESSION_SECONDS):
        async with proxied(fetch_server, "--rules", pack, mode="auto", log=log) as client:
            private = await client.call_tool("fetch", {"url": f"{site.base}/page/report"})
            not_a_url = await client.call_tool("fetch", {"url": "not a url"})
    refused = failed(private, "permission", "PRIVATE_ADDRESS_REFUSED")
    assert "--allow-private-ips" in refused["description"]
    failed(not_a_url, "validation", "INVALID_ARGUMENTS")


@pytest.mark.anyio
async def test_the_fetch_pack_says_a_broken_proxy_setting_is_the_servers_configuration(
    fetch_server: list[str], site: Stub
) -> None:
    pack = str(PACKS / "mcp-server-fetch.toml")
    upstream = [*fetch_server, "--allow-private-ips", "--proxy-url", "ftp://127.0.0.1:9"]
    with tempfile.TemporaryFile("w+") as log, anyio.fail_after(SESSION_SECONDS):
        async with proxied(upstream, "--rules", pack, mode="legacy", log=log) as client:
            result = await client.call_tool("fetch", {"url": f"{site.base}/page/report"})
    envelope = failed(result, "business", "SERVER_MISCONFIGURED")
    assert "escalate" in envelope["description"]


# --- mcp-server-sqlite ------------------------------------------------------------------------


@pytest.fixture
def database(tmp_path: Path) -> Path:
    """The corpus's database: users with a unique, required email, and log rows that mention errors."""
    path = tmp_path / "db" / "app.db"
    make_sqlite(path)
    return path


@contextlib.contextmanager
def write_lock_held(path: Path) -> Iterator[None]:
    """Another sqlite3 connection holds the database's write lock, as a second program would."""
    lock = HeldLock(path)
    lock.take()
    try:
        yield
    finally:
        lock.release()


def users(path: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return [email for (email,) in db.execute("SELECT email FROM users ORDER BY id")]


SQL_FAILURES: list[tuple[str, str, str, str]] = [
    ("read_query", "SELECT * FORM users", "validation", "SQL_SYNTAX_ERROR"),
    ("read_query", "SELECT * FROM orders", "validation", "UNKNOWN_TABLE"),
    ("write_query", "INSERT INTO users (email) VALUES ('ada@example.com')", "business", "DUPLICATE_VALUE"),
    ("write_query", "INSERT INTO users (email) VALUES (NULL)", "validation", "INVALID_VALUE"),
    ("read_query", "DELETE FROM users", "validation", "WRONG_TOOL"),
    ("create_table", "CREATE TABLE users (id INTEGER)", "business", "ALREADY_EXISTS"),
]
"""(tool, query, category, code): what the server answers as a success, and what the pack makes of it."""


@pytest.mark.anyio
async def test_the_sqlite_pack_turns_each_failure_the_server_answers_as_a_success_into_the_contract(
    sqlite_server: list[str], database: Path
) -> None:
    # One connection mode, legacy (the held lock's 5 s wait ran in it alone already): the pack
    # rewrites what the upstream answered, before the front's wire, whose two modes are covered
    # in memory (tests/proxy/conftest.py `client`); the disguised-failures session below is auto.
    pack = str(PACKS / "mcp-server-sqlite.toml")
    with tempfile.TemporaryFile("w+") as log, anyio.fail_after(SESSION_SECONDS):
        async with proxied(
            [*sqlite_server, "--db-path", str(database)], "--rules", pack, mode="legacy", log=log
        ) as client:
            envelopes = [
                failed(await client.call_tool(tool, {"query": query}), category, code)
                for tool, query, category, code in SQL_FAILURES
            ]
            for envelope in envelopes:
                assert envelope["executionState"] == "not_executed"
                assert "categoryInferred" not in envelope  # the pack's judgment, not the words'
            # Successes whose data mention errors stay successes; so does an empty answer.
            rows = succeeded(await client.call_tool("read_query", {"query": "SELECT level, message FROM logs"}))
            assert "connection refused" in rows
            assert succeeded(await client.call_tool("describe_table", {"table_name": "nosuchtable"})) == "[]"
            with write_lock_held(database):  # the server waits 5 s for the lock
                locked = await client.call_tool("write_query", {"query": "DELETE FROM users WHERE id = 2"})
            busy = failed(locked, "transient", "DATABASE_BUSY")
            assert (busy["isRetryable"], busy["executionState"]) == (True, "not_executed")
        log.seek(0)
        logged = log.read()
    assert users(database) == ["ada@example.com", "bob@example.com"]  # nothing that failed was applied
    # The host's log (the proxy's stderr) has the server's own words under the errorId the agent got.
    syntax = envelopes[0]["errorId"]
    assert f'errorId {syntax}; the server said: Database error: near "FORM": syntax error' in logged


@contextlib.contextmanager
def read_only_folder(folder: Path, command: list[str]) -> Iterator[list[str]]:
    """`command` run where `folder` cannot be written: a private read-only mount for root, file modes otherwise."""
    if os.geteuid() != 0:
        modes = {path: path.stat().st_mode for path in (folder, *folder.iterdir())}
        for path in modes:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield command
        finally:
            for path, mode in modes.items():
                path.chmod(mode)
        return
    # Root writes through file modes: mount the folder read-only in a mount namespace of the server's own.
    if subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False).returncode != 0:
        unavailable("A read-only database for root needs `unshare -m` (util-linux and CAP_SYS_ADMIN).")
    yield readonly_mount(folder, command)


@pytest.mark.anyio
async def test_the_sqlite_pack_says_a_database_the_server_may_not_write_is_its_configuration(
    sqlite_server: list[str], database: Path
) -> None:
    pack = str(PACKS / "mcp-server-sqlite.toml")
    server = [*sqlite_server, "--db-path", str(database)]
    with read_only_folder(database.parent, server) as command, tempfile.TemporaryFile("w+") as log:
        with anyio.fail_after(SESSION_SECONDS):
            async with proxied(command, "--rules", pack, mode="legacy", log=log) as client:
                write = await client.call_tool("write_query", {"query": "INSERT INTO users (email) VALUES ('c@x.org')"})
                read = await client.call_tool("read_query", {"query": "SELECT count(*) AS n FROM users"})
    envelope = failed(write, "business", "DATABASE_READ_ONLY")
    assert (envelope["isRetryable"], envelope["executionState"]) == (False, "not_executed")
    assert "escalate" in envelope["description"]
    assert succeeded(read) == "[{'n': 2}]"  # as the description says, reading still works


@pytest.mark.anyio
async def test_without_the_pack_disguised_failures_reads_the_sqlite_servers_failures_from_their_words(
    sqlite_server: list[str], database: Path
) -> None:
    with tempfile.TemporaryFile("w+") as log, anyio.fail_after(SESSION_SECONDS):
        upstream = [*sqlite_server, "--db-path", str(database)]
        async with proxied(upstream, "--disguised-failures", mode="auto", log=log) as client:
            results = [await client.call_tool(tool, {"query": query}) for tool, query, _, _ in SQL_FAILURES]
            rows = await client.call_tool("read_query", {"query": "SELECT level, message FROM logs"})
    # The built-in judge: the category from the words, marked inferred, with the vocabulary's codes.
    expected = [
        ("validation", "INVALID_QUERY"),
        ("validation", "INVALID_QUERY"),
        ("business", "CONFLICT"),
        ("validation", "INVALID_ARGUMENTS"),
        ("validation", "INVALID_ARGUMENTS"),
        ("business", "CONFLICT"),
    ]
    for result, (category, code), (_, _, packed_category, _) in zip(results, expected, SQL_FAILURES, strict=True):
        envelope = failed(result, category, code)
        assert envelope["categoryInferred"] is True
        assert category == packed_category  # the words and the pack agree on what to do
    assert "connection refused" in succeeded(rows)


@pytest.mark.anyio
async def test_without_the_pack_or_disguised_failures_the_sqlite_servers_failures_pass_as_successes(
    sqlite_server: list[str], database: Path
) -> None:
    with tempfile.TemporaryFile("w+") as log, anyio.fail_after(SESSION_SECONDS):
        async with proxied([*sqlite_server, "--db-path", str(database)], mode="legacy", log=log) as client:
            texts = [succeeded(await client.call_tool(tool, {"query": query})) for tool, query, _, _ in SQL_FAILURES]
    assert texts[:2] == ['Database error: near "FORM": syntax error', "Database error: no such table: orders"]
    assert all(text.startswith(("Database error: ", "Error: ")) for text in texts)


# --- last: the timeout started with the module ------------------------------------------------


def test_the_fetch_pack_reads_the_servers_own_timeout_as_transient(allowed_fetch: AllowedFetch) -> None:
    timeout = failed(allowed_fetch.hung.result(timeout=SESSION_SECONDS), "transient", "UPSTREAM_TIMEOUT")
    assert timeout["isRetryable"] is True
    assert timeout["executionState"] == "not_executed"  # fetch only reads
