"""Stdio servers started before the proxy's imports: adopted by their transport, restarted by the SDK."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_errors.proxy import ChildProcess, StartupError, build_proxy
from mcp_errors.proxy._server import check_upstream, close_upstream
from mcp_errors.proxy._spawn import EarlyStart
from proxying import UPSTREAM

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


def env_with(started: str) -> dict[str, str]:
    return {**os.environ, "STARTED": started}


@pytest.mark.anyio
async def test_the_first_connection_adopts_the_early_started_server_and_a_restart_starts_a_new_one() -> None:
    early = EarlyStart(sys.executable, [UPSTREAM], env=env_with("early"))
    # The transport's own environment differs only so that the test can tell who started the server.
    child = ChildProcess(sys.executable, [UPSTREAM], env=env_with("by the sdk"), early=early)
    proxy = build_proxy(child)
    try:
        with anyio.fail_after(60):
            await check_upstream(proxy, child, seconds=60)
            async with Client(proxy._mcp_server, mode="legacy") as client:
                first = await client.call_tool("environment", {"name": "STARTED"})
                died = await client.call_tool("crash", {})
                again = await client.call_tool("environment", {"name": "STARTED"})
    finally:
        await close_upstream(proxy, child)
    assert first.content[0].text.startswith("early|")  # type: ignore[union-attr]
    assert died.structured_content is not None
    assert died.structured_content["code"] == "UPSTREAM_EXITED"
    assert again.content[0].text.startswith("by the sdk|")  # type: ignore[union-attr]
    assert early.take() is None  # adopted once, not twice


@pytest.mark.anyio
async def test_an_early_started_server_that_exits_at_once_is_reported_with_its_status_and_last_lines() -> None:
    line = ["sh", "-c", "echo 'NO_TOKEN: set API_TOKEN' >&2; exit 3"]
    early = EarlyStart(line[0], line[1:], env=dict(os.environ), stderr=io.StringIO())
    child = ChildProcess(line[0], line[1:], early=early)
    proxy = build_proxy(child)
    try:
        with anyio.fail_after(60), pytest.raises(StartupError) as raised:
            await check_upstream(proxy, child, seconds=30)
    finally:
        await close_upstream(proxy, child)
    assert "exited with status 3" in str(raised.value)
    assert "NO_TOKEN: set API_TOKEN" in str(raised.value)


@pytest.mark.anyio
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
async def test_an_early_started_server_that_hangs_at_start_up_is_stopped_with_its_group_when_it_times_out() -> None:
    line = ["sh", "-c", "sleep 60 & sleep 60"]  # never answers the handshake
    early = EarlyStart(line[0], line[1:], env=dict(os.environ))
    child = ChildProcess(line[0], line[1:], early=early)
    group = early._process.pid if early._process is not None else 0
    proxy = build_proxy(child)
    try:
        with anyio.fail_after(60), pytest.raises(StartupError, match="did not answer the MCP handshake"):
            await check_upstream(proxy, child, seconds=1)
        with anyio.fail_after(30):
            await child.disconnect()  # what the gateway does with one that did not start
        left = running_in_group(group)  # the SDK's stop waits until the group is gone
    finally:
        await close_upstream(proxy, child)
    assert group != 0
    assert left == []


def running_in_group(group: int) -> list[int]:
    """The processes of process group `group` that still run (zombies left to their reaper do not)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                state, _, pgrp = stat[stat.rindex(")") + 2 :].split()[:3]
                if int(pgrp) == group and state != "Z":
                    found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_an_early_start_nobody_adopted_is_stopped_with_its_whole_process_group() -> None:
    early = EarlyStart("sh", ["-c", "sleep 60 & sleep 60"], env=dict(os.environ))
    process = early.take()
    assert process is not None
    early._process = process  # given back: nobody adopted it
    deadline = time.monotonic() + 10
    while len(running_in_group(process.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)  # the status shell, its `sh -c` and the two sleeps are being started
    early.discard()
    deadline = time.monotonic() + 10
    while (left := running_in_group(process.pid)) and time.monotonic() < deadline:
        time.sleep(0.02)  # the group got its signal at once; each dies in its own time
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert process.returncode is not None
    assert left == []
    assert early.take() is None


def test_an_early_start_in_a_folder_that_does_not_exist_is_left_to_the_transport() -> None:
    early = EarlyStart(sys.executable, [UPSTREAM], env=dict(os.environ), cwd="/nonexistent/folder")
    assert early.take() is None
