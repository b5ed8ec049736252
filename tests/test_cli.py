"""The `mcp-errors` command line as a newcomer reads it: `--help` and `-h` of every command, `--version`, switches."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcp_errors._cli import app

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

COMMANDS = ["demo", "serve", "check", "proxy", "wrap"]


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


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.split() == ["mcp-errors", version("mcp-errors")]


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_dash_h_is_help_on_every_command(command: str) -> None:
    args = command.split()
    short = CliRunner().invoke(app, [*args, "-h"], env={"NO_COLOR": "1", "COLUMNS": "120"})
    long = CliRunner().invoke(app, [*args, "--help"], env={"NO_COLOR": "1", "COLUMNS": "120"})
    assert short.exit_code == long.exit_code == 0
    assert short.output == long.output


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_switches_are_shown_without_a_value(command: str) -> None:
    result = CliRunner().invoke(app, [*command.split(), "--help"], env={"NO_COLOR": "1", "COLUMNS": "120"})
    assert "<bool>" not in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["proxy", "--idempotency-keys", "true", "--", sys.executable, "-c", "pass"],
        ["proxy", "--tool-failure-meta", "off", "--", sys.executable, "-c", "pass"],
        ["check", "--call-valid", "yes", "--", sys.executable, "-c", "pass"],
        ["check", "--allow-destructive", "1", "http://127.0.0.1:9/mcp"],
        ["demo", "--json", "false"],
    ],
    ids=lambda args: " ".join(args[:3]),
)
def test_a_value_after_a_switch_is_refused_before_anything_runs(args: list[str]) -> None:
    # Without the refusal, `true` here became the upstream server's command.
    result = CliRunner().invoke(app, args, env={"NO_COLOR": "1", "COLUMNS": "200"})
    assert result.exit_code == 2
    assert f"{args[1]} is a switch and takes no value" in " ".join(result.output.split())


def test_a_switch_word_after_the_double_dash_belongs_to_the_server_command() -> None:
    # `--` ends our options: `true` there is the server's business, not a value for the switch.
    result = CliRunner().invoke(app, ["proxy", "--idempotency-keys", "--", "no-such-command-true"])
    assert result.exit_code == 2
    assert "not on PATH" in result.output


@pytest.mark.parametrize("command", COMMANDS)
def test_a_command_named_first_is_built_alone_and_reads_the_same(command: str) -> None:
    # The console script builds only the command it is asked for (a faster start-up): its help
    # is the whole command's, word for word.
    env = {"NO_COLOR": "1", "COLUMNS": "120"}
    script = Path(sys.executable).with_name("mcp-errors")
    alone = subprocess.run(
        [str(script), command, "--help"], capture_output=True, text=True, check=True, env={**os.environ, **env}
    )
    whole = CliRunner().invoke(app, [command, "--help"], env=env)
    assert alone.stdout == whole.output


def test_help_does_not_import_the_mcp_sdk() -> None:
    # `import mcp` alone costs about a second of CPU: help must not wait for it. One fresh
    # interpreter asks every command for its help, then says what got imported.
    script = (
        "import sys\n"
        "from mcp_errors._cli import app\n"
        f"for command in {['', *COMMANDS]!r}:\n"
        "    try:\n"
        "        app([*command.split(), '--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(sorted(name for name in sys.modules if name == 'mcp' or name.startswith(('mcp.', 'fastmcp'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


@pytest.mark.parametrize("command", ["proxy", "check"])
def test_a_server_option_before_a_forgotten_double_dash_is_answered_with_the_fix(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_errors", command, "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "300", "NO_COLOR": "1"},
    )

    assert done.returncode == 2
    assert "No such option: -y" in done.stderr
    assert "put -- before that command" in done.stderr
    assert f"mcp-errors {command} [OPTIONS] -- <command> [ARGS]" in done.stderr


def test_an_unknown_option_of_ours_gets_no_double_dash_hint_when_the_dash_is_there() -> None:
    result = CliRunner().invoke(app, ["proxy", "--no-such-option", "--", "python"], env={"COLUMNS": "300"})

    assert result.exit_code == 2
    assert "No such option" in result.output
    assert "put -- before" not in result.output
