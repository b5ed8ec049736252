"""The wrapped stdio server: started with the caller's environment, watched, restarted.

fastmcp's `StdioTransport` runs the child and keeps one session to it. This module adds
what a wrapper in front of someone else's server needs:

- the child gets the caller's whole environment and working directory (the SDK's stdio
  client passes only HOME, PATH and a few more, so a wrapped server would lose its API keys);
- its stderr goes through to ours, and the last lines are kept for error messages;
- its exit status is known (on POSIX a small `sh` runs it and writes the status to a file;
  the SDK keeps the process object to itself);
- a child that exits is started again on the next request, with a backoff when it keeps
  exiting: while the backoff lasts, requests fail at once with `UpstreamUnavailableError` (the
  proxy answers a transient, not-executed error with the wait) instead of piling up;
- each restart is counted and logged with how the child ended, for the restart notice
  (`_restarts.py`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import shlex
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final, TextIO

from fastmcp.client.transports import StdioTransport
from mcp import ClientSession

from mcp_errors._exit_status import describe_exit, find_command, read_exit_status, with_exit_status
from mcp_errors._shared.telemetry import record_proxy_decision

__all__ = ["ChildProcess", "RestartBackoff", "StderrTail", "UpstreamUnavailableError", "find_command"]

logger = logging.getLogger("mcp_errors.proxy")


class UpstreamUnavailableError(Exception):
    """The wrapped server is not running now: it is waiting to be restarted, or failed to start."""

    def __init__(self, message: str, *, retry_after: float | None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class RestartBackoff:
    """When the next start may happen, after exits that come too soon.

    A child that ran for `healthy_after` seconds before it exited is started again at once:
    one crash is an accident. Each further exit (or failed start) that follows sooner doubles
    the wait, from `first_wait` up to `max_wait`: a crash loop must not take the host with it.
    """

    first_wait: float = 0.5
    max_wait: float = 30.0
    healthy_after: float = 30.0
    failures: int = 0
    not_before: float = field(default=0.0)

    def exited(self, *, lived: float, now: float) -> None:
        """Record an exit of a child that had run `lived` seconds."""
        if lived >= self.healthy_after:
            self.failures = 0
        self._fail(now)

    def failed_to_start(self, *, now: float) -> None:
        """Record a start that did not reach a working session."""
        self._fail(now)

    def wait_left(self, now: float) -> float:
        """Seconds until a start is allowed (0 when it is)."""
        return max(0.0, self.not_before - now)

    def _fail(self, now: float) -> None:
        self.failures += 1
        wait = 0.0 if self.failures == 1 else min(self.first_wait * 2 ** (self.failures - 2), self.max_wait)
        self.not_before = now + wait


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


class ChildProcess(StdioTransport):
    """fastmcp's stdio transport for a wrapped server, with the caller's environment.

    Args:
        command: The server's executable.
        args: Its arguments.
        env: The child's environment; the caller's whole environment when omitted.
        cwd: Its working directory; the caller's when omitted.
        backoff: When to start it again after exits.
        stderr: Where its stderr goes through to (ours by default).
    """

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        backoff: RestartBackoff | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        self.server_command = [command, *args]
        self.tail = StderrTail(stderr)
        self.backoff = backoff or RestartBackoff()
        self._status_dir = tempfile.TemporaryDirectory(prefix="mcp-errors-proxy-")
        self._status_file = Path(self._status_dir.name) / "exit-status"
        command, args = with_exit_status(command, args, self._status_file)
        super().__init__(
            command,
            list(args),
            env=dict(os.environ) if env is None else env,
            cwd=os.getcwd() if cwd is None else cwd,
            keep_alive=True,
            log_file=self.tail.sink,
        )
        self._exit_recorded: object = None
        self._started_at = time.monotonic()
        self.restarts = 0
        """How often a child was started again after one that had run exited."""
        self.last_exit = ""
        """How the child before the running one ended (`exited with status 3`), once one was restarted."""
        self._exited: str | None = None

    @property
    def running(self) -> bool:
        """Whether a session to a live child exists now."""
        task = self._connect_task
        return task is not None and not task.done() and not self._is_session_dead()

    async def connect(self, **kwargs: Any) -> ClientSession | None:
        """Reuse the live session, or start the child, unless the restart backoff says wait."""
        now = time.monotonic()
        task = self._connect_task
        if task is not None and task is not self._exit_recorded and (task.done() or self._is_session_dead()):
            self._exit_recorded = task
            self.backoff.exited(lived=now - self._started_at, now=now)
        if not self.running:
            wait = self.backoff.wait_left(now)
            if wait > 0:
                raise UpstreamUnavailableError(
                    f"The server {self.describe_exit()} and is started again after a wait.", retry_after=wait
                )
            if task is not None and self._exited is None:
                self._exited = self.describe_exit()  # before the next start overwrites the status
            self._status_file.unlink(missing_ok=True)
        try:
            session = await super().connect(**kwargs)
        except Exception as exc:
            self._exit_recorded = self._connect_task
            now = time.monotonic()
            self.backoff.failed_to_start(now=now)
            raise UpstreamUnavailableError(
                f"The server could not be started: it {self.describe_exit()}.",
                retry_after=self.backoff.wait_left(now) or None,
            ) from exc
        if self._connect_task is not task:
            self._started_at = time.monotonic()
            if self._exited is not None:
                self._restarted(self._exited)
        return session

    def _restarted(self, how: str) -> None:
        self.restarts += 1
        self.last_exit, self._exited = how, None
        logger.warning(
            "The upstream server `%s` %s; it was started again (restart %d). What it kept in memory is lost.",
            shlex.join(self.server_command),
            how,
            self.restarts,
        )
        record_proxy_decision("upstream_restarted")

    def restarts_for(self, front: object) -> tuple[int, str]:
        """How often the child was restarted, and how (one child serves every caller)."""
        return self.restarts, f"{self.last_exit} and was started again"

    def exit_status(self) -> int | None:
        """The last child's exit status, when it exited on its own (POSIX only)."""
        return read_exit_status(self._status_file)

    def describe_exit(self) -> str:
        """How the last child ended, for messages: `exited with status 3`."""
        return describe_exit(self.exit_status())

    async def close(self) -> None:
        """Stop the child and release the stderr pipe."""
        try:
            await self.disconnect()  # type: ignore[no-untyped-call]  # fastmcp leaves it unannotated
        finally:
            self.tail.close()
            self._status_dir.cleanup()
