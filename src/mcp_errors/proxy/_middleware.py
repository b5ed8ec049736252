"""The contract in front of a proxied server: a step of the proxy's tools/call middleware (`_calls.py`).

Through fastmcp's proxy, an upstream failure reaches the contract in one of two shapes:
a *returned* `ToolResult(is_error=True)` (what most servers send), or a *raised* error whose
cause is the upstream's `MCPError` (a JSON-RPC error) or a transport failure. Both are
classified by `proxy/_classify.py` and written with the fastmcp adapter's `error_tool_result`; everything
else passes unchanged,
except a success with no content at all, which gets a text saying the tool ran and found
nothing. tools/list gets outputSchemas that also admit the error envelope.

`modern_front_answer`, the outermost step, keeps the codes 2026-07-28 retired off that revision's
fronts: the upstream is always reached in the 2025-11-25 era, so it may answer -32042 (URL
elicitation required) or -32002 (resource not found), which a 2026-07-28 implementation
must not emit. There they become what that revision defines: an `InputRequiredResult` whose
`inputRequests` carry the same URL-mode elicitations, and -32602 (Invalid Params) with the
same message and data. A 2025-11-25 front gets them unchanged.

The proxy's own refusals of a call it did not send (`unavailable_failure`) are written here too.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import fastmcp.exceptions
from fastmcp.server.middleware import CallNext, MiddlewareContext
from fastmcp.tools import Tool, ToolResult
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    URL_ELICITATION_REQUIRED,
    CallToolRequestParams,
    ContentBlock,
    ElicitRequest,
    ElicitRequestURLParams,
    InputRequiredResult,
    ListToolsRequest,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_errors._server.arguments import unknown_tool
from mcp_errors._server.classify import classify_failure, classify_known, log_fields, new_error_id
from mcp_errors._server.fastmcp import error_tool_result, forget_raw_text, sanitized_contract_result, widen_tools
from mcp_errors._shared.advice import RESEND_RULE, resend_after
from mcp_errors._shared.causes import causes
from mcp_errors._shared.contract import (
    PROTOCOL_SIGNAL_CODES,
    REPEAT_OF_META,
    RETIRED_RESOURCE_NOT_FOUND,
    TOOL_FAILURE_META,
    ErrorCategory,
    ExecutionState,
    asks_for_tasks,
)
from mcp_errors._shared.envelope import FailureDetails, WideningCache, empty_result, is_empty_result
from mcp_errors._shared.sanitize import MAX_DESCRIPTION_CHARS, ROOTS_TOOL, roots_announced, sanitize_text
from mcp_errors._shared.telemetry import annotate_tool_result
from mcp_errors.proxy._child import ChildProcess, UpstreamUnavailableError
from mcp_errors.proxy._restarts import RESTARTED_META
from mcp_errors.proxy._sessions import UpstreamBusyError

if TYPE_CHECKING:
    from mcp_errors.proxy._classify import UpstreamClassifier, UpstreamFailure
    from mcp_errors.proxy._rules import Rules

__all__ = ["Contract", "modern_front_answer", "returns_resource_text", "unavailable_failure"]

logger = logging.getLogger("mcp_errors.proxy")
failure_log = logging.getLogger("mcp_errors.proxy.failures")
"""One line per rewritten failure, with the upstream's own words (`--no-failure-log` quiets it alone)."""


class Contract:
    """Rewrite the proxied server's tool failures into the contract, and widen its schemas.

    A step of the proxy's tools/call middleware (`_calls.py`), the innermost: `result` and
    `exception` turn what the upstream answered into the contract, with its telemetry;
    `on_list_tools` widens the listed outputSchemas.

    The classification chain (`_classify.py`, with the failure words and the rules file's
    module) is imported and built at the first failure (`classifier`): the proxy answers
    `initialize`, tools/list and successes without it, and starts sooner (docs/performance.md).

    Args:
        rules: The user's rules file, the chain's step 5 (`None`: the built-in rules only).
        child: The wrapped stdio server, to tell a child that died from other failures;
            `None` for an HTTP upstream.
        tool_failure_meta: Also write SEP-3313 `_meta["io.modelcontextprotocol/toolFailure"]`.
        disguised_failures: Also rewrite a success that plainly reads as a failure (it leads
            with an error label or a top-level `error`), judged as the checker's ME022 judges.
    """

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        child: ChildProcess | None = None,
        tool_failure_meta: bool = False,
        disguised_failures: bool = False,
    ) -> None:
        self.rules = rules
        self._classifier: UpstreamClassifier | None = None
        # Read on every success: whether it may be a failure in disguise (the user's success
        # rules, or `--disguised-failures`), known without building the chain.
        self._reads_successes = disguised_failures or (rules is not None and rules.match_successes)
        self.child = child
        self.tool_failure_meta = tool_failure_meta
        self.disguised_failures = disguised_failures
        self._widening = WideningCache()
        self._tools: dict[str, Tool] = {}
        self.roots: tuple[str, ...] = ()
        """The places the upstream announced as its own (`list_allowed_directories`), which its
        failures may name to the agent: asked once at start-up, and read from every answer of
        such a tool that passes through."""
        # The codes the result counter may carry besides this project's: the rules file's.
        self._rule_codes = frozenset(rule.code for rule in rules.rules if rule.code) if rules else ()

    @property
    def classifier(self) -> UpstreamClassifier:
        """The classification chain, imported and built at its first use (a failure to classify)."""
        if self._classifier is None:
            from mcp_errors.proxy._classify import UpstreamClassifier

            self._classifier = UpstreamClassifier(self.rules)
        return self._classifier

    async def result(self, context: MiddlewareContext[CallToolRequestParams], answered: ToolResult) -> ToolResult:
        """What the upstream answered, in the contract, its telemetry recorded."""
        result = await self._contract_result(context, _without_proxy_meta(answered))
        annotate_tool_result(context.message.name, result, upstream_codes=self._rule_codes)
        return result

    async def exception(self, context: MiddlewareContext[CallToolRequestParams], exc: Exception) -> ToolResult:
        """The call's exception as a contract result, its telemetry recorded.

        Raises:
            MCPError: The upstream's JSON-RPC error that asks something of the client (a URL
                elicitation, a missing capability), which a client acts on only as an error.
        """
        written = await self._from_exception(context, exc)
        forget_raw_text(exc, written)  # fastmcp's span records `exc` when the request ends
        annotate_tool_result(context.message.name, written, upstream_codes=self._rule_codes)
        return written

    async def _contract_result(
        self, context: MiddlewareContext[CallToolRequestParams], result: ToolResult
    ) -> ToolResult:
        if result.is_error:
            return await self._from_error_result(context, result)
        self.learn_roots(context.message.name, result.content)
        if self._reads_successes:
            disguised = await self._from_disguised_failure(context, result)
            if disguised is not None:
                return disguised
        if not result.content:
            if not is_empty_result(result):
                # Data only in structuredContent: text-only hosts get it as JSON, as the SDKs
                # write it, instead of nothing.
                text = json.dumps(result.structured_content, ensure_ascii=False)
                return ToolResult(
                    content=[TextContent(type="text", text=text)],
                    structured_content=result.structured_content,
                    meta=result.meta,
                )
            return await self._as_empty_result(context, result)
        return result

    def learn_roots(self, tool: str, content: Sequence[ContentBlock]) -> None:
        """Keep the places a roots-listing tool's answer announces (any other tool's answer is ignored)."""
        if not ROOTS_TOOL.fullmatch(tool.lower().replace("-", "_")):
            return
        text = "\n".join(block.text for block in content if isinstance(block, TextContent))
        announced = roots_announced(tool, text)
        if announced:
            self.roots = tuple(announced)

    async def on_list_tools(
        self,
        context: MiddlewareContext[ListToolsRequest],
        call_next: CallNext[ListToolsRequest, Sequence[Tool]],
    ) -> Sequence[Tool]:
        tools = await call_next(context)
        self._tools = {tool.name: tool for tool in tools}
        return widen_tools(tools, self._widening)

    async def _failure_of(
        self, context: MiddlewareContext[CallToolRequestParams], result: ToolResult
    ) -> UpstreamFailure:
        from mcp_errors.proxy._classify import UpstreamFailure  # with the chain, at the first failure

        name = context.message.name
        tool = await self._tool(context, name)
        return UpstreamFailure(
            tool=name,
            text="\n".join(block.text for block in result.content if isinstance(block, TextContent)),
            structured=result.structured_content,
            meta=result.meta,
            arguments=context.message.arguments or {},
            input_schema=tool.parameters if tool is not None else None,
            known_tools=tuple(self._tools),
            read_only=_is_read_only(tool),
            roots=self.roots,
        )

    async def _from_disguised_failure(
        self, context: MiddlewareContext[CallToolRequestParams], result: ToolResult
    ) -> ToolResult | None:
        failure = await self._failure_of(context, result)
        error_id = new_error_id()
        # A file's or a page's text is the resource's, not the tool's verdict: a build log that
        # starts "Error: connection refused" was read fine.
        judge_words = self.disguised_failures and not returns_resource_text(
            failure.read_only, failure.arguments, result.content
        )
        details = self.classifier.classify_success(failure, error_id=error_id, judge_words=judge_words)
        if details is None:
            return None
        others = [block for block in result.content if not isinstance(block, TextContent)]
        return self._write(failure.tool, details, error_id, meta=result.meta, others=others, said=failure.text)

    async def _from_error_result(
        self, context: MiddlewareContext[CallToolRequestParams], result: ToolResult
    ) -> ToolResult:
        name = context.message.name
        failure = await self._failure_of(context, result)
        error_id = new_error_id()
        details = self.classifier.classify(failure, error_id=error_id)
        if details is None:
            # Already the contract: its shape as it came, its words sanitised (an upstream's own
            # envelope may carry a password or a path), with the SEP-3313 object when asked for.
            result = sanitized_contract_result(result)
            result.meta = _safe_guidance(result.meta)
            if self.tool_failure_meta and result.structured_content is not None:
                from mcp_errors._shared.tool_failure import with_tool_failure  # opt-in: not at start-up

                result.meta = with_tool_failure(result.meta, result.structured_content)
            return result
        others = [block for block in result.content if not isinstance(block, TextContent)]
        return self._write(name, details, error_id, meta=result.meta, others=others, said=failure.text)

    async def _from_exception(self, context: MiddlewareContext[CallToolRequestParams], exc: Exception) -> ToolResult:
        name = context.message.name
        error_id = new_error_id()
        details: FailureDetails | None
        rpc = _find(exc, MCPError)
        if rpc is not None and asks_for_tasks(rpc):
            # The upstream runs this tool only as a task, which fastmcp's proxy cannot relay
            # (its proxied tools forbid tasks): the host declaring the extension would not help.
            return self._write(name, _TASK_NOT_RELAYED, error_id)
        if rpc is not None and rpc.code in PROTOCOL_SIGNAL_CODES:
            # Asks of the client (complete a URL elicitation, a missing capability) that a
            # client acts on only as JSON-RPC errors.
            raise rpc from None
        unavailable = _find(exc, UpstreamUnavailableError)
        busy = _find(exc, UpstreamBusyError)
        if unavailable is not None:
            details = unavailable_failure(str(unavailable), unavailable.retry_after)
        elif busy is not None:
            details = _busy(busy.retry_after)
        elif isinstance(exc, fastmcp.exceptions.NotFoundError):
            details = unknown_tool(name, error_id=error_id, known=await self._tool_names(context))
        elif rpc is not None and rpc.code == CONNECTION_CLOSED and self.child is not None and not self.child.running:
            details = _died_mid_call(self.child.describe_exit())
        elif rpc is not None:
            from mcp_errors.proxy._classify import UpstreamFailure  # with the chain, at the first failure

            tool = await self._tool(context, name)
            failure = UpstreamFailure(
                tool=name,
                text=rpc.error.message,
                jsonrpc_code=rpc.code,
                jsonrpc_data=rpc.error.data,
                arguments=context.message.arguments or {},
                input_schema=tool.parameters if tool is not None else None,
                known_tools=tuple(self._tools),
                read_only=_is_read_only(tool),
                roots=self.roots,
            )
            details = self.classifier.classify(failure, error_id=error_id) or _UNREADABLE
        else:
            details = _from_causes(exc)
        if details is None:
            # Not the upstream's answer: a failure of the proxy itself, classified (and
            # logged with its traceback) where every exception is.
            details = classify_failure(exc, error_id=error_id, tool_name=name)
        return self._write(name, details, error_id, said=rpc.error.message if rpc is not None else "")

    async def _as_empty_result(
        self, context: MiddlewareContext[CallToolRequestParams], result: ToolResult
    ) -> ToolResult:
        name = context.message.name
        summary = f"The tool {name!r} ran and returned nothing: an empty result, not an error."
        tool = await self._tool(context, name)
        schema = tool.output_schema if tool is not None else None
        # `resultCount: 0` tells a reader it is an empty result, not a failure; it is added
        # only where the tool's outputSchema admits it.
        structured = result.structured_content
        counted = empty_result(summary, structured).structured_content
        if (structured is not None) if schema is None else not _fits(counted, schema):
            counted = structured
        return ToolResult(
            content=[TextContent(type="text", text=summary)], structured_content=counted, meta=result.meta
        )

    def _write(
        self,
        name: str,
        details: FailureDetails,
        error_id: str,
        *,
        meta: Mapping[str, Any] | None = None,
        others: Sequence[ContentBlock] = (),
        said: str = "",
    ) -> ToolResult:
        # The server's log (the host keeps the proxy's stderr) is where an errorId leads: the
        # upstream's own words go there whole, once, and to the agent only sanitised.
        if failure_log.isEnabledFor(logging.WARNING):
            shown = _loggable(name, _MAX_LOGGED_NAME_CHARS)  # a caller can invent any name
            failure_log.warning(
                "tool %r failed: %s, errorId %s%s",
                shown,
                f"{details.category.value} {details.code}" if details.code else details.category.value,
                error_id,
                f"; the server said: {_loggable(said, _MAX_LOGGED_CHARS)}" if said.strip() else "",
                extra=log_fields(shown, error_id, details.category),
            )
        return error_tool_result(
            details, error_id, meta=_safe_guidance(meta), others=others, tool_failure_meta=self.tool_failure_meta
        )

    async def _tool(self, context: MiddlewareContext[CallToolRequestParams], name: str) -> Tool | None:
        tool = self._tools.get(name)
        if tool is None and context.fastmcp_context is not None:
            tool = await context.fastmcp_context.fastmcp.get_tool(name)
        return tool

    async def _tool_names(self, context: MiddlewareContext[CallToolRequestParams]) -> list[str]:
        if not self._tools and context.fastmcp_context is not None:
            self._tools = {tool.name: tool for tool in await context.fastmcp_context.fastmcp.list_tools()}
        return list(self._tools)


def modern_front_answer(context: MiddlewareContext[Any], exc: Exception) -> ToolResult | None:
    """On a 2026-07-28 front, the retired code an upstream of 2025-11-25 answered, as what that revision defines.

    - -32042 (URL elicitation required) on tools/call: an `InputRequiredResult` whose
      `inputRequests` are the same URL-mode elicitations (the client shows the URLs and calls
      again, and the upstream, which keeps the state, answers); an error without a usable
      URL becomes a contract error instead (business, not executed).
    - -32002 (resource not found) on resources/read: -32602 (Invalid Params), the same
      message and data.

    The outermost of the proxy's steps, so that inner ones (the idempotency replay releasing
    a key, the breaker) still see the upstream's own error.

    Returns:
        The result to answer instead, or `None`: `exc` goes out as it is.

    Raises:
        MCPError: -32602 for the upstream's -32002 on resources/read.
    """
    rpc = _find(exc, MCPError)
    if rpc is None or not _front_is_modern(context):
        return None
    if context.method == "resources/read" and rpc.code == RETIRED_RESOURCE_NOT_FOUND:
        raise MCPError(INVALID_PARAMS, rpc.error.message, rpc.error.data) from None
    if context.method == "tools/call" and rpc.code == URL_ELICITATION_REQUIRED:
        return _url_elicitations(rpc, context.message.name)
    return None


def _front_is_modern(context: MiddlewareContext[Any]) -> bool:
    fastmcp_context = context.fastmcp_context
    request = fastmcp_context.request_context if fastmcp_context is not None else None
    return request is not None and request.protocol_version in MODERN_PROTOCOL_VERSIONS


def _url_elicitations(error: MCPError, tool: str) -> ToolResult:
    """-32042's elicitations as 2026-07-28 asks for them: an `InputRequiredResult` (SEP-2322)."""
    from fastmcp.tools.base import InputRequiredToolResult  # the proxy's fastmcp has it; only asked for here

    data = error.error.data
    listed = data.get("elicitations") if isinstance(data, Mapping) else None
    asks: dict[str, Any] = {}
    for number, item in enumerate(listed if isinstance(listed, list) else []):
        if not isinstance(item, Mapping) or item.get("mode", "url") != "url":
            continue
        url, message = item.get("url"), item.get("message")
        if not isinstance(url, str) or not url or not isinstance(message, str):
            continue
        key = item.get("elicitationId")
        params = ElicitRequestURLParams(mode="url", url=url, message=message)
        asks[key if isinstance(key, str) and key and key not in asks else f"elicitation-{number}"] = ElicitRequest(
            params=params
        )
    if not asks:
        return error_tool_result(_NO_URL_TO_OPEN, new_error_id())
    logger.debug("tool %r: -32042 from the upstream sent as %d URL elicitation(s)", _loggable(tool, 200), len(asks))
    return InputRequiredToolResult(InputRequiredResult(input_requests=asks))


def _fits(value: object, schema: Mapping[str, Any]) -> bool:
    import jsonschema  # on first use: the proxy's start-up does without it

    try:
        return bool(jsonschema.Draft202012Validator(dict(schema)).is_valid(value))
    except Exception:
        return False  # an upstream's schema we cannot apply: leave its result as it is


_E = TypeVar("_E", bound=BaseException)


def _find(exc: BaseException, kind: type[_E]) -> _E | None:
    return next((cause for cause in causes(exc) if isinstance(cause, kind)), None)


def _from_causes(exc: BaseException) -> FailureDetails | None:
    """A failure to reach or hear from the upstream: as a client reads it, else by its type."""
    from mcp_errors._client.outcome import is_call_failure  # on first use: start-up without the client side

    transport = next((cause for cause in causes(exc) if is_call_failure(cause)), None)
    details = _from_transport(transport) if transport is not None else None
    if details is not None:
        return details
    # An HTTP upstream's own status (401, 503, ...) and the like: what `install` makes of it.
    return next((known for cause in causes(exc) if (known := classify_known(cause)) is not None), None)


def _from_transport(exc: BaseException) -> FailureDetails | None:
    """A failure to reach an HTTP upstream, read as a client reads it (`read_result`)."""
    from mcp_errors._client.outcome import read_result

    outcome = read_result(exc)
    if outcome.category is None:
        return None
    not_run = outcome.execution_state is ExecutionState.NOT_EXECUTED
    return FailureDetails(
        message=outcome.message,
        category=outcome.category,
        description=outcome.description,
        code=("UPSTREAM_UNAVAILABLE" if not_run else "UPSTREAM_CONNECTION_LOST")
        if outcome.category is ErrorCategory.TRANSIENT
        else None,
        execution_state=outcome.execution_state,
    )


def unavailable_failure(reason: str, retry_after: float | None) -> FailureDetails:
    """The proxy's answer to a call it did not send because the server is not running.

    Args:
        reason: Why, as a sentence (how the server ended, that it is being started again).
        retry_after: Seconds to wait before resending, if known.

    Returns:
        A `transient`, `UPSTREAM_UNAVAILABLE`, `not_executed` failure.
    """
    return FailureDetails(
        message="The server is not running",
        category=ErrorCategory.TRANSIENT,
        description=f"{reason} This call was not sent to it, so nothing was applied. {resend_after(retry_after)}",
        code="UPSTREAM_UNAVAILABLE",
        retry_after_seconds=retry_after,
        execution_state=ExecutionState.NOT_EXECUTED,
    )


def _busy(retry_after: float) -> FailureDetails:
    return FailureDetails(
        message="The proxy is busy",
        category=ErrorCategory.TRANSIENT,
        description="Every session this proxy keeps with the server was busy with other callers' calls, so this "
        f"call was not sent to it, and nothing was applied. {resend_after(retry_after)}",
        code="UPSTREAM_BUSY",
        retry_after_seconds=retry_after,
        execution_state=ExecutionState.NOT_EXECUTED,
    )


def _died_mid_call(how: str) -> FailureDetails:
    return FailureDetails(
        message="The server stopped during the call",
        category=ErrorCategory.TRANSIENT,
        description=f"The server {how} while this call ran; it is started again for the next call. "
        f"Whether the call was applied is unknown: {RESEND_RULE}; otherwise check first whether it took effect.",
        code="UPSTREAM_EXITED",
        execution_state=ExecutionState.OUTCOME_UNKNOWN,
    )


_TASK_NOT_RELAYED: Final = FailureDetails(
    message="Task-only tool",
    category=ErrorCategory.BUSINESS,
    description="The upstream server runs this tool only as a task (SEP-2663), and this proxy cannot relay tasks, "
    "so the call did not run. Call the tool on the upstream server directly, from a client that supports tasks, "
    "or take another path.",
    code="TASK_NOT_RELAYED",
    execution_state=ExecutionState.NOT_EXECUTED,
)

_NO_URL_TO_OPEN: Final = FailureDetails(
    message="The server asks for a step in a browser",
    category=ErrorCategory.BUSINESS,
    description="The server asked for an interaction the user completes at a URL (a sign-in, a payment, a key) "
    "before it runs this call, but gave no URL to open, so the call did not run. Escalate to the user or to "
    "whoever runs the server.",
    code="TOOL_ERROR",
    execution_state=ExecutionState.NOT_EXECUTED,
)

_UNREADABLE: Final = FailureDetails(
    message="The server answered with an error",
    category=ErrorCategory.BUSINESS,
    description="The server answered with a JSON-RPC error that says nothing more. Do not resend the same call "
    "unchanged: change the request, or escalate.",
    code="TOOL_ERROR",
)


_RESOURCE_ARGUMENTS: Final = frozenset(
    {"path", "paths", "file", "files", "filename", "filepath", "uri", "uris", "url", "urls", "page", "document"}
)
_RESOURCE_SUFFIXES: Final = ("_path", "_paths", "_file", "_uri", "_url", "_page", "_document")


def returns_resource_text(
    read_only: bool, arguments: Mapping[str, Any] | None, content: Sequence[ContentBlock]
) -> bool:
    """Whether a success is a resource's content that a read-only tool returned: a file, a page, a document.

    A tool annotated `readOnlyHint` whose result holds a resource (an embedded resource or a
    resource link), or whose arguments name one (`path`, `uri`, `url`, `file`, `*_path`,
    ...: what `read_text_file`, `fetch` or `get_page` take). `--disguised-failures` never
    judges such text: the words in it are the resource's.
    """
    if not read_only:
        return False
    if any(block.type in ("resource", "resource_link") for block in content):
        return True
    return any(
        isinstance(key, str)
        and (key.lower() in _RESOURCE_ARGUMENTS or key.lower().endswith(_RESOURCE_SUFFIXES))
        and value not in (None, "", [])
        for key, value in (arguments or {}).items()
    )


def _is_read_only(tool: Tool | None) -> bool:
    return bool(tool is not None and tool.annotations is not None and tool.annotations.read_only_hint)


def _loggable(text: str, limit: int) -> str:
    """Words from outside for one log line: capped, control characters (terminal escapes) shown escaped."""
    clipped = text[:limit] + ("…" if len(text) > limit else "")
    return clipped.translate(_CONTROL_CHARACTERS)


_MAX_LOGGED_CHARS: Final = 2000
_MAX_LOGGED_NAME_CHARS: Final = 200
_CONTROL_CHARACTERS: Final = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F)}


_PROXY_META: Final = (RESTARTED_META, REPEAT_OF_META)
"""The `_meta` keys only this proxy writes: an upstream's own are dropped, never passed on as ours."""


def _without_proxy_meta(result: ToolResult) -> ToolResult:
    """`result` without the keys only this proxy writes: an upstream must not forge a restart notice."""
    meta = result.meta
    if not meta or not any(key in meta for key in _PROXY_META):
        return result
    kept = {key: value for key, value in meta.items() if key not in _PROXY_META}
    return result.model_copy(update={"meta": kept or None})


def _safe_guidance(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """`meta` with an upstream's own SEP-3313 object kept, its `agentGuidance` sanitised.

    The agent reads that guidance as it reads the description: a password or a server path
    in it stops here too. The object's class, code and ids are the upstream's terms, kept.
    """
    if meta is None:
        return None
    failure = meta.get(TOOL_FAILURE_META)
    guidance = failure.get("agentGuidance") if isinstance(failure, Mapping) else None
    if not isinstance(failure, Mapping) or not isinstance(guidance, str):
        return dict(meta)
    safe = {**failure, "agentGuidance": sanitize_text(guidance, limit=MAX_DESCRIPTION_CHARS)}
    return {**meta, TOOL_FAILURE_META: safe}
