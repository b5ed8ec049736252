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
  (`_restarts.py`);
- a child started before the proxy's imports (`_spawn.EarlyStart`, the command's) is adopted
  by the first connection: the SDK's stdio client drives its pipes as if it had started it
  (its one start function is wrapped to hand the process over; it starts every other child).
  When the gateway's front did that child's handshake (`_front.py`), the SDK's `initialize`
  is answered from it and not sent again, and what the child wrote meanwhile comes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TextIO

import anyio
import anyio.abc
import mcp.client.stdio as sdk_stdio
from fastmcp.client.transports import StdioTransport
from mcp import ClientSession

from mcp_errors._exit_status import describe_exit, find_command, read_exit_status, with_exit_status
from mcp_errors._shared.telemetry import record_proxy_decision
from mcp_errors.proxy._spawn import EarlyStart, StderrTail, UpstreamHandshake

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


class ChildProcess(StdioTransport):
    """fastmcp's stdio transport for a wrapped server, with the caller's environment.

    Args:
        command: The server's executable.
        args: Its arguments.
        env: The child's environment; the caller's whole environment when omitted.
        cwd: Its working directory; the caller's when omitted.
        backoff: When to start it again after exits.
        stderr: Where its stderr goes through to (ours by default).
        early: The same server, already started (`EarlyStart`, with the same command, `env`
            and `cwd`): the first connection adopts it instead of starting another.
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
        early: EarlyStart | None = None,
    ) -> None:
        self.server_command = [command, *args]
        self.backoff = backoff or RestartBackoff()
        if early is not None and not _ADOPTS:
            early.discard()  # an SDK this proxy cannot hand a process to: started anew
        self._early = early
        if early is not None:
            self.tail, self._status_dir, self._status_file = early.tail, early.status_dir, early.status_file
        else:
            self.tail = StderrTail(stderr)
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
        running = task is not None and not task.done() and not self._is_session_dead()  # `running`, read once per call
        if task is not None and task is not self._exit_recorded and not running:
            self._exit_recorded = task
            self.backoff.exited(lived=now - self._started_at, now=now)
        if not running:
            wait = self.backoff.wait_left(now)
            if wait > 0:
                raise UpstreamUnavailableError(
                    f"The server {self.describe_exit()} and is started again after a wait.", retry_after=wait
                )
            if task is not None and self._exited is None:
                self._exited = self.describe_exit()  # before the next start overwrites the status
            if self._early is None:
                self._status_file.unlink(missing_ok=True)
        early, self._early = self._early, None
        token = _adopting.set(early)  # read in the SDK's connection task, which copies this context
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
        finally:
            _adopting.reset(token)
            if early is not None:
                early.discard()  # not adopted (a connection was already there): not left running
        if self._connect_task is not task:
            self._started_at = time.monotonic()
            if self._exited is not None:
                self._restarted(self._exited)
        return session

    def early_timed_out(self) -> bool:
        """Whether the server started early did not answer the gateway front's handshake in time.

        It is then stopped: the gateway counts it as not started and tries it again later.
        """
        early = self._early
        if early is None or not early.timed_out:
            return False
        self._early = None
        early.discard()
        return True

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

    async def disconnect(self) -> None:
        """Stop the child, also one started early that no connection adopted yet."""
        early, self._early = self._early, None
        if early is not None:
            early.discard()
        await super().disconnect()  # type: ignore[no-untyped-call]  # fastmcp leaves it unannotated

    async def close(self) -> None:
        """Stop the child and release the stderr pipe."""
        try:
            await self.disconnect()
        finally:
            self.tail.close()
            self._status_dir.cleanup()


# --- a process started early, handed to the SDK's stdio client ------------------------------------

_adopting: contextvars.ContextVar[EarlyStart | None] = contextvars.ContextVar("mcp_errors_proxy_adopting", default=None)
"""The early start the current connection adopts (`ChildProcess.connect` sets it around the SDK's start)."""


class _PipeReceive(anyio.abc.ByteReceiveStream):
    """The read end of a child's stdout pipe, as the SDK's stdio client reads a process's stdout."""

    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.BaseTransport) -> None:
        self._reader, self._transport = reader, transport

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._transport.is_closing():
            raise anyio.ClosedResourceError
        data = await self._reader.read(max_bytes)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        self._transport.close()


class _PipeSend(anyio.abc.ByteSendStream):
    """The write end of a child's stdin pipe."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def send(self, item: bytes) -> None:
        if self._writer.is_closing():
            raise anyio.ClosedResourceError
        try:
            self._writer.write(item)
            await self._writer.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        self._writer.close()


class _Handover:
    """The SDK's handshake with a child whose handshake the gateway's front did: answered, not sent again."""

    def __init__(self, handshake: UpstreamHandshake) -> None:
        self.handshake = handshake
        self.answered = anyio.Event()
        self.first: bytes | None = None
        """The SDK's `initialize` answer and what the child wrote after the front's last answer."""
        self.done = False
        self.partial = b""

    def sift(self, data: bytes) -> bytes:
        """What of the SDK's bytes goes to the child: not its `initialize` nor `notifications/initialized`."""
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        passed = []
        for line in lines:
            try:
                message = json.loads(line)
            except ValueError:
                message = None
            method = message.get("method") if isinstance(message, dict) else None
            if method == "initialize" and self.first is None:
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": self.handshake.initialize_result}
                self.first = json.dumps(answer).encode() + b"\n" + self.handshake.leftover
                self.answered.set()
            elif method == "notifications/initialized" and self.first is not None:
                self.done = True
            else:
                passed.append(line + b"\n")
        if self.done and self.partial:
            passed.append(self.partial)
            self.partial = b""
        return b"".join(passed)


class _HandoverSend(_PipeSend):
    def __init__(self, writer: asyncio.StreamWriter, handover: _Handover) -> None:
        super().__init__(writer)
        self._handover = handover

    async def send(self, item: bytes) -> None:
        if not self._handover.done:
            item = self._handover.sift(item)
            if not item:
                return
        await super().send(item)


class _HandoverReceive(_PipeReceive):
    def __init__(self, reader: asyncio.StreamReader, transport: asyncio.BaseTransport, handover: _Handover) -> None:
        super().__init__(reader, transport)
        self._handover: _Handover | None = handover

    async def receive(self, max_bytes: int = 65536) -> bytes:
        handover = self._handover
        if handover is not None:
            await handover.answered.wait()
            self._handover = None
            assert handover.first is not None
            return handover.first
        return await super().receive(max_bytes)


class _AdoptedProcess(anyio.abc.Process):
    """A process started early (`subprocess.Popen`), as the anyio process the SDK's stdio client drives.

    Its exit is read by polling, as the SDK itself reads `returncode` (which reaps it).
    """

    def __init__(self, process: subprocess.Popen[bytes], stdin: _PipeSend, stdout: _PipeReceive) -> None:
        self._popen, self._stdin, self._stdout = process, stdin, stdout

    @classmethod
    async def adopt(cls, process: subprocess.Popen[bytes], handshake: UpstreamHandshake | None) -> _AdoptedProcess:
        assert process.stdin is not None
        assert process.stdout is not None
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), process.stdout)
        write_transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), process.stdin
        )
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        if handshake is None:
            return cls(process, _PipeSend(writer), _PipeReceive(reader, read_transport))
        handover = _Handover(handshake)
        return cls(process, _HandoverSend(writer, handover), _HandoverReceive(reader, read_transport, handover))

    async def aclose(self) -> None:
        await self._stdin.aclose()
        await self._stdout.aclose()
        await self.wait()

    async def wait(self) -> int:
        while (status := self._popen.poll()) is None:  # noqa: ASYNC110  (no event tells a Popen's exit)
            await anyio.sleep(_POLL_SECONDS)
        return status

    def terminate(self) -> None:
        self._popen.terminate()

    def kill(self) -> None:
        self._popen.kill()

    def send_signal(self, signal: signal.Signals) -> None:
        self._popen.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        return self._popen.poll()

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> None:
        return None  # the early start gave it the transport's stderr tail


_POLL_SECONDS: Final = 0.01


def _hand_early_starts_to_the_sdk() -> bool:
    """Let the SDK's stdio client adopt an early-started process where `_adopting` names one.

    The SDK starts a server in one function of its stdio client, which has no parameter for a
    process that already runs: that function is wrapped, and starts one as before whenever no
    early start is being adopted. An SDK without it: early starts are not used (`False`).
    """
    start = getattr(sdk_stdio, "_create_platform_compatible_process", None)
    if start is None or not asyncio.iscoroutinefunction(start):
        return False
    if getattr(start, "adopts_early_starts", False):
        return True

    async def start_or_adopt(
        command: str, args: list[str], env: dict[str, str] | None = None, errlog: TextIO = sys.stderr, cwd: Any = None
    ) -> Any:
        early = _adopting.get()
        process = early.take() if early is not None else None
        if early is None or process is None:
            return await start(command=command, args=args, env=env, errlog=errlog, cwd=cwd)
        try:
            return await _AdoptedProcess.adopt(process, early.handshake)
        except BaseException:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)  # its whole group, as the SDK stops one
            raise

    start_or_adopt.adopts_early_starts = True  # type: ignore[attr-defined]  # marks the wrapper
    sdk_stdio._create_platform_compatible_process = start_or_adopt
    return True


_ADOPTS: Final = _hand_early_starts_to_the_sdk()
