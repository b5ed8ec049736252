"""Write tools for the idempotency tests, on an `MCPServer` or a fastmcp `FastMCP`.

`build(kind, store)` returns the server and `Effects`, the log of every write a tool
applied: what the tests count to prove that a keyed write ran once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from fastmcp import FastMCP
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import UrlElicitationRequiredError
from mcp_types import ElicitRequestURLParams, ToolAnnotations

from mcp_errors import BusinessRuleError, TransientError, install
from mcp_errors._shared.contract import HONOURS_IDEMPOTENCY_META
from mcp_errors.stores import IdempotencyStore

ServerKind = Literal["mcpserver", "fastmcp"]


@dataclass
class Effects:
    """What the tools did, and the levers the tests pull."""

    writes: list[str] = field(default_factory=list)
    started: anyio.Event = field(default_factory=anyio.Event)
    release: anyio.Event = field(default_factory=anyio.Event)
    cancelled: anyio.Event = field(default_factory=anyio.Event)
    slow_seconds: float = 0.3
    answer_bytes: int = 10
    authorised: bool = False


def build(kind: ServerKind, store: IdempotencyStore | str) -> tuple[Any, Effects]:
    """A server of `kind` with keyed writes, installed with `store`."""
    effects = Effects()
    server: Any = MCPServer("keyed-writes") if kind == "mcpserver" else FastMCP("keyed-writes")
    install(server, idempotency=store)

    def add(function: Any, **options: Any) -> None:
        if kind == "mcpserver":
            server.tool(**options)(function)
        else:
            server.tool(function, **options)

    async def charge(amount: int) -> str:
        """Charge an amount."""
        effects.writes.append(f"charge {amount}")
        return f"charge #{len(effects.writes)} of {amount}"

    async def refund(amount: int) -> str:
        """Refund an amount (another tool: the same key there is another operation)."""
        effects.writes.append(f"refund {amount}")
        return f"refund #{len(effects.writes)} of {amount}"

    async def balance() -> int:
        """Read only."""
        return len(effects.writes)

    async def flaky_write(amount: int) -> str:
        """Refused once, before anything was applied."""
        effects.writes.append(f"flaky {amount}")
        if len(effects.writes) == 1:
            raise TransientError("Busy", description="Not applied; resend.", execution_state="not_executed")
        return "ok"

    async def lost_answer_write(amount: int) -> str:
        """Applied, then its downstream timed out once."""
        effects.writes.append(f"lost {amount}")
        if len(effects.writes) == 1:
            raise TransientError("Timed out", description="Unknown; resend.", execution_state="outcome_unknown")
        return f"applied {amount}"

    async def overdrawn_write(amount: int) -> str:
        """Always refused by a business rule."""
        effects.writes.append(f"overdrawn {amount}")
        raise BusinessRuleError("Insufficient funds", description="The account cannot cover it.", code="NO_FUNDS")

    async def rate_limited_write(amount: int) -> str:
        """The tool's own "retry shortly" once."""
        effects.writes.append(f"limited {amount}")
        if len(effects.writes) == 1:
            raise TransientError("Rate limited", description="Resend in a moment.", retry_after_seconds=0)
        return "sent"

    async def write_then_wait(amount: int) -> str:
        """Writes at once, then takes `slow_seconds` to answer."""
        effects.writes.append(f"write {amount}")
        await anyio.sleep(effects.slow_seconds)
        return f"written {amount}"

    async def wait_then_write(amount: int) -> str:
        """Takes `slow_seconds`, then writes."""
        await anyio.sleep(effects.slow_seconds)
        effects.writes.append(f"write {amount}")
        return f"written {amount}"

    async def held_write(amount: int) -> str:
        """Writes, then waits until the test releases it (or it is cancelled)."""
        effects.writes.append(f"held {amount}")
        effects.started.set()
        try:
            await effects.release.wait()
        except anyio.get_cancelled_exc_class():
            effects.cancelled.set()
            raise
        return f"held write {amount} done"

    async def authorised_write(amount: int) -> str:
        """Asks the client to complete a URL elicitation (-32042) until `authorised`."""
        if not effects.authorised:
            authorise = ElicitRequestURLParams(message="Authorise it", url="https://pay.example/a", elicitation_id="a1")
            raise UrlElicitationRequiredError([authorise])
        effects.writes.append(f"authorised {amount}")
        return f"paid {amount}"

    async def echo_write(text: str) -> str:
        """Answers with `answer_bytes` bytes."""
        effects.writes.append("echo")
        return text * effects.answer_bytes

    async def own_keys_write(amount: int) -> str:
        """Keeps its keys with its own writes (declares it): replay leaves it alone."""
        effects.writes.append(f"own {amount}")
        return f"own #{len(effects.writes)}"

    for function in (
        charge,
        refund,
        flaky_write,
        lost_answer_write,
        overdrawn_write,
        rate_limited_write,
        write_then_wait,
        wait_then_write,
        held_write,
        authorised_write,
        echo_write,
    ):
        add(function)
    add(balance, annotations=ToolAnnotations(read_only_hint=True))
    add(own_keys_write, meta={HONOURS_IDEMPOTENCY_META: True})
    return server, effects
