"""`mcp-errors proxy`, the command itself.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract; the shared
clients (`client`, `stdio_client`) are in `tests/proxy/conftest.py`.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import anyio.abc
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import Client
from mcp.client.stdio import stdio_client as stdio_transport

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


@pytest.mark.anyio
async def test_the_upstream_started_before_the_proxys_imports_is_the_one_it_serves(tmp_path: Path) -> None:
    # The command starts a stdio server before it imports fastmcp (its start-up overlaps the
    # proxy's) and its transport adopts that process: one start, not a second one.
    starts = tmp_path / "starts"
    script = f'echo $$ >> "{starts}"; exec "{sys.executable}" "{UPSTREAM}"'
    async with Client(command_params("--", "sh", "-c", script), mode="legacy") as client:
        result = await client.call_tool("echo", {"text": "hi"})
    assert not result.is_error
    assert len(starts.read_text().split()) == 1


def test_the_proxys_start_up_leaves_what_only_some_calls_need_unimported() -> None:
    # What the proxy needs on some paths only is imported there: a key store's backend (sqlite3
    # and the drivers' modules), jsonschema (a failure whose arguments are checked), the client
    # side (a failure read as a client reads it), tenacity (`--retry`), tasks (a task's call),
    # OpenTelemetry's metrics API (an SDK configured), the stores' claim protocol (keys asked
    # for), SEP-3313's tool-failure object (`--tool-failure-meta`, or a failure to classify),
    # the repeat guard (`--repeat-guard`), the other subcommands' modules. One fresh
    # interpreter imports the command and builds a proxy, then says which of them got imported.
    deferred = [
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
    script = (
        "import sys\n"
        "import mcp_errors.__main__, mcp_errors.proxy._cli\n"
        "from mcp_errors.proxy import ChildProcess, build_proxy\n"
        "build_proxy(ChildProcess(sys.executable, ['-c', 'pass']))\n"
        f"print([name for name in {deferred!r} if name in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


def test_the_classification_chain_is_imported_at_the_first_failure_not_at_start_up_nor_for_a_success() -> None:
    # The proxy answers initialize, tools/list and successes without the classification chain
    # (its modules, the failure words and the word model, the rules file's pydantic models):
    # they load at the first failure, which is then classified as before. A fresh interpreter
    # runs the command's module and a proxy over the test upstream, in memory.
    chain = [
        "mcp_errors.proxy._classify",
        "mcp_errors.proxy._rules",
        "mcp_errors._shared.failure_words",
        "mcp_errors._shared.failure_model",
    ]
    script = f"""
import sys, anyio
import mcp_errors.__main__, mcp_errors.proxy._cli
from mcp import Client
from mcp_errors.proxy import ChildProcess, build_proxy
from mcp_errors.proxy._server import check_upstream

def loaded():
    return [name for name in {chain!r} if name in sys.modules]

async def main():
    child = ChildProcess(sys.executable, [{UPSTREAM!r}])
    try:
        proxy = build_proxy(child)
        await check_upstream(proxy, child, seconds={STARTUP_SECONDS!r})
        async with Client(proxy._mcp_server, mode="legacy") as client:
            await client.list_tools()
            print(loaded())
            success = await client.call_tool("echo", {{"text": "hi"}})
            print(success.is_error, loaded())
            failure = await client.call_tool("fail", {{"message": "Invalid order id: not an order id"}})
            print(failure.is_error, failure.structured_content["errorCategory"], loaded())
    finally:
        await child.close()

anyio.run(main)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    listed, succeeded, failed = done.stdout.splitlines()[-3:]
    assert listed == "[]"
    assert succeeded == "False []"
    assert failed == f"True validation {chain!r}"


@pytest.mark.anyio
async def test_the_command_gives_the_child_the_callers_environment_and_working_directory(tmp_path: Path) -> None:
    # The SDK's stdio client would pass the child only HOME, PATH and a few more.
    params = command_params("--", sys.executable, UPSTREAM, env={"WEATHER_TOKEN": "w-123"}, cwd=tmp_path)
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("environment", {"name": "WEATHER_TOKEN"})
    assert result.structured_content == {"result": f"w-123|{tmp_path}"}


@pytest.mark.anyio
@pytest.mark.parametrize("logged", [True, False], ids=["by default", "--no-failure-log"])
async def test_the_command_logs_each_rewritten_failure_on_stderr_unless_told_not_to(logged: bool) -> None:
    options = [] if logged else ["--no-failure-log"]
    params = command_params(*options, "--", sys.executable, UPSTREAM)
    with tempfile.TemporaryFile("w+") as stderr:
        async with Client(stdio_transport(params, errlog=stderr), mode="legacy") as client:
            result = await client.call_tool("fail", {"message": f"the ledger broke, key {LEAKED_SECRET}"})
        stderr.seek(0)
        log = stderr.read()
    envelope = check_error(wire(result), None)
    line = f"tool 'fail' failed: business TOOL_ERROR, errorId {envelope['errorId']}; the server said: Error executing"
    assert (line in log) is logged
    assert (f"errorId {envelope['errorId']}" in log) is logged
    if logged:
        assert LEAKED_SECRET in log.split(line, 1)[1]  # the host's log has the words the agent must not see
    assert_nothing_leaks(wire(result), LEAKED_SECRET)


@pytest.mark.anyio
async def test_the_http_front_serves_the_proxy_statelessly(mode: str) -> None:
    port = free_port()
    # `--http` takes PORT (on 127.0.0.1) or HOST:PORT: one form per mode.
    address = str(port) if mode == "legacy" else f"127.0.0.1:{port}"
    command = [*PROXY, "--http", address, "--", sys.executable, UPSTREAM]
    async with await anyio.open_process(command, stdout=subprocess.DEVNULL) as process:
        try:
            assert process.stderr is not None
            seen = ""
            with anyio.fail_after(STARTUP_SECONDS):
                async for chunk in TextReceiveStream(process.stderr):
                    seen += chunk
                    if "Uvicorn running on" in seen:  # uvicorn says so once it listens
                        break
            async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
                ok = await client.call_tool("echo", {"text": "over http"})
                failed = await client.call_tool("fail", {"message": "upstream timed out"})
        finally:
            process.terminate()
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
