"""`mcp-errors serve --http PORT --workers N [--store URL]`: stateless replicas of one desk file."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import anyio
import pytest
from mcp import Client
from typer.testing import CliRunner

from mcp_errors._cli import app
from mcp_errors._shared.contract import IDEMPOTENCY_KEY_META
from mcp_errors.demo import Database
from services import free_port, listening

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.mark.anyio
async def test_replicas_of_one_desk_file_refund_a_keyed_duplicate_once(tmp_path: Path) -> None:
    desk, port = tmp_path / "desk.sqlite3", free_port()
    command = [sys.executable, "-m", "mcp_errors", "serve", "--db", str(desk), "--http", f"127.0.0.1:{port}"]
    command += ["--workers", "2", "--store", f"sqlite:///{tmp_path}/keys.sqlite3"]
    answers: list[str] = []
    with listening(command, port):
        url = f"http://127.0.0.1:{port}/mcp"
        key = uuid.uuid4().hex

        async def refund() -> None:
            # One connection each: the OS spreads them over both replicas.
            async with Client(url) as client:
                result = await client.call_tool(
                    "process_refund",
                    {"order_id": "#10003", "amount": 5, "reason": "damaged"},
                    meta={IDEMPOTENCY_KEY_META: key},  # type: ignore[arg-type]
                )
            assert not result.is_error
            answers.append(result.content[0].text)  # type: ignore[union-attr]

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for _ in range(8):
                    tg.start_soon(refund)
    assert len(set(answers)) == 1
    assert len(answers) == 8
    database = Database(desk)
    try:
        assert [refund["amount"] for refund in database.refunds_for("#10003")] == [5.0]
    finally:
        database.close()


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["--workers", "2"], "--workers"),
        (["--http", "8765", "--workers", "2", "--db", ":memory:"], "--db"),
        (["--store", "mysql://db/keys"], "--store"),
        (["--store", "memory://", "--no-contract"], "--store"),
    ],
    ids=["workers-without-http", "workers-on-memory", "unknown-store", "store-without-contract"],
)
def test_serve_refuses_replicas_and_stores_that_cannot_work(args: list[str], hint: str, tmp_path: Path) -> None:
    if "--db" not in args:
        args = [*args, "--db", str(tmp_path / "desk.sqlite3")]
    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 2
    assert hint in result.output
    assert "Traceback" not in result.output
