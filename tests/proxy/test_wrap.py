"""`mcp-errors wrap`: every host format wrapped in place, idempotent, and undone byte for byte."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcp_errors.proxy._hosts import proxy_launcher, read_host_config, wrapped_target
from mcp_errors.proxy._jsonc import parse_jsonc
from mcp_errors.proxy._wrap import backup_path, unwrap_text, wrap_file, wrap_text

HOSTS = Path(__file__).parents[1] / "hosts"
FIXTURES = sorted(path.name for path in HOSTS.glob("*.json"))
LAUNCHER = ["/opt/mcp-errors/bin/mcp-errors", "proxy"]
OURS = {"command", "args", "type", "url"}
"""The only keys of an entry wrap may change."""


def copy(fixture: str, tmp_path: Path) -> Path:
    target = tmp_path / fixture
    shutil.copyfile(HOSTS / fixture, target)
    return target


def servers(text: str) -> dict[str, Any]:
    config = read_host_config(text)
    return {entry.name: entry.node.value for entry in config.entries}


@pytest.mark.parametrize("fixture", FIXTURES)
def test_wrap_then_undo_gives_back_the_exact_bytes(fixture: str, tmp_path: Path) -> None:
    path = copy(fixture, tmp_path)
    original = path.read_bytes()
    wrapped = wrap_file(path, launcher=LAUNCHER, http_too=True)
    assert wrapped.changed
    assert backup_path(path).read_bytes() == original
    undone = wrap_file(path, launcher=LAUNCHER, undo=True)
    assert undone.restored_from_backup
    assert path.read_bytes() == original
    assert not backup_path(path).exists()


@pytest.mark.parametrize("fixture", FIXTURES)
def test_wrapping_twice_equals_wrapping_once(fixture: str) -> None:
    text = (HOSTS / fixture).read_text(encoding="utf-8")
    once, _ = wrap_text(text, launcher=LAUNCHER, http_too=True)
    twice, reports = wrap_text(once, launcher=LAUNCHER, http_too=True)
    assert twice == once
    assert "wrapped" not in {report.action for report in reports}


@pytest.mark.parametrize("fixture", FIXTURES)
def test_every_stdio_server_runs_through_the_proxy_and_keeps_every_key_wrap_does_not_own(fixture: str) -> None:
    text = (HOSTS / fixture).read_text(encoding="utf-8")
    after, _ = wrap_text(text, launcher=LAUNCHER)
    before_root, after_root = parse_jsonc(text).value, parse_jsonc(after).value
    assert {k: v for k, v in before_root.items() if k not in ("mcpServers", "servers")} == {
        k: v for k, v in after_root.items() if k not in ("mcpServers", "servers")
    }  # VS Code's inputs, Claude Desktop's globalShortcut
    before, wrapped = servers(text), servers(after)
    assert list(wrapped) == list(before)
    for name, entry in before.items():
        assert {k: v for k, v in entry.items() if k not in OURS} == {
            k: v for k, v in wrapped[name].items() if k not in OURS
        }
        if "command" in entry:
            line = [wrapped[name]["command"], *wrapped[name]["args"]]
            target = wrapped_target(line)
            assert target is not None
            original = [entry["command"], *entry.get("args", [])]
            assert target.target == (original if wrapped_target(original) is None else wrapped_target(original).target)  # type: ignore[union-attr]
        else:
            assert wrapped[name] == entry  # HTTP entries stay unless --http-too


def test_comments_trailing_commas_and_tabs_of_a_vs_code_file_stay() -> None:
    text = (HOSTS / "vscode_mcp.json").read_text(encoding="utf-8")
    after, _ = wrap_text(text, launcher=LAUNCHER, http_too=True)
    comments = re.findall(r"(?<!:)//[^\n]*|/\*.*?\*/", text, flags=re.DOTALL)
    assert len(comments) == 3
    assert all(comment in after for comment in comments)
    assert '"cwd": "${workspaceFolder}",\n' in after
    assert '\n\t\t\t"args": [' in after  # the inserted args of `time` at its entry's indentation


def test_windows_line_endings_stay_windows_line_endings() -> None:
    text = (HOSTS / "windows_crlf_claude_desktop_config.json").read_bytes().decode()
    after, _ = wrap_text(text, launcher=LAUNCHER)
    assert after.count("\r\n") == text.count("\r\n")
    assert "\n" not in after.replace("\r\n", "")


def test_an_entry_already_wrapped_is_left_as_it_is() -> None:
    text = (HOSTS / "cursor_mcp.json").read_text(encoding="utf-8")
    after, reports = wrap_text(text, launcher=LAUNCHER)
    assert {report.name: report.action for report in reports}["time"] == "already wrapped"
    assert servers(after)["time"] == servers(text)["time"]


def test_http_servers_are_wrapped_by_url_only_when_asked_and_never_with_headers() -> None:
    text = (HOSTS / "vscode_mcp.json").read_text(encoding="utf-8")
    _, plain = wrap_text(text, launcher=LAUNCHER)
    assert {r.name: r.action for r in plain}["remote"] == "skipped"
    after, reports = wrap_text(text, launcher=LAUNCHER, http_too=True)
    actions = {r.name: r.action for r in reports}
    assert actions["remote"] == "wrapped"
    assert actions["github"] == "skipped"  # its Authorization header cannot pass through the proxy
    remote = servers(after)["remote"]
    assert remote["type"] == "stdio"
    assert "url" not in remote
    assert remote["args"][-2:] == ["--", "https://mcp.example.com/mcp"]


def test_a_recognised_server_gets_its_rule_pack_unless_packs_are_off() -> None:
    text = (HOSTS / "claude_desktop_config.json").read_text(encoding="utf-8")
    with_packs = servers(wrap_text(text, launcher=LAUNCHER)[0])
    for name, pack in [
        ("git", "mcp-server-git"),
        ("sqlite", "mcp-server-sqlite"),
        ("fetch", "mcp-server-fetch"),
        ("filesystem", "server-filesystem"),
    ]:
        rules = wrapped_target([with_packs[name]["command"], *with_packs[name]["args"]]).rules  # type: ignore[union-attr]
        assert rules is not None
        assert Path(rules).name == f"{pack}.toml"
        assert Path(rules).is_file()
    assert "--rules" not in with_packs["time"]["args"]
    without = servers(wrap_text(text, launcher=LAUNCHER, packs=False)[0])
    assert all("--rules" not in entry["args"] for entry in without.values())


def test_a_dry_run_writes_nothing(tmp_path: Path) -> None:
    path = copy("claude_code_mcp.json", tmp_path)
    result = wrap_file(path, launcher=LAUNCHER, dry_run=True)
    assert result.changed
    assert path.read_bytes() == (HOSTS / "claude_code_mcp.json").read_bytes()
    assert not backup_path(path).exists()


def test_undo_after_the_file_was_edited_unwraps_in_place_and_keeps_the_edit(tmp_path: Path) -> None:
    path = copy("claude_desktop_config.json", tmp_path)
    wrap_file(path, launcher=LAUNCHER)
    edited = path.read_text(encoding="utf-8").replace('"globalShortcut": "Ctrl+Space"', '"globalShortcut": "Alt+M"')
    path.write_text(edited, encoding="utf-8")
    result = wrap_file(path, launcher=LAUNCHER, undo=True)
    assert not result.restored_from_backup
    after = json.loads(path.read_text(encoding="utf-8"))
    original = json.loads((HOSTS / "claude_desktop_config.json").read_text(encoding="utf-8"))
    assert after == {**original, "globalShortcut": "Alt+M"}


def test_undo_of_an_http_entry_wrapped_by_url_gives_its_url_and_type_back() -> None:
    text = (HOSTS / "claude_code_mcp.json").read_text(encoding="utf-8")
    wrapped, _ = wrap_text(text, launcher=LAUNCHER, http_too=True)
    undone, _ = unwrap_text(wrapped)
    assert servers(undone)["docs"] == servers(text)["docs"]


@pytest.mark.slow  # a server in a subprocess
@pytest.mark.anyio
async def test_a_wrapped_entry_starts_as_a_host_starts_it_and_answers_in_the_contract(tmp_path: Path) -> None:
    # As a host would: the wrapped command of the entry, over stdio, launched from this clone.
    path = copy("claude_desktop_config.json", tmp_path)
    wrap_file(path, launcher=proxy_launcher())
    entry = servers(path.read_text(encoding="utf-8"))["time"]
    assert entry["command"] != "uvx"
    # This machine's environment (its package index settings) as a host passes its own.
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=dict(os.environ))
    with anyio.fail_after(180):
        async with Client(params) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {"get_current_time", "convert_time"} <= tools
            result = await client.call_tool("get_current_time", {"timezone": "Not/AZone"})
    assert result.is_error
    assert result.structured_content is not None
    assert result.structured_content["errorCategory"] in ("validation", "business")
    assert result.structured_content["isRetryable"] is False
