"""The `mcp-errors` command line as a newcomer reads it: `--help` of every command."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from mcp_errors._cli import app

COMMANDS = ["demo", "serve", "check"]


def help_text(command: str) -> str:
    # Wide enough that every option's help stays on its own line.
    result = CliRunner().invoke(app, [command, "--help"], env={"TERMINAL_WIDTH": "300", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result.output


def option_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^│ --(?!help\b)", line)]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_shows_its_default(command: str) -> None:
    lines = option_lines(help_text(command))
    assert lines
    missing = [line.split()[1] for line in lines if "[default: " not in line]
    assert missing == [], f"options of `mcp-errors {command}` without a default shown: {missing}"


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_stray_spaces_before_punctuation(command: str) -> None:
    text = help_text(command)
    # Rich eats a `[...]` it takes for markup, leaving the space before it behind.
    stray = [line.strip("│ ") for line in text.splitlines() if re.search(r"\w \.|\w ,|\( | \)|\w  +\w[^│]*$", line)]
    assert stray == []
