"""The `mcp-errors` command line as a newcomer reads it: `--help` of every command."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from mcp_errors._cli import app

COMMANDS = ["demo", "serve", "check", "proxy"]


def help_text(command: str) -> str:
    result = CliRunner().invoke(app, [command, "--help"], env={"NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result.output


def options(text: str) -> dict[str, str]:
    """Each option's whole entry in the Options panel, its wrapped lines joined."""
    found: dict[str, str] = {}
    current: str | None = None
    in_options = False
    for line in text.splitlines():
        inner = line.strip().strip("│").strip()
        if line.startswith("╭"):
            in_options = "Options" in line
        elif line.startswith("╰"):
            in_options, current = False, None
        elif in_options and line.startswith("│ --"):
            current = inner.split()[0]
            found[current] = inner
        elif current is not None:
            found[current] += " " + inner
    return {name: " ".join(entry.split()) for name, entry in found.items() if name != "--help"}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_shows_its_default(command: str) -> None:
    entries = options(help_text(command))
    assert entries
    missing = [name for name, entry in entries.items() if "[default: " not in entry]
    assert missing == [], f"options of `mcp-errors {command}` without a default shown: {missing}"


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_stray_spaces_before_punctuation(command: str) -> None:
    # Rich eats a `[...]` it takes for markup and leaves the space before it behind.
    words = " ".join(line.strip().strip("│╭╮╰╯─").strip() for line in help_text(command).splitlines())
    assert re.findall(r"\w+ [.,;:)]|\( \w+", words) == []
