"""Capture, on this machine, the failure texts of real MCP servers and of the libraries under them.

    uv run python tools/collect_corpus.py --out tests/corpus/observed.json
    uv run python tools/collect_corpus.py --only sqlite,fetch --out /tmp/some.json

What it needs (each part that cannot run is reported in the output with the reason, and the
rest still runs):

- `npm ci --prefix tests/corpus` for the Node servers (versions pinned by package-lock.json);
- `uvx` for the Python servers, fetched from PyPI at the versions pinned below;
- PostgreSQL (`initdb`, `pg_ctl`; run as the `postgres` user when root), `redis-server`,
  `redis-cli`, MariaDB (`mariadbd`, optional), `git`, `node`;
- `unshare` (root) for an isolated network namespace: DNS failures are provoked there with a
  resolver on its own loopback that answers every name NXDOMAIN, or with no resolver at all,
  so no lookup leaves the machine. Every other failure uses 127.0.0.1 only.

Every server is driven through the official Python SDK's `mcp.Client` over stdio, exactly as
a host would; the output keeps what came back: `isError`, the text blocks, structuredContent,
or the JSON-RPC error code and message. Texts keep their variable parts (ports, paths) as
they came; the corpus copies one instance.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import http.server
import importlib.metadata
import json
import os
import platform
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

HERE = Path(__file__).resolve().parent
# The Node servers (`npm ci --prefix tests/corpus`) and the corpus itself stay with the tests.
CORPUS = HERE.parent / "tests" / "corpus"
NODE_SERVERS = CORPUS / "node_modules" / "@modelcontextprotocol"
CALL_TIMEOUT_S = 45
START_TIMEOUT_S = 120

# Python servers, at the versions the corpus was captured with. `mcp<2` where the server was
# written for the 1.x SDK: with mcp 2.x (what uvx resolves today) it does not start at all
# (`'Server' object has no attribute 'list_resources'`), which `start_failure` records too.
SQLITE = ("mcp-server-sqlite==2025.4.25", "mcp<2")
DUCKDB = ("mcp-server-duckdb==1.1.0", "mcp<2")
FETCH = ("mcp-server-fetch==2026.10.24",)
CALCULATOR = ("mcp-server-calculator==0.2.1",)
AIRFLOW = ("astro-airflow-mcp==0.9.1",)
REDIS_MCP = ("redis-mcp-server==0.5.1",)
MYSQL_MCP = ("mysql-mcp-server==0.4.4",)
TIME = ("mcp-server-time==2026.10.19",)
GIT = ("mcp-server-git==2026.10.19",)


def uvx(spec: tuple[str, ...], *command: str) -> list[str]:
    """The command line that runs a PyPI server at a pinned version, with extra pins."""
    line = ["uvx", "--from", spec[0]]
    for extra in spec[1:]:
        line += ["--with", extra]
    return [*line, *command]


def uvx_version(spec: tuple[str, ...]) -> str:
    return " + ".join(spec) + " (PyPI, via uvx)"


def npm_version(package: str) -> str:
    try:
        data = json.loads((NODE_SERVERS / package / "package.json").read_text())
    except OSError:
        return f"@modelcontextprotocol/{package} (not installed)"
    return f"@modelcontextprotocol/{package}@{data['version']} (npm)"


# --- what one call returned -----------------------------------------------------------------


@dataclass
class Call:
    """One tool call to make, and how to get the server ready for it."""

    label: str
    tool: str
    arguments: dict[str, Any]
    before: Callable[[], None] | None = None
    after: Callable[[], None] | None = None


@dataclass
class ServerRun:
    """One server to start, with the calls that make it fail."""

    id: str
    package: str
    command: list[str]
    calls: list[Call]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    note: str = ""


def record_result(result: Any) -> dict[str, Any]:
    texts = [getattr(block, "text", None) for block in result.content]
    return {
        "isError": bool(result.is_error),
        "text": [text for text in texts if isinstance(text, str)],
        "otherContent": [block.type for block in result.content if getattr(block, "text", None) is None],
        "structuredContent": result.structured_content,
    }


async def drive(run: ServerRun) -> dict[str, Any]:
    """Start one server over stdio, make its calls, and keep what came back."""
    out: dict[str, Any] = {"id": run.id, "package": run.package, "command": run.command, "note": run.note}
    calls: list[dict[str, Any]] = []
    out["calls"] = calls
    env = {**os.environ, **run.env}
    params = StdioServerParameters(command=run.command[0], args=run.command[1:], env=env, cwd=run.cwd)
    with tempfile.TemporaryFile("w+") as errlog:
        try:
            # The child's stderr goes to `errlog`: its last lines explain a server that cannot start.
            with anyio.fail_after(START_TIMEOUT_S + CALL_TIMEOUT_S * (len(run.calls) + 1)):
                async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                    out["tools"] = sorted(tool.name for tool in (await client.list_tools()).tools)
                    out["started"] = True
                    for call in run.calls:
                        calls.append(await make_call(client, call))
        except Exception as exc:
            out.setdefault("started", False)
            out["failure"] = f"{type(exc).__name__}: {exc}"[:500]
        if not out["started"] or "failure" in out:
            errlog.seek(0)
            out["stderr_tail"] = errlog.read().strip().splitlines()[-8:]
    return out


async def make_call(client: Client, call: Call) -> dict[str, Any]:
    entry: dict[str, Any] = {"label": call.label, "tool": call.tool, "arguments": call.arguments}
    try:
        if call.before is not None:
            await anyio.to_thread.run_sync(call.before)
        started = time.monotonic()
        with anyio.fail_after(CALL_TIMEOUT_S):
            result = await client.call_tool(call.tool, call.arguments)
        entry.update(record_result(result))
        entry["seconds"] = round(time.monotonic() - started, 1)
    except MCPError as exc:
        entry["jsonrpc_error"] = {"code": exc.code, "message": exc.message}
    except TimeoutError:
        entry["no_answer"] = f"no answer within {CALL_TIMEOUT_S} s"
    finally:
        if call.after is not None:
            await anyio.to_thread.run_sync(call.after)
    return entry


# --- a local HTTP service that fails on demand ------------------------------------------------


class Stub(http.server.ThreadingHTTPServer):
    """An HTTP server on 127.0.0.1 whose answers are set per path, or for every path at once.

    `/status/<code>` answers that status (http.server's own error page, `Retry-After: 7` on 429
    and 503), `/hang` never answers, `/close` closes the connection without an answer, `/reset`
    resets it, `/page/<name>` serves one of `PAGES`. `every` (a status) overrides all but
    robots.txt, for servers that call fixed API paths.
    """

    daemon_threads = True

    def __init__(self, *, robots_status: int = 200) -> None:
        super().__init__(("127.0.0.1", 0), StubHandler)
        self.robots_status = robots_status
        self.every: int | None = None
        self.released = threading.Event()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet: a reset connection's handler fails on the socket it closed itself."""

    def close(self) -> None:
        self.released.set()
        self.shutdown()
        self.server_close()


PAGES = {
    # A how-to page whose subject is an error: fetching it is a success.
    "troubleshooting": (
        "<html><head><title>Fixing 'connection refused'</title></head><body><h1>Fixing 'connection refused'</h1>"
        "<p>If psql prints <code>connection refused</code>, the server is not listening on that port. "
        "Check that PostgreSQL is running, then try again. A timeout instead means a firewall drops the packets.</p>"
        "</body></html>"
    ),
    "postmortem": (
        "<html><head><title>Postmortem: checkout errors</title></head><body>"
        "<h1>Postmortem: checkout errors on 2 December</h1>"
        "<p>Between 10:02 and 10:19 UTC, 4% of checkout requests failed with 502 Bad Gateway "
        "because a deploy exhausted "
        "the database connection pool. Requests retried by clients succeeded.</p></body></html>"
    ),
    "log": (
        "2026-12-03 10:00:01 INFO  worker started\n"
        "2026-12-03 10:00:02 ERROR payment-sync: upstream returned 503 Service Unavailable\n"
        "2026-12-03 10:00:09 INFO  payment-sync: retry succeeded\n"
    ),
}


class StubHandler(http.server.BaseHTTPRequestHandler):
    server: Stub

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the stub's requests are not news."""

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == "/robots.txt":
            if self.server.robots_status != 200:
                self.send_error(self.server.robots_status)
                return
            self._send(200, "User-agent: *\nDisallow: /private\n", "text/plain")
        elif self.server.every is not None:
            self._error(self.server.every)
        elif path.startswith("/status/"):
            self._error(int(path.rsplit("/", 1)[1]))
        elif path == "/hang":
            self.server.released.wait(90)
        elif path == "/close":
            self.close_connection = True
        elif path == "/reset":
            # Linger 0: closing sends RST, not FIN. Closed here, before the handler's own
            # shutdown would send a FIN first.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.connection.close()
            self.close_connection = True
        elif path.startswith("/page/") and path[6:] in PAGES:
            self._send(200, PAGES[path[6:]], "text/plain" if path.endswith("/log") else "text/html")
        else:
            self._error(404)

    do_POST = do_GET  # noqa: N815 - http.server's names
    do_PATCH = do_GET  # noqa: N815
    do_DELETE = do_GET  # noqa: N815

    def _error(self, status: int) -> None:
        if status in (429, 503):
            # http.server has no way to add a header to send_error's answer but to send it first.
            self.send_response(status)
            self.send_header("Retry-After", "7")
            body = f"{status} {http.HTTPStatus(status).phrase}\n".encode()
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_error(status)

    def _send(self, status: int, text: str, kind: str) -> None:
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- isolated network namespaces for DNS failures ---------------------------------------------

NXDNS = HERE / "corpus_nxdns.py"
RESOLV_CONF = Path(tempfile.gettempdir()) / "mcp-errors-corpus-resolv.conf"
"""What /etc/resolv.conf becomes inside the namespace: the responder on its own loopback."""


def in_netns(command: list[str], *, resolver: bool) -> list[str]:
    """`command` run in a new network (and mount) namespace with only a loopback.

    With `resolver`, /etc/resolv.conf points at `corpus_nxdns.py` on that loopback, which answers
    every name NXDOMAIN ("Name or service not known", `ENOTFOUND`); without, the system's
    resolver is unreachable ("Temporary failure in name resolution", `EAI_AGAIN`).
    """
    if not resolver:
        return ["unshare", "-n", "sh", "-c", 'ip link set lo up 2>/dev/null; exec "$@"', "sh", *command]
    RESOLV_CONF.write_text("nameserver 127.0.0.1\noptions attempts:1 timeout:1\n")
    # Not `exec`: the shell stays to stop the responder when the command ends or is stopped.
    script = (
        f"ip link set lo up 2>/dev/null; mount --bind {RESOLV_CONF} /etc/resolv.conf || exit 1; "
        f"{sys.executable} {NXDNS} >/dev/null 2>&1 & dns=$!; "
        "trap 'kill $dns 2>/dev/null' EXIT; trap 'exit 143' TERM INT; sleep 0.5; \"$@\""
    )
    return ["unshare", "-n", "-m", "sh", "-c", script, "sh", *command]


def readonly_mount(folder: Path, command: list[str]) -> list[str]:
    """`command` run in a new mount namespace where `folder` is mounted read-only."""
    script = f'mount --bind {folder} {folder} && mount -o remount,ro,bind {folder} {folder} && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, "sh", *command]


# --- real database servers, started here --------------------------------------------------------

sys.path.insert(0, str(HERE.parent / "tests"))
from services import free_port, postgres_bindir, stop, wait_for_port  # type: ignore[import-not-found]  # noqa: E402

PG_PASSWORD = "corpus-secret"


@dataclass
class Lab:
    """Everything the captures share: a scratch folder, HTTP stubs and database servers."""

    root: Path
    stub: Stub
    stub_robots_forbidden: Stub
    postgres: str | None = None  # postgresql://postgres:...@127.0.0.1:port/postgres
    postgres_why: str = ""
    redis_port: int | None = None
    redis_auth_port: int | None = None
    redis_replica_port: int | None = None
    redis_why: str = ""
    mariadb_port: int | None = None
    mariadb_why: str = ""
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)


@contextlib.contextmanager
def postgres_cluster(root: Path) -> Iterator[tuple[str, Path, Path]]:
    """A throwaway PostgreSQL with password auth and few connection slots; yields (url, bindir, data)."""
    bindir = postgres_bindir()
    if bindir is None:
        raise FileNotFoundError("PostgreSQL server binaries (initdb, pg_ctl)")
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    folder = root / "pg"
    folder.mkdir()
    pwfile = folder / "pw"
    pwfile.write_text(PG_PASSWORD + "\n")
    if as_postgres:
        shutil.chown(folder, "postgres")
        shutil.chown(pwfile, "postgres")
    data, port = folder / "data", free_port()
    run: dict[str, Any] = {"check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
    # Eight slots, so that "too many clients" can be reached with a handful of connections.
    options = f"-h 127.0.0.1 -p {port} -k {folder} -c max_connections=8 -c superuser_reserved_connections=0"
    options += " -c fsync=off -c lc_messages=C"
    subprocess.run(
        [
            *as_postgres,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-A",
            "scram-sha-256",
            "-U",
            "postgres",
            f"--pwfile={pwfile}",
            "-E",
            "UTF8",
            "--no-sync",
            "--locale=C",
        ],
        **run,
    )
    subprocess.run(
        [
            *as_postgres,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(folder / "server.log"),
            "-w",
            "-t",
            "60",
            "start",
        ],
        **run,
    )
    try:
        yield f"postgresql://postgres:{PG_PASSWORD}@127.0.0.1:{port}/postgres", bindir, data
    finally:
        subprocess.run(
            [*as_postgres, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def start_redis(lab: Lab, *extra: str) -> int:
    binary = shutil.which("redis-server")
    if binary is None:
        raise FileNotFoundError("redis-server")
    port = free_port()
    folder = tempfile.mkdtemp(prefix="corpus-redis-", dir=lab.root)
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            folder,
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    lab.processes.append(process)
    wait_for_port(port, process=process)
    return int(port)


MARIADB_PASSWORD = "corpus-secret"


def start_mariadb(lab: Lab) -> int:
    for binary in ("mariadbd", "mariadb-install-db"):
        if shutil.which(binary) is None:
            raise FileNotFoundError(f"{binary} (apt-get install mariadb-server)")
    folder = lab.root / "mariadb"
    folder.mkdir()
    subprocess.run(
        [
            "mariadb-install-db",
            f"--datadir={folder / 'data'}",
            "--user=root",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    init = folder / "init.sql"
    init.write_text(
        f"ALTER USER 'root'@'localhost' IDENTIFIED BY '{MARIADB_PASSWORD}';\n"
        f"CREATE USER IF NOT EXISTS 'root'@'127.0.0.1';\n"
        f"ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY '{MARIADB_PASSWORD}';\n"
        "GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n"
        "CREATE DATABASE shop;\n"
        "CREATE TABLE shop.orders (id INT PRIMARY KEY, status VARCHAR(20) NOT NULL) ENGINE=InnoDB;\n"
        "INSERT INTO shop.orders VALUES (1, 'shipped'), (2, 'open');\n"
        "CREATE USER 'reader'@'127.0.0.1' IDENTIFIED BY 'reader-secret';\n"
        "GRANT SELECT ON shop.* TO 'reader'@'127.0.0.1';\n"
    )
    port = free_port()
    process = subprocess.Popen(
        [
            "mariadbd",
            f"--datadir={folder / 'data'}",
            "--user=root",
            f"--port={port}",
            "--bind-address=127.0.0.1",
            f"--socket={folder / 'sock'}",
            f"--init-file={init}",
            "--max-connections=5",
            "--innodb-lock-wait-timeout=1",
            "--skip-log-bin",
            "--innodb-buffer-pool-size=16M",
            f"--pid-file={folder / 'pid'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    lab.processes.append(process)
    wait_for_port(port, process=process, timeout=60)
    return int(port)


@contextlib.contextmanager
def laboratory() -> Iterator[Lab]:
    root = Path(tempfile.mkdtemp(prefix="corpus-lab-"))
    os.chmod(root, 0o755)  # the postgres user reaches its folder through it
    stub, forbidden = Stub(), Stub(robots_status=403)
    lab = Lab(root=root, stub=stub, stub_robots_forbidden=forbidden)
    with contextlib.ExitStack() as stack:
        try:
            lab.postgres = stack.enter_context(postgres_cluster(root))[0]
            prepare_postgres(lab.postgres)
        except (OSError, subprocess.CalledProcessError) as exc:
            lab.postgres_why = f"{type(exc).__name__}: {exc}"
        try:
            lab.redis_port = start_redis(lab)
            lab.redis_auth_port = start_redis(lab, "--requirepass", "corpus-secret")
            lab.redis_replica_port = start_redis(lab, "--replicaof", "127.0.0.1", str(lab.redis_port))
        except (OSError, RuntimeError) as exc:
            lab.redis_why = f"{type(exc).__name__}: {exc}"
        try:
            lab.mariadb_port = start_mariadb(lab)
        except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
            lab.mariadb_why = f"{type(exc).__name__}: {exc}"
        try:
            yield lab
        finally:
            for process in lab.processes:
                stop(process)
            stub.close()
            forbidden.close()
    shutil.rmtree(root, ignore_errors=True)


# --- the MCP servers and the calls that make them fail ------------------------------------------


def make_sqlite(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(
            "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE NOT NULL, error TEXT);"
            "INSERT INTO users (email, error) VALUES ('ada@example.com', NULL), ('bob@example.com', 'timeout');"
            "CREATE TABLE logs (level TEXT, message TEXT);"
            "INSERT INTO logs VALUES ('ERROR', 'connection refused by payments-db'), ('INFO', 'retry succeeded');"
        )
        db.commit()


class HeldLock:
    """A second connection that holds a SQLite database's write lock between `take` and `release`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db: sqlite3.Connection | None = None

    def take(self) -> None:
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("BEGIN EXCLUSIVE")

    def release(self) -> None:
        if self.db is not None:
            self.db.execute("ROLLBACK")
            self.db.close()
            self.db = None


class Swap:
    """Put something else where a server's own file or folder is, for one call."""

    def __init__(self, path: Path, replacement: bytes | None) -> None:
        self.path, self.replacement = path, replacement
        self.aside = path.with_name(path.name + ".aside")

    def apply(self) -> None:
        self.path.rename(self.aside)
        if self.replacement is not None:
            self.path.write_bytes(self.replacement)

    def undo(self) -> None:
        if self.replacement is not None:
            self.path.unlink()
        self.aside.rename(self.path)


def sqlite_runs(lab: Lab) -> list[ServerRun]:
    folder = lab.root / "sqlite"
    db = folder / "app.db"
    make_sqlite(db)
    lock = HeldLock(db)
    garbage = Swap(db, b"this is not a database file, just text written over it\n" * 20)
    gone = Swap(folder, None)
    read, write, create = "read_query", "write_query", "create_table"
    calls = [
        Call("SQL syntax error", read, {"query": "SELECT * FORM users"}),
        Call("unknown table", read, {"query": "SELECT * FROM orders"}),
        Call("unknown column", read, {"query": "SELECT nme FROM users"}),
        Call("duplicate unique value", write, {"query": "INSERT INTO users (email) VALUES ('ada@example.com')"}),
        Call("null in NOT NULL column", write, {"query": "INSERT INTO users (email) VALUES (NULL)"}),
        Call("table already exists", create, {"query": "CREATE TABLE users (id INTEGER)"}),
        Call("write through read_query", read, {"query": "DELETE FROM users"}),
        Call("SELECT through write_query", write, {"query": "SELECT 1"}),
        Call("not a CREATE TABLE", create, {"query": "DROP TABLE users"}),
        Call("missing query argument", read, {}),
        Call(
            "wrong type in a typed column",
            write,
            {"query": "INSERT INTO users (id, email) VALUES ('x', 'c@example.com')"},
        ),
        Call(
            "database locked by another connection",
            write,
            {"query": "UPDATE users SET error = NULL WHERE id = 2"},
            before=lock.take,
            after=lock.release,
        ),
        Call(
            "database file replaced by garbage",
            read,
            {"query": "SELECT * FROM users"},
            before=garbage.apply,
            after=garbage.undo,
        ),
        Call("database folder gone", read, {"query": "SELECT * FROM users"}, before=gone.apply, after=gone.undo),
        # Successes whose data mention errors.
        Call("success: log rows with ERROR", read, {"query": "SELECT level, message FROM logs"}),
        Call("success: a column named error", read, {"query": "SELECT email, error FROM users"}),
        Call(
            "success: a count of failed jobs",
            read,
            {"query": "SELECT count(*) AS failed_jobs FROM logs WHERE level = 'ERROR'"},
        ),
        Call("success: describe a missing table", "describe_table", {"table_name": "nosuchtable"}),
    ]
    ro_folder = lab.root / "sqlite-ro"
    make_sqlite(ro_folder / "app.db")
    return [
        ServerRun(
            "mcp-server-sqlite", uvx_version(SQLITE), uvx(SQLITE, "mcp-server-sqlite", "--db-path", str(db)), calls
        ),
        ServerRun(
            "mcp-server-sqlite:read-only-mount",
            uvx_version(SQLITE),
            readonly_mount(ro_folder, uvx(SQLITE, "mcp-server-sqlite", "--db-path", str(ro_folder / "app.db"))),
            [
                Call(
                    "write on a read-only mount", write, {"query": "INSERT INTO users (email) VALUES ('c@example.com')"}
                )
            ],
            note="the database folder is mounted read-only in a private mount namespace (root ignores file modes)",
        ),
    ]


class HeldDuckDB:
    """Another process that keeps a DuckDB file open for writing, as a second app would."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.process: subprocess.Popen[bytes] | None = None

    def take(self) -> None:
        code = (
            f"import duckdb, time; c = duckdb.connect({str(self.path)!r}); print('ready', flush=True); time.sleep(60)"
        )
        # Its own session: uvx runs python as a child, and both must go at `release`.
        self.process = subprocess.Popen(
            uvx(DUCKDB, "python", "-c", code), stdout=subprocess.PIPE, start_new_session=True
        )
        assert self.process.stdout is not None
        self.process.stdout.readline()

    def release(self) -> None:
        if self.process is not None:
            os.killpg(self.process.pid, 9)
            self.process.wait()


def duckdb_runs(lab: Lab) -> list[ServerRun]:
    folder = lab.root / "duckdb"
    folder.mkdir()
    db = folder / "app.duckdb"
    subprocess.run(
        uvx(
            DUCKDB,
            "python",
            "-c",
            f"import duckdb; c = duckdb.connect({str(db)!r}); "
            'c.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, status VARCHAR NOT NULL, error VARCHAR)"); '
            "c.execute(\"INSERT INTO orders VALUES (1, 'shipped', NULL), (2, 'failed', 'card declined')\")",
        ),
        check=True,
        capture_output=True,
    )
    held = HeldDuckDB(db)
    q = "query"
    calls = [
        Call("SQL syntax error", q, {"query": "SELEC * FROM orders"}),
        Call("unknown table", q, {"query": "SELECT * FROM customers"}),
        Call("unknown column", q, {"query": "SELECT statuz FROM orders"}),
        Call("bad cast", q, {"query": "SELECT 'abc'::INTEGER"}),
        Call("duplicate primary key", q, {"query": "INSERT INTO orders VALUES (1, 'open', NULL)"}),
        Call("null in NOT NULL column", q, {"query": "INSERT INTO orders VALUES (3, NULL, NULL)"}),
        Call(
            "database held by another process",
            q,
            {"query": "SELECT * FROM orders"},
            before=held.take,
            after=held.release,
        ),
        Call("success: rows with error words", q, {"query": "SELECT id, status, error FROM orders"}),
    ]
    return [
        ServerRun(
            "mcp-server-duckdb", uvx_version(DUCKDB), uvx(DUCKDB, "mcp-server-duckdb", "--db-path", str(db)), calls
        ),
        ServerRun(
            "mcp-server-duckdb:readonly",
            uvx_version(DUCKDB),
            uvx(DUCKDB, "mcp-server-duckdb", "--db-path", str(db), "--readonly"),
            [Call("write in read-only mode", q, {"query": "CREATE TABLE t (x INTEGER)"})],
        ),
    ]


def fetch_runs(lab: Lab) -> list[ServerRun]:
    base, closed = lab.stub.base, f"http://127.0.0.1:{closed_port()}/"
    fetch = "fetch"
    command = uvx(FETCH, "mcp-server-fetch")
    private = [*command, "--allow-private-ips"]
    no_robots = [*private, "--ignore-robots-txt"]
    return [
        ServerRun(
            "mcp-server-fetch",
            uvx_version(FETCH),
            command,
            [
                Call("loopback refused by default", fetch, {"url": f"{base}/page/troubleshooting"}),
                Call("not a URL", fetch, {"url": "not a url"}),
                Call("max_length out of range", fetch, {"url": f"{base}/", "max_length": -5}),
            ],
        ),
        ServerRun(
            "mcp-server-fetch:private",
            uvx_version(FETCH),
            private,
            [
                Call("closed port (robots.txt first)", fetch, {"url": closed}),
                Call("404", fetch, {"url": f"{base}/status/404"}),
                Call("410", fetch, {"url": f"{base}/status/410"}),
                Call("500", fetch, {"url": f"{base}/status/500"}),
                Call("502", fetch, {"url": f"{base}/status/502"}),
                Call("503", fetch, {"url": f"{base}/status/503"}),
                Call("429", fetch, {"url": f"{base}/status/429"}),
                Call("401", fetch, {"url": f"{base}/status/401"}),
                Call("robots.txt disallows", fetch, {"url": f"{base}/private/report"}),
                Call("robots.txt answers 403", fetch, {"url": f"{lab.stub_robots_forbidden.base}/page/log"}),
                Call("success: a page about connection refused", fetch, {"url": f"{base}/page/troubleshooting"}),
                Call("success: a postmortem about 502 errors", fetch, {"url": f"{base}/page/postmortem"}),
                Call("success: a log with ERROR lines", fetch, {"url": f"{base}/page/log", "raw": True}),
            ],
            note="--allow-private-ips: the stub HTTP server is on 127.0.0.1",
        ),
        ServerRun(
            "mcp-server-fetch:no-robots",
            uvx_version(FETCH),
            no_robots,
            [
                Call("closed port", fetch, {"url": closed}),
                Call("connection closed without an answer", fetch, {"url": f"{base}/close"}),
                Call("connection reset", fetch, {"url": f"{base}/reset"}),
                Call("no answer in 30 s", fetch, {"url": f"{base}/hang"}),
            ],
            note="--allow-private-ips --ignore-robots-txt",
        ),
        ServerRun(
            "mcp-server-fetch:nxdomain",
            uvx_version(FETCH),
            in_netns([*no_robots[:1], "--offline", *no_robots[1:]], resolver=True),
            [Call("unknown host", fetch, {"url": "http://docs.example.invalid/guide"})],
            note="isolated network namespace; its resolver answers NXDOMAIN",
        ),
        ServerRun(
            "mcp-server-fetch:no-resolver",
            uvx_version(FETCH),
            in_netns([*no_robots[:1], "--offline", *no_robots[1:]], resolver=False),
            [Call("resolver unreachable", fetch, {"url": "http://docs.example.invalid/guide"})],
            note="isolated network namespace; no resolver reachable",
        ),
    ]


def time_runs(lab: Lab) -> list[ServerRun]:
    return [
        ServerRun(
            "mcp-server-time",
            uvx_version(TIME),
            uvx(TIME, "mcp-server-time", "--local-timezone", "UTC"),
            [
                Call("unknown time zone", "get_current_time", {"timezone": "Mars/Olympus_Mons"}),
                Call(
                    "bad time",
                    "convert_time",
                    {"source_timezone": "UTC", "time": "25:99", "target_timezone": "Europe/Paris"},
                ),
                Call(
                    "unknown target zone",
                    "convert_time",
                    {"source_timezone": "UTC", "time": "10:00", "target_timezone": "Europe/Atlantis"},
                ),
                Call("missing argument", "get_current_time", {}),
            ],
        ),
    ]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def git_runs(lab: Lab) -> list[ServerRun]:
    repo, empty = lab.root / "repo", lab.root / "empty-repo"
    for folder in (repo, empty):
        folder.mkdir()
        git(folder, "init", "-q", "-b", "main")
        git(folder, "config", "user.email", "dev@example.com")
        git(folder, "config", "user.name", "Dev")
    (repo / "retry.py").write_text("def fetch():\n    raise TimeoutError('upstream timed out')\n")
    git(repo, "add", "retry.py")
    git(repo, "commit", "-q", "-m", "Fix timeout in the retry loop; the error was swallowed")
    git(repo, "branch", "feature")
    r = str(repo)
    return [
        ServerRun(
            "mcp-server-git",
            uvx_version(GIT),
            uvx(GIT, "mcp-server-git"),
            [
                Call("not a repository", "git_status", {"repo_path": str(lab.root)}),
                Call("missing path", "git_status", {"repo_path": str(lab.root / "nowhere")}),
                Call("unknown revision", "git_show", {"repo_path": r, "revision": "v9.9.9"}),
                Call("pathspec matches nothing", "git_add", {"repo_path": r, "files": ["missing.txt"]}),
                Call("branch exists", "git_create_branch", {"repo_path": r, "branch_name": "feature"}),
                Call("checkout unknown branch", "git_checkout", {"repo_path": r, "branch_name": "does-not-exist"}),
                Call("log of a repository without commits", "git_log", {"repo_path": str(empty)}),
                Call("diff against unknown target", "git_diff", {"repo_path": r, "target": "nope"}),
                Call("success: a log whose message says timeout and error", "git_log", {"repo_path": r}),
                Call(
                    "success: show of a commit that raises TimeoutError",
                    "git_show",
                    {"repo_path": r, "revision": "HEAD"},
                ),
            ],
        ),
    ]


def calculator_runs(lab: Lab) -> list[ServerRun]:
    calc = "calculate"
    return [
        ServerRun(
            "mcp-server-calculator",
            uvx_version(CALCULATOR),
            uvx(CALCULATOR, "mcp-server-calculator"),
            [
                Call("division by zero", calc, {"expression": "1/0"}),
                Call("unknown identifier", calc, {"expression": "price * 2"}),
                Call("syntax error", calc, {"expression": "2 +"}),
                Call("math domain error", calc, {"expression": "sqrt(-1)"}),
                Call("overflow", calc, {"expression": "10.0 ** 1000"}),
                Call("unsupported operation", calc, {"expression": "[1, 2]"}),
                Call("missing argument", calc, {}),
            ],
        ),
    ]


def airflow_runs(lab: Lab) -> list[ServerRun]:
    runs = [
        ServerRun(
            "astro-airflow-mcp:closed-port",
            uvx_version(AIRFLOW),
            uvx(AIRFLOW, "astro-airflow-mcp", "--airflow-url", f"http://127.0.0.1:{closed_port()}"),
            [
                Call("list DAGs, nothing listening", "list_dags", {}),
                Call("DAG details, nothing listening", "get_dag_details", {"dag_id": "daily_sales"}),
                Call("trigger, nothing listening", "trigger_dag", {"dag_id": "daily_sales"}),
            ],
        )
    ]
    stub = lab.stub

    def answer(status: int | None) -> Callable[[], None]:
        def set_status() -> None:
            stub.every = status

        return set_status

    calls = []
    for status in (401, 403, 404, 409, 500, 503):
        calls.append(
            Call(
                f"API answers {status}",
                "get_dag_details",
                {"dag_id": "daily_sales"},
                before=answer(status),
                after=answer(None),
            )
        )
    runs.append(
        ServerRun(
            "astro-airflow-mcp:stub",
            uvx_version(AIRFLOW),
            uvx(AIRFLOW, "astro-airflow-mcp", "--airflow-url", stub.base),
            calls,
            note="the Airflow URL is a local stub that answers the status named, with http.server's error page",
        )
    )
    return runs


def node(package: str, *args: str) -> list[str]:
    entry = NODE_SERVERS / package / "dist" / "index.js"
    return ["node", str(entry), *args]


def memory_runs(lab: Lab) -> list[ServerRun]:
    folder = lab.root / "memory"
    folder.mkdir()
    good = folder / "memory.jsonl"
    good.write_text(
        json.dumps(
            {
                "type": "entity",
                "name": "billing-job",
                "entityType": "service",
                "observations": ["Fixed the connection timeout in the nightly run", "No errors since the fix"],
            }
        )
        + "\n"
    )
    broken = folder / "broken.jsonl"
    broken.write_text(
        '{"type": "entity", "name": "a", "entityType": "x", "observations": []}\n{"type": "entity", "name": \n'
    )
    package = npm_version("server-memory")
    return [
        ServerRun(
            "server-memory",
            package,
            node("server-memory"),
            [
                Call(
                    "observation for a missing entity",
                    "add_observations",
                    {"observations": [{"entityName": "nobody", "contents": ["x"]}]},
                ),
                Call("entities of the wrong type", "create_entities", {"entities": "billing-job"}),
                Call("missing argument", "open_nodes", {}),
                Call("unknown tool", "forget_everything", {}),
                Call("success: search for timeout", "search_nodes", {"query": "timeout"}),
                Call("success: search that finds nothing", "search_nodes", {"query": "kubernetes"}),
                Call(
                    "success: create an entity about errors",
                    "create_entities",
                    {
                        "entities": [
                            {
                                "name": "error-budget",
                                "entityType": "slo",
                                "observations": [
                                    "Error rate: 0.3% over 30 days",
                                    "Failed requests are mostly timeouts",
                                ],
                            }
                        ]
                    },
                ),
                Call("success: search for error", "search_nodes", {"query": "error"}),
            ],
            env={"MEMORY_FILE_PATH": str(good)},
        ),
        ServerRun(
            "server-memory:missing-folder",
            package,
            node("server-memory"),
            [
                Call(
                    "write to a memory file whose folder is missing",
                    "create_entities",
                    {"entities": [{"name": "a", "entityType": "x", "observations": []}]},
                ),
            ],
            env={"MEMORY_FILE_PATH": str(folder / "missing" / "memory.jsonl")},
            note="MEMORY_FILE_PATH (the server's own storage) points into a folder that does not exist",
        ),
        ServerRun(
            "server-memory:corrupt-file",
            package,
            node("server-memory"),
            [
                Call("read a corrupt memory file", "read_graph", {}),
            ],
            env={"MEMORY_FILE_PATH": str(broken)},
            note="MEMORY_FILE_PATH holds a truncated JSON line",
        ),
    ]


def thinking_runs(lab: Lab) -> list[ServerRun]:
    tool = "sequentialthinking"
    ok = {"thought": "First step", "nextThoughtNeeded": True, "thoughtNumber": 1, "totalThoughts": 3}
    return [
        ServerRun(
            "server-sequential-thinking",
            npm_version("server-sequential-thinking"),
            node("server-sequential-thinking"),
            [
                Call("thoughtNumber below minimum", tool, {**ok, "thoughtNumber": 0}),
                Call("missing fields", tool, {"thought": "only this"}),
                Call("wrong type", tool, {**ok, "totalThoughts": "three"}),
            ],
            env={"DISABLE_THOUGHT_LOGGING": "true"},
        ),
    ]


SUCCESS_FILES = {
    "api-response.json": '{"data": {"orderId": "A-1001", "status": "shipped"}, "errors": []}\n',
    "result.json": '{"error": null, "result": 42}\n',
    "health.json": '{"status": "ok", "failed_checks": 0, "checks": {"db": "ok", "cache": "ok"}}\n',
    "traceback.txt": (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/sync.py", line 41, in <module>\n'
        "    main()\n"
        '  File "/srv/app/sync.py", line 37, in main\n'
        "    raise TimeoutError('upstream timed out after 30 s')\n"
        "TimeoutError: upstream timed out after 30 s\n"
    ),
    "error-report.csv": "date,errors,warnings\n2026-12-01,0,3\n2026-12-02,2,1\n",
    "lint.txt": "No errors found. 0 warnings.\n",
    "stats.txt": "Mean: 4.21\nStandard error: 0.051\nN: 120\n",
    "jobs.txt": "Jobs failed: 0 of 12; all 12 succeeded.\n",
    "issues.txt": "0 issues matching 'timeout'\n",
    "error-codes.md": (
        "# Error codes\n\n| code | meaning |\n|---|---|\n"
        "| E1001 | Connection refused by the payment gateway |\n| E1002 | Timeout waiting for the ledger |\n"
    ),
    "incident.md": "Incident 4512 resolved: the 502 Bad Gateway errors stopped after the load balancer restart.\n",
    "retry-policy.md": "Retries: on a timeout or a 503, wait 2 s and try again; never retry a 400 validation error.\n",
    "test-report.txt": "collected 48 items\n\n48 passed, 0 failed, 0 errors in 3.12s\n",
    "deploy.log": (
        "[deploy] started\n[deploy] step 3/5 failed: connection refused (attempt 1)\n"
        "[deploy] step 3/5 ok (attempt 2)\n[deploy] done: 5/5 steps succeeded\n"
    ),
    "faq.md": (
        "Q: What does 'permission denied' mean?\nA: The account lacks access to the folder; ask an administrator.\n"
    ),
    "summary.json": '{"errors": [], "warnings": [], "summary": "0 errors, 0 warnings"}\n',
}


def filesystem_runs(lab: Lab) -> list[ServerRun]:
    root = lab.root / "fsroot"
    (root / "docs").mkdir(parents=True)
    (root / "app.log").write_text(PAGES["log"])
    (root / "notes.md").write_text("# Notes\nThe deploy failed twice last week; both were timeouts.\n")
    (root / "docs" / "a.md").write_text("a")
    (root / "docs" / "b.md").write_text("b")
    # Files whose content mentions errors: reading them succeeds, and must stay a success.
    data = root / "data"
    data.mkdir()
    for name, content in SUCCESS_FILES.items():
        (data / name).write_text(content)
    r = str(root)
    return [
        ServerRun(
            "server-filesystem",
            npm_version("server-filesystem"),
            node("server-filesystem", r),
            [
                Call("outside the allowed directories", "read_text_file", {"path": "/etc/hostname"}),
                Call("missing file", "read_text_file", {"path": f"{r}/missing.txt"}),
                Call("a directory as a file", "read_text_file", {"path": f"{r}/docs"}),
                Call("a file as a directory", "list_directory", {"path": f"{r}/app.log"}),
                Call(
                    "edit text not found",
                    "edit_file",
                    {"path": f"{r}/notes.md", "edits": [{"oldText": "no such text", "newText": "x"}]},
                ),
                Call(
                    "move onto an existing file",
                    "move_file",
                    {"source": f"{r}/docs/a.md", "destination": f"{r}/docs/b.md"},
                ),
                Call("create a directory where a file is", "create_directory", {"path": f"{r}/app.log/sub"}),
                Call("head and tail together", "read_text_file", {"path": f"{r}/app.log", "head": 1, "tail": 1}),
                Call("missing argument", "read_text_file", {}),
                Call("success: a log with ERROR lines", "read_text_file", {"path": f"{r}/app.log"}),
                Call("success: a note about failures", "read_text_file", {"path": f"{r}/notes.md"}),
                Call("success: search that finds nothing", "search_files", {"path": r, "pattern": "timeout*.txt"}),
                *[
                    Call(f"success: read data/{name}", "read_text_file", {"path": f"{r}/data/{name}"})
                    for name in SUCCESS_FILES
                ],
                Call("success: files named after errors", "search_files", {"path": r, "pattern": "*error*"}),
                Call("success: a listing with error files", "list_directory", {"path": f"{r}/data"}),
            ],
        ),
    ]


def everything_runs(lab: Lab) -> list[ServerRun]:
    base, closed = lab.stub.base, f"http://127.0.0.1:{closed_port()}/"
    gz = "gzip-file-as-resource"
    return [
        ServerRun(
            "server-everything",
            npm_version("server-everything"),
            node("server-everything", "stdio"),
            [
                Call("wrong argument type", "get-sum", {"a": "one", "b": 2}),
                Call("invalid resource id", "get-resource-reference", {"resourceType": "Text", "resourceId": -3}),
                Call("fetch: closed port", gz, {"name": "a.gz", "data": closed}),
                Call("fetch: connection closed", gz, {"name": "a.gz", "data": f"{base}/close"}),
                Call("fetch: connection reset", gz, {"name": "a.gz", "data": f"{base}/reset"}),
                Call("fetch: too slow", gz, {"name": "a.gz", "data": f"{base}/hang"}),
                Call("fetch: domain not allowed", gz, {"name": "a.gz", "data": "https://files.example.org/a.txt"}),
                Call("fetch: unsupported protocol", gz, {"name": "a.gz", "data": "ftp://files.example.org/a.txt"}),
                Call("fetch: response too large", gz, {"name": "a.gz", "data": f"{base}/page/log"}),
            ],
            env={
                "GZIP_MAX_FETCH_TIME_MILLIS": "2000",
                "GZIP_ALLOWED_DOMAINS": "127.0.0.1",
                "GZIP_MAX_FETCH_SIZE": "64",
            },
        ),
    ]


def prepare_postgres(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute("CREATE TABLE orders (id int PRIMARY KEY, status text NOT NULL, error text)")
        db.execute("INSERT INTO orders VALUES (1, 'shipped', NULL), (2, 'failed', 'card_declined')")
        db.execute("CREATE TABLE salaries (id int PRIMARY KEY, amount numeric)")
        db.execute("CREATE ROLE analyst LOGIN PASSWORD 'analyst-secret'")
        db.execute("GRANT SELECT ON orders TO analyst")


def postgres_runs(lab: Lab) -> list[ServerRun]:
    package = npm_version("server-postgres")
    runs = [
        ServerRun(
            "server-postgres:closed-port",
            package,
            node("server-postgres", f"postgresql://postgres@127.0.0.1:{closed_port()}/postgres"),
            [Call("nothing listening", "query", {"sql": "SELECT 1"})],
        ),
    ]
    if lab.postgres is None:
        return runs
    port = lab.postgres.rsplit(":", 1)[1].split("/")[0]
    analyst = f"postgresql://analyst:analyst-secret@127.0.0.1:{port}/postgres"
    runs += [
        ServerRun(
            "server-postgres",
            package,
            node("server-postgres", lab.postgres),
            [
                Call("syntax error", "query", {"sql": "SELEC * FROM orders"}),
                Call("unknown table", "query", {"sql": "SELECT * FROM customers"}),
                Call("unknown column", "query", {"sql": "SELECT statuz FROM orders"}),
                Call("write in the read-only transaction", "query", {"sql": "DELETE FROM orders"}),
                Call("division by zero", "query", {"sql": "SELECT 1/0"}),
                Call("bad input syntax", "query", {"sql": "SELECT 'abc'::int"}),
                Call("statement timeout", "query", {"sql": "SET LOCAL statement_timeout = 100; SELECT pg_sleep(2)"}),
                Call("success: rows with an error column", "query", {"sql": "SELECT id, status, error FROM orders"}),
            ],
        ),
        ServerRun(
            "server-postgres:analyst",
            package,
            node("server-postgres", analyst),
            [
                Call("table not granted", "query", {"sql": "SELECT * FROM salaries"}),
            ],
        ),
        ServerRun(
            "server-postgres:wrong-password",
            package,
            node("server-postgres", f"postgresql://postgres:wrong@127.0.0.1:{port}/postgres"),
            [Call("wrong password", "query", {"sql": "SELECT 1"})],
        ),
        ServerRun(
            "server-postgres:missing-database",
            package,
            node("server-postgres", f"postgresql://postgres:{PG_PASSWORD}@127.0.0.1:{port}/inventory"),
            [Call("database does not exist", "query", {"sql": "SELECT 1"})],
        ),
    ]
    return runs


class RedisConfig:
    """Change a Redis setting for one call, and put it back."""

    def __init__(self, port: int, name: str, value: str, *, password: str | None = None) -> None:
        self.port, self.name, self.value, self.password = port, name, value, password
        self.old = ""

    def _cli(self, *args: str) -> str:
        auth = ["-a", self.password, "--no-auth-warning"] if self.password else []
        done = subprocess.run(
            ["redis-cli", "-p", str(self.port), *auth, *args], capture_output=True, text=True, check=True
        )
        return done.stdout

    def apply(self) -> None:
        self.old = self._cli("CONFIG", "GET", self.name).splitlines()[1]
        self._cli("CONFIG", "SET", self.name, self.value)

    def undo(self) -> None:
        self._cli("CONFIG", "SET", self.name, self.old)


def redis_runs(lab: Lab) -> list[ServerRun]:
    node_package, py_package = npm_version("server-redis"), uvx_version(REDIS_MCP)
    closed = closed_port()
    runs = [
        ServerRun(
            "server-redis:closed-port",
            node_package,
            node("server-redis", f"redis://127.0.0.1:{closed}"),
            [Call("nothing listening", "get", {"key": "a"})],
        ),
        ServerRun(
            "redis-mcp-server:closed-port",
            py_package,
            uvx(REDIS_MCP, "redis-mcp-server", "--url", f"redis://127.0.0.1:{closed}/0"),
            [
                Call("nothing listening: get", "get", {"key": "a"}),
                Call("nothing listening: set", "set", {"key": "a", "value": "1"}),
            ],
        ),
    ]
    if lab.redis_port is None or lab.redis_auth_port is None or lab.redis_replica_port is None:
        return runs
    subprocess.run(["redis-cli", "-p", str(lab.redis_port), "RPUSH", "jobs", "a", "b"], check=True, capture_output=True)
    subprocess.run(
        ["redis-cli", "-p", str(lab.redis_port), "SET", "last_error", "connection refused"],
        check=True,
        capture_output=True,
    )
    oom = RedisConfig(lab.redis_port, "maxmemory", "1")

    def node_server(port: int) -> list[str]:
        return node("server-redis", f"redis://127.0.0.1:{port}")

    def python_server(port: int) -> list[str]:
        return uvx(REDIS_MCP, "redis-mcp-server", "--url", f"redis://127.0.0.1:{port}/0")

    makers: tuple[tuple[str, Callable[[int], list[str]]], ...] = (
        (node_package, node_server),
        (py_package, python_server),
    )
    for package, make in makers:
        name = "server-redis" if package is node_package else "redis-mcp-server"
        runs += [
            ServerRun(
                name,
                package,
                make(lab.redis_port),
                [
                    Call("wrong type", "get", {"key": "jobs"}),
                    Call("over maxmemory", "set", {"key": "big", "value": "x" * 100}, before=oom.apply, after=oom.undo),
                    Call("success: a value that reads like an error", "get", {"key": "last_error"}),
                    Call("success: a missing key", "get", {"key": "nothing-here"}),
                ],
            ),
            ServerRun(
                f"{name}:auth",
                package,
                make(lab.redis_auth_port),
                [
                    Call("no password given", "set", {"key": "a", "value": "1"}),
                ],
                note="the server has requirepass; the URL has no password",
            ),
            ServerRun(
                f"{name}:replica",
                package,
                make(lab.redis_replica_port),
                [
                    Call("write to a replica", "set", {"key": "a", "value": "1"}),
                ],
                note="the URL points at a read-only replica",
            ),
        ]
    runs.append(
        ServerRun(
            "redis-mcp-server:wrong-password",
            py_package,
            uvx(REDIS_MCP, "redis-mcp-server", "--url", f"redis://:wrong@127.0.0.1:{lab.redis_auth_port}/0"),
            [Call("wrong password", "get", {"key": "a"})],
        )
    )
    return runs


def mysql_runs(lab: Lab) -> list[ServerRun]:
    package = uvx_version(MYSQL_MCP)
    command = uvx(MYSQL_MCP, "mysql_mcp_server")

    def env(port: int, user: str = "root", password: str = MARIADB_PASSWORD) -> dict[str, str]:
        return {
            "MYSQL_HOST": "127.0.0.1",
            "MYSQL_PORT": str(port),
            "MYSQL_USER": user,
            "MYSQL_PASSWORD": password,
            "MYSQL_DATABASE": "shop",
        }

    runs = [
        ServerRun(
            "mysql-mcp-server:closed-port",
            package,
            command,
            [Call("nothing listening", "execute_sql", {"query": "SELECT 1"})],
            env=env(closed_port()),
        )
    ]
    if lab.mariadb_port is None:
        return runs
    port = lab.mariadb_port
    lock = MariaDBLock(port)
    sql = "execute_sql"
    runs += [
        ServerRun(
            "mysql-mcp-server",
            package,
            command,
            [
                Call("syntax error", sql, {"query": "SELEC * FROM orders"}),
                Call("unknown table", sql, {"query": "SELECT * FROM customers"}),
                Call("unknown column", sql, {"query": "SELECT statuz FROM orders"}),
                Call("duplicate key", sql, {"query": "INSERT INTO orders VALUES (1, 'open')"}),
                Call("null in NOT NULL column", sql, {"query": "INSERT INTO orders VALUES (3, NULL)"}),
                Call(
                    "row locked by another transaction",
                    sql,
                    {"query": "UPDATE orders SET status = 'cancelled' WHERE id = 2"},
                    before=lock.take,
                    after=lock.release,
                ),
                Call("unknown table in schema info", "get_schema_info", {"table_name": "customers"}),
                Call(
                    "success: rows that mention failure",
                    sql,
                    {"query": "SELECT 'failed' AS status, 'timeout' AS reason"},
                ),
            ],
            env=env(port),
            note="MariaDB 10.11 from Debian, innodb_lock_wait_timeout=1",
        ),
        ServerRun(
            "mysql-mcp-server:reader",
            package,
            command,
            [
                Call("write without the privilege", sql, {"query": "DELETE FROM orders WHERE id = 2"}),
            ],
            env=env(port, "reader", "reader-secret"),
        ),
        ServerRun(
            "mysql-mcp-server:wrong-password",
            package,
            command,
            [
                Call("wrong password", sql, {"query": "SELECT 1"}),
            ],
            env=env(port, "root", "wrong"),
        ),
    ]
    return runs


class MariaDBLock:
    """Another session that holds a row lock between `take` and `release`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.process: subprocess.Popen[str] | None = None

    def take(self) -> None:
        self.process = subprocess.Popen(
            [
                "mariadb",
                "--unbuffered",
                "-h",
                "127.0.0.1",
                "-P",
                str(self.port),
                "-uroot",
                f"-p{MARIADB_PASSWORD}",
                "shop",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write("BEGIN; SELECT * FROM orders WHERE id = 2 FOR UPDATE; SELECT 'locked';\n")
        self.process.stdin.flush()
        for line in self.process.stdout:  # until the lock is held, or the session ended
            if "locked" in line:
                break

    def release(self) -> None:
        if self.process is not None and self.process.stdin is not None:
            self.process.stdin.write("ROLLBACK;\n")
            self.process.stdin.close()
            self.process.wait(timeout=10)


# --- the libraries under the servers: what their exceptions and errors say ----------------------


def described(label: str, exc: BaseException, **extra: Any) -> dict[str, Any]:
    """What a framework shows of an exception: its type, str() and repr()."""
    return {
        "label": label,
        "type": f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins."),
        "str": str(exc),
        "repr": repr(exc),
        **extra,
    }


def caught(label: str, action: Callable[[], Any], **extra: Any) -> dict[str, Any]:
    try:
        action()
    except BaseException as exc:
        return described(label, exc, **extra)
    return {"label": label, "no_failure": True}


def python_script(
    label: str, code: str, *, prefix: list[str] | None = None, python: str = sys.executable
) -> dict[str, Any]:
    """Run `code` in a child (another user, namespace or limit) that prints one capture as JSON."""
    done = subprocess.run(
        [*(prefix or []), python, "-c", CAPTURE_PRELUDE + code], capture_output=True, text=True, timeout=60, check=False
    )
    try:
        return {"label": label, **json.loads(done.stdout.strip().splitlines()[-1])}
    except (IndexError, ValueError):
        return {"label": label, "no_capture": (done.stderr or done.stdout)[-500:]}


CAPTURE_PRELUDE = """
import json, sys
def show(exc):
    kind = f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins.")
    print(json.dumps({"type": kind, "str": str(exc), "repr": repr(exc)}))
"""


def python_captures(lab: Lab) -> list[dict[str, Any]]:
    closed = closed_port()
    host, port = "127.0.0.1", lab.stub.server_address[1]
    out: list[dict[str, Any]] = []
    out.append(caught("connect to a closed port", lambda: socket.create_connection((host, closed), timeout=2)))

    def read_from(path: str, timeout: float = 2) -> None:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            sock.recv(1)
            sock.recv(1)

    out.append(caught("read from a connection the peer reset", lambda: read_from("/reset")))
    out.append(caught("socket read timeout", lambda: read_from("/hang", 0.3)))

    def broken_pipe() -> None:
        left, right = socket.socketpair()
        right.close()
        for _ in range(3):
            left.sendall(b"x" * 65536)

    out.append(caught("write to a closed socket", broken_pipe))

    async def open_closed() -> None:
        await asyncio.open_connection(host, closed)

    out.append(caught("asyncio.open_connection to a closed port", lambda: asyncio.run(open_closed())))

    async def wait_too_long() -> None:
        await asyncio.wait_for(asyncio.sleep(1), 0.01)

    out.append(caught("asyncio.wait_for timeout", lambda: asyncio.run(wait_too_long())))
    out.append(caught("open a missing file", lambda: Path("/srv/app/config.yaml").read_text()))
    out.append(caught("open a directory", lambda: Path(tempfile.gettempdir()).read_text()))
    out.append(caught("mkdir over an existing folder", lambda: os.mkdir(tempfile.gettempdir())))

    def full_device() -> None:
        with open("/dev/full", "wb", buffering=0) as handle:
            handle.write(b"x")

    out.append(caught("write to a full device", full_device))
    secret = lab.root / "secrets.env"
    secret.write_text("TOKEN=x\n")
    secret.chmod(0o600)
    out.append(
        python_script(
            "open a file the user may not read",
            f"""
try:
    open({str(secret)!r})
except Exception as exc:
    show(exc)
""",
            prefix=["runuser", "-u", "nobody", "--"],
            python="/usr/bin/python3",
        )
    )
    out.append(
        python_script(
            "too many open files (RLIMIT_NOFILE 32)",
            f"""
import resource
resource.setrlimit(resource.RLIMIT_NOFILE, (32, 32))
files = []
try:
    while True:
        files.append(open({str(secret)!r}))
except Exception as exc:
    show(exc)
""",
        )
    )
    resolve = (
        "import socket\ntry:\n    socket.getaddrinfo('db.example.invalid', 5432)\n"
        "except Exception as exc:\n    show(exc)\n"
    )
    out.append(python_script("name lookup, NXDOMAIN", resolve, prefix=in_netns([], resolver=True)))
    out.append(python_script("name lookup, no resolver", resolve, prefix=in_netns([], resolver=False)))
    out.append(caught("subprocess timeout", lambda: subprocess.run(["sleep", "5"], timeout=0.2)))
    out.append(
        caught(
            "subprocess exit status",
            lambda: subprocess.run(["git", "-C", "/", "status"], check=True, capture_output=True),
        )
    )
    out.append(caught("division by zero", lambda: 1 / 0))
    out.append(caught("int of a word", lambda: int("abc")))
    out.append(caught("JSON that is HTML", lambda: json.loads("<html><body>502 Bad Gateway</body></html>")))
    out.append(caught("bytes that are not UTF-8", lambda: b"\xff\xfe".decode()))
    out.append(caught("float overflow", lambda: 10.0**1000))
    out.append(caught("math domain", lambda: __import__("math").sqrt(-1)))
    out.append(caught("recursion", lambda: _recurse(0)))
    out.append(caught("memory", lambda: bytearray(1 << 62)))
    errnos = {}
    for name in (
        "ECONNREFUSED",
        "ECONNRESET",
        "ECONNABORTED",
        "ETIMEDOUT",
        "EHOSTUNREACH",
        "ENETUNREACH",
        "ENETDOWN",
        "EAGAIN",
        "EINTR",
        "EPIPE",
        "EMFILE",
        "ENFILE",
        "ENOSPC",
        "EDQUOT",
        "EROFS",
        "EACCES",
        "EPERM",
        "ENOENT",
        "EEXIST",
        "EISDIR",
        "ENOTDIR",
        "ENOTEMPTY",
        "EBUSY",
        "EADDRINUSE",
        "EADDRNOTAVAIL",
        "ENOMEM",
        "EIO",
        "EINVAL",
        "E2BIG",
        "ENAMETOOLONG",
        "ELOOP",
        "EXDEV",
        "ETXTBSY",
    ):
        code = getattr(errno, name)
        errnos[name] = {
            "errno": code,
            "str": str(OSError(code, os.strerror(code))),
            "class": type(OSError(code, os.strerror(code))).__name__,
        }
    out.append({"label": "errno names: OSError(errno, os.strerror(errno)) as Python builds it", "errnos": errnos})
    return [{"source": f"CPython {platform.python_version()} on glibc (Debian 12)", **entry} for entry in out]


def _raise_for_status(get: Callable[..., Any], url: str) -> None:
    get(url, timeout=2).raise_for_status()


def _recurse(depth: int) -> int:
    return _recurse(depth + 1) + 1


def httpx_captures(lab: Lab) -> list[dict[str, Any]]:
    import httpx

    closed, base = closed_port(), lab.stub.base
    out: list[dict[str, Any]] = []
    get = httpx.Client(timeout=0.5).get
    out.append(caught("sync: closed port", lambda: get(f"http://127.0.0.1:{closed}/")))
    out.append(caught("sync: read timeout", lambda: get(f"{base}/hang")))
    out.append(caught("sync: closed without an answer", lambda: get(f"{base}/close")))
    out.append(caught("sync: reset", lambda: get(f"{base}/reset")))
    for status in (400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504):
        out.append(caught(f"raise_for_status {status}", partial(_raise_for_status, get, f"{base}/status/{status}")))

    async def async_get(url: str) -> None:
        async with httpx.AsyncClient(timeout=0.5) as client:
            await client.get(url)

    out.append(caught("async: closed port", lambda: asyncio.run(async_get(f"http://127.0.0.1:{closed}/"))))
    out.append(caught("async: read timeout", lambda: asyncio.run(async_get(f"{base}/hang"))))
    out.append(caught("async: closed without an answer", lambda: asyncio.run(async_get(f"{base}/close"))))
    out.append(caught("async: reset", lambda: asyncio.run(async_get(f"{base}/reset"))))
    pool = httpx.Client(timeout=httpx.Timeout(5, pool=0.2), limits=httpx.Limits(max_connections=1))

    def pool_full() -> None:
        with pool.stream("GET", f"{base}/page/log"):
            pool.get(f"{base}/page/log")

    out.append(caught("sync: pool timeout", pool_full))
    resolve = (
        "import httpx\ntry:\n    httpx.get('http://api.example.invalid/v1/orders', timeout=3)\n"
        "except Exception as exc:\n    show(exc)\n"
    )
    out.append(python_script("sync: unknown host (NXDOMAIN)", resolve, prefix=in_netns([], resolver=True)))
    out.append(python_script("sync: no resolver", resolve, prefix=in_netns([], resolver=False)))
    return [{"source": f"httpx {httpx.__version__} (PyPI)", **entry} for entry in out]


def requests_captures(lab: Lab) -> list[dict[str, Any]]:
    import urllib.request

    import requests

    closed, base = closed_port(), lab.stub.base
    out: list[dict[str, Any]] = []
    out.append(caught("closed port", lambda: requests.get(f"http://127.0.0.1:{closed}/orders", timeout=2)))
    out.append(caught("read timeout", lambda: requests.get(f"{base}/hang", timeout=0.3)))
    out.append(caught("closed without an answer", lambda: requests.get(f"{base}/close", timeout=2)))
    out.append(caught("reset", lambda: requests.get(f"{base}/reset", timeout=2)))
    for status in (401, 403, 404, 429, 500, 503):
        out.append(
            caught(f"raise_for_status {status}", partial(_raise_for_status, requests.get, f"{base}/status/{status}"))
        )
    resolve = (
        "import requests\ntry:\n    requests.get('https://api.example.invalid/v1/orders', timeout=3)\n"
        "except Exception as exc:\n    show(exc)\n"
    )
    out.append(python_script("unknown host (NXDOMAIN)", resolve, prefix=in_netns([], resolver=True)))
    out.append(python_script("no resolver", resolve, prefix=in_netns([], resolver=False)))
    out = [{"source": f"requests {importlib.metadata.version('requests')} (PyPI)", **entry} for entry in out]
    urllib_out = [
        caught("urlopen closed port", lambda: urllib.request.urlopen(f"http://127.0.0.1:{closed}/", timeout=2)),
        caught("urlopen 503", lambda: urllib.request.urlopen(f"{base}/status/503", timeout=2)),
        caught("urlopen 404", lambda: urllib.request.urlopen(f"{base}/status/404", timeout=2)),
        caught("urlopen timeout", lambda: urllib.request.urlopen(f"{base}/hang", timeout=0.3)),
    ]
    return out + [{"source": f"CPython {platform.python_version()} urllib.request", **entry} for entry in urllib_out]


AIOHTTP = "aiohttp==3.14.5"


def aiohttp_captures(lab: Lab) -> list[dict[str, Any]]:
    closed, base = closed_port(), lab.stub.base
    code = f"""
import asyncio, aiohttp
async def get(url, timeout=2.0, check=False):
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
        async with session.get(url) as response:
            if check:
                response.raise_for_status()
            await response.read()
out = []
for label, url, timeout, check in [
    ("closed port", "http://127.0.0.1:{closed}/", 2.0, False),
    ("total timeout", "{base}/hang", 0.3, False),
    ("closed without an answer", "{base}/close", 2.0, False),
    ("reset", "{base}/reset", 2.0, False),
    ("raise_for_status 503", "{base}/status/503", 2.0, True),
    ("raise_for_status 429", "{base}/status/429", 2.0, True),
    ("raise_for_status 403", "{base}/status/403", 2.0, True),
]:
    try:
        asyncio.run(get(url, timeout, check))
        out.append({{"label": label, "no_failure": True}})
    except Exception as exc:
        kind = f"{{type(exc).__module__}}.{{type(exc).__qualname__}}".removeprefix("builtins.")
        out.append({{"label": label, "type": kind, "str": str(exc), "repr": repr(exc)}})
print(json.dumps(out))
"""
    command = ["uv", "run", "--no-project", "--with", AIOHTTP, "python", "-c", "import json\n" + code]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    try:
        entries = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return [{"source": AIOHTTP, "label": "aiohttp", "no_capture": done.stderr[-500:]}]
    dns = (
        "import asyncio, aiohttp\nasync def get():\n    async with aiohttp.ClientSession() as s:\n"
        "        await s.get('http://api.example.invalid/v1/orders')\ntry:\n    asyncio.run(get())\n"
        "except Exception as exc:\n    show(exc)\n"
    )
    uv_offline = ["uv", "run", "--offline", "--no-project", "--with", AIOHTTP]
    entries.append(
        python_script("unknown host (NXDOMAIN)", dns, prefix=in_netns(uv_offline, resolver=True), python="python")
    )
    return [{"source": f"{AIOHTTP} (PyPI)", **entry} for entry in entries]


def pg_error(label: str, exc: BaseException) -> dict[str, Any]:
    diag = getattr(exc, "diag", None)
    return described(
        label, exc, sqlstate=getattr(exc, "sqlstate", None), severity=getattr(diag, "severity_nonlocalized", None)
    )


def postgres_captures(lab: Lab) -> list[dict[str, Any]]:
    import psycopg

    if lab.postgres is None:
        return [{"source": "PostgreSQL", "label": "PostgreSQL", "no_capture": lab.postgres_why}]
    url = lab.postgres
    port = url.rsplit(":", 1)[1].split("/")[0]
    out: list[dict[str, Any]] = []

    def attempt(label: str, sql: str, *, setup: tuple[str, ...] = (), target: str = url) -> None:
        try:
            with psycopg.connect(target, autocommit=True) as db:
                for statement in setup:
                    db.execute(statement)
                db.execute(sql)
            out.append({"label": label, "no_failure": True})
        except psycopg.Error as exc:
            out.append(pg_error(label, exc))

    with psycopg.connect(url, autocommit=True) as db:
        db.execute(
            "CREATE TABLE accounts (id int PRIMARY KEY, balance numeric CHECK (balance >= 0), "
            "email varchar(20) UNIQUE, owner int REFERENCES orders(id))"
        )
        db.execute("INSERT INTO accounts VALUES (1, 100, 'a@example.com', 1), (2, 50, 'b@example.com', 2)")
    attempt("syntax error", "SELEC * FROM orders")
    attempt("unknown table", "SELECT * FROM customers")
    attempt("unknown column", "SELECT statuz FROM orders")
    attempt("unknown function", "SELECT frobnicate(1)")
    attempt("duplicate key", "INSERT INTO orders VALUES (1, 'open', NULL)")
    attempt("null in NOT NULL column", "INSERT INTO orders VALUES (3, NULL, NULL)")
    attempt("check constraint", "UPDATE accounts SET balance = -10 WHERE id = 1")
    attempt("foreign key", "INSERT INTO accounts VALUES (3, 0, 'c@example.com', 99)")
    attempt("value too long", "INSERT INTO accounts VALUES (4, 0, 'a-very-long-address@example.com', 1)")
    attempt("bad input syntax", "SELECT 'abc'::int")
    attempt("division by zero", "SELECT 1/0")
    attempt("numeric out of range", "SELECT 2147483647::int + 1")
    attempt(
        "read-only transaction", "INSERT INTO orders VALUES (5, 'open', NULL)", setup=("BEGIN TRANSACTION READ ONLY",)
    )
    attempt("statement timeout", "SELECT pg_sleep(2)", setup=("SET statement_timeout = 100",))
    attempt(
        "permission denied for table",
        "SELECT * FROM salaries",
        target=f"postgresql://analyst:analyst-secret@127.0.0.1:{port}/postgres",
    )
    attempt("wrong password", "SELECT 1", target=f"postgresql://postgres:wrong@127.0.0.1:{port}/postgres")
    attempt("unknown role", "SELECT 1", target=f"postgresql://ghost:x@127.0.0.1:{port}/postgres")
    attempt("unknown database", "SELECT 1", target=f"postgresql://postgres:{PG_PASSWORD}@127.0.0.1:{port}/inventory")
    attempt("closed port", "SELECT 1", target=f"postgresql://postgres:x@127.0.0.1:{closed_port()}/postgres")
    # Two sessions that wait for each other: one of them is chosen as the deadlock victim.
    a, b = psycopg.connect(url), psycopg.connect(url)
    try:
        a.execute("UPDATE accounts SET balance = balance + 1 WHERE id = 1")
        b.execute("UPDATE accounts SET balance = balance + 1 WHERE id = 2")
        failures: list[BaseException] = []

        def cross(db: psycopg.Connection[Any], row: int) -> None:
            try:
                db.execute("UPDATE accounts SET balance = balance + 1 WHERE id = %s", (row,))
            except psycopg.Error as exc:
                failures.append(exc)
            finally:
                db.rollback()

        threads = [threading.Thread(target=cross, args=(a, 2)), threading.Thread(target=cross, args=(b, 1))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        out.extend(pg_error("deadlock", exc) for exc in failures)
        # Two repeatable-read transactions that update the same row.
        a.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        a.execute("SELECT balance FROM accounts WHERE id = 1")
        b.execute("UPDATE accounts SET balance = balance + 1 WHERE id = 1")
        b.commit()
        try:
            a.execute("UPDATE accounts SET balance = balance + 1 WHERE id = 1")
        except psycopg.Error as exc:
            out.append(pg_error("serialization failure", exc))
        a.rollback()
        # A row lock another session holds, with NOWAIT and with lock_timeout.
        b.execute("SELECT * FROM accounts WHERE id = 1 FOR UPDATE")
        for label, sql in (
            ("row locked, NOWAIT", "SELECT * FROM accounts WHERE id = 1 FOR UPDATE NOWAIT"),
            ("lock timeout", "SET LOCAL lock_timeout = 100; UPDATE accounts SET balance = 0 WHERE id = 1"),
        ):
            try:
                for statement in sql.split("; "):
                    a.execute(statement)
            except psycopg.Error as exc:
                out.append(pg_error(label, exc))
            a.rollback()
        b.rollback()
        # A session an administrator ends.
        pid = a.execute("SELECT pg_backend_pid()").fetchone()[0]  # type: ignore[index]
        a.commit()
        b.execute("SELECT pg_terminate_backend(%s)", (pid,))
        b.commit()
        try:
            a.execute("SELECT 1")
        except psycopg.Error as exc:
            out.append(pg_error("session terminated by an administrator", exc))
    finally:
        a.close()
        b.close()
    # Every slot taken (max_connections=8, none reserved).
    held = []
    try:
        for _ in range(12):
            held.append(psycopg.connect(url))
    except psycopg.Error as exc:
        out.append(pg_error("too many clients", exc))
    finally:
        for db in held:
            db.close()
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("ALTER ROLE analyst CONNECTION LIMIT 1")
    analyst = f"postgresql://analyst:analyst-secret@127.0.0.1:{port}/postgres"
    first = psycopg.connect(analyst)
    attempt("too many connections for role", "SELECT 1", target=analyst)
    first.close()
    return [
        {"source": f"PostgreSQL {_server_version(url)} via psycopg {psycopg.__version__}", **entry} for entry in out
    ]


def _server_version(url: str) -> str:
    import psycopg

    with psycopg.connect(url) as db:
        return str(db.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]


def postgres_shutdown_capture(lab: Lab) -> list[dict[str, Any]]:
    """Connect while a smart shutdown waits for a session to end: the last thing done to the cluster."""
    import psycopg

    if lab.postgres is None:
        return []
    url = lab.postgres
    bindir = postgres_bindir()
    data = lab.root / "pg" / "data"
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    session = psycopg.connect(url)
    subprocess.run(
        [*as_postgres, f"{bindir}/pg_ctl", "-D", str(data), "-m", "smart", "-W", "stop"],
        check=False,
        capture_output=True,
    )
    time.sleep(0.5)
    out = []
    try:
        psycopg.connect(url).close()
    except psycopg.Error as exc:
        out.append(pg_error("connect during shutdown", exc))
    session.close()
    return [{"source": f"PostgreSQL via psycopg {psycopg.__version__}", **entry} for entry in out]


def sqlite_captures(lab: Lab) -> list[dict[str, Any]]:
    folder = lab.root / "sqlite-lib"
    db_path = folder / "app.db"
    make_sqlite(db_path)
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        db.executescript(
            "PRAGMA foreign_keys = ON; CREATE TABLE items (id INTEGER PRIMARY KEY, qty INTEGER CHECK (qty >= 0),"
            " user_id INTEGER REFERENCES users(id));"
        )
    out: list[dict[str, Any]] = []

    def run(sql: str, *, path: str | Path = db_path, uri: bool = False, timeout: float = 5.0) -> None:
        with contextlib.closing(sqlite3.connect(path, uri=uri, timeout=timeout)) as db:
            db.execute("PRAGMA foreign_keys = ON")
            db.execute(sql)
            db.commit()

    out.append(caught("syntax error", lambda: run("SELECT * FORM users")))
    out.append(caught("unknown table", lambda: run("SELECT * FROM orders")))
    out.append(caught("unknown column", lambda: run("SELECT nme FROM users")))
    out.append(caught("unique", lambda: run("INSERT INTO users (email) VALUES ('ada@example.com')")))
    out.append(caught("not null", lambda: run("INSERT INTO users (email) VALUES (NULL)")))
    out.append(caught("check", lambda: run("INSERT INTO items (qty) VALUES (-1)")))
    out.append(caught("foreign key", lambda: run("INSERT INTO items (qty, user_id) VALUES (1, 99)")))
    out.append(
        caught("read-only connection", lambda: run("DELETE FROM users", path=f"file:{db_path}?mode=ro", uri=True))
    )
    out.append(caught("folder missing", lambda: run("SELECT 1", path=folder / "missing" / "app.db")))
    holder = HeldLock(db_path)
    holder.take()
    out.append(caught("locked by another connection", lambda: run("DELETE FROM users", timeout=0.1)))
    holder.release()
    garbage = folder / "garbage.db"
    garbage.write_bytes(b"not a database\n" * 100)
    out.append(caught("not a database", lambda: run("SELECT * FROM sqlite_master", path=garbage)))
    damaged = folder / "damaged.db"
    damaged.write_bytes(db_path.read_bytes()[:4096] + b"\x00" * 100 + db_path.read_bytes()[4196:])
    raw = bytearray(db_path.read_bytes())
    raw[4096 : 4096 + 64] = b"\xff" * 64  # the second page's header: a broken b-tree page
    damaged.write_bytes(bytes(raw))
    out.append(caught("damaged page", lambda: run("SELECT * FROM users", path=damaged)))
    return [{"source": f"SQLite {sqlite3.sqlite_version} via Python sqlite3", **entry} for entry in out]


def redis_captures(lab: Lab) -> list[dict[str, Any]]:
    """Raw replies as redis-cli prints them, and what redis-py raises."""
    if lab.redis_port is None:
        return [{"source": "Redis", "label": "Redis", "no_capture": lab.redis_why}]
    # "Redis server v=7.0.15 sha=..." -> "7.0.15"
    version = (
        subprocess.run(["redis-server", "--version"], capture_output=True, text=True)
        .stdout.split()[2]
        .removeprefix("v=")
    )
    out: list[dict[str, Any]] = []

    def cli(label: str, port: int, *args: str, password: str | None = None) -> None:
        auth = ["-a", password, "--no-auth-warning"] if password else []
        done = subprocess.run(["redis-cli", "-p", str(port), *auth, *args], capture_output=True, text=True, check=False)
        out.append({"label": label, "command": " ".join(args), "reply": (done.stdout + done.stderr).strip()})

    p, auth, replica = lab.redis_port, lab.redis_auth_port, lab.redis_replica_port
    subprocess.run(["redis-cli", "-p", str(p), "DEL", "jobs", "last_error"], check=True, capture_output=True)
    subprocess.run(["redis-cli", "-p", str(p), "RPUSH", "jobs", "a", "b"], check=True, capture_output=True)
    subprocess.run(
        ["redis-cli", "-p", str(p), "SET", "last_error", "connection refused"], check=True, capture_output=True
    )
    cli("wrong type", p, "GET", "jobs")
    cli("unknown command", p, "FROBNICATE", "x")
    cli("wrong number of arguments", p, "SET", "onlykey")
    cli("not an integer", p, "INCR", "last_error")
    cli("no such script", p, "EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0")
    if auth is not None:
        cli("no password", auth, "SET", "a", "1")
        cli("wrong password", auth, "PING", password="wrong")
    if replica is not None:
        cli("write to a replica", replica, "SET", "a", "1")
    oom = RedisConfig(p, "maxmemory", "1")
    oom.apply()
    cli("over maxmemory", p, "SET", "big", "x" * 50)
    oom.undo()
    # A script that runs past busy-reply-threshold: other clients get BUSY until SCRIPT KILL.
    threshold = RedisConfig(p, "busy-reply-threshold", "100")
    threshold.apply()
    script = subprocess.Popen(
        ["redis-cli", "-p", str(p), "EVAL", "local i = 0 while true do i = i + 1 end", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.6)
    cli("server busy with a script", p, "GET", "a")
    cli("kill the script", p, "SCRIPT", "KILL")
    killed = script.communicate(timeout=10)
    out.append({"label": "the killed script's own reply", "reply": (killed[0] + killed[1]).strip()})
    threshold.undo()
    closed = closed_port()
    cli("closed port", closed, "PING")
    try:
        import redis

        assert auth is not None
        assert replica is not None
        for label, action in (
            ("redis-py: closed port", lambda: redis.Redis(port=closed).ping()),
            ("redis-py: no password", lambda: redis.Redis(port=auth).set("a", "1")),
            ("redis-py: wrong password", lambda: redis.Redis(port=auth, password="wrong").ping()),
            ("redis-py: write to a replica", lambda: redis.Redis(port=replica).set("a", "1")),
            ("redis-py: wrong type", lambda: redis.Redis(port=p).get("jobs")),
            ("redis-py: read timeout", lambda: redis.Redis(port=_silent_port(lab), socket_timeout=0.3).ping()),
        ):
            out.append({"source": f"redis-py {redis.__version__} against Redis {version}", **caught(label, action)})
    except ImportError as exc:
        out.append({"label": "redis-py", "no_capture": str(exc)})
    return [{"source": f"Redis {version}, redis-cli", **entry} for entry in out]


def _silent_port(lab: Lab) -> int:
    """A port that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    _SILENT.append(listener)
    return int(listener.getsockname()[1])


_SILENT: list[socket.socket] = []  # kept open until the collector exits


def git_captures(lab: Lab) -> list[dict[str, Any]]:
    version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    work = lab.root / "git-lib"
    repo, other, bare = work / "repo", work / "other", work / "remote.git"
    work.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    for folder in (repo, other):
        subprocess.run(["git", "clone", "-q", str(bare), str(folder)], check=True, capture_output=True)
        git(folder, "config", "user.email", "dev@example.com")
        git(folder, "config", "user.name", "Dev")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "push", "-q", "origin", "main")
    git(other, "pull", "-q", "origin", "main")
    (repo / "a.txt").write_text("two\n")
    git(repo, "commit", "-q", "-am", "two")
    git(repo, "push", "-q", "origin", "main")
    (other / "a.txt").write_text("three\n")
    git(other, "commit", "-q", "-am", "three")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    out: list[dict[str, Any]] = []

    def run(label: str, *args: str, cwd: Path = repo, prefix: list[str] | None = None) -> None:
        done = subprocess.run(
            [*(prefix or []), "git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False, timeout=60
        )
        out.append(
            {
                "label": label,
                "command": "git " + " ".join(args),
                "exit": done.returncode,
                "stderr": done.stderr.strip(),
                "stdout": done.stdout.strip()[:500],
            }
        )

    run("not a repository", "status", cwd=work)
    run("pathspec for add", "add", "missing.txt")
    run("pathspec for checkout", "checkout", "does-not-exist")
    run("unknown revision", "log", "v9.9.9")
    run("branch exists", "branch", "main")
    run("push rejected (remote has newer commits)", "push", "origin", "main", cwd=other)
    run("merge conflict", "pull", "--no-rebase", "origin", "main", cwd=other)
    run("abort the merge", "merge", "--abort", cwd=other)
    (other / "a.txt").write_text("four\n")
    run("checkout over local changes", "checkout", "HEAD~1", cwd=other)
    (repo / ".git" / "index.lock").write_text("")
    run("index.lock exists", "add", "a.txt")
    (repo / ".git" / "index.lock").unlink()
    closed = closed_port()
    run("clone: closed port", "clone", f"http://127.0.0.1:{closed}/team/app.git", str(work / "c1"))
    lab.stub.every = 403
    run("clone: 403", "clone", f"{lab.stub.base}/team/app.git", str(work / "c2"))
    lab.stub.every = 401
    run("clone: 401 without a prompt", "clone", f"{lab.stub.base}/team/app.git", str(work / "c3"))
    lab.stub.every = 503
    run("clone: 503", "clone", f"{lab.stub.base}/team/app.git", str(work / "c4"))
    lab.stub.every = None
    run(
        "clone: unknown host",
        "clone",
        "https://git.example.invalid/team/app.git",
        str(work / "c5"),
        prefix=in_netns([], resolver=True),
    )
    run(
        "clone: no resolver",
        "clone",
        "https://git.example.invalid/team/app.git",
        str(work / "c6"),
        prefix=in_netns([], resolver=False),
    )
    if shutil.which("ssh"):
        run("clone over ssh: closed port", "clone", f"ssh://git@127.0.0.1:{closed}/team/app.git", str(work / "c7"))
    return [{"source": version, **entry} for entry in out]


def mariadb_captures(lab: Lab) -> list[dict[str, Any]]:
    if lab.mariadb_port is None:
        return [{"source": "MariaDB", "label": "MariaDB", "no_capture": lab.mariadb_why}]
    port = str(lab.mariadb_port)
    out: list[dict[str, Any]] = []

    def cli(label: str, sql: str, *, user: str = "root", password: str = MARIADB_PASSWORD) -> None:
        done = subprocess.run(
            ["mariadb", "-h", "127.0.0.1", "-P", port, f"-u{user}", f"-p{password}", "shop", "-e", sql],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        out.append({"label": label, "sql": sql, "stderr": done.stderr.strip()})

    cli("syntax error", "SELEC * FROM orders")
    cli("unknown table", "SELECT * FROM customers")
    cli("duplicate key", "INSERT INTO orders VALUES (1, 'open')")
    cli("wrong password", "SELECT 1", password="wrong")
    cli("no privilege", "DELETE FROM orders", user="reader", password="reader-secret")
    # Deadlock: two sessions each hold one row and ask for the other's.
    first = MariaDBLock(lab.mariadb_port)
    first.take()  # holds row 2
    assert first.process is not None
    assert first.process.stdin is not None
    second = subprocess.Popen(
        [
            "mariadb",
            "-h",
            "127.0.0.1",
            "-P",
            port,
            "-uroot",
            f"-p{MARIADB_PASSWORD}",
            "shop",
            "-e",
            "SET innodb_lock_wait_timeout = 20; BEGIN; SELECT * FROM orders WHERE id = 1 FOR UPDATE; DO SLEEP(1); "
            "SELECT * FROM orders WHERE id = 2 FOR UPDATE;",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.5)
    first.process.stdin.write("SET innodb_lock_wait_timeout = 20; SELECT * FROM orders WHERE id = 1 FOR UPDATE;\n")
    first.process.stdin.flush()
    _, second_err = second.communicate(timeout=60)
    first.release()
    out.append({"label": "deadlock", "stderr": second_err.strip()})
    lock = MariaDBLock(lab.mariadb_port)
    lock.take()
    cli("lock wait timeout", "UPDATE orders SET status = 'x' WHERE id = 2")
    lock.release()
    # As `reader`: an account without SUPER gets no extra connection beyond max_connections.
    held = [
        subprocess.Popen(
            ["mariadb", "-h", "127.0.0.1", "-P", port, "-ureader", "-preader-secret", "-e", "DO SLEEP(5)"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(6)
    ]
    time.sleep(1.5)
    cli("too many connections", "SELECT 1", user="reader", password="reader-secret")
    for process in held:
        process.kill()
        process.wait()
    done = subprocess.run(
        ["mariadb", "-h", "127.0.0.1", "-P", str(closed_port()), "-uroot", "-px", "-e", "SELECT 1"],
        capture_output=True,
        text=True,
        check=False,
    )
    out.append({"label": "closed port", "stderr": done.stderr.strip()})
    version = subprocess.run(["mariadb", "--version"], capture_output=True, text=True).stdout.strip()
    return [{"source": f"MariaDB server 10.11 (Debian 12), client: {version}", **entry} for entry in out]


def nginx_captures(lab: Lab) -> list[dict[str, Any]]:
    """The pages nginx answers as a reverse proxy when its upstream fails, word for word."""
    if shutil.which("nginx") is None:
        return [{"source": "nginx", "label": "nginx", "no_capture": "nginx not found (apt-get install nginx-light)"}]
    folder = lab.root / "nginx"
    folder.mkdir()
    port, closed, stub = free_port(), closed_port(), lab.stub.server_address[1]
    (folder / "nginx.conf").write_text(f"""
daemon off; pid {folder}/pid; error_log {folder}/error.log; worker_processes 1; user root;
events {{ worker_connections 64; }}
http {{
  access_log off; client_body_temp_path {folder}; proxy_temp_path {folder};
  limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;
  server {{
    listen 127.0.0.1:{port};
    client_max_body_size 1k;
    location /closed {{ proxy_pass http://127.0.0.1:{closed}; }}
    location /hang {{ proxy_pass http://127.0.0.1:{stub}; proxy_read_timeout 1s; }}
    location /limited {{ limit_req zone=one; proxy_pass http://127.0.0.1:{stub}/page/log; }}
    location /upload {{ proxy_pass http://127.0.0.1:{stub}/page/log; }}
  }}
}}
""")
    process = subprocess.Popen(
        ["nginx", "-c", str(folder / "nginx.conf")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    lab.processes.append(process)
    wait_for_port(port, process=process)
    import httpx

    out: list[dict[str, Any]] = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        for label, method, path, body in (
            ("upstream refuses", "GET", "/closed", None),
            ("upstream too slow", "GET", "/hang", None),
            ("rate limited (first)", "GET", "/limited", None),
            ("rate limited (second)", "GET", "/limited", None),
            ("body too large", "POST", "/upload", b"x" * 4096),
        ):
            response = client.request(method, path, content=body)
            out.append(
                {
                    "label": label,
                    "status": response.status_code,
                    "reason": response.reason_phrase,
                    "body": response.text.strip(),
                }
            )
    version = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()
    return [{"source": version, **entry} for entry in out]


def node_captures(lab: Lab) -> list[dict[str, Any]]:
    script = HERE / "corpus_node_errors.mjs"
    secret = lab.root / "node-secret.txt"
    secret.write_text("x")
    secret.chmod(0o600)
    args = [str(lab.stub.server_address[1]), str(closed_port()), str(secret)]
    out: list[dict[str, Any]] = []
    runs = [
        ("plain", []),
        ("nobody", ["runuser", "-u", "nobody", "--"]),
        ("nxdomain", in_netns([], resolver=True)),
        ("no-resolver", in_netns([], resolver=False)),
        ("emfile", ["prlimit", "--nofile=40:40"]),
    ]
    for mode, prefix in runs:
        done = subprocess.run(
            [*prefix, "node", str(script), mode, *args], capture_output=True, text=True, timeout=120, check=False
        )
        try:
            out.extend(json.loads(done.stdout.strip().splitlines()[-1]))
        except (IndexError, ValueError):
            out.append({"label": f"node {mode}", "no_capture": done.stderr[-500:]})
    version = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    return [{"source": f"Node {version}", **entry} for entry in out]


def cli_successes(lab: Lab) -> list[dict[str, Any]]:
    """Successful command runs whose output mentions errors, as a shell or code-runner tool returns it."""
    work = lab.root / "cli"
    work.mkdir()
    (work / "clean.py").write_text("def retry_on_timeout(attempts: int) -> int:\n    return attempts\n")
    (work / "test_errors.py").write_text(
        "def test_timeout_error_is_retried():\n    assert True\n\n\n"
        "def test_connection_refused_is_transient():\n    assert True\n"
    )
    (work / "app.log").write_text(PAGES["log"])
    repo = lab.root / "repo"
    commands = [
        ("mypy on a clean file", [sys.executable, "-m", "mypy", "--no-incremental", "clean.py"]),
        (
            "pytest of tests named after errors",
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_errors.py"],
        ),
        ("grep ERROR lines", ["grep", "ERROR", "app.log"]),
        ("git log --grep timeout", ["git", "-C", str(repo), "log", "--oneline", "--grep", "timeout"]),
    ]
    out = []
    for label, command in commands:
        done = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False, timeout=120)
        out.append(
            {
                "label": label,
                "command": " ".join(Path(part).name if part == sys.executable else part for part in command),
                "exit": done.returncode,
                "stdout": done.stdout.strip(),
            }
        )
    return [{"source": "command-line tools run here", **entry} for entry in out]


# --- the run ---------------------------------------------------------------------------------------

SERVER_GROUPS: dict[str, Callable[[Lab], list[ServerRun]]] = {
    "sqlite": sqlite_runs,
    "duckdb": duckdb_runs,
    "fetch": fetch_runs,
    "time": time_runs,
    "git": git_runs,
    "calculator": calculator_runs,
    "airflow": airflow_runs,
    "memory": memory_runs,
    "thinking": thinking_runs,
    "filesystem": filesystem_runs,
    "everything": everything_runs,
    "postgres": postgres_runs,
    "redis": redis_runs,
    "mysql": mysql_runs,
}
LIBRARY_GROUPS: dict[str, Callable[[Lab], list[dict[str, Any]]]] = {
    "python": python_captures,
    "httpx": httpx_captures,
    "requests": requests_captures,
    "aiohttp": aiohttp_captures,
    "psycopg": postgres_captures,
    "sqlite3": sqlite_captures,
    "redis-cli": redis_captures,
    "git-cli": git_captures,
    "mariadb-cli": mariadb_captures,
    "node": node_captures,
    "nginx": nginx_captures,
    "cli-successes": cli_successes,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=CORPUS / "observed.json")
    parser.add_argument("--only", help="comma-separated groups: " + ", ".join([*SERVER_GROUPS, *LIBRARY_GROUPS]))
    options = parser.parse_args()
    # A SIGTERM (a timeout, a kill) unwinds like an exception, so the databases started here stop.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    chosen = set(options.only.split(",")) if options.only else None
    report: dict[str, Any] = {
        "generated_by": "tools/collect_corpus.py",
        "platform": {
            "python": platform.python_version(),
            "system": platform.platform(),
            "node": _version(["node", "--version"]),
            "uv": _version(["uv", "--version"]),
        },
        "servers": [],
        "could_not_start": [],
        "libraries": [],
    }
    with laboratory() as lab:
        for name, build in SERVER_GROUPS.items():
            if chosen is not None and name not in chosen:
                continue
            try:
                runs = build(lab)
            except Exception as exc:
                report["could_not_start"].append({"id": name, "why": f"setup failed: {type(exc).__name__}: {exc}"})
                continue
            for run in runs:
                print(f"server {run.id} ...", file=sys.stderr, flush=True)
                result = anyio.run(drive, run)
                report["servers"].append(result)
                if not result.get("started"):
                    report["could_not_start"].append(
                        {"id": run.id, "why": result.get("failure"), "stderr_tail": result.get("stderr_tail")}
                    )
        for name, capture in LIBRARY_GROUPS.items():
            if chosen is not None and name not in chosen:
                continue
            print(f"library {name} ...", file=sys.stderr, flush=True)
            try:
                report["libraries"].append({"group": name, "captures": capture(lab)})
            except Exception:
                report["libraries"].append({"group": name, "error": traceback.format_exc()[-1500:]})
        if chosen is None or "psycopg" in chosen:
            report["libraries"].append({"group": "psycopg-shutdown", "captures": postgres_shutdown_capture(lab)})
    options.out.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n")
    for item in report["could_not_start"]:
        print(f"could not start {item['id']}: {item['why']}", file=sys.stderr)
    print(
        f"wrote {options.out}: {len(report['servers'])} server runs, "
        f"{sum(len(s.get('calls', [])) for s in report['servers'])} calls",
        file=sys.stderr,
    )


def _version(command: list[str]) -> str:
    try:
        return subprocess.run(command, capture_output=True, text=True, check=False).stdout.strip()
    except OSError as exc:
        return f"missing: {exc}"


if __name__ == "__main__":
    main()
