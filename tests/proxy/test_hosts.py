"""Reading a host's server list: the formats, wrapped entries, rule packs, and how this mcp-errors is started."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from mcp_errors.proxy._hosts import (
    HostConfigError,
    clone_root,
    pack_path,
    proxy_launcher,
    read_host_config,
    recognised_pack,
    wrapped_target,
)

HOSTS = Path(__file__).parents[1] / "hosts"
ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(
    ("fixture", "key", "names"),
    [
        ("claude_desktop_config.json", "mcpServers", ["time", "git", "filesystem", "memory", "sqlite", "fetch"]),
        ("cursor_mcp.json", "mcpServers", ["time", "git", "docs", "everything"]),
        ("vscode_mcp.json", "servers", ["time", "git", "filesystem", "remote", "github"]),
        ("claude_code_mcp.json", "mcpServers", ["git", "memory", "docs"]),
    ],
)
def test_every_host_format_gives_its_servers_in_order(fixture: str, key: str, names: list[str]) -> None:
    config = read_host_config((HOSTS / fixture).read_text(encoding="utf-8"))
    assert config.servers_key == key
    assert [entry.name for entry in config.entries] == names


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[]", "not a JSON object"),
        ('{"other": 1}', 'no "mcpServers"'),
        ('{"servers": []}', "not an object"),
        ("{", "not JSON"),
    ],
)
def test_a_file_that_is_no_host_configuration_is_refused_saying_why(text: str, why: str) -> None:
    with pytest.raises(HostConfigError, match=why):
        read_host_config(text)


@pytest.mark.parametrize(
    ("line", "target"),
    [
        (["/x/.venv/bin/mcp-errors", "proxy", "--", "uvx", "mcp-server-time"], ["uvx", "mcp-server-time"]),
        (
            ["uv", "run", "--project", "/c", "--extra", "proxy", "mcp-errors", "proxy", "--rules", "r.toml", "--", "a"],
            ["a"],
        ),
        (["uvx", "--from", "mcp-errors[proxy]", "mcp-errors", "proxy", "--", "b", "--", "c"], ["b", "--", "c"]),
        (["mcp-errors", "proxy", "https://x.dev/mcp"], ["https://x.dev/mcp"]),
    ],
)
def test_a_wrapped_entry_is_recognised_with_any_launcher_and_keeps_its_server_after_the_dashes(
    line: list[str], target: list[str]
) -> None:
    wrapped = wrapped_target(line)
    assert wrapped is not None
    assert wrapped.target == target


def test_the_rules_option_of_a_wrapped_entry_is_read_back() -> None:
    wrapped = wrapped_target(["mcp-errors", "proxy", "--rules", "git.toml", "--", "uvx", "mcp-server-git"])
    assert wrapped is not None
    assert wrapped.rules == "git.toml"


def test_a_server_whose_command_only_mentions_mcp_errors_is_not_wrapped() -> None:
    assert wrapped_target(["uvx", "mcp-errors"]) is None
    assert wrapped_target(["npx", "-y", "@modelcontextprotocol/server-memory"]) is None


@pytest.mark.parametrize(
    ("line", "pack"),
    [
        (["uvx", "mcp-server-git"], "mcp-server-git"),
        (["uvx", "mcp-server-git==2026.10.19"], "mcp-server-git"),
        (["python", "-m", "mcp_server_git", "--repository", "."], "mcp-server-git"),
        (["/opt/bin/mcp-server-sqlite", "--db-path", "x.db"], "mcp-server-sqlite"),
        (["uvx", "mcp-server-fetch@latest"], "mcp-server-fetch"),
        (["npx", "-y", "@modelcontextprotocol/server-filesystem@2026.8.31", "/tmp"], "server-filesystem"),
        (["node", "/n/@modelcontextprotocol/server-filesystem/dist/index.js", "/tmp"], "server-filesystem"),
        (["mcp-server-filesystem", "/tmp"], "server-filesystem"),
        (["npx", "-y", "@modelcontextprotocol/server-memory"], None),
        (["uvx", "mcp-server-time"], None),
    ],
)
def test_a_server_with_a_shipped_rule_pack_is_recognised_by_its_command(line: list[str], pack: str | None) -> None:
    assert recognised_pack(line) == pack


@pytest.mark.parametrize("pack", ["mcp-server-git", "mcp-server-sqlite", "mcp-server-fetch", "server-filesystem"])
def test_every_recognised_pack_has_its_file(pack: str) -> None:
    found = pack_path(pack)
    assert found is not None
    assert found.read_text(encoding="utf-8").count("[[rule]]") >= 1


def test_from_a_clone_the_proxy_is_started_by_uv_run_in_that_clone() -> None:
    assert clone_root() == ROOT.resolve()
    launcher = proxy_launcher()
    assert launcher[1:] == ["run", "--project", str(ROOT.resolve()), "--extra", "proxy", "mcp-errors", "proxy"]
    assert Path(launcher[0]).name == "uv"


def test_installed_the_proxy_is_started_by_the_script_beside_its_python(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from mcp_errors.proxy import _hosts

    script = tmp_path / "bin" / "mcp-errors"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n")
    monkeypatch.setattr(_hosts, "clone_root", lambda: None)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))
    assert proxy_launcher() == [str(script), "proxy"]


def test_with_no_script_anywhere_the_proxy_is_started_by_this_python_not_an_unpublished_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from mcp_errors.proxy import _hosts

    python = tmp_path / "bin" / "python"
    monkeypatch.setattr(_hosts, "clone_root", lambda: None)
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert proxy_launcher() == [str(python), "-m", "mcp_errors", "proxy"]
