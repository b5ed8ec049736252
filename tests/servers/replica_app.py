"""A keyed-write server for the replica tests, as an app factory for `uvicorn --factory`.

Run as `python -m uvicorn --factory replica_app:make_app --app-dir tests/servers --port P`,
configured by the environment (uvicorn calls the factory with no arguments):

- `REPLICA_STORE`: the idempotency store URL, shared by every replica;
- `REPLICA_LINES`: the file each write appends one line to: the effect, counted outside
  every server process;
- `REPLICA_LATE_ANSWERS`: probability that a write commits and then answers late
  (`REPLICA_LATE_SECONDS`), after its caller's timeout: commit-then-timeout;
- `REPLICA_LEASE_SECONDS`: the store's lease.
"""

from __future__ import annotations

import os
import random

import anyio
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette

from mcp_errors import install, open_store


def build_server() -> MCPServer:
    """The replica's server: `append` and `append_and_hang`, installed with the shared store."""
    lines = os.environ["REPLICA_LINES"]
    late_answers = float(os.environ.get("REPLICA_LATE_ANSWERS", "0"))
    late_seconds = float(os.environ.get("REPLICA_LATE_SECONDS", "0"))
    lease = float(os.environ.get("REPLICA_LEASE_SECONDS", "30"))
    faults = random.Random(os.getpid())
    server = MCPServer("replica")
    install(server, idempotency=open_store(os.environ["REPLICA_STORE"], lease_seconds=lease))

    def write(n: int) -> str:
        line = f"{n} pid={os.getpid()} {os.urandom(4).hex()}"
        # One write(2) of a line on an O_APPEND file: lines of concurrent replicas never mix.
        with open(lines, "a", encoding="utf-8") as file:
            file.write(line + "\n")
        return line

    @server.tool()
    async def append(n: int) -> str:
        """Append one line for `n`; sometimes answer late, after the line is written."""
        line = write(n)
        if faults.random() < late_answers:
            await anyio.sleep(late_seconds)
        return line

    @server.tool()
    async def append_and_hang(n: int) -> str:
        """Append one line for `n`, then never answer (the test kills the replica)."""
        write(n)
        await anyio.sleep_forever()
        return "unreachable"

    return server


def make_app() -> Starlette:
    """The ASGI app of one stateless replica."""
    return build_server().streamable_http_app(stateless_http=True)
