"""The gateway's stdio front: the host answered and every server listed before fastmcp is imported.

The front does each server's handshake with the standard library only; the SDK's client
adopts the server afterwards without a second `initialize` (`tests/servers/counting_upstream.py`
exits with status 7 when one reaches it), and the real gateway takes over the host's stdio.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.server.runner import ServerRunner
from mcp_types import ToolListChangedNotification
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from mcp_errors.proxy import _child as child_module
from mcp_errors.proxy._child import ChildProcess, _AdoptedProcess
from mcp_errors.proxy._front import (
    CLIENT_PROTOCOL_VERSION,
    HANDSHAKE_VERSIONS,
    TRACE_VARIABLE,
    UnlistableError,
    gateway_tool,
    initialize_answer,
    inline_refs,
    shake_hands,
)
from mcp_errors.proxy._gateway import Gateway, GatewayServer
from mcp_errors.proxy._spawn import EarlyStart
from proxying import PROXY
from servers import counting_upstream

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

COUNTING = [sys.executable, str(Path(counting_upstream.__file__))]
TIME = [sys.executable, "-m", "mcp_server_time"]
EXITS_AT_START = ["sh", "-c", "echo 'NO_TOKEN: set API_TOKEN' >&2; exit 3"]
HANGS = ["sh", "-c", "sleep 60"]
SESSION_SECONDS = 120


def counting_env(log: Path, **more: str) -> dict[str, str]:
    return {**os.environ, "COUNTING_UPSTREAM_LOG": str(log), **more}


def initializes(log: Path) -> int:
    return sum(json.loads(line).get("method") == "initialize" for line in log.read_text().splitlines())


def test_the_front_offers_and_accepts_the_protocol_versions_of_the_installed_sdk() -> None:
    assert CLIENT_PROTOCOL_VERSION == LATEST_HANDSHAKE_VERSION
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.anyio
async def test_the_front_answers_initialize_as_the_gateway_s_sdk_server_does() -> None:
    gateway = Gateway([GatewayServer("count", ChildProcess(COUNTING[0], COUNTING[1:]))])
    with anyio.fail_after(60):
        async with Client(gateway.server._mcp_server, mode="legacy") as client:
            capabilities = client.server_capabilities.model_dump(mode="json", by_alias=True, exclude_none=True)
            info = client.server_info
            instructions = client.instructions
    assert info is not None
    assert instructions is None
    client_side = {"capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}
    for asked in [*HANDSHAKE_PROTOCOL_VERSIONS, "2026-07-28", "1999-01-01"]:
        answer = initialize_answer({"protocolVersion": asked, **client_side})
        assert (
            answer["protocolVersion"]
            == ServerRunner._negotiate_initialize({"protocolVersion": asked, **client_side})[1]
        )
        assert answer["serverInfo"] == info.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert answer["capabilities"] == capabilities
        assert "instructions" not in answer


@pytest.mark.anyio
async def test_each_tool_the_front_lists_is_the_gateway_s_and_the_sdk_adopts_the_server_without_a_second_initialize(
    tmp_path: Path,
) -> None:
    logs = {"count": tmp_path / "count.log", "paged": tmp_path / "paged.log"}
    early = {
        "count": EarlyStart(COUNTING[0], COUNTING[1:], env=counting_env(logs["count"])),
        "paged": EarlyStart(COUNTING[0], COUNTING[1:], env=counting_env(logs["paged"], COUNTING_UPSTREAM_PAGES="1")),
        "time": EarlyStart(TIME[0], TIME[1:], env=dict(os.environ)),
    }
    deadline = time.monotonic() + 60
    for each in early.values():
        shake_hands(each, deadline=deadline, client_info={"name": "fastmcp", "version": "test"})
    front_listed = []
    for name, each in early.items():
        assert each.handshake is not None, name
        assert each.handshake.tools is not None, name
        front_listed += [gateway_tool(name, tool) for tool in each.handshake.tools]
    assert len([tool for tool in front_listed if tool["name"].startswith("paged_")]) == 3  # every page
    servers = [
        GatewayServer(name, ChildProcess(line[0], line[1:], env=env, early=early[name]))
        for name, line, env in [
            ("count", COUNTING, counting_env(logs["count"])),
            ("paged", COUNTING, counting_env(logs["paged"], COUNTING_UPSTREAM_PAGES="1")),
            ("time", TIME, dict(os.environ)),
        ]
    ]
    gateway = Gateway(servers, startup_seconds=60)
    try:
        with anyio.fail_after(SESSION_SECONDS):
            await gateway.start()
            async with Client(gateway.server._mcp_server, mode="legacy") as client:
                listed = (await client.list_tools()).tools
                echoed = await client.call_tool("count_echo", {"text": "hello"})
    finally:
        await gateway.aclose()
    wire = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed]
    assert sorted(wire, key=lambda tool: tool["name"]) == sorted(front_listed, key=lambda tool: tool["name"])
    assert echoed.structured_content == {"text": "hello"}
    assert initializes(logs["count"]) == initializes(logs["paged"]) == 1


@contextlib.asynccontextmanager
async def gateway_over_stdio(
    tmp_path: Path, servers: dict[str, Any], *args: str, messages: list[Any] | None = None
) -> AsyncIterator[tuple[Client, IO[str]]]:
    """The real command over stdio, as a host runs it; its stderr kept to read."""
    entries = {
        name: {"command": value[0], "args": value[1:]} if isinstance(value, list) else value
        for name, value in servers.items()
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    params = StdioServerParameters(
        command=PROXY[0],
        args=[*PROXY[1:], *args, "--config", str(path)],
        env={**os.environ, TRACE_VARIABLE: "1"},
        cwd=tmp_path,
    )
    log = (tmp_path / "gateway.log").open("w+")

    async def collect(message: Any) -> None:
        if messages is not None:
            messages.append(message)

    try:
        async with Client(stdio_client(params, errlog=log), mode="legacy", message_handler=collect) as client:
            yield client, log
    finally:
        log.close()


def said(log: IO[str]) -> str:
    log.flush()
    log.seek(0)
    return log.read()


@pytest.mark.anyio
async def test_over_stdio_the_tools_are_listed_before_fastmcp_is_imported_and_every_call_then_answers_in_the_contract(
    tmp_path: Path,
) -> None:
    count_log = tmp_path / "count.log"
    count = {"command": COUNTING[0], "args": COUNTING[1:], "env": {"COUNTING_UPSTREAM_LOG": str(count_log)}}
    messages: list[Any] = []
    with anyio.fail_after(SESSION_SECONDS):
        async with gateway_over_stdio(
            tmp_path, {"count": count, "time": TIME, "broken": EXITS_AT_START}, messages=messages
        ) as (client, log):
            assert client.server_info is not None
            assert client.server_info.name == "mcp-errors gateway"
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed is True
            names = {tool.name for tool in (await client.list_tools()).tools}
            listed_early = said(log)
            echoed = await client.call_tool("count_echo", {"text": "hello"})
            now = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
            failed = await client.call_tool("count_fail", {})
            down = await client.call_tool("broken_anything", {})
            crashed = await client.call_tool("count_crash", {})
            again = await client.call_tool("count_echo", {"text": "again"})  # the first exit: started again at once
            log_text = said(log)
    assert {"count_echo", "count_fail", "count_crash", "time_get_current_time"} <= names
    assert not any(name.startswith("broken_") for name in names)
    assert "tools/list answered; fastmcp imported: no" in listed_early
    assert echoed.structured_content == {"text": "hello"}
    assert not now.is_error
    assert failed.is_error
    assert failed.structured_content is not None
    assert failed.structured_content["errorCategory"] == "permission"
    assert down.structured_content is not None
    assert (down.structured_content["errorCategory"], down.structured_content["code"]) == (
        "transient",
        "UPSTREAM_UNAVAILABLE",
    )
    assert crashed.is_error
    assert crashed.structured_content is not None
    assert crashed.structured_content["errorCategory"] == "transient"
    assert not again.is_error  # started again by the SDK, with its own handshake
    assert "again" in json.dumps(again.model_dump(mode="json"))
    assert "'broken' did not start" in log_text
    assert "exited with status 3" in log_text
    assert "differ" not in log_text  # the front's initialize and list were the gateway's
    assert "a second initialize" not in log_text
    assert initializes(count_log) == 2  # one per process: the front's, then the restarted one's own
    assert not any(isinstance(message, ToolListChangedNotification) for message in messages)


@pytest.mark.anyio
async def test_over_stdio_a_server_that_hangs_holds_the_list_no_longer_than_the_start_up_time(tmp_path: Path) -> None:
    with anyio.fail_after(SESSION_SECONDS):
        async with gateway_over_stdio(tmp_path, {"count": COUNTING, "hung": HANGS}, "--startup-timeout", "2") as (
            client,
            log,
        ):
            names = {tool.name for tool in (await client.list_tools()).tools}
            down = await client.call_tool("hung_anything", {})
            echoed = await client.call_tool("count_echo", {"text": "hello"})
            log_text = said(log)
    assert {"count_echo", "count_fail"} <= names
    assert not any(name.startswith("hung_") for name in names)
    assert down.structured_content is not None
    assert down.structured_content["code"] == "UPSTREAM_UNAVAILABLE"
    assert echoed.structured_content == {"text": "hello"}
    assert "'hung' did not start" in log_text
    assert "did not answer the MCP handshake within 2 seconds" in log_text


def test_the_front_imports_neither_fastmcp_nor_the_sdk_nor_pydantic() -> None:
    code = (
        "import sys, mcp_errors.proxy._front; print(sorted({'pydantic', 'mcp', 'fastmcp', 'anyio'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


def test_references_are_inlined_as_fastmcp_lists_them_and_any_other_shape_is_left_to_the_gateway() -> None:
    item = {"type": "object", "properties": {"n": {"type": "integer"}}}
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Item"}}, "$defs": {"Item": item}}
    assert inline_refs(schema) == {"type": "object", "properties": {"a": item}}
    assert inline_refs({"type": "object", "$defs": {"Unused": item}}) == {"type": "object"}
    plain = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert inline_refs(plain) is plain
    cyclic = {"properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"properties": {"b": {"$ref": "#/$defs/A"}}}}}
    with_sibling = {"properties": {"a": {"$ref": "#/$defs/Item", "description": "x"}}, "$defs": {"Item": item}}
    remote = {"properties": {"a": {"$ref": "https://example.com/schema"}}}
    tagged = {"oneOf": [{"$ref": "#/$defs/Item"}], "discriminator": {"propertyName": "n"}, "$defs": {"Item": item}}
    for unlistable in (cyclic, with_sibling, remote, tagged):
        with pytest.raises(UnlistableError):
            inline_refs(unlistable)


def write_config(tmp_path: Path, servers: dict[str, list[str]]) -> Path:
    path = tmp_path / "mcp.json"
    entries = {name: {"command": line[0], "args": line[1:]} for name, line in servers.items()}
    path.write_text(json.dumps({"mcpServers": entries}), encoding="utf-8")
    return path


INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}},
}


def test_with_require_all_a_server_that_did_not_start_gets_no_tool_list_and_the_gateway_exits_naming_it(
    tmp_path: Path,
) -> None:
    path = write_config(tmp_path, {"count": COUNTING, "broken": EXITS_AT_START})
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    with subprocess.Popen(
        [*PROXY, "--require-all", "--config", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as gateway:
        assert gateway.stdin is not None
        gateway.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in (INITIALIZE, listing)))
        gateway.stdin.flush()  # and the host stays
        status = gateway.wait(timeout=SESSION_SECONDS)
        out, err = gateway.communicate()
    answers = [json.loads(line) for line in out.splitlines()]
    assert status == 1
    assert [answer.get("id") for answer in answers] == [1]  # initialize answered, no list with a server missing
    assert b"these servers did not start" in err
    assert b"broken" in err


def test_a_host_that_leaves_before_the_gateway_is_needed_leaves_no_server_behind(tmp_path: Path) -> None:
    pid_file = tmp_path / "hung.pid"
    hung = ["sh", "-c", f"echo $$ > {pid_file}.part && mv {pid_file}.part {pid_file}; exec sleep 60"]
    path = write_config(tmp_path, {"count": COUNTING, "hung": hung})
    with subprocess.Popen(
        [*PROXY, "--config", str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as gateway:
        assert gateway.stdin is not None
        assert gateway.stdout is not None
        gateway.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        gateway.stdin.flush()
        assert json.loads(gateway.stdout.readline())["id"] == 1  # answered before any heavy import
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        gateway.stdin.close()  # the host leaves
        assert gateway.wait(timeout=60) == 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the hung server (pid {pid}) is still running")


@pytest.mark.anyio
async def test_the_sdk_s_initialize_is_answered_from_the_front_s_handshake_with_the_server_s_own_messages_after_it(
    tmp_path: Path,
) -> None:
    log = tmp_path / "count.log"
    early = EarlyStart(COUNTING[0], COUNTING[1:], env=counting_env(log))
    shake_hands(early, deadline=time.monotonic() + 60, client_info={"name": "fastmcp", "version": "test"})
    process = early.take()
    assert process is not None
    assert early.handshake is not None
    adopted = await _AdoptedProcess.adopt(process, early.handshake)
    received = b""
    try:
        with anyio.fail_after(60):
            initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "x"}}
            await adopted.stdin.send(json.dumps(initialize).encode() + b"\n")
            while received.count(b"\n") < 2:
                received += await adopted.stdout.receive()
            await adopted.stdin.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
            await adopted.stdin.send(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}\n')
            while received.count(b"\n") < 3:
                received += await adopted.stdout.receive()
    finally:
        await adopted.stdin.aclose()
        await adopted.aclose()
    answer, told, listed = (json.loads(line) for line in received.splitlines())
    assert answer == {"jsonrpc": "2.0", "id": 0, "result": early.handshake.initialize_result}  # the SDK's own id
    assert told["method"] == "notifications/message"  # what the server wrote after its answer, kept in order
    assert listed["id"] == 1
    assert [tool["name"] for tool in listed["result"]["tools"]] == ["echo", "fail", "crash"]
    sent = [json.loads(line).get("method") for line in log.read_text().splitlines()]
    assert sent == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/list",
    ]  # the front's, then the SDK's


@pytest.mark.anyio
async def test_an_sdk_that_cannot_adopt_starts_the_server_anew_with_its_own_handshake(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(child_module, "_ADOPTS", False)
    log = tmp_path / "count.log"
    early = EarlyStart(COUNTING[0], COUNTING[1:], env=counting_env(log))
    shake_hands(early, deadline=time.monotonic() + 60, client_info={"name": "fastmcp", "version": "test"})
    gateway = Gateway(
        [GatewayServer("count", ChildProcess(COUNTING[0], COUNTING[1:], env=counting_env(log), early=early))]
    )
    try:
        with anyio.fail_after(SESSION_SECONDS):
            await gateway.start()
            async with Client(gateway.server._mcp_server, mode="legacy") as client:
                echoed = await client.call_tool("count_echo", {"text": "hello"})
    finally:
        await gateway.aclose()
    assert echoed.structured_content == {"text": "hello"}
    assert early.process is None  # stopped, not adopted
    assert initializes(log) == 2  # the front's with the first process, the SDK's with its own


@pytest.mark.anyio
async def test_with_idempotency_keys_the_gateway_itself_answers_the_listing_it_changes(tmp_path: Path) -> None:
    with anyio.fail_after(SESSION_SECONDS):
        async with gateway_over_stdio(tmp_path, {"count": COUNTING}, "--idempotency-keys") as (client, log):
            names = {tool.name for tool in (await client.list_tools()).tools}
            echoed = await client.call_tool("count_echo", {"text": "hello"})
            log_text = said(log)
    assert {"count_echo", "count_fail", "count_crash"} <= names
    assert echoed.structured_content == {"text": "hello"}
    assert "tools/list answered" not in log_text  # the front stepped aside
    assert "differ" not in log_text


@pytest.mark.anyio
async def test_when_the_gateway_lists_otherwise_than_the_front_did_the_host_is_told_to_list_again(
    tmp_path: Path,
) -> None:
    grows = {"command": COUNTING[0], "args": COUNTING[1:], "env": {"COUNTING_UPSTREAM_GROWS": "1"}}
    messages: list[Any] = []
    with anyio.fail_after(SESSION_SECONDS):
        async with gateway_over_stdio(tmp_path, {"count": grows}, messages=messages) as (client, log):
            first = {tool.name for tool in (await client.list_tools()).tools}
            late = await client.call_tool("count_late", {})  # answered once the gateway took over
            again = {tool.name for tool in (await client.list_tools()).tools}
            log_text = said(log)
    assert "count_late" not in first
    assert "count_late" in again
    assert not late.is_error
    assert any(isinstance(message, ToolListChangedNotification) for message in messages)
    assert "the host is told (tools/list_changed)" in log_text


def test_a_host_on_an_older_protocol_version_gets_its_tool_list_from_the_gateway(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"count": COUNTING})
    older = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2025-06-18"}}
    lines = [
        older,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    with subprocess.Popen(
        [*PROXY, "--config", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, TRACE_VARIABLE: "1"},
    ) as gateway:
        assert gateway.stdin is not None
        assert gateway.stdout is not None
        gateway.stdin.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        gateway.stdin.flush()
        answers = [json.loads(gateway.stdout.readline()) for _ in range(2)]
        gateway.stdin.close()
        gateway.wait(timeout=60)
        assert gateway.stderr is not None
        err = gateway.stderr.read()
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} >= {"count_echo", "count_fail"}
    assert b"tools/list answered" not in err  # the gateway's answer, not the front's
