"""docs/hosts.md: every host configuration parses, has its host's top-level key, and starts `mcp-errors`.

A command is checked by running it with `--help` after its subcommand (before any `--`, so
the proxy's upstream is not run), with `/path/to/mcp-errors` read as this clone.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

ROOT = Path(__file__).resolve().parent.parent
HOSTS = ROOT / "docs" / "hosts.md"
PLACEHOLDER = "/path/to/mcp-errors"
SUBCOMMANDS = {"serve", "proxy", "check", "demo"}
# The host sections and the top-level key of their JSON files.
TOP_KEYS = {"Claude Desktop": "mcpServers", "Cursor": "mcpServers", "VS Code": "servers"}

_SECTION = re.compile(r"^## (?P<title>.+)$", re.MULTILINE)
_FENCE = re.compile(r"^```(?P<lang>\w+)[^\n]*\n(?P<code>.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def sections() -> dict[str, list[tuple[str, str]]]:
    """Each `##` section's fenced blocks, as (language, code)."""
    text = HOSTS.read_text(encoding="utf-8")
    starts = [*_SECTION.finditer(text)]
    found: dict[str, list[tuple[str, str]]] = {}
    for match, following in zip(starts, [*starts[1:], None], strict=True):
        body = text[match.end() : following.start() if following else len(text)]
        found[match.group("title")] = [(fence.group("lang"), fence.group("code")) for fence in _FENCE.finditer(body)]
    return found


SECTIONS = sections()
CONFIGS = [(title, code) for title, blocks in SECTIONS.items() for lang, code in blocks if lang == "json"]
CLAUDE_CODE = [
    line
    for lang, code in SECTIONS["Claude Code"]
    if lang == "sh"
    for line in code.splitlines()
    if line.startswith("claude mcp add ")
]


def stdio_commands() -> list[list[str]]:
    """Every stdio command line the page configures, once each."""
    commands: list[list[str]] = []
    for _, code in CONFIGS:
        for entry in next(iter(json.loads(code).values())).values():
            if "command" in entry:
                commands.append([entry["command"], *entry["args"]])
    for line in CLAUDE_CODE:
        words = shlex.split(line)
        commands.append(words[words.index("--") + 1 :])
    unique = {tuple(command): None for command in commands}
    return [list(command) for command in unique]


def test_the_page_covers_every_host() -> None:
    assert set(TOP_KEYS) | {"Claude Code"} <= set(SECTIONS)
    assert {title for title, _ in CONFIGS} == set(TOP_KEYS)
    assert len(CLAUDE_CODE) >= 2


@pytest.mark.parametrize(("host", "code"), CONFIGS, ids=[title for title, _ in CONFIGS])
def test_a_host_configuration_parses_and_has_the_hosts_top_level_key(host: str, code: str) -> None:
    config: dict[str, Any] = json.loads(code)
    assert list(config) == [TOP_KEYS[host]]
    servers: dict[str, dict[str, Any]] = config[TOP_KEYS[host]]
    assert servers
    for entry in servers.values():
        if host == "VS Code":
            assert entry["type"] in {"stdio", "http"}
        if entry.get("type") == "http":
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", entry["url"])
            continue
        assert isinstance(entry["command"], str)
        assert all(isinstance(arg, str) for arg in entry["args"])


@pytest.mark.parametrize("command", stdio_commands(), ids=" ".join)
def test_a_configured_command_starts_the_mcp_errors_command(command: list[str]) -> None:
    argv = [ROOT.as_posix() if word == PLACEHOLDER else word for word in command]
    at = argv.index("mcp-errors") + 1
    assert argv[at] in SUBCOMMANDS, argv
    argv.insert(at + 1, "--help")
    # `mcp-errors` is on PATH under `uv run`; beside this interpreter when pytest runs bare.
    executable = shutil.which(argv[0]) or shutil.which(argv[0], path=str(Path(sys.executable).parent))
    assert executable is not None, f"{argv[0]} is not on PATH"
    done = subprocess.run(
        [executable, *argv[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"Usage: mcp-errors {argv[at]}" in done.stdout
