"""The gateway: many servers behind one process, each with its own contract, none taking the others down."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import Client, StdioServerParameters
from mcp_types import RequestParamsMeta, ToolListChangedNotification

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors._server.fastmcp import ReplayMiddleware
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META, REPLAYED_META
from mcp_errors.proxy._gateway import Gateway, read_gateway_config
from mcp_errors.proxy._guard import REPEAT_OF_META
from mcp_errors.proxy._hosts import HostConfigError
from mcp_errors.proxy._server import ProxySettings, StartupError
from mcp_errors.proxy._wrap import wrap_text
from mcp_errors.stores import open_store
from proxying import PROXY, STARTUP_SECONDS, TENANT_UPSTREAM, UPSTREAM, http_caller, http_upstream
from services import free_port

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

HOSTS = Path(__file__).parents[1] / "hosts"
EXITS_AT_START = ["sh", "-c", "echo 'NO_TOKEN: set API_TOKEN' >&2; exit 3"]
TIME = [sys.executable, "-m", "mcp_server_time"]
GIT = [sys.executable, "-m", "mcp_server_git"]


def config_file(tmp_path: Path, servers: dict[str, Any], key: str = "mcpServers") -> Path:
    entries = {
        name: {"command": value[0], "args": value[1:]} if isinstance(value, list) else value
        for name, value in servers.items()
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({key: entries}, indent=2), encoding="utf-8")
    return path


@contextlib.asynccontextmanager
async def gateway_client(
    path: Path,
    *,
    mode: str = "legacy",
    settings: ProxySettings | None = None,
    startup_seconds: float = 60.0,
    message_handler: Any = None,
) -> AsyncIterator[tuple[Gateway, Client]]:
    gateway = Gateway(read_gateway_config(path), settings, startup_seconds=startup_seconds)
    try:
        async with anyio.create_task_group() as background:
            await gateway.start(background=background)
            async with Client(gateway.server._mcp_server, mode=mode, message_handler=message_handler) as client:
                yield gateway, client
            background.cancel_scope.cancel()
    finally:
        await gateway.aclose()


async def tool_names(client: Client) -> set[str]:
    return {tool.name for tool in (await client.list_tools()).tools}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one gateway (`team`)."""
    return "asyncio"


class _Said(logging.Handler):
    """What the gateway logged (warnings and worse)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@dataclasses.dataclass(frozen=True)
class Team:
    """A gateway in this process and what it logged since it started."""

    gateway: Gateway
    said: _Said


@pytest.fixture(scope="module")
async def team(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Team]:
    """One gateway of time, git, a server that exits at start-up and one that dies on a call, shared by the module.

    Its tests only read, or crash `flaky`, which no other test calls: none depends on a fresh
    gateway, and each connects its own front session in the mode it tests.
    """
    root = tmp_path_factory.mktemp("team")
    path = config_file(root, {"time": TIME, "git": GIT, "broken": EXITS_AT_START, "flaky": [sys.executable, UPSTREAM]})
    said = _Said()
    logger = logging.getLogger("mcp_errors.proxy")
    level = logger.level
    logger.addHandler(said)
    logger.setLevel(logging.WARNING)
    gateway = Gateway(read_gateway_config(path), startup_seconds=60.0)
    try:
        async with anyio.create_task_group() as background:
            with anyio.fail_after(120):
                await gateway.start(background=background)
            yield Team(gateway, said)
            background.cancel_scope.cancel()
    finally:
        await gateway.aclose()
        logger.removeHandler(said)
        logger.setLevel(level)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_server_s_tools_are_listed_under_its_name_and_answer_in_the_contract(
    mode: str, team: Team, tmp_path: Path
) -> None:
    with anyio.fail_after(120):
        async with Client(team.gateway.server._mcp_server, mode=mode) as client:
            names = await tool_names(client)
            assert {"time_get_current_time", "time_convert_time", "git_git_status", "git_git_log"} <= names
            ok = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
            assert not ok.is_error
            bad = await client.call_tool("time_get_current_time", {"timezone": "Nowhere/Atlantis"})
            not_a_repo = await client.call_tool("git_git_status", {"repo_path": str(tmp_path)})
            unknown = await client.call_tool("nobody_tool", {})
    assert bad.is_error
    assert bad.structured_content is not None
    assert bad.structured_content["errorCategory"] == "validation"
    # git's own rule pack, picked by its command: a path alone becomes a named failure.
    assert not_a_repo.structured_content is not None
    assert not_a_repo.structured_content["code"] == "NOT_A_GIT_REPOSITORY"
    assert unknown.structured_content is not None
    assert unknown.structured_content["code"] == "UNKNOWN_TOOL"


@pytest.mark.anyio
async def test_a_server_that_exits_at_start_up_leaves_the_others_serving_and_its_calls_are_transient(
    team: Team,
) -> None:
    with anyio.fail_after(120):
        async with Client(team.gateway.server._mcp_server, mode="legacy") as client:
            names = await tool_names(client)
            down = await client.call_tool("broken_anything", {})
            up = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
            assert not team.gateway.members["broken"].up
    assert "time_get_current_time" in names
    # Every tool listed is a healthy server's: the broken one brought none.
    assert {name.split("_", 1)[0] for name in names} == {"time", "git", "flaky"}
    assert not up.is_error
    assert down.is_error
    assert down.structured_content is not None
    assert down.structured_content["errorCategory"] == "transient"
    assert down.structured_content["code"] == "UPSTREAM_UNAVAILABLE"
    assert down.structured_content["executionState"] == "not_executed"
    said = " ".join(team.said.messages)
    assert "'broken' did not start" in said
    assert "exited with status 3" in said
    assert "NO_TOKEN" in said


@pytest.mark.anyio
async def test_a_server_that_hangs_at_start_up_holds_the_others_no_longer_than_the_start_up_time(
    tmp_path: Path,
) -> None:
    path = config_file(tmp_path, {"time": TIME, "hung": ["sleep", "600"]})
    with anyio.fail_after(120):
        async with gateway_client(path, startup_seconds=8) as (gateway, client):
            assert "time_get_current_time" in await tool_names(client)
            assert not gateway.members["hung"].up
            down = await client.call_tool("hung_tool", {})
    assert down.structured_content is not None
    assert down.structured_content["code"] == "UPSTREAM_UNAVAILABLE"


@pytest.mark.anyio
async def test_a_server_that_comes_up_late_is_listed_and_announced_with_tools_list_changed(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    late = ["sh", "-c", f'[ -f "{ready}" ] || exit 4; exec "$0" "$@"', *TIME]
    path = config_file(tmp_path, {"time": TIME, "late": late})
    announced = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            announced.set()

    with anyio.fail_after(120):
        async with gateway_client(path, message_handler=on_message) as (gateway, client):
            assert not any(name.startswith("late_") for name in await tool_names(client))
            ready.touch()
            await announced.wait()
            assert "late_get_current_time" in await tool_names(client)
            result = await client.call_tool("late_get_current_time", {"timezone": "UTC"})
            assert gateway.members["late"].up
    assert not result.is_error


@pytest.mark.anyio
async def test_a_server_that_dies_leaves_the_others_serving_and_comes_back_with_a_restart_notice(team: Team) -> None:
    with anyio.fail_after(120):
        async with Client(team.gateway.server._mcp_server, mode="legacy") as client:
            died = await client.call_tool("flaky_crash", {})
            other = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
            again = await client.call_tool("flaky_echo", {"text": "back"})
    assert died.structured_content is not None
    assert died.structured_content["code"] == "UPSTREAM_EXITED"
    assert not other.is_error
    assert not again.is_error
    assert again.meta is not None
    assert "mcp-errors/upstreamRestarted" in again.meta


@pytest.mark.anyio
async def test_require_all_fails_start_up_naming_the_server_that_did_not_start(tmp_path: Path) -> None:
    path = config_file(tmp_path, {"time": TIME, "broken": EXITS_AT_START})
    gateway = Gateway(read_gateway_config(path), startup_seconds=60, require_all=True)
    try:
        with anyio.fail_after(120), pytest.raises(StartupError, match=r"broken: .*exited with status 3"):
            await gateway.start()
    finally:
        await gateway.aclose()


@pytest.mark.anyio
async def test_each_server_has_its_own_rules_and_key_namespace(tmp_path: Path) -> None:
    rules = tmp_path / "echo.toml"
    rules.write_text(
        '[[rule]]\nname = "zork"\nmatch = { text = "zork" }\ncategory = "business"\ncode = "ZORK_REFUSED"\n'
        'description = "The zork refused: take another path."\n',
        encoding="utf-8",
    )
    path = config_file(
        tmp_path,
        {
            "a": {"command": sys.executable, "args": [UPSTREAM], "rules": "echo.toml"},
            "b": {"command": sys.executable, "args": [UPSTREAM]},
        },
    )
    with anyio.fail_after(120):
        async with gateway_client(path, settings=ProxySettings(idempotency_keys=True)) as (gateway, client):
            with_rule = await client.call_tool("a_fail", {"message": "the zork says no"})
            without = await client.call_tool("b_fail", {"message": "the zork says no"})
            namespaces = {
                name: [m.namespace for m in member.proxy.middleware if isinstance(m, ReplayMiddleware)]
                for name, member in gateway.members.items()
            }
    assert with_rule.structured_content is not None
    assert with_rule.structured_content["code"] == "ZORK_REFUSED"
    assert without.structured_content is not None
    assert without.structured_content.get("code") != "ZORK_REFUSED"
    assert namespaces == {"a": ["proxy/a"], "b": ["proxy/b"]}


def test_a_wrapped_file_is_fronted_as_the_servers_it_wraps(tmp_path: Path) -> None:
    text = (HOSTS / "claude_code_mcp.json").read_text(encoding="utf-8")
    wrapped, _ = wrap_text(text, launcher=["mcp-errors", "proxy"])
    path = tmp_path / ".mcp.json"
    path.write_text(wrapped, encoding="utf-8")
    servers = {server.name: server for server in read_gateway_config(path)}
    assert servers["git"].upstream.server_command == ["uvx", "mcp-server-git"]  # type: ignore[union-attr]
    assert servers["git"].rules is not None  # its pack, read back from --rules
    assert servers["docs"].upstream == "https://mcp.example.com/mcp"


def test_disabled_servers_are_left_out_and_a_bad_name_is_refused(tmp_path: Path) -> None:
    path = config_file(tmp_path, {"on": TIME, "off": {"command": "x", "disabled": True}})
    assert [server.name for server in read_gateway_config(path)] == ["on"]
    bad = config_file(tmp_path, {"two words": TIME})
    with pytest.raises(HostConfigError, match="two words"):
        read_gateway_config(bad)


@pytest.mark.anyio
async def test_the_command_fronts_a_config_file_over_stdio_with_a_broken_server_reported_not_fatal(
    tmp_path: Path,
) -> None:
    path = config_file(tmp_path, {"time": TIME, "broken": EXITS_AT_START})
    params = StdioServerParameters(
        command=PROXY[0], args=[*PROXY[1:], "--config", str(path)], env=dict(os.environ), cwd=tmp_path
    )
    with anyio.fail_after(120):
        async with Client(params) as client:
            names = await tool_names(client)
            down = await client.call_tool("broken_x", {})
    assert "time_get_current_time" in names
    assert down.structured_content is not None
    assert down.structured_content["code"] == "UPSTREAM_UNAVAILABLE"


def test_config_and_a_server_command_together_are_refused() -> None:
    done = subprocess.run(
        [*PROXY, "--config", str(HOSTS / "cursor_mcp.json"), "--", shutil.which("true") or "true"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "not both" in done.stderr


@pytest.mark.anyio
async def test_the_gateway_serves_a_team_over_http_with_a_broken_server_left_out(http_team: HttpTeam) -> None:
    with anyio.fail_after(60):
        async with Client(http_team.url) as client:
            names = await tool_names(client)
            ok = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
            down = await client.call_tool("broken_x", {})
    assert "'broken' did not start" in "".join(http_team.said)
    assert "time_get_current_time" in names
    assert not ok.is_error
    assert down.structured_content is not None
    assert down.structured_content["code"] == "UPSTREAM_UNAVAILABLE"


@pytest.mark.anyio
async def test_gateway_replicas_sharing_a_store_run_a_keyed_write_of_an_http_server_once(tmp_path: Path) -> None:
    key = {"mcp-errors/idempotencyKey": "charge-7"}
    async with http_upstream() as (url, _):
        path = config_file(tmp_path, {"shop": {"url": url}})
        store = open_store(f"sqlite:///{tmp_path}/keys.sqlite3")
        settings = ProxySettings(idempotency_keys=True, store=store)
        with anyio.fail_after(120):
            async with (
                gateway_client(path, settings=settings) as (_, first),
                gateway_client(path, settings=settings) as (_, second),
            ):
                one = await first.call_tool("shop_count_write", {"key": "charge-7"}, meta=key)  # type: ignore[arg-type]
                two = await second.call_tool("shop_count_write", {"key": "charge-7"}, meta=key)  # type: ignore[arg-type]
                ran = await first.call_tool("shop_attempts", {"key": "charge-7"})
    assert one.structured_content == two.structured_content == {"result": "ran 1 time(s)"}
    assert (two.meta or {}).get("mcp-errors/replayed") is True
    assert ran.structured_content == {"result": 1}


SHOP_HEADERS = {"Authorization": "Bearer ${env:SHOP_TOKEN}", "X-Tenant": "${SHOP_TENANT:-acme}"}
"""An HTTP server's configured headers, with env references (`SHOP_TOKEN` set, `SHOP_TENANT` not)."""


@dataclasses.dataclass(frozen=True)
class HttpTeam:
    """`mcp-errors proxy --config ... --http HOST:PORT`, the real command, as a team's shared gateway."""

    url: str
    """Its front's."""
    upstream: str
    """The URL of the tenant upstream that its `api` (no headers of its own) and `shop` (`SHOP_HEADERS`) reach."""
    said: list[str]
    """Its stderr so far."""


@pytest.fixture(scope="module")
async def http_team(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[HttpTeam]:
    """One gateway process over HTTP shared by the module's tests of its HTTP front.

    `api` and `shop` reach one tenant upstream (`shop` with `SHOP_HEADERS`), `local` is a
    child, `broken` exits at start-up and `time` is mcp-server-time; keys, the repeat guard
    and a breaker of 2 are on. Each test calls as callers of its own (or distinct orders and
    keys), so that none sees another's state.
    """
    async with http_upstream(script=TENANT_UPSTREAM) as (upstream, _):
        servers = {
            "api": {"url": upstream},
            "shop": {"url": upstream, "headers": SHOP_HEADERS},
            "local": [sys.executable, UPSTREAM],
            "broken": EXITS_AT_START,
            "time": TIME,
        }
        path = config_file(tmp_path_factory.mktemp("http-team"), servers)
        port = free_port()
        options = ["--idempotency-keys", "--repeat-guard", "60", "--breaker-failures", "2"]
        command = [*PROXY, "--config", str(path), "--http", f"127.0.0.1:{port}", *options]
        env = {key: value for key, value in os.environ.items() if key != "SHOP_TENANT"}
        env["SHOP_TOKEN"] = "s3cret-shop-token"
        said: list[str] = []
        listening = anyio.Event()
        async with (
            await anyio.open_process(command, stdout=subprocess.DEVNULL, env=env) as process,
            anyio.create_task_group() as tasks,
        ):
            assert process.stderr is not None

            async def read_stderr() -> None:  # all along: a full pipe would stop the gateway
                async for chunk in TextReceiveStream(process.stderr):  # type: ignore[arg-type]
                    said.append(chunk)
                    if "Uvicorn running on" in "".join(said):  # uvicorn says so once it listens
                        listening.set()

            tasks.start_soon(read_stderr)
            try:
                with anyio.fail_after(120):
                    await listening.wait()
                yield HttpTeam(f"http://127.0.0.1:{port}/mcp", upstream, said)
            finally:
                process.terminate()


ALICE = {"Authorization": "Bearer alice", "X-Api-Key": "key-alice"}
BOB = {"Authorization": "Bearer bob", "X-Api-Key": "key-bob"}
FRANK = {"Authorization": "Bearer frank"}  # no card of his own


@pytest.mark.anyio
async def test_over_http_each_caller_s_headers_keys_and_guard_stay_its_own_per_server_and_a_failure_stays_in_its_server(
    http_team: HttpTeam,
) -> None:
    key = cast(RequestParamsMeta, {IDEMPOTENCY_KEY_META: "order-laptop"})  # one key from every caller, to every server
    gateway = http_team.url
    with anyio.fail_after(STARTUP_SECONDS * 2):
        async with http_caller(gateway, ALICE) as alice, http_caller(gateway, BOB) as bob:
            seen_alice = (await alice.call_tool("api_whoami", {})).structured_content or {}
            seen_bob = (await bob.call_tool("api_whoami", {})).structured_content or {}
            hers = await alice.call_tool("api_charge", {"order": "laptop"}, meta=key)
            his = await bob.call_tool("api_charge", {"order": "laptop"}, meta=key)
            resent = await alice.call_tool("api_charge", {"order": "laptop"}, meta=key)
            # The same key to another server is that server's own: it runs there.
            local = await alice.call_tool("local_count_write", {"key": "order-laptop"}, meta=key)
            local_his = await bob.call_tool("local_count_write", {"key": "order-laptop"}, meta=key)
            # One server failing, another down: each answered in the contract for itself.
            failing = [await alice.call_tool("local_flaky_read", {"key": "k", "failures": 10}) for _ in range(3)]
            down = await bob.call_tool("broken_x", {})
            still = await bob.call_tool("api_whoami", {})
        async with http_caller(gateway, FRANK) as frank:
            refused = await frank.call_tool("api_charge", {"order": "book"})
            repeated = await frank.call_tool("api_charge", {"order": "book"})
        async with http_caller(gateway, ALICE) as alice:
            book = await alice.call_tool("api_charge", {"order": "book"})
            written = (await alice.call_tool("api_written", {})).structured_content
    assert (seen_alice["authorization"], seen_alice["x-api-key"]) == ("Bearer alice", "key-alice")
    assert (seen_bob["authorization"], seen_bob["x-api-key"]) == ("Bearer bob", "key-bob")
    assert hers.content[0].text == "laptop charged to the card of key-alice"  # type: ignore[union-attr]
    assert his.content[0].text == "laptop charged to the card of key-bob"  # type: ignore[union-attr]
    assert REPLAYED_META not in (his.meta or {})
    assert (resent.meta or {}).get(REPLAYED_META) is True
    assert local.structured_content == {"result": "ran 1 time(s)"}
    assert REPLAYED_META not in (local.meta or {})
    assert local_his.structured_content == {"result": "ran 2 time(s)"}  # Bob's key is his own there too
    assert [read_result(each).category for each in failing] == [ErrorCategory.TRANSIENT] * 3
    assert read_result(failing[-1]).execution_state is ExecutionState.NOT_EXECUTED  # local's circuit opened
    assert down.structured_content is not None
    assert down.structured_content["code"] == "UPSTREAM_UNAVAILABLE"
    assert "broken" in down.structured_content["description"]
    assert not still.is_error  # neither local's open circuit nor broken's absence reached the api server
    assert read_result(refused).category is ErrorCategory.BUSINESS
    assert REPEAT_OF_META in (repeated.meta or {})  # Frank's failure is guarded for Frank
    assert not book.is_error  # not for Alice
    assert written is not None
    # Of the orders of this test (the module's other tests charge other orders to this upstream):
    ours = {order: count for order, count in written.items() if order.startswith(("laptop ", "book "))}
    assert ours == {"laptop for key-alice": 1, "laptop for key-bob": 1, "book for key-alice": 1}


@pytest.mark.anyio
async def test_an_http_server_s_configured_headers_reach_it_with_env_references_resolved_under_each_caller_s_own(
    http_team: HttpTeam, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with anyio.fail_after(STARTUP_SECONDS):
        async with http_caller(http_team.url, ALICE) as alice, http_caller(http_team.url, BOB) as bob:
            seen_alice = (await alice.call_tool("shop_whoami", {})).structured_content or {}
            seen_bob = (await bob.call_tool("shop_whoami", {})).structured_content or {}
            charged = await bob.call_tool("shop_charge", {"order": "pen"})
    # Over stdio, as a host runs it: the same headers, no caller's.
    monkeypatch.setenv("SHOP_TOKEN", "s3cret-shop-token")
    monkeypatch.delenv("SHOP_TENANT", raising=False)
    path = config_file(tmp_path, {"api": {"url": http_team.upstream, "headers": SHOP_HEADERS}})
    async with gateway_client(path) as (_, host):
        seen_host = (await host.call_tool("api_whoami", {})).structured_content or {}
    configured = ("Bearer s3cret-shop-token", "acme")
    assert (seen_alice["authorization"], seen_alice["x-tenant"]) == configured  # not the caller's own bearer
    assert (seen_bob["authorization"], seen_bob["x-tenant"]) == configured
    assert (seen_alice["x-api-key"], seen_bob["x-api-key"]) == ("key-alice", "key-bob")  # each caller's own
    assert charged.content[0].text == "pen charged to the card of key-bob"  # type: ignore[union-attr]
    assert (seen_host["authorization"], seen_host["x-tenant"], seen_host["x-api-key"]) == (*configured, None)


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("Bearer ${env:MISSING_SHOP_TOKEN}", "MISSING_SHOP_TOKEN is not set"),
        ("${input:shop-token}", "${input:shop-token}"),
        ("${workspaceFolder}", "${workspaceFolder}"),
    ],
)
def test_a_header_that_names_what_the_gateway_cannot_resolve_is_refused_in_one_line_without_the_secret(
    tmp_path: Path, header: str, said: str
) -> None:
    headers = {"X-Key": "${env:SHOP_KEY}", "Authorization": header}
    path = config_file(tmp_path, {"api": {"url": "http://127.0.0.1:9/mcp", "headers": headers}})
    env = {key: value for key, value in os.environ.items() if key != "MISSING_SHOP_TOKEN"}
    done = subprocess.run(
        [*PROXY, "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**env, "SHOP_KEY": "s3cret-shop-key"},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert said in lines[0]
    assert "'Authorization'" in lines[0]
    assert "s3cret" not in done.stderr
