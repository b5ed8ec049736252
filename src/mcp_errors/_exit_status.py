"""A stdio server run so that its exit status is known, and how it ended in words.

The SDK's stdio clients keep the process object to themselves, so the proxy's watched child
and the checker both run the server under a small `sh` that writes its exit status to a file
(POSIX only; elsewhere the status is simply unknown). Both say the same things the same way:
"exited with status 3", "not on PATH".
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

__all__ = ["describe_exit", "find_command", "last_lines", "not_on_path", "read_exit_status", "with_exit_status"]

# `exec` is not used, so sh stays the parent and outlives the server long enough to write its
# status; the SDK stops the whole process group, so no grandchild outlives the client.
_STATUS_SCRIPT: Final = 'f=$1; shift; "$@"; s=$?; echo "$s" > "$f"; exit "$s"'


def with_exit_status(command: str, args: Sequence[str], status_file: Path) -> tuple[str, list[str]]:
    """The command line that runs `command args` and leaves its exit status in `status_file`
    (unchanged where there is no `sh`)."""
    shell = shutil.which("sh") if os.name == "posix" else None
    if shell is None:
        return command, list(args)
    return shell, ["-c", _STATUS_SCRIPT, "mcp-errors", str(status_file), command, *args]


def read_exit_status(status_file: Path) -> int | None:
    """The exit status `with_exit_status` left, or `None` when the server has not exited on its own."""
    try:
        return int(status_file.read_text().strip())
    except (OSError, ValueError):
        return None


def describe_exit(status: int | None) -> str:
    """How a server ended, for messages: `exited with status 3`, `was killed by signal 9`."""
    if status is None:
        return "stopped"
    if status == 127:
        return "exited with status 127 (command not found)"
    if status == 126:
        return "exited with status 126 (command not executable)"
    if status > 128:
        return f"was killed by signal {status - 128}"
    return f"exited with status {status}"


def find_command(command: str, env: Mapping[str, str] | None = None) -> str | None:
    """The executable `command` names, on the PATH of `env` (ours by default), or `None`."""
    path = (env if env is not None else os.environ).get("PATH")
    return shutil.which(command, path=path)


def not_on_path(command: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether `command` is a bare name (no `/`) that no folder on PATH holds."""
    return "/" not in command and find_command(command, env) is None


def last_lines(text: str, count: int) -> list[str]:
    """The last `count` lines of `text` that say something: blank lines and the borders of boxed
    messages (rich: a line with no letter or digit) left out."""
    lines = [line.rstrip() for line in text.splitlines()]
    return [line for line in lines if any(char.isalnum() for char in line)][-count:]
