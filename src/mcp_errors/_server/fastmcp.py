"""The fastmcp adapter: the error contract and idempotency replay on a fastmcp `FastMCP`, as middleware.

Imported only when a fastmcp server is installed (fastmcp is optional). Two middlewares,
appended at the inside of the server's chain:

    tools/call  ->  user middleware  ->  replay (a store is set)  ->  contract  ->  the tool
    tools/list  ->  ... ->  replay advertises its tools  ->  contract widens outputSchemas
    tasks/get   ->  ... ->  contract writes a task's end in the contract (`_server/tasks.py`)

A tool that runs as a task (SEP-2663, `fastmcp-tasks`) runs in a worker outside this chain:
a transform (`_server/tasks.py`'s `TaskBodies`) puts its body in the contract there.

The contract's is the innermost, so that it sees a tool's exception before any user
middleware (fastmcp's `ErrorHandlingMiddleware` turns tool errors into JSON-RPC errors, which
the model never sees); replay sits just outside it, so that it sees failures already written
as contract results. The proxy (`mcp_errors.proxy`) writes its results and widens its
schemas with the same `error_tool_result` and `widen_tools`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

import fastmcp.exceptions
import pydantic
from fastmcp import FastMCP
from fastmcp.server.context import Context
from fastmcp.server.dependencies import get_access_token
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools import Tool, ToolResult
from mcp_types import CallToolRequestParams, CallToolResult, ContentBlock, ListToolsRequest, TextContent
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_errors._server.arguments import classify_arguments, unknown_tool
from mcp_errors._server.classify import classify_failure, new_error_id
from mcp_errors._server.replay import Replay, TaskCreated, advertise, covers, principal, request_key
from mcp_errors._shared.contract import TASKS_EXTENSION, is_error_envelope, is_protocol_signal
from mcp_errors._shared.envelope import FailureDetails, WideningCache, marked_empty
from mcp_errors._shared.sanitize import (
    MAX_DESCRIPTION_CHARS,
    MAX_MESSAGE_CHARS,
    REDACTED,
    is_secret_name,
    sanitize_json,
    sanitize_text,
)
from mcp_errors._shared.telemetry import annotate_tool_result

if TYPE_CHECKING:
    from mcp_errors.stores import IdempotencyStore  # the store's module loads with a store

__all__ = [
    "ReplayMiddleware",
    "error_tool_result",
    "forget_raw_text",
    "install_on_fastmcp",
    "replay_middleware",
    "sanitized_contract_result",
    "widen_tools",
]


def install_on_fastmcp(
    server: FastMCP[Any], *, tool_failure_meta: bool, store: IdempotencyStore | None, empty_results: bool = True
) -> None:
    """Apply the contract to `server` (the first time) and honour idempotency keys with `store`.

    Installing again changes nothing but the store, when one is given: the first
    installation decides `tool_failure_meta` and `empty_results`.
    """
    chain = server.middleware
    contract = next((middleware for middleware in chain if isinstance(middleware, _ContractMiddleware)), None)
    if contract is None:
        contract = _ContractMiddleware(tool_failure_meta=tool_failure_meta, empty_results=empty_results)
        server.add_middleware(contract)
        # The tasks module is imported where a task can be: `mcp-errors proxy` starts without it.
        from mcp_errors._server.tasks import TaskBodies

        server.add_transform(TaskBodies(tool_failure_meta=tool_failure_meta))
    if store is None:
        return
    replacement = replay_middleware(store, namespace=server.name, tool_failure_meta=contract.tool_failure_meta)
    for middleware in chain:
        if isinstance(middleware, ReplayMiddleware):
            middleware.replay = replacement.replay
            return
    chain.insert(chain.index(contract), replacement)


def error_tool_result(
    details: FailureDetails,
    error_id: str,
    *,
    meta: Mapping[str, Any] | None = None,
    others: Sequence[ContentBlock] = (),
    tool_failure_meta: bool = False,
) -> ToolResult:
    """A classified failure as fastmcp's `ToolResult`: the contract's text block first, then `others`.

    Args:
        details: The failure, classified and sanitised.
        error_id: This occurrence's id, also in the log line for it.
        meta: A `_meta` to keep (merged into, never replaced).
        others: Content blocks of the failure that are not text (an image a server sent), kept after the text.
        tool_failure_meta: Also write SEP-3313's `_meta["io.modelcontextprotocol/toolFailure"]`.
    """
    text, structured = details.write(error_id)
    if tool_failure_meta:
        from mcp_errors._shared.tool_failure import with_tool_failure  # opt-in: not at start-up

        meta = with_tool_failure(meta, structured)
    return _built_tool_result([TextContent(type="text", text=text), *others], structured, dict(meta) if meta else None)


def _built_tool_result(
    content: list[ContentBlock], structured: dict[str, Any], meta: dict[str, Any] | None
) -> ToolResult:
    """What `ToolResult.model_construct(content=..., structured_content=..., meta=..., is_error=True)` builds.

    These are content blocks and a JSON object already: `ToolResult.__init__`'s conversion of
    arbitrary return values would only repeat work, and `model_construct`'s per-field
    bookkeeping (aliases, defaults, private attributes) cost a fastmcp error result about
    38,000 instructions, more than the rest of writing it (benchmarks/instructions.py). Every
    field is given here, so the model's state is set as `model_construct` sets it, directly
    (`tests/server/test_fastmcp.py` holds the two equal).
    """
    if not _TOOL_RESULT_IS_FOUR_FIELDS:  # a fastmcp whose ToolResult has more: its own way
        return ToolResult.model_construct(content=content, structured_content=structured, meta=meta, is_error=True)
    fields = {"content": content, "structured_content": structured, "meta": meta, "is_error": True}
    result = ToolResult.__new__(ToolResult)
    object.__setattr__(result, "__dict__", fields)
    object.__setattr__(result, "__pydantic_fields_set__", set(_TOOL_RESULT_FIELDS))
    object.__setattr__(result, "__pydantic_extra__", None)
    object.__setattr__(result, "__pydantic_private__", dict(_TOOL_RESULT_PRIVATE))
    return result


_TOOL_RESULT_FIELDS: Final = frozenset(ToolResult.model_fields)
_TOOL_RESULT_IS_FOUR_FIELDS: Final = {"content", "structured_content", "meta", "is_error"} == _TOOL_RESULT_FIELDS and (
    ToolResult.model_config.get("extra") in (None, "ignore")
)
_TOOL_RESULT_PRIVATE: Final = {
    name: attribute.get_default() for name, attribute in ToolResult.__private_attributes__.items()
}


def forget_raw_text(exc: BaseException, result: ToolResult) -> None:
    """Leave in `exc` only the facts `result` tells, once `exc` has been written as `result`.

    fastmcp's request span records the exception that left its tool call when the request
    ends, after the middleware turned it into a result: its message (the tool's raw text, a
    password, a path) as the span's status and exception event, its traceback (file paths) as
    the event's stack trace. Only the exception that left the call is changed, never what it
    wraps: its message becomes the category, code and `errorId` (the full text and traceback
    are in the server's log under that id), and its cause, context and traceback are dropped.

    Args:
        exc: What the tool call raised, already classified and logged.
        result: The contract result written for it.
    """
    structured = result.structured_content if isinstance(result.structured_content, Mapping) else {}
    category, code, error_id = (structured.get(field) for field in ("errorCategory", "code", "errorId"))
    exc.args = (f"{category} error" + (f" {code}" if code else "") + f", errorId {error_id}",)
    exc.__cause__ = exc.__context__ = None
    exc.__suppress_context__ = True
    exc.__traceback__ = None
    if hasattr(exc, "__notes__"):
        del exc.__notes__


def sanitized_contract_result(result: ToolResult) -> ToolResult:
    """An error result already in the contract that came from elsewhere (an upstream's own), its words made safe.

    Its shape is trusted (the category, the verdict, the fields), not its words: every string
    of its envelope and every text block is sanitised like anything else the agent reads, so
    that a password or a server path in an upstream's own envelope stops here too.
    """
    structured = sanitize_json(result.structured_content) if result.structured_content is not None else None
    for error in structured.get("fieldErrors", ()) if isinstance(structured, dict) else ():
        # The value sent for a secret-named argument is a secret whatever it looks like.
        if isinstance(error, dict) and "received" in error and is_secret_name(str(error.get("field")).split(".")[-1]):
            error["received"] = REDACTED
    return ToolResult.model_construct(
        content=[
            block.model_copy(update={"text": sanitize_text(block.text, limit=_PASSED_TEXT_CHARS)})
            if isinstance(block, TextContent)
            else block
            for block in result.content
        ],
        structured_content=structured,
        meta=result.meta,
        is_error=result.is_error,
    )


_PASSED_TEXT_CHARS: Final = MAX_DESCRIPTION_CHARS + MAX_MESSAGE_CHARS + 200
"""A contract text block: its head, a message and a description (`_shared/error_text.py`)."""


def widen_tools(tools: Sequence[Tool], widening: WideningCache) -> list[Tool]:
    """`tools` with every outputSchema widened to admit the error envelope (copies; the originals are kept)."""
    return [
        tool.model_copy(update={"output_schema": widening.widen(tool)}) if tool.output_schema is not None else tool
        for tool in tools
    ]


def replay_middleware(
    store: IdempotencyStore,
    *,
    namespace: str | None = None,
    tool_failure_meta: bool = False,
    caller: Callable[[], object] | None = None,
) -> ReplayMiddleware:
    """A fastmcp middleware that honours idempotency keys with `store` (the proxy adds one).

    Args:
        store: Where keys are claimed.
        namespace: Whose keys these are in `store`; by default the name of the server that
            handles the call. Servers (and proxies of different upstreams) sharing one store
            need different namespaces; replicas of one server need the same.
        tool_failure_meta: Also write SEP-3313's `_meta` object on a task's failure a resend gets.
        caller: Who sends the current call besides its access token's principal (the proxy's
            caller identity), or `None` for nobody in particular; part of every key's scope.
    """
    replay = Replay[Any](store, to_wire=_to_wire, from_wire=ToolResult.from_mcp_result)
    return ReplayMiddleware(replay, namespace=namespace, tool_failure_meta=tool_failure_meta, caller=caller)


class _ContractMiddleware(Middleware):
    def __init__(self, *, tool_failure_meta: bool, empty_results: bool = True) -> None:
        self._widening = WideningCache()
        self.tool_failure_meta = tool_failure_meta
        self.empty_results = empty_results

    async def __call__(self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]) -> Any:
        # The two methods this middleware is about are dispatched here rather than through
        # the base class's hook chain, which builds four wrappers per message
        # (benchmarks/overhead.py); overriding `__call__` is fastmcp's documented middleware
        # form and runs once per message. Every other message takes the base class's way,
        # so a hook added here for another method still runs (`on_message` and `on_request`
        # are not called for these two).
        method = context.method
        if method == "tools/call":
            return await self.on_call_tool(context, call_next)
        if method == "tools/list":
            return await self.on_list_tools(context, call_next)
        if method == "tasks/get":
            state = await call_next(context)
            # The wire's JSON here (the extension's result, serialized below this point).
            if isinstance(state, Mapping):
                from mcp_errors._server.tasks import task_state_in_contract

                return task_state_in_contract(state, tool_failure_meta=self.tool_failure_meta)
            return state
        return await super().__call__(context, call_next)

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        try:
            result = await call_next(context)
        except Exception as exc:
            if is_protocol_signal(exc):
                raise
            if exc.__cause__ is not None and is_protocol_signal(exc.__cause__):
                # fastmcp wraps what a tool raised in its ToolError, and would send the
                # client a text error it cannot act on: the signal goes out as it was raised.
                raise exc.__cause__ from None
            error_id = new_error_id()
            result = error_tool_result(await _failure(context, exc, error_id), error_id)
            forget_raw_text(exc, result)
        if not isinstance(result, ToolResult):
            return result  # a task the tasks extension started: its result comes with `tasks/get`
        if self.empty_results and not result.is_error:
            empty = marked_empty(result.content, result.structured_content)
            if empty is not None:
                result.content, result.structured_content = list(empty.content), empty.structured_content
        if self.tool_failure_meta and result.is_error and is_error_envelope(result.structured_content):
            from mcp_errors._shared.tool_failure import with_tool_failure  # opt-in: not at start-up

            result.meta = with_tool_failure(result.meta, cast(dict[str, Any], result.structured_content))
        annotate_tool_result(context.message.name, result)
        return result

    async def on_list_tools(
        self,
        context: MiddlewareContext[ListToolsRequest],
        call_next: CallNext[ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        return widen_tools(await call_next(context), self._widening)


async def _failure(context: MiddlewareContext[CallToolRequestParams], exc: Exception, error_id: str) -> FailureDetails:
    name = context.message.name
    if isinstance(exc, fastmcp.exceptions.NotFoundError):
        return unknown_tool(name, error_id=error_id)
    if isinstance(exc, fastmcp.exceptions.ValidationError) and isinstance(exc.__cause__, pydantic.ValidationError):
        schema = None
        if context.fastmcp_context is not None:
            tool = await context.fastmcp_context.fastmcp.get_tool(name)
            schema = tool.parameters if tool is not None else None
        return classify_arguments(exc.__cause__, error_id=error_id, tool_name=name, input_schema=schema)
    return classify_failure(exc, error_id=error_id, tool_name=name)


class ReplayMiddleware(Middleware):
    """Idempotency replay on a fastmcp server (build it with `replay_middleware`)."""

    def __init__(
        self,
        replay: Replay[Any],
        *,
        namespace: str | None,
        tool_failure_meta: bool,
        caller: Callable[[], object] | None = None,
    ) -> None:
        self.replay = replay
        self.namespace = namespace
        self._tool_failure_meta = tool_failure_meta
        self._caller = caller
        # Only names the server has: a caller inventing names must not grow it.
        self._covered: dict[str, bool] = {}

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> Any:  # a `ToolResult`, or the task the tasks extension started
        fastmcp_context = context.fastmcp_context
        request = fastmcp_context.request_context if fastmcp_context is not None else None
        key = request_key(request.meta if request is not None else None)
        name = context.message.name
        if key is None or fastmcp_context is None or not await self._covers(fastmcp_context.fastmcp, name):
            return await call_next(context)
        server = fastmcp_context.fastmcp

        async def resend(handle: Mapping[str, Any]) -> Any:
            from mcp_errors._server.tasks import resend_task

            return await resend_task(
                server, handle, as_task=_asks_for_a_task(fastmcp_context), tool_failure_meta=self._tool_failure_meta
            )

        return await self.replay.call(
            namespace=self.namespace if self.namespace is not None else fastmcp_context.fastmcp.name,
            tool=name,
            arguments=context.message.arguments or {},
            key=key,
            principal=self._principal(),
            run=lambda: call_next(context),
            resend_task=resend,
        )

    def _principal(self) -> object:
        token_principal = principal(get_access_token())
        caller = self._caller() if self._caller is not None else None
        # Without a caller, the scope is what it always was: keys already stored still replay.
        return token_principal if caller is None else [token_principal, caller]

    async def on_list_tools(
        self,
        context: MiddlewareContext[ListToolsRequest],
        call_next: CallNext[ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        self._covered.update({tool.name: covers(tool) for tool in tools})
        return [advertise(tool) if covers(tool) else tool for tool in tools]

    async def _covers(self, server: FastMCP[Any], name: str) -> bool:
        covered = self._covered.get(name)
        if covered is None:
            tool = await server.get_tool(name)
            if tool is None:
                return False
            covered = self._covered[name] = covers(tool)
        return covered


def _asks_for_a_task(context: Context) -> bool:
    """Whether a `tools/call` asked for a task: the client declared the tasks extension, on 2026-07-28."""
    request = context.request_context
    return (
        request is not None
        and request.protocol_version in MODERN_PROTOCOL_VERSIONS
        and context.client_extension_settings(TASKS_EXTENSION) is not None
    )


def _to_wire(result: object) -> CallToolResult | TaskCreated | None:
    if not isinstance(result, ToolResult):
        from mcp_errors._server.tasks import created_task

        task = created_task(result)
        return None if task is None else TaskCreated(task)
    wire = result.to_mcp_result()
    if isinstance(wire, CallToolResult):
        return wire
    if isinstance(wire, tuple):
        content, structured = wire
        return CallToolResult(content=content, structured_content=structured)
    return CallToolResult(content=wire)
