"""Server side of idempotency keys: claim the key, run the call once, replay its first answer.

Opt in with `install(server, idempotency=store)` (an `MCPServer` or a fastmcp `FastMCP`;
`store` is an `IdempotencyStore` or a URL for `open_store`). Then every tool that is not
annotated `readOnlyHint` (read-only tools need no replay), and that does not declare
`_meta["mcp-errors/honoursIdempotencyKey"]` itself (a tool that keeps its keys with its own
writes, like the demo desk's refunds, is left to do so):

- advertises `_meta["mcp-errors/honoursIdempotencyKey"]: true` in tools/list, so the client
  policy knows a resend with the same key cannot apply the call twice;
- reads the key from the request's `params._meta["mcp-errors/idempotencyKey"]`; a call
  without a key runs as usual;
- **claims** the key, scoped to the server (its name), to the tool and to the caller when
  the server knows it (the authenticated principal), *before* the tool runs, in one atomic step of the store. Exactly
  one call with the key runs the tool; every other one gets, from the same step:
  - the first call's stored answer, replayed, marked `_meta["mcp-errors/replayed"]: true`;
  - for a first call still running: a bounded wait for its answer (`wait_seconds`), then a
    transient `IN_PROGRESS` error (`executionState: not_executed`, `retryAfterSeconds`);
  - for a key used with *other arguments*: a `validation` error `IDEMPOTENCY_KEY_REUSED`
    (like Stripe's 400): a new operation needs a new key, a fix of the caller's input;
  - for a first call whose server died before it answered (its lease expired): a transient
    error with `executionState: outcome_unknown`, code `OUTCOME_UNKNOWN`, marked replayed.
    The call is never run again under this key: it may have been applied;
- a claim the store did not answer in time (twice its `timeout_seconds`) is answered
  `IDEMPOTENCY_STORE_UNAVAILABLE`, not executed; the store may still grant it later, so it is
  made with a token of replay's own and released by that token before the next keyed call
  (the resend first) claims: the resend then runs the tool, once;
- keeps its claim's lease alive while the tool runs, and keeps the tool running when its
  caller stops waiting (a client timeout or cancel, a server shutdown) for up to
  `grace_seconds`, so that the answer of a write that was about to finish is kept for the
  resend. A tool still running then is cancelled and its key answers `OUTCOME_UNKNOWN`.

A call the server runs as a task (SEP-2663: the tasks extension answers `tools/call` with a
task's id and runs the tool in the background) keeps *the task* under its key: the task is
created once, and a resend gets the same task (its id and status, and through `tasks/get`
its result) instead of starting the work again. Once that task has ended with an error that
says nothing was applied (or the tool's own "try again"), a resend starts the next run under
the same key, once: the runs of one key form a short chain, each claimed like any call.

What is kept: the first *finished* answer (successes, final errors, and errors whose outcome
is unknown), up to `max_result_bytes` (a larger one is answered once; a resend learns that it
ran and that its answer was not kept). The claim is *released* instead, so that a resend runs
the tool, after an error that says nothing was applied (`executionState: not_executed`) and
after a transient error that does not say its outcome is unknown (a tool's own "rate limited,
retry in 2 s" asks for the same call again). Keeping an unknown outcome is the safe side, as
Stripe does with its 500s: the tool is not run a second time, so it cannot apply twice; the
client policy escalates a replayed unknown outcome at once instead of resending into the
store, and a read-only tool (or a human) finds out whether it ran. (Uncaught exceptions, such
as a timeout inside the tool, are classified `outcome_unknown`: a tool that raises
`TransientError` after it may have written must say so with
`execution_state=ExecutionState.OUTCOME_UNKNOWN`.)
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import math
import unicodedata
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

import anyio
from mcp_types import CallToolResult

from mcp_errors._server.classify import log_fields, new_error_id
from mcp_errors._server.replay_answers import (
    ABANDONED,
    KEY_INVALID,
    KEY_REUSED,
    MAX_KEY_LENGTH,
    MAX_TASK_RUNS,
    STOPPED,
    STORE_UNAVAILABLE,
    STORE_UNWRITABLE,
    TASK_NOT_READABLE,
    TOO_MANY_RUNS,
    in_progress,
    not_kept,
)
from mcp_errors._shared.causes import causes
from mcp_errors._shared.contract import (
    HONOURS_IDEMPOTENCY_META,
    IDEMPOTENCY_KEY_META,
    REPLAYED_META,
    ErrorCategory,
    ExecutionState,
    is_protocol_signal,
)
from mcp_errors._shared.envelope import FailureDetails, error_result
from mcp_errors._shared.telemetry import annotate_tool_result

if TYPE_CHECKING:
    # The claim protocol (`stores/_protocol.py`) loads with the first store: a server or proxy
    # without keys starts without it (docs/performance.md).
    from mcp_errors.stores import Claim, IdempotencyStore

__all__ = [
    "Replay",
    "TaskCreated",
    "TaskResend",
    "advertise",
    "as_store",
    "canonical_arguments",
    "covers",
    "fingerprint",
    "is_final_answer",
    "principal",
    "request_key",
    "scope_key",
]

logger = logging.getLogger("mcp_errors")

R = TypeVar("R")

_STORE_BOUND_FACTOR: Final = 2.0
"""A shielded store operation (a claim, an answer's write) is given up after this many times the
store's `timeout_seconds`: a hung store cannot hold a call forever, and a store that bounds
its own operations (PostgreSQL, SQLite) answers before this bound, so that a claim it grants
reaches its caller."""
_FIRST_POLL: Final = 0.01
_MAX_POLL: Final = 0.25
_MAX_GIVEN_UP: Final = 1024
"""Claims given up on that one process remembers, to release them once the store answers."""
_UNSET: Final[Any] = object()


@dataclass(frozen=True, slots=True)
class TaskCreated:
    """A call's answer that is a task the server started (SEP-2663): what its key keeps instead of a result.

    Args:
        handle: The task as the server answered `tools/call` (`taskId`, `status`, ...), as JSON.
    """

    handle: Mapping[str, Any]


TaskResend = Callable[[Mapping[str, Any]], Awaitable[R | CallToolResult | FailureDetails | None]]
"""`async (handle) -> answer`: what a resend of the call that created the task `handle` gets.

The server's own answer (the task as it stands now), a finished task's `CallToolResult` (sent
back as a replayed answer), a failure to answer with, or `None` when the task ended without
applying anything, so that the call runs anew under the same key."""


def as_store(idempotency: IdempotencyStore | str) -> IdempotencyStore:
    """`idempotency` as a store: a store as it is, a URL through `open_store`."""
    from mcp_errors.stores import IdempotencyStore, open_store

    if isinstance(idempotency, IdempotencyStore):
        return idempotency
    if isinstance(idempotency, str):
        return open_store(idempotency)
    raise TypeError(f"idempotency= takes an IdempotencyStore or a store URL, not {type(idempotency).__name__}")


def request_key(meta: Mapping[str, Any] | None) -> object:
    """The idempotency key a request's `params._meta` carries, as sent; `None` without one."""
    return meta.get(IDEMPOTENCY_KEY_META) if meta else None


def scope_key(namespace: str, principal: object, tool: str, key: str, run: int = 0) -> str:
    """The store's key for an idempotency key: scoped to the server, the caller and the tool, fixed length.

    `namespace` is the server's name (replicas of one server share it, so their keys meet;
    two servers sharing one store never see each other's keys). `run` counts the task runs of
    one key before this one (see the module docs): 0 for every call that is not a re-run of a task.
    """
    scope: list[object] = [namespace, principal, tool, key]
    if run:
        scope.append(run)
    return hashlib.sha256(json.dumps(scope, default=str).encode()).hexdigest()


def fingerprint(arguments: Mapping[str, Any]) -> str:
    """Hash of a call's arguments, compared as JSON values: equal arguments hash the same.

    Keys in any order, numbers as numbers (`100` and `100.0` are one number; `true` is not
    `1`), strings and keys in Unicode NFC (`"é"` typed either way is one string): see
    `canonical_arguments`.
    """
    canonical = json.dumps(
        canonical_arguments(arguments), sort_keys=True, default=str, ensure_ascii=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def canonical_arguments(value: Any) -> Any:
    """`value` (JSON data) in the one spelling its meaning has, for comparing two calls' arguments.

    A float with an integral value becomes that int, exactly (`100.0` -> `100`, `2.0**64` ->
    `2**64`; an int beyond a float's precision stays the exact number it is); booleans stay
    booleans, never numbers; strings and object keys are NFC-normalised; tuples are lists.
    Anything else is left for `json.dumps(default=str)`.
    """
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else value
    if isinstance(value, int):
        return int(value)  # an int subclass (an IntEnum) as the number it is
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, Mapping):
        return {
            unicodedata.normalize("NFC", key) if isinstance(key, str) else str(key): canonical_arguments(item)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [canonical_arguments(item) for item in value]
    return value


class Replay(Generic[R]):
    """The claim protocol for one server, whatever the server's result type `R`.

    Args:
        store: Where keys are claimed and answers kept.
        to_wire: The server's result as a `CallToolResult`, as the task it started
            (`TaskCreated`), or `None` for a result that is not a final answer (the claim is
            then released).
        from_wire: A `CallToolResult` (replayed or written here) as the server's result.
    """

    def __init__(
        self,
        store: IdempotencyStore,
        *,
        to_wire: Callable[[R], CallToolResult | TaskCreated | None],
        from_wire: Callable[[CallToolResult], R],
    ) -> None:
        self.store = store
        self._to_wire = to_wire
        self._from_wire = from_wire
        # Calls running in this process, so that a local duplicate wakes when they end
        # instead of polling the store.
        self._running: dict[str, anyio.Event] = {}
        # Claims this process stopped waiting for (the store hung or failed mid-claim): the store
        # may still grant them, held by nobody. Their tokens let the next call free them.
        self._given_up: OrderedDict[tuple[str, str], None] = OrderedDict()  # (scope, token)
        self._tokens_known = "token" in inspect.signature(store.claim).parameters

    async def call(
        self,
        *,
        namespace: str,
        tool: str,
        arguments: Mapping[str, Any],
        key: object,
        principal: object,
        run: Callable[[], Awaitable[R]],
        resend_task: TaskResend[R] | None = None,
    ) -> R:
        """Run `run` once for `key`, or answer from what the key holds.

        Args:
            namespace: Whose keys these are: the server's name, so that servers sharing one
                store keep their keys apart (the proxy may give its upstream's).
            tool: The tool's name.
            arguments: Its arguments (their hash must match the first call's).
            key: The caller's idempotency key, as sent: a string of 1 to 255 characters,
                else the call is refused (`IDEMPOTENCY_KEY_INVALID`) rather than run unprotected.
            principal: Who calls (JSON-able; `None` when the server does not know).
            run: Runs the tool and returns the server's result.
            resend_task: What a resend gets when the key holds a task (servers that run
                tools as tasks); without it such a key answers "outcome unknown".

        Returns:
            The tool's result, the first call's replayed answer, or a contract error.
        """
        # Loaded with the store this replay was given (its module subclasses the protocol's).
        from mcp_errors.stores._protocol import Abandoned, Finished, InProgress, Mismatch, Won, new_token

        if not (isinstance(key, str) and 0 < len(key) <= MAX_KEY_LENGTH):
            return self._error(KEY_INVALID, tool)
        store = self.store
        runs = 0
        scope = scope_key(namespace, principal, tool, key)
        arguments_hash = fingerprint(arguments)
        deadline = anyio.current_time() + store.wait_seconds
        poll = _FIRST_POLL
        while True:
            if self._given_up and not await self._release_given_up(scope):
                return self._error(STORE_UNAVAILABLE, tool)  # still not answering
            claim = None
            token = new_token() if self._tokens_known else None
            try:
                # Shielded: a claim the store granted must reach this call, or the key would
                # be held by nobody and answer "outcome unknown" for a call that never ran.
                # A caller that leaves now finds the call run on (see `_run_claimed`).
                with anyio.move_on_after(store.timeout_seconds * _STORE_BOUND_FACTOR, shield=True):
                    claim = await self._claim(scope, arguments_hash, token)
            except Exception as exc:
                # The store says whether it cannot be written at all: nothing was, nor will be.
                if any(store.is_unwritable(cause) for cause in causes(exc)):
                    return self._error(STORE_UNWRITABLE, tool, exc_info=True)
                self._give_up(scope, token)  # a lost connection may have carried the claim
                return self._error(STORE_UNAVAILABLE, tool, exc_info=True)
            if claim is None:
                # Told "not run, resend with the same key": the claim, if the store still grants
                # it, is released before that resend (or any later call here) claims again.
                self._give_up(scope, token)
                return self._error(STORE_UNAVAILABLE, tool)
            if isinstance(claim, Won):
                return await self._run_claimed(scope, claim.token, tool, run)
            if isinstance(claim, Finished):
                task = _task_handle(claim.result)
                if task is None:
                    return self._replay(tool, _replayed(claim.result))
                answer = TASK_NOT_READABLE if resend_task is None else await resend_task(task)
                if answer is not None:
                    return self._task_answer(tool, answer)
                # The task ended without applying anything: the next run under this key.
                runs += 1
                if runs >= MAX_TASK_RUNS:
                    return self._error(TOO_MANY_RUNS, tool)
                scope = scope_key(namespace, principal, tool, key, runs)
                continue
            if isinstance(claim, Mismatch):
                return self._error(KEY_REUSED, tool)
            if isinstance(claim, Abandoned):
                return self._error(ABANDONED, tool, replayed=True)
            assert isinstance(claim, InProgress)
            left = deadline - anyio.current_time()
            if left <= 0:
                return self._error(in_progress(claim.seconds_left), tool)
            running_here = self._running.get(scope)
            with anyio.move_on_after(min(poll, left)):
                await (running_here.wait() if running_here is not None else anyio.sleep_forever())
            poll = min(poll * 2, _MAX_POLL)

    async def _claim(self, scope: str, arguments_hash: str, token: str | None) -> Claim:
        lease = self.store.lease_seconds
        if token is None:
            return await self.store.claim(scope, arguments_hash, lease_seconds=lease)
        return await self.store.claim(scope, arguments_hash, lease_seconds=lease, token=token)

    def _give_up(self, scope: str, token: str | None) -> None:
        if token is None:
            return  # a store that does not take tokens: its claim waits for its lease to end
        self._given_up[scope, token] = None
        while len(self._given_up) > _MAX_GIVEN_UP:
            self._given_up.popitem(last=False)

    async def _release_given_up(self, scope: str) -> bool:
        """Free the claims this process gave up on, `scope`'s first; `False` if the store still does not answer.

        Released by token: a claim the store never granted, or that another call won since,
        is left alone. A store that fails instead of answering is left for the claim to judge.
        """
        pending = sorted(self._given_up, key=lambda held: held[0] != scope)
        with anyio.move_on_after(self.store.timeout_seconds * _STORE_BOUND_FACTOR, shield=True) as bound:
            for held in pending:
                try:
                    if await self.store.release(*held):
                        logger.info("a claim given up on while the idempotency store did not answer was released")
                except Exception:
                    logger.warning("could not release a claim given up on; tried again later", exc_info=True)
                    return True
                self._given_up.pop(held, None)
        return not (bound.cancelled_caught and any(held == scope for held, _ in self._given_up))

    async def _run_claimed(self, scope: str, token: str, tool: str, run: Callable[[], Awaitable[R]]) -> R:
        done = self._running[scope] = anyio.Event()
        call = _ClaimedCall(self, scope, token, tool)
        outcome: list[R] = []
        failure: Exception | None = None
        try:
            async with anyio.create_task_group() as caller:
                caller.start_soon(call.guard)
                # The call runs on when its caller leaves: cancelling a write that may have
                # started is what leaves its outcome unknown. `grace_seconds` bounds it.
                with anyio.CancelScope(shield=True):
                    try:
                        with call.stopped:
                            outcome.append(await run())
                    except Exception as exc:
                        failure = exc
                    call.ended.set()
                    with anyio.move_on_after(self.store.timeout_seconds * _STORE_BOUND_FACTOR):
                        if failure is not None and is_protocol_signal(failure):
                            # The client must act first (-32042, -32021): the tool did not
                            # run, and the resend that follows must run it.
                            await self._release(scope, token, tool)
                        else:
                            await self._record(scope, token, tool, outcome[0] if outcome else None)
                caller.cancel_scope.cancel()
        finally:
            # A released key may already be another call's: its slot is not this one's.
            if self._running.get(scope) is done:
                del self._running[scope]
            done.set()
        if failure is not None:
            raise failure
        if not outcome:  # stopped after its grace: only reached when nobody waits for it
            return self._error(STOPPED, tool, replayed=True)
        return outcome[0]

    async def _record(self, scope: str, token: str, tool: str, result: R | None) -> None:
        try:
            wire = None if result is None else self._to_wire(result)
            if isinstance(wire, TaskCreated):
                # The task is the answer: a resend gets it (and, once it ended, what it did).
                await self.store.finish(scope, token, _encode_task(wire))
                return
            if result is not None and (wire is None or not is_final_answer(wire)):
                await self._release(scope, token, tool)
                return
            answer = _encode(wire if wire is not None else error_result(STOPPED, error_id=new_error_id()))
            if len(answer) > self.store.max_result_bytes:
                logger.warning(
                    "tool %r: its answer (%d bytes) is larger than the idempotency store keeps (%d bytes); "
                    "a resend will be told that it ran",
                    tool,
                    len(answer),
                    self.store.max_result_bytes,
                )
                answer = _encode(error_result(not_kept(len(answer), self.store.max_result_bytes)))
            await self.store.finish(scope, token, answer)
        except Exception:
            # The claim stays until its lease ends; then resends learn the outcome is unknown.
            logger.exception("tool %r: the idempotency store did not record the call's answer", tool)

    async def _release(self, scope: str, token: str, tool: str) -> None:
        try:
            await self.store.release(scope, token)
        except Exception:
            # The claim stays until its lease ends; then resends learn the outcome is unknown.
            logger.exception("tool %r: the idempotency store did not release the key of a call that did not run", tool)

    def _replay(self, tool: str, answer: CallToolResult) -> R:
        annotate_tool_result(tool, answer, replayed=True)
        return self._from_wire(answer)

    def _task_answer(self, tool: str, answer: R | CallToolResult | FailureDetails) -> R:
        if isinstance(answer, FailureDetails):
            return self._error(answer, tool, replayed=True)
        if isinstance(answer, CallToolResult):
            answer.meta = {**(answer.meta or {}), REPLAYED_META: True}
            return self._replay(tool, answer)
        return answer

    def _error(self, details: FailureDetails, tool: str, *, replayed: bool = False, exc_info: bool = False) -> R:
        error_id = new_error_id()
        log = logger.warning if exc_info else logger.info
        log(
            "tool %r: %s, errorId %s",
            tool,
            details.message,
            error_id,
            exc_info=exc_info,
            extra=log_fields(tool, error_id, details.category),
        )
        result = error_result(details, error_id=error_id, meta={REPLAYED_META: True} if replayed else None)
        annotate_tool_result(tool, result, replayed=replayed)
        return self._from_wire(result)


class _ClaimedCall:
    """The guard of one claimed call: renews its lease, and stops it `grace_seconds` after its caller left.

    One task per call (the fast path pays for one spawn): it renews while the caller waits,
    and when the caller leaves (its cancellation reaches the guard, which sits outside the
    call's shield) it goes on renewing, shielded, until the call ends or the grace is over.
    """

    def __init__(self, replay: Replay[Any], scope: str, token: str, tool: str) -> None:
        self.store = replay.store
        self.scope = scope
        self.token = token
        self.tool = tool
        self.stopped = anyio.CancelScope()
        self.ended = anyio.Event()
        self._renewing = True

    async def guard(self) -> None:
        lease = self.store.lease_seconds
        try:
            while True:
                await anyio.sleep(lease / 3)
                await self._renew()
        except anyio.get_cancelled_exc_class():
            if self.ended.is_set():
                raise
            with anyio.CancelScope(shield=True):
                grace = self.store.grace_seconds
                logger.info(
                    "tool %r: the caller left; the keyed call may run %g s more to keep its answer", self.tool, grace
                )
                with anyio.move_on_after(grace):
                    while not self.ended.is_set():
                        with anyio.move_on_after(lease / 3):
                            await self.ended.wait()
                        await self._renew()
                if not self.ended.is_set():
                    self.stopped.cancel()
            raise

    async def _renew(self) -> None:
        if not self._renewing or self.ended.is_set():
            return
        try:
            self._renewing = await self.store.renew(self.scope, self.token, lease_seconds=self.store.lease_seconds)
        except Exception:
            logger.warning("tool %r: could not renew the idempotency claim", self.tool, exc_info=True)
            return
        if not self._renewing:
            logger.warning("tool %r: the idempotency store no longer holds this call's claim", self.tool)


def is_final_answer(result: CallToolResult) -> bool:
    """Whether a result is the call's answer to keep (else the claim is released, or a task run anew)."""
    structured = result.structured_content
    if not result.is_error or not isinstance(structured, dict):
        return True
    state = structured.get("executionState")
    if state == ExecutionState.NOT_EXECUTED.value:
        return False  # nothing was applied: the resend must run the tool
    # A transient error that does not say it may have applied anything is the tool's own
    # "try again": keeping it would keep every resend from reaching the tool.
    return not (structured.get("errorCategory") == ErrorCategory.TRANSIENT.value and state is None)


def _encode(result: CallToolResult) -> bytes:
    data = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:  # a lone surrogate: kept as a JSON escape
        return json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode()


def _encode_task(task: TaskCreated) -> bytes:
    return json.dumps({**task.handle, "resultType": "task"}, ensure_ascii=True, separators=(",", ":")).encode()


def _task_handle(answer: bytes) -> Mapping[str, Any] | None:
    """The task a stored answer is (its `resultType` is `"task"`), `None` for a stored result."""
    if b'"resultType":"task"' not in answer:  # a result's JSON is not parsed twice
        return None
    data = json.loads(answer)
    return data if isinstance(data, dict) and data.get("resultType") == "task" else None


def _replayed(answer: bytes) -> CallToolResult:
    result = CallToolResult.model_validate_json(answer)
    result.meta = {**(result.meta or {}), REPLAYED_META: True}
    return result


def covers(tool: Any) -> bool:
    """Whether replay covers a tool (an MCP or fastmcp `Tool`): it writes, and keeps no keys itself."""
    read_only = tool.annotations is not None and tool.annotations.read_only_hint
    keeps_own_keys = (tool.meta or {}).get(HONOURS_IDEMPOTENCY_META) is True
    return not read_only and not keeps_own_keys


def advertise(tool: Any) -> Any:
    """A copy of `tool` (an MCP or fastmcp `Tool`) that says it honours idempotency keys."""
    return tool.model_copy(update={"meta": {**(tool.meta or {}), HONOURS_IDEMPOTENCY_META: True}})


def principal(token: Any = _UNSET) -> object:
    """Who calls: the (client id, issuer, subject) of an access token, `None` without one.

    Args:
        token: The request's access token (fastmcp's, for a fastmcp server); by default the
            one the SDK's auth middleware set for the current request.
    """
    from mcp.server.auth.provider import principal_components

    if token is _UNSET:
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
    return None if token is None else list(principal_components(token))
