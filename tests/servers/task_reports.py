"""A reports server whose tools run as tasks (SEP-2663): fastmcp with the real `fastmcp-tasks` extension.

`build(...)` returns the installed server and its `Runs` (what each tool did); run as a
script it serves the same tools over stdio, configured by its arguments (so that two
processes can share a Docket backend and an idempotency store):

    python tests/servers/task_reports.py [--docket URL] [--store URL] [--runs FILE] [--plain]

(`--plain`: the same server without `install`, as fastmcp and fastmcp-tasks alone serve it.)

The tools, every one `task=TaskConfig(mode="required")` unless said otherwise:

- `quarterly_report(quarter)`: the warehouse is busy on its first run (a transient error
  that says nothing was applied), then it answers;
- `warehouse_query(sql)`: times out with the database's URL, password included, in the text;
- `refund_batch(total)`: refused by a business rule;
- `crash()`: an unclassified exception whose text holds a secret and a path;
- `slow(seconds)`: sleeps, and records when it is cancelled;
- `bounded()`: runs past the 0.2 s time limit Docket gives it (`Timeout`);
- `needs_sampling()`: says the client lacks a capability it needs (-32021), a JSON-RPC error
  the client must act on, which ends the task `failed` (an `UrlElicitationRequiredError`
  would too, but Docket cannot read it back: the SDK's class does not survive pickling);
- `approve_payout(amount)`: asks the client for an approval (an elicitation) before it pays;
- `optional_report(quarter)`: `mode="optional"`, fails like `warehouse_query`: runs as a
  task only when the client asks for one.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
from docket import Timeout
from fastmcp import FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY, ElicitRequest, ElicitRequestFormParams, InputRequiredResult

from mcp_errors import BusinessRuleError, TransientError, install
from mcp_errors.stores import IdempotencyStore

LEAKED_PASSWORD = "hunter2-Wareh0use"
LEAKED_DSN = f"postgres://svc:{LEAKED_PASSWORD}@warehouse.internal:5432/wh"
LEAKED_PATH = "/srv/reports/app/worker.py"
POLL = timedelta(milliseconds=20)
"""How often the server asks to be polled: short, so that the tests run quickly."""


@dataclass
class Runs:
    """What the tools did in this process, and the file every process appends its runs to."""

    lines: Path | None = None
    started: list[str] = field(default_factory=list)
    sleeping: anyio.Event = field(default_factory=anyio.Event)
    cancelled: anyio.Event = field(default_factory=anyio.Event)

    def record(self, what: str) -> int:
        """Count one run of a tool's work, and return how many runs of `what` this process made."""
        self.started.append(what)
        if self.lines is not None:
            # One write(2) of a line on an O_APPEND file: lines of two processes never mix.
            with self.lines.open("a", encoding="utf-8") as file:
                file.write(f"{what} pid={os.getpid()}\n")
        return self.started.count(what)


def build(
    *,
    docket: str = "memory://",
    docket_name: str | None = None,
    store: IdempotencyStore | str | None = None,
    lines: Path | None = None,
    tool_failure_meta: bool = False,
    contract: bool = True,
) -> tuple[FastMCP[Any], Runs]:
    """The reports server with the tasks extension on `docket`, installed (with `store`, when given)."""
    runs = Runs(lines=lines)
    server: FastMCP[Any] = FastMCP("reports")
    server.add_extension(TasksExtension(url=docket, name=docket_name or f"reports-{os.urandom(4).hex()}"))
    if contract:
        install(server, idempotency=store, tool_failure_meta=tool_failure_meta)
    required = TaskConfig(mode="required", poll_interval=POLL)

    @server.tool(task=required)
    async def quarterly_report(quarter: str) -> dict[str, Any]:
        """Build a quarter's report: the warehouse is busy on the first run."""
        count = runs.record(f"report {quarter}")
        if (count if lines is None else _runs_in(lines, f"report {quarter}")) == 1:
            raise TransientError(
                "Warehouse busy",
                description="The warehouse is running its nightly load; nothing was written. Resend shortly.",
                code="WAREHOUSE_BUSY",
                retry_after_seconds=0.05,
                execution_state="not_executed",
            )
        return {"quarter": quarter, "revenue": 1250}

    @server.tool(task=required)
    async def warehouse_query(sql: str) -> str:
        """Run a query on the warehouse."""
        runs.record("query")
        raise TimeoutError(f"warehouse query timed out (dsn {LEAKED_DSN})")

    @server.tool(task=required)
    async def refund_batch(total: float) -> str:
        """Refund a batch of orders."""
        runs.record("refund")
        raise BusinessRuleError(
            "Batch over the refund limit",
            description="Batches above 10,000.00 EUR need a manager's approval. Escalate to a human.",
            code="REFUND_BATCH_LIMIT",
        )

    @server.tool(task=required)
    async def crash() -> str:
        """Fail in a way nobody classified."""
        raise RuntimeError(f"worker died reading {LEAKED_PATH} with {LEAKED_DSN}")

    @server.tool(task=required)
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        runs.record("slow")
        runs.sleeping.set()
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            runs.cancelled.set()
            raise
        return "slept"

    @server.tool(task=required)
    async def bounded(limit: Timeout = Timeout(timedelta(seconds=0.2))) -> str:  # noqa: B008  # Docket's form
        """Run past the time limit Docket gives this task."""
        await anyio.sleep(30)
        return "unreachable"

    @server.tool(task=required)
    async def needs_sampling() -> str:
        """Need the client's sampling capability."""
        raise MCPError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "This tool needs sampling",
            {"requiredCapabilities": {"sampling": {}}},
        )

    @server.tool(task=required)
    async def approve_payout(amount: float) -> Any:
        """Pay out once a human approved it."""
        return InputRequiredResult(
            input_requests={
                "approval": ElicitRequest(
                    params=ElicitRequestFormParams(
                        message=f"Approve a payout of {amount:.2f} EUR?",
                        requested_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
                    )
                )
            }
        )

    @server.tool(task=TaskConfig(mode="optional", poll_interval=POLL))
    async def optional_report(quarter: str) -> str:
        """Build a report, as a task when the client asks for one."""
        raise TimeoutError(f"warehouse query timed out (dsn {LEAKED_DSN})")

    return server, runs


def _runs_in(lines: Path, what: str) -> int:
    """How many runs of `what` every process sharing `lines` made."""
    return sum(1 for line in lines.read_text(encoding="utf-8").splitlines() if line.startswith(f"{what} pid="))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docket", default="memory://")
    parser.add_argument("--docket-name", default=None)
    parser.add_argument("--store", default=None)
    parser.add_argument("--runs", type=Path, default=None)
    parser.add_argument("--plain", action="store_true")
    options = parser.parse_args()
    server, _ = build(
        docket=options.docket,
        docket_name=options.docket_name,
        store=options.store,
        lines=options.runs,
        contract=not options.plain,
    )
    server.run(show_banner=False)


if __name__ == "__main__":
    main()
