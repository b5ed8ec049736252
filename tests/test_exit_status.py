"""A stdio server run under `sh` leaves its exit status; how it ended is said one way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_errors._exit_status import describe_exit, last_lines, not_on_path, read_exit_status, with_exit_status

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.mark.skipif(sys.platform == "win32", reason="the status is written by sh (POSIX)")
@pytest.mark.parametrize("status", [0, 3, 127])
def test_a_command_run_with_its_exit_status_leaves_that_status(tmp_path: Path, status: int) -> None:
    status_file = tmp_path / "status"
    command, args = with_exit_status(sys.executable, ["-c", f"raise SystemExit({status})"], status_file)

    done = subprocess.run([command, *args], check=False, timeout=30)

    assert done.returncode == status
    assert read_exit_status(status_file) == status


def test_no_status_file_means_the_server_did_not_exit_on_its_own(tmp_path: Path) -> None:
    assert read_exit_status(tmp_path / "status") is None
    assert describe_exit(None) == "stopped"


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (3, "exited with status 3"),
        (127, "exited with status 127 (command not found)"),
        (126, "exited with status 126 (command not executable)"),
        (137, "was killed by signal 9"),
    ],
)
def test_an_exit_status_is_said_in_words(status: int, said: str) -> None:
    assert describe_exit(status) == said


def test_a_bare_name_no_folder_on_path_holds_is_not_on_path() -> None:
    assert not_on_path("no-such-mcp-server-command")
    assert not not_on_path("sh")
    assert not not_on_path("./relative/server")  # a path is run as given, not looked up


def test_the_last_lines_leave_out_blank_lines_and_box_borders() -> None:
    text = "first\n\n╭────╮\n│ boom │\n╰────╯\nlast\n"

    assert last_lines(text, 2) == ["│ boom │", "last"]
    assert last_lines(text, 10) == ["first", "│ boom │", "last"]
