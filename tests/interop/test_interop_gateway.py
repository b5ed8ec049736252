"""Real third-party servers behind one gateway (`mcp-errors proxy --config`), with one that exits at start-up.

mcp-server-time and mcp-server-git (PyPI, through `uvx`, pinned) and
`@modelcontextprotocol/server-filesystem` and `server-memory` (npm, pinned in
package-lock.json) run behind one gateway process started as a host starts it, over stdio,
beside a server that exits at start-up. Through the official `mcp` client and the
TypeScript SDK v1 client: every healthy server's tools are listed under its name and called,
each server's failures come out in the contract with its own rule pack, and the broken one is
reported on stderr and answered as unavailable, not fatal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import CallToolResult

from interop.peers import NODE_MODULES
from interop.test_interop_rule_packs import uvx_server

pytestmark = [pytest.mark.interop, pytest.mark.slow]

TIME = ("--from", "mcp-server-time==2026.10.19")
GIT = ("--from", "mcp-server-git==2026.10.19")
BROKEN = ["sh", "-c", "echo 'MEMORY_FILE_PATH is not writable' >&2; exit 3"]
SESSION_SECONDS = 240


@pytest.fixture(scope="module")
def config(node: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Claude Desktop configuration of the four servers and the broken one."""
    root = tmp_path_factory.mktemp("gateway")
    allowed = (root / "allowed").resolve()
    allowed.mkdir()
    (allowed / "notes.txt").write_text("first line\n")
    servers = {
        "time": [*uvx_server(TIME), "mcp-server-time"],
        "git": [*uvx_server(GIT), "mcp-server-git"],
        "filesystem": [
            str(node),
            str(NODE_MODULES / "@modelcontextprotocol/server-filesystem/dist/index.js"),
            str(allowed),
        ],
        "memory": [str(node), str(NODE_MODULES / "@modelcontextprotocol/server-memory/dist/index.js")],
        "broken": BROKEN,
    }
    entries: dict[str, Any] = {name: {"command": line[0], "args": line[1:]} for name, line in servers.items()}
    # uv's cache as this process knows it (a Node client runs with a HOME of its own), offline: both are cached.
    cache = subprocess.run(["uv", "cache", "dir"], capture_output=True, text=True, check=True).stdout.strip()
    for name in ("time", "git"):
        entries[name]["env"] = {"UV_CACHE_DIR": cache, "UV_OFFLINE": "1"}
    entries["memory"]["env"] = {"MEMORY_FILE_PATH": str(root / "memory.jsonl")}
    path = root / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": entries}, indent=2))
    return path


def gateway_command(config: Path) -> list[str]:
    return [sys.executable, "-m", "mcp_errors", "proxy", "--breaker-failures", "0", "--config", str(config)]


def structured(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error, result
    content: dict[str, Any] | None = result.structured_content
    assert content is not None
    return content


@pytest.mark.anyio
async def test_the_official_client_reaches_every_healthy_server_and_is_told_the_broken_one_is_unavailable(
    config: Path, tmp_path: Path
) -> None:
    allowed = config.parent / "allowed"
    command = gateway_command(config)
    log = (tmp_path / "gateway.log").open("w+")
    params = StdioServerParameters(command=command[0], args=command[1:], env={**os.environ, "UV_OFFLINE": "1"})
    with anyio.fail_after(SESSION_SECONDS):
        async with Client(stdio_client(params, errlog=log), mode="legacy") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            now = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
            bad_zone = await client.call_tool("time_get_current_time", {"timezone": "Mars/Olympus"})
            not_a_repo = await client.call_tool("git_git_status", {"repo_path": str(config.parent)})
            read = await client.call_tool("filesystem_read_text_file", {"path": str(allowed / "notes.txt")})
            outside = await client.call_tool("filesystem_read_text_file", {"path": "/etc/hostname"})
            created = await client.call_tool(
                "memory_create_entities",
                {"entities": [{"name": "Ada", "entityType": "person", "observations": ["writes programs"]}]},
            )
            graph = await client.call_tool("memory_read_graph", {})
            down = await client.call_tool("broken_anything", {"x": 1})
    assert {"time_get_current_time", "git_git_status", "filesystem_read_text_file", "memory_read_graph"} <= names
    assert not any(name.startswith("broken_") for name in names)
    assert not now.is_error
    assert structured(bad_zone)["errorCategory"] == "validation"
    assert structured(not_a_repo)["code"] == "NOT_A_GIT_REPOSITORY"  # git's pack, picked by its command
    assert not read.is_error
    assert structured(outside)["code"] == "PATH_NOT_ALLOWED"  # server-filesystem's pack
    assert not created.is_error
    assert "Ada" in json.dumps(graph.model_dump(mode="json"))
    unavailable = structured(down)
    assert (unavailable["errorCategory"], unavailable["code"], unavailable["executionState"]) == (
        "transient",
        "UPSTREAM_UNAVAILABLE",
        "not_executed",
    )
    log.seek(0)
    said = log.read()
    log.close()
    assert "'broken' did not start" in said
    assert "MEMORY_FILE_PATH is not writable" in said


def test_the_strict_typescript_client_lists_and_calls_through_the_gateway_without_throwing(
    config: Path, call_tools: Any
) -> None:
    calls = [
        ("time_get_current_time", {"timezone": "Mars/Olympus"}),
        ("memory_read_graph", {}),
        ("filesystem_list_allowed_directories", {}),
        ("broken_anything", {}),
    ]
    run = call_tools("v1", "legacy", calls, gateway_command(config))
    names = {tool["name"] for tool in run["tools"]}
    assert {"time_get_current_time", "git_git_log", "memory_read_graph", "filesystem_list_allowed_directories"} <= names
    results = {call["name"]: call for call in run["calls"]}
    assert all("thrown" not in call for call in run["calls"]), run["calls"]
    assert results["time_get_current_time"]["result"]["structuredContent"]["errorCategory"] == "validation"
    assert not results["memory_read_graph"]["result"].get("isError")
    assert results["broken_anything"]["result"]["structuredContent"]["code"] == "UPSTREAM_UNAVAILABLE"
