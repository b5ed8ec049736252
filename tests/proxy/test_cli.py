"""`mcp-errors proxy`, the command itself.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract; the shared
clients (`client`, `stdio_client`) are in `tests/proxy/conftest.py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import anyio
import anyio.abc
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import Client
from mcp.client.stdio import stdio_client as stdio_transport
from mcp_types import CallToolResult

from mcp_errors.proxy import ProxySettings
from proxying import PROXY, STARTUP_SECONDS, UPSTREAM, command_params, run_proxy, wire
from servers.checks import assert_nothing_leaks, check_error
from servers.proxy_upstream import LEAKED_SECRET
from services import free_port

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one proxy (`client`, `tests/proxy/conftest.py`)."""
    return "asyncio"


# --- the command ------------------------------------------------------------------------


def test_a_child_that_cannot_start_is_a_clear_error_with_its_exit_status_and_stderr() -> None:
    crash = "import sys; print('OPENWEATHER_API_KEY is not set', file=sys.stderr); sys.exit(3)"
    done = run_proxy("--", sys.executable, "-c", crash)
    assert done.returncode == 1
    assert "exited with status 3" in done.stderr
    assert "OPENWEATHER_API_KEY is not set" in done.stderr


def test_a_command_that_does_not_exist_is_a_clear_error() -> None:
    done = run_proxy("--", "no-such-mcp-server-command")
    assert done.returncode == 2
    assert "no-such-mcp-server-command" in done.stderr
    assert "PATH" in done.stderr


def test_a_child_that_never_answers_is_an_error_after_the_startup_timeout() -> None:
    started = time.monotonic()
    # It reads its stdin and never answers; it exits when the proxy closes it.
    done = run_proxy("--startup-timeout", "2", "--", sys.executable, "-c", "import sys; sys.stdin.read()")
    assert done.returncode == 1
    assert "within 2 seconds" in done.stderr
    assert time.monotonic() - started < 60


def test_a_tenant_header_without_the_http_front_or_that_is_no_header_name_is_refused() -> None:
    done = run_proxy("--tenant-header", "X-Tenant", "--", sys.executable, UPSTREAM)
    assert done.returncode == 2
    assert "--http" in done.stderr
    with pytest.raises(ValueError, match="header name"):
        ProxySettings(tenant_header="X Tenant: acme")


def test_a_bad_rules_file_names_the_file_the_rule_and_the_problem(tmp_path: Path) -> None:
    rules = tmp_path / "mine.toml"
    rules.write_text('[[rule]]\nname = "slow"\nmatch = { text = "timeout" }\ncategory = "temporary"\n')
    done = run_proxy("--rules", str(rules), "--", sys.executable, UPSTREAM)
    assert done.returncode == 2
    assert "mine.toml: rule 1 (slow): category" in done.stderr


@pytest.mark.parametrize(
    ("refused", "named"),
    [(("--rules", "mine.toml"), "mine.toml"), (("--idempotency-keys", "--store", "//app@db/keys"), "--store")],
    ids=["rules file", "store URL"],
)
def test_a_bad_rules_file_or_store_is_refused_before_the_upstream_starts_or_fastmcp_loads(
    tmp_path: Path, refused: tuple[str, ...], named: str
) -> None:
    # Neither needs the upstream nor fastmcp: a mistake in them costs no server start and no
    # wait for fastmcp's import (about 1.5 s of CPU). Python lists what it imported on stderr.
    (tmp_path / "mine.toml").write_text('[[rule]]\nmatch = { text = "timeout" }\ncategory = "temporary"\n')
    starts = tmp_path / "starts"
    script = f'echo $$ >> "{starts}"; exec "{sys.executable}" "{UPSTREAM}"'
    done = subprocess.run(
        [*PROXY, *refused, "--", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"},
    )
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert done.returncode == 2
    assert named in done.stderr  # what is wrong is named
    assert "mcp_errors._cli" in imported  # the import list is there ...
    assert "fastmcp" not in imported  # ... without fastmcp
    assert not starts.exists()


class Command(NamedTuple):
    """`mcp-errors proxy` over stdio, as a host runs it, and what the tests read of it."""

    client: Client
    starts: Path  # a line per start of the upstream
    cwd: Path  # the command's working directory, and its child's
    log: Path  # the command's stderr, as a host keeps it


@pytest.fixture(scope="module")
async def command(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Command]:
    """One run of the real command over stdio for the tests that only read it (one start, not three).

    Its upstream is `sh -c 'echo $$ >> starts; exec <python> <upstream>'`, it runs with
    `WEATHER_TOKEN` in its environment and its own folder as working directory, and its
    stderr goes to a file, with the default options (the failure log on).
    """
    folder = tmp_path_factory.mktemp("command")
    starts, log = folder / "starts", folder / "server.log"
    script = f'echo $$ >> "{starts}"; exec "{sys.executable}" "{UPSTREAM}"'
    params = command_params("--", "sh", "-c", script, env={**os.environ, "WEATHER_TOKEN": "w-123"}, cwd=folder)
    with log.open("w") as stderr:
        async with Client(stdio_transport(params, errlog=stderr), mode="legacy") as client:
            yield Command(client, starts, folder, log)


@pytest.mark.anyio
async def test_the_upstream_started_before_the_proxys_imports_is_the_one_it_serves(command: Command) -> None:
    # The command starts a stdio server before it imports fastmcp (its start-up overlaps the
    # proxy's) and its transport adopts that process: one start, not a second one.
    result = await command.client.call_tool("echo", {"text": "hi"})
    assert not result.is_error
    assert len(command.starts.read_text().split()) == 1


class Imports(NamedTuple):
    """What one fresh interpreter that runs the command's module and a proxy had imported, when."""

    built: str  # after building a proxy
    listed: str  # after initialize and tools/list, in memory
    succeeded: str  # after a success
    failed: str  # after a failure, with the failure's category


# Imported by the proxy only on some paths: a key store's backend (sqlite3 and the drivers'
# modules), jsonschema (a failure whose arguments are checked), the client side (a failure read
# as a client reads it), tenacity (`--retry`), tasks (a task's call), OpenTelemetry's metrics API
# (an SDK configured), the stores' claim protocol (keys asked for), SEP-3313's tool-failure
# object (`--tool-failure-meta`, or a failure to classify), the repeat guard (`--repeat-guard`),
# the other subcommands' modules.
DEFERRED = [
    "mcp_errors.check._cli",
    "mcp_errors.demo._cli",
    "mcp_errors.proxy._wrap_cli",
    "opentelemetry.metrics",
    "mcp_errors._shared.tool_failure",
    "mcp_errors.proxy._guard",
    "mcp_errors._server.tasks",
    "sqlite3",
    "mcp_errors.stores._protocol",
    "mcp_errors.stores._memory",
    "mcp_errors.stores._sqlite",
    "mcp_errors.stores._postgres",
    "mcp_errors.stores._redis",
    "jsonschema",
    "mcp_errors._client.outcome",
    "tenacity",
]
# The classification chain: its modules, the failure words and the word model, the rules
# file's pydantic models.
CHAIN = [
    "mcp_errors.proxy._classify",
    "mcp_errors.proxy._rules",
    "mcp_errors._shared.failure_words",
    "mcp_errors._shared.failure_model",
]


@pytest.fixture(scope="module")
def imports() -> Imports:
    """One fresh interpreter for the two tests of what the proxy imports when (each reads its part).

    It imports the command's module, builds a proxy over the test upstream and says which of
    `DEFERRED` got imported; then, in memory, lists the tools, calls a success and a failure,
    and says after each which of `CHAIN` got imported.
    """
    script = f"""
import sys, anyio
import mcp_errors.__main__, mcp_errors.proxy._cli
from mcp import Client
from mcp_errors.proxy import ChildProcess, build_proxy
from mcp_errors.proxy._server import check_upstream

def loaded(names):
    return [name for name in names if name in sys.modules]

async def main():
    child = ChildProcess(sys.executable, [{UPSTREAM!r}])
    try:
        proxy = build_proxy(child)
        print(loaded({DEFERRED!r}))
        await check_upstream(proxy, child, seconds={STARTUP_SECONDS!r})
        async with Client(proxy._mcp_server, mode="legacy") as client:
            await client.list_tools()
            print(loaded({CHAIN!r}))
            success = await client.call_tool("echo", {{"text": "hi"}})
            print(success.is_error, loaded({CHAIN!r}))
            failure = await client.call_tool("fail", {{"message": "Invalid order id: not an order id"}})
            print(failure.is_error, failure.structured_content["errorCategory"], loaded({CHAIN!r}))
    finally:
        await child.close()

anyio.run(main)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    return Imports(*done.stdout.splitlines()[-4:])


def test_the_proxys_start_up_leaves_what_only_some_calls_need_unimported(imports: Imports) -> None:
    # What the proxy needs on some paths only (`DEFERRED`) is imported there, not when the
    # command's module is imported and a proxy built.
    assert imports.built == "[]"


def test_the_classification_chain_is_imported_at_the_first_failure_not_at_start_up_nor_for_a_success(
    imports: Imports,
) -> None:
    # The proxy answers initialize, tools/list and successes without the classification chain:
    # it loads at the first failure, which is then classified as before.
    assert imports.listed == "[]"
    assert imports.succeeded == "False []"
    assert imports.failed == f"True validation {CHAIN!r}"


@pytest.mark.anyio
async def test_the_command_gives_the_child_the_callers_environment_and_working_directory(command: Command) -> None:
    # The SDK's stdio client would pass the child only HOME, PATH and a few more.
    result = await command.client.call_tool("environment", {"name": "WEATHER_TOKEN"})
    assert result.structured_content == {"result": f"w-123|{command.cwd}"}


def check_failure_log(result: CallToolResult, log: str, *, logged: bool) -> None:
    """`log` (the command's stderr) has the line of the failure `result` answers, with its words, if `logged`."""
    envelope = check_error(wire(result), None)
    line = f"tool 'fail' failed: business TOOL_ERROR, errorId {envelope['errorId']}; the server said: Error executing"
    assert (line in log) is logged
    assert (f"errorId {envelope['errorId']}" in log) is logged
    if logged:
        assert LEAKED_SECRET in log.split(line, 1)[1]  # the host's log has the words the agent must not see
    assert_nothing_leaks(wire(result), LEAKED_SECRET)


@pytest.mark.anyio
async def test_the_command_logs_each_rewritten_failure_on_stderr_by_default(command: Command) -> None:
    # The shared run has the default options; the line is written before the answer is sent.
    result = await command.client.call_tool("fail", {"message": f"the ledger broke, key {LEAKED_SECRET}"})
    check_failure_log(result, command.log.read_text(), logged=True)


@pytest.mark.anyio
async def test_the_command_logs_no_rewritten_failure_with_no_failure_log() -> None:
    params = command_params("--no-failure-log", "--", sys.executable, UPSTREAM)
    with tempfile.TemporaryFile("w+") as stderr:
        async with Client(stdio_transport(params, errlog=stderr), mode="legacy") as client:
            result = await client.call_tool("fail", {"message": f"the ledger broke, key {LEAKED_SECRET}"})
        stderr.seek(0)
        check_failure_log(result, stderr.read(), logged=False)


@pytest.fixture(scope="module")
async def http_command() -> AsyncIterator[str]:
    """`mcp-errors proxy --http 127.0.0.1:PORT -- <upstream>`, the real command: the URL of its front.

    One run for both connection modes: the front is stateless, each request stands alone.
    The `--http PORT` form is the one `http_front` (tests/proxying.py) runs for the tests
    of sessions and tenants; both forms are read by tests/test_cli_params.py.
    """
    port = free_port()
    command = [*PROXY, "--http", f"127.0.0.1:{port}", "--", sys.executable, UPSTREAM]
    async with await anyio.open_process(command, stdout=subprocess.DEVNULL) as process:
        try:
            assert process.stderr is not None
            seen = ""
            with anyio.fail_after(STARTUP_SECONDS):
                async for chunk in TextReceiveStream(process.stderr):
                    seen += chunk
                    if "Uvicorn running on" in seen:  # uvicorn says so once it listens
                        break
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()


@pytest.mark.anyio
async def test_the_http_front_serves_the_proxy_statelessly(http_command: str, mode: str) -> None:
    async with Client(http_command, mode=mode) as client:
        ok = await client.call_tool("echo", {"text": "over http"})
        failed = await client.call_tool("fail", {"message": "upstream timed out"})
    assert ok.structured_content == {"result": "over http"}
    assert check_error(wire(failed), None)["code"] == "UPSTREAM_TIMEOUT"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "store", ["postgresql://app:hun%zzter2@127.0.0.1:1/keys", "//app:hun%zzter2@db/keys", "app:hun%zzter2@db/keys"]
)
async def test_a_store_url_the_proxy_cannot_use_is_refused_at_start_up_without_its_password(store: str) -> None:
    # A '%' that starts no escape: libpq's message quotes the password, and the pool logged it
    # on every reconnect. A URL without a scheme was echoed whole.
    command = [*PROXY, "--idempotency-keys", "--store", store, "--", sys.executable, UPSTREAM]
    with anyio.fail_after(STARTUP_SECONDS):
        done = await anyio.run_process(command, check=False, stdin=subprocess.DEVNULL)
    said = done.stderr.decode()
    assert done.returncode == 2
    assert "--store" in said
    assert "hun%zzter2" not in said
