"""Server side of idempotency keys: replay the first result for a repeated key.

Opt in with `install(server, idempotency=IdempotencyStore())` (an `MCPServer`). Then every
tool that is not annotated `readOnlyHint` (read-only tools need no replay):

- advertises `_meta["mcp-errors/honoursIdempotencyKey"]: true` in tools/list, so the client
  policy knows a resend with the same key cannot apply the call twice;
- reads the key from the request's `params._meta["mcp-errors/idempotencyKey"]`; a call
  without a key runs as usual;
- for a key seen before with the same tool and arguments, returns the stored first result
  without running the tool; a resend that arrives while the first call still runs waits
  for it and gets its result;
- for a key seen before with a *different* tool or arguments, returns a `validation` error
  (`IDEMPOTENCY_KEY_REUSED`, like Stripe's 400): the caller must make a new key for a new
  operation, which is a fix of its input, not a rule of the business;
- stays cancellable: a client's cancel or a server shutdown cancels the tool as usual; only
  the write of a finished result to the store is shielded (and bounded in time), so a result
  that exists is not lost half-recorded.

What is stored: the first *finished* answer (successes, final errors, and errors whose
outcome is unknown), except an error after which running the tool again is right: one that
says nothing was applied (`executionState: not_executed`), and a transient one that does not
say its outcome is unknown (a tool's own "rate limited, retry in 2 s" must reach the tool
again on the resend). Storing an unknown outcome is the safe side, as Stripe does with its
500s: the tool is not run a second time, so it cannot apply twice. A replayed answer carries
`_meta["mcp-errors/replayed"]: true`, so the client policy knows another resend would get it
again and escalates "outcome unknown"; a read-only tool (or a human) then finds out whether
it ran. Not storing it would make every tool of the server a double-apply risk, while the
server tells clients that a keyed resend is safe. (Uncaught exceptions, such as a timeout
inside the tool, are classified `outcome_unknown`: a tool that raises `TransientError` after
it may have written must say so with `execution_state=ExecutionState.OUTCOME_UNKNOWN`.)

Keys are not scoped to a caller: a server with several principals should make keys
unguessable (the policy uses random UUIDs) or plug in a store that scopes them.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, Tool

from mcp_errors._classify import log_fields, new_error_id
from mcp_errors._contract import ErrorCategory, ExecutionState, FieldError
from mcp_errors._envelope import FailureDetails, error_result
from mcp_errors._idempotency_keys import HONOURS_IDEMPOTENCY_META, IDEMPOTENCY_KEY_META, REPLAYED_META

__all__ = ["IdempotencyStore", "StoredResult", "enable_replay"]

logger = logging.getLogger("mcp_errors")


@dataclass(frozen=True, slots=True)
class StoredResult:
    """One remembered first result: what it answered, and for which call."""

    fingerprint: str
    """Hash of the tool name and its arguments."""
    result: dict[str, Any]
    """The `CallToolResult` as wire JSON, so that any store can serialise it."""


class IdempotencyStore:
    """Where first results live, per idempotency key: in memory, bounded in size and age.

    Subclass and override `get` and `put` to keep results elsewhere (a database, Redis).
    Waiting for an in-flight call with the same key is coordinated in the server process.

    Args:
        max_entries: Keys kept; the oldest are dropped first.
        ttl_seconds: How long a result is replayed; a key older than this runs again.

    Example:
        ```python
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import IdempotencyStore, install

        server = install(MCPServer("payments"), idempotency=IdempotencyStore(ttl_seconds=3600))
        ```
    """

    def __init__(self, *, max_entries: int = 10_000, ttl_seconds: float = 24 * 3600) -> None:
        if max_entries < 1 or ttl_seconds <= 0:
            raise ValueError("max_entries and ttl_seconds must be positive")
        self.max_entries = max_entries
        self.ttl_seconds = ttl_seconds
        self._entries: OrderedDict[str, tuple[float, StoredResult]] = OrderedDict()

    async def get(self, key: str) -> StoredResult | None:
        """The stored result for `key`, or `None` when unknown or expired."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        stored_at, value = entry
        if time.monotonic() - stored_at > self.ttl_seconds:
            del self._entries[key]
            return None
        return value

    async def put(self, key: str, value: StoredResult) -> None:
        """Remember the first result for `key`."""
        self._entries[key] = (time.monotonic(), value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


_REPLAYING = "_mcp_errors_replay"
_STORE_WRITE_SECONDS = 10.0


def enable_replay(server: MCPServer[Any], store: IdempotencyStore) -> None:
    """Make `server` honour idempotency keys with `store` (what `install(..., idempotency=)` does).

    Args:
        server: An `MCPServer`, with the error contract installed or not.
        store: Where first results are kept.

    Raises:
        TypeError: If `server` is not an `MCPServer`.
    """
    if not isinstance(server, MCPServer):
        raise TypeError(f"idempotency replay supports MCPServer, not {type(server).__name__}")
    if getattr(server, _REPLAYING, None) is not None:
        setattr(server, _REPLAYING, store)
        return
    setattr(server, _REPLAYING, store)
    original_call_tool = server.call_tool
    original_list_tools = server.list_tools
    in_flight: dict[str, anyio.Event] = {}

    writes_by_name: dict[str, bool] = {}

    async def covered(name: str) -> bool:
        # The public tools/list view (no reliance on the SDK's tool manager), read again only
        # for a name not seen yet, so that a tool registered later is picked up.
        if name not in writes_by_name:
            writes_by_name.update({tool.name: _writes(tool) for tool in await original_list_tools()})
        return writes_by_name.get(name, False)

    async def call_tool(name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        key = _request_key(context)
        if key is None or not await covered(name):
            return await original_call_tool(name, arguments, context)
        current: IdempotencyStore = getattr(server, _REPLAYING)
        fingerprint = _fingerprint(name, arguments)
        while (pending := in_flight.get(key)) is not None:
            await pending.wait()
        done = in_flight[key] = anyio.Event()
        try:
            stored = await current.get(key)
            if stored is not None:
                if stored.fingerprint != fingerprint:
                    error_id = new_error_id()
                    logger.info(
                        "tool %r: idempotency key reused with other arguments, errorId %s",
                        name,
                        error_id,
                        extra=log_fields(name, error_id, ErrorCategory.VALIDATION),
                    )
                    return error_result(_KEY_REUSED, error_id=error_id)
                replayed = CallToolResult.model_validate(stored.result)
                replayed.meta = {**(replayed.meta or {}), REPLAYED_META: True}
                return replayed
            # Not shielded: a hung tool must stay cancellable by the client and on shutdown.
            result = await original_call_tool(name, arguments, context)
            if isinstance(result, CallToolResult) and _worth_storing(result):
                dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                # A finished result must not be lost half-recorded to a late cancel; bounded,
                # so a hung store cannot make the call uncancellable either.
                with anyio.move_on_after(_STORE_WRITE_SECONDS, shield=True):
                    await current.put(key, StoredResult(fingerprint=fingerprint, result=dumped))
            return result
        finally:
            del in_flight[key]
            done.set()

    async def list_tools() -> list[Tool]:
        tools = await original_list_tools()
        return [_advertise(tool) if _writes(tool) else tool for tool in tools]

    server.call_tool = call_tool  # type: ignore[method-assign]  # instance-level wrap, as install() does
    server.list_tools = list_tools  # type: ignore[method-assign]


def _request_key(context: Any) -> str | None:
    if not isinstance(context, Context):
        return None
    try:
        meta = context.request_context.meta
    except ValueError:  # a call made outside a request (e.g. server.call_tool in a test)
        return None
    if not meta:
        return None
    key = meta.get(IDEMPOTENCY_KEY_META)
    return key if isinstance(key, str) and 0 < len(key) <= 255 else None


def _writes(tool: Tool) -> bool:
    return not (tool.annotations is not None and tool.annotations.read_only_hint)


def _fingerprint(name: str, arguments: dict[str, Any]) -> str:
    canonical = json.dumps({"tool": name, "arguments": arguments}, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _worth_storing(result: CallToolResult) -> bool:
    structured = result.structured_content
    if not result.is_error or not isinstance(structured, dict):
        return True
    state = structured.get("executionState")
    if state == ExecutionState.NOT_EXECUTED.value:
        return False  # nothing was applied: the resend must run the tool
    # A transient error that does not say it may have applied anything is the tool's own
    # "try again": replaying it would keep every resend from reaching the tool.
    return not (structured.get("errorCategory") == ErrorCategory.TRANSIENT.value and state is None)


def _advertise(tool: Tool) -> Tool:
    meta = dict(tool.meta or {})
    meta[HONOURS_IDEMPOTENCY_META] = True
    return tool.model_copy(update={"meta": meta})


_KEY_REUSED: Final = FailureDetails(
    message="Idempotency key reused",
    category=ErrorCategory.VALIDATION,
    description="This idempotency key was already used for a call with other arguments. "
    "Send a new key for a new operation, or the original arguments to get the first result again.",
    code="IDEMPOTENCY_KEY_REUSED",
    field_errors=(
        FieldError(
            field=f"_meta.{IDEMPOTENCY_KEY_META}",
            problem="already used with different arguments",
            expected="a new key, or the arguments of the first call",
        ),
    ),
    execution_state=ExecutionState.NOT_EXECUTED,
)
