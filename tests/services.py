"""Real PostgreSQL and Redis servers for the tests, started by the fixtures themselves.

`postgres_url` and `redis_url` start one throwaway server each per test session, on
loopback on a free port, with its data in a temporary folder, and stop it at the end.
PostgreSQL's `initdb` and `pg_ctl` refuse to run as root, so as root they run as the
`postgres` user. When a server's binaries are missing the tests that need it are skipped
with a message saying what to install, except under `CI=true`, where that fails the run.

`require_fastmcp_tasks()` does the same for a library: the tests of tasks (SEP-2663) need
`fastmcp-tasks`, which pins an older fastmcp than the main environment's, so they are marked
`tasks` and run in the second environment (`tests/tasks-env`; in the main one
`tests/test_tasks_env.py` runs them there). Under `MCP_ERRORS_REQUIRE_TASKS=1` (set for those
runs) a missing `fastmcp-tasks` fails the run rather than skipping.

Loaded by `tests/conftest.py`; the helpers also serve `benchmarks/idempotency.py`.
"""

from __future__ import annotations

import contextlib
import glob
import importlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import NoReturn

import pytest


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(port: int, *, timeout: float = 30.0, process: subprocess.Popen[bytes] | None = None) -> None:
    """Return once something accepts connections on 127.0.0.1:`port`.

    Raises:
        RuntimeError: If `process` exits first, or nothing listens within `timeout`.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with code {process.returncode} before listening on {port}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.02)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


@contextlib.contextmanager
def listening(
    command: list[str], port: int, *, env: dict[str, str] | None = None, wait: bool = True
) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command`, return once it listens on `port` (unless `wait=False`), and stop it at exit."""
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if wait:
            wait_for_port(port, process=process)
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a server process: SIGTERM, and SIGKILL if it is still there after 15 s."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def postgres_bindir() -> Path | None:
    """Where `initdb` and `pg_ctl` are: `pg_config --bindir`, else /usr/lib/postgresql/*/bin."""
    candidates: list[str] = []
    if shutil.which("pg_config"):
        result = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
        candidates.append(result.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if folder and (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


@contextlib.contextmanager
def running_postgres(*, fsync: bool = False) -> Iterator[str]:
    """A throwaway PostgreSQL server; yields its URL. `fsync=False` trades durability for speed."""
    bindir = postgres_bindir()
    if bindir is None:
        raise FileNotFoundError("PostgreSQL server binaries (initdb, pg_ctl)")
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder = Path(tempfile.mkdtemp(prefix="mcp-errors-pg-"))
    if as_postgres:
        shutil.chown(folder, "postgres")
    data, port = folder / "data", free_port()
    run = {"check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
    options = f"-h 127.0.0.1 -p {port} -k {folder} -c max_connections=200"
    if not fsync:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    try:
        subprocess.run([*as_postgres, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",  # type: ignore[call-overload]
                        "-E", "UTF8", "--no-sync"], **run)  # fmt: skip
        subprocess.run([*as_postgres, str(bindir / "pg_ctl"), "-D", str(data), "-o", options,  # type: ignore[call-overload]
                        "-l", str(folder / "server.log"), "-w", "-t", "60", "start"], **run)  # fmt: skip
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run([*as_postgres, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
                            "stop"], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def running_redis(*, password: str | None = None) -> Iterator[str]:
    """A throwaway Redis server (no persistence), asking for `password` when given; yields its URL
    (without the password)."""
    with redis_process(password=password) as (url, _):
        yield url


@contextlib.contextmanager
def redis_process(*, password: str | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A throwaway Redis server (no persistence) of one test's own: its URL and its process (to pause it)."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise FileNotFoundError("redis-server")
    folder = tempfile.mkdtemp(prefix="mcp-errors-redis-")
    port = free_port()
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    if password is not None:
        command += ["--requirepass", password]
    try:
        with listening([*command, "--dir", folder], port) as process:
            try:
                yield f"redis://127.0.0.1:{port}/0", process
            finally:
                process.send_signal(signal.SIGCONT)  # a test that paused it and failed: stop it whole
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fastmcp_before_4_2() -> bool:
    """Whether the installed fastmcp is older than 4.2: the one `fastmcp-tasks` pins (the second environment)."""
    import fastmcp  # fastmcp-slim's module, whichever distribution brought it

    major, minor = (int(part) for part in fastmcp.__version__.split(".")[:2])
    return (major, minor) < (4, 2)


def require_fastmcp_tasks() -> ModuleType:
    """`fastmcp_tasks`, or a skip of the calling module (a failure under `MCP_ERRORS_REQUIRE_TASKS=1`)."""
    if os.environ.get("MCP_ERRORS_REQUIRE_TASKS") == "1":
        return importlib.import_module("fastmcp_tasks")
    return pytest.importorskip(  # type: ignore[no-any-return]
        "fastmcp_tasks",
        reason="fastmcp-tasks pins an older fastmcp: run these in the second environment, "
        "uv run --project tests/tasks-env pytest",
    )


def _missing(what: str, install: str) -> NoReturn:
    message = f"{what} not found: install it ({install}) to run these tests"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}; under CI=true a missing server fails the run", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of a PostgreSQL server started for this test session."""
    if postgres_bindir() is None:
        _missing("PostgreSQL server binaries (initdb, pg_ctl)", "apt-get install postgresql")
    with running_postgres() as url:
        yield url


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """URL of a Redis server started for this test session."""
    if shutil.which("redis-server") is None:
        _missing("redis-server", "apt-get install redis-server")
    with running_redis() as url:
        yield url
