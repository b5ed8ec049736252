"""Stdio servers started before the proxy's own imports; their pipes are handed to the SDK later.

Importing fastmcp and the MCP SDK takes a Python process longer than many servers take to
start (docs/gateway.md). So the proxy (`mcp-errors proxy -- <command>`, and the gateway for
each of its servers) starts its stdio servers first, with the standard library only
(`EarlyStart`), and imports what it needs while they start. The first
connection of each server's transport (`_child.py`) adopts the running process instead of
starting another; every later start (a restart) is the SDK's own.

An early start runs the server as the SDK would: under the `sh` that keeps its exit status
(`_exit_status.py`), in a session of its own (its process group is what is stopped), with
its stderr through a `StderrTail`.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final, TextIO

from mcp_errors._exit_status import with_exit_status

__all__ = ["EarlyStart", "StderrTail", "UpstreamHandshake"]


class StderrTail:
    """A pipe for a child's stderr: passed through to `out`, the last bytes kept.

    The child needs a real file descriptor for its stderr, so this is an OS pipe read by a
    daemon thread (a few lines of code: no library tees a subprocess's stream and keeps a tail).
    """

    def __init__(self, out: TextIO | None = None, *, keep_bytes: int = 8192) -> None:
        self._out = out if out is not None else sys.stderr
        self._keep = keep_bytes
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._read_fd, write_fd = os.pipe()
        self.sink: TextIO = os.fdopen(write_fd, "w")
        """What the child writes to: give it as its stderr."""
        self._thread = threading.Thread(target=self._pump, name="mcp-errors-proxy-stderr", daemon=True)
        self._thread.start()

    def last_lines(self, count: int = 12) -> list[str]:
        """The last `count` non-empty lines the child wrote, after what is in the pipe is read."""
        self._settle()
        with self._lock:
            text = self._tail.decode("utf-8", errors="replace")
        return [line.rstrip() for line in text.splitlines() if line.strip()][-count:]

    def close(self) -> None:
        """Stop passing through once every child has closed its end too."""
        with contextlib.suppress(OSError):
            self.sink.close()

    def _pump(self) -> None:
        out: BinaryIO | None = getattr(self._out, "buffer", None)
        while True:
            try:
                chunk = os.read(self._read_fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            with self._lock:
                self._tail += chunk
                del self._tail[: max(0, len(self._tail) - self._keep)]
            with contextlib.suppress(OSError, ValueError):
                if out is not None:
                    out.write(chunk)
                    out.flush()
                else:
                    self._out.write(chunk.decode("utf-8", errors="replace"))
                    self._out.flush()
        os.close(self._read_fd)

    def _settle(self) -> None:
        # Wait (briefly) until the pump has read what is already in the pipe: a child that
        # just exited wrote its last words before it did.
        deadline = time.monotonic() + _SETTLE_SECONDS
        while time.monotonic() < deadline and self._thread.is_alive():
            try:
                readable, _, _ = select.select([self._read_fd], [], [], 0)
            except (OSError, ValueError):
                return
            if not readable:
                return
            time.sleep(0.005)


_SETTLE_SECONDS: Final = 0.5


@dataclass
class UpstreamHandshake:
    """A stdio server's handshake done by the front: what the SDK's client gets instead of doing it again."""

    initialize_result: dict[str, Any]
    """The server's `InitializeResult`, as it sent it."""
    leftover: bytes = b""
    """Every byte the server wrote after the front's last answer (its own messages included), in order."""
    tools: list[dict[str, Any]] | None = None
    """Its tools as it listed them; `None` when the listing failed."""


class EarlyStart:
    """A stdio server started now, for a transport to adopt at its first connection.

    Args:
        command: The server's executable.
        args: Its arguments.
        env: Its whole environment.
        cwd: Its working directory (ours when omitted).
        stderr: Where its stderr goes through to (ours by default).

    A server that cannot be started here (a working directory that does not exist) is left
    to the transport's own start, which says why.
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        *,
        env: dict[str, str],
        cwd: str | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        self.tail = StderrTail(stderr)
        self.status_dir = tempfile.TemporaryDirectory(prefix="mcp-errors-proxy-")
        self.status_file = Path(self.status_dir.name) / "exit-status"
        shell, shell_args = with_exit_status(command, args, self.status_file)
        self._process: subprocess.Popen[bytes] | None = None
        self.handshake: UpstreamHandshake | None = None
        """Its handshake and listing, when the gateway's front did them (`_front.py`)."""
        self.timed_out = False
        """Whether it did not answer the front's handshake and listing within the start-up time."""
        if os.name != "posix":
            return  # the SDK's own start (a job object on Windows)
        with contextlib.suppress(OSError):
            self._process = subprocess.Popen(
                [shell, *shell_args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.tail.sink,
                env=env,
                cwd=cwd,
                start_new_session=True,  # the SDK stops the whole process group
            )

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The running process, not taken (`None` once taken, or when it could not be started)."""
        return self._process

    def take(self) -> subprocess.Popen[bytes] | None:
        """The running process, once (`None` after, or when it could not be started)."""
        process, self._process = self._process, None
        return process

    def discard(self) -> None:
        """Stop the process if nobody adopted it (start-up ended before its transport connected)."""
        process = self.take()
        if process is None:
            return
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=_DISCARD_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                pipe.close()


_DISCARD_SECONDS: Final = 2.0
