"""The one place that turns an exception into a classified, agent-safe failure.

Every server integration (the MCPServer and fastmcp adapters, the low-level helper) calls
`classify_failure` for what a tool raised, and `_server/arguments.py` for a call's
arguments; no other code of a server decides the category of an exception. (A failure that
arrives as words, not as an exception, is judged where it is read: a proxied server's by
`proxy/_classify.py`, a result without the contract by the client's `read_result`.)

The taxonomy (the four categories and the exception a tool raises for each) is drawn in
`_server/errors.py`; this module decides which category a failure is in.

What is classified without the tool saying so
---------------------------------------------
- `ToolError` raised by the tool: exactly what it says (texts sanitised).
- Exception types registered with `register_exception`: what their handler returns.
- `TimeoutError` (asyncio's and anyio's are the same class), `ConnectionError`, httpx
  transport errors and SQLite "database is locked"/"busy": transient.
- The builtin `PermissionError`: permission.
- Argument validation failures: validation, with `fieldErrors`. A validator's own words stay
  (pydantic's messages, a `ValueError` or `AssertionError` it raised); a validator that
  raised one while handling another kind of failure (a lookup that could not connect) failed
  itself, and that failure is classified instead, its text unsent.
- An exception that carries an HTTP status (`.response.status_code`): what the status's entry
  in `_shared/signals.py` says (the same code, category and execution state the proxy, the
  reader and the checker give it). `Retry-After` becomes `retryAfterSeconds`.
- A JSON-RPC error raised inside the tool (`MCPError`, e.g. a gateway tool's downstream
  call that timed out): what the code's entry in `_shared/signals.py` says (`-32001` and
  `-32000` transient, the protocol's rejections validation); any other code is
  unclassified, since its text comes from somewhere else. Only the two codes the protocol
  needs on the wire as they are (`is_protocol_signal`) stay JSON-RPC errors.
- The SDK's or fastmcp's plain `ToolError` (a message meant for the client, with no
  category): `business`, code `TOOL_ERROR`, its message kept (sanitised), since resending
  the same call unchanged cannot be assumed to help.
- Several failures at once (an exception group from a task group): what they all are, when
  they are all the same kind (two timeouts are one transient failure).
- Anything else is a defect of the server. The agent gets a fixed description with an
  `errorId` and no exception text; the traceback goes to the server log under the same
  id. Its category is `business` (code `INTERNAL_ERROR`, outcome unknown): what fits is
  that category's *recovery*, not its name. Resending a bug repeats it, and for a write
  it may repeat a partial side effect, so the call must not be resent unchanged; the
  agent takes another path or escalates, quoting the `errorId`.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Final

from mcp.server.mcpserver.exceptions import ResourceError as _SDKResourceError
from mcp.server.mcpserver.exceptions import ToolError as _SDKToolError
from mcp.server.mcpserver.exceptions import UnexpectedToolError as _SDKUnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from mcp_errors._server.errors import ToolError
from mcp_errors._shared.advice import advice, may_have_applied, resend_after
from mcp_errors._shared.causes import innermost
from mcp_errors._shared.contract import ErrorCategory, ExecutionState, FieldError
from mcp_errors._shared.envelope import FailureDetails, as_sentence
from mcp_errors._shared.failure_vocabulary import FailureKind
from mcp_errors._shared.optional_types import is_fastmcp, is_httpx
from mcp_errors._shared.sanitize import (
    MAX_DESCRIPTION_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_RECEIVED_CHARS,
    sanitize_json,
    sanitize_text,
)
from mcp_errors._shared.signals import HTTP_STATUSES, JSONRPC_CODES
from mcp_errors._shared.waits import capped_wait, retry_after_header

__all__ = [
    "classify_failure",
    "classify_http_status",
    "classify_known",
    "log_fields",
    "new_error_id",
    "register_exception",
]

logger = logging.getLogger("mcp_errors")

ExceptionHandler = Callable[[BaseException], ToolError]
_registry: dict[type[BaseException], ExceptionHandler] = {}


def register_exception(exc_type: type[BaseException], handler: ExceptionHandler) -> None:
    """Teach the classifier one of your own exception types.

    The handler receives the exception and returns the `ToolError` to report in its place.
    The most specific registered base class of a raised exception wins, and a registration
    replaces an earlier one for the same type.

    Args:
        exc_type: The exception class (its subclasses match too).
        handler: Builds the `ToolError` from the raised exception. It must not raise.

    Example:
        ```python
        from mcp_errors import BusinessRuleError, register_exception


        class QuotaExceeded(Exception):  # raised by your billing code
            pass


        register_exception(
            QuotaExceeded,
            lambda exc: BusinessRuleError(
                "Monthly quota used up",
                description="This account has no quota left this month. Ask a human to raise it.",
                code="QUOTA_EXCEEDED",
            ),
        )
        ```
    """
    _registry[exc_type] = handler


def log_fields(tool: str | None, error_id: str, category: ErrorCategory) -> dict[str, Any]:
    """The structured fields of a failure's log line (`extra=`), the same on every line."""
    return {"tool": tool, "error_id": error_id, "error_category": category.value}


def new_error_id() -> str:
    """A short random id that ties an error result to the server's log line."""
    try:
        return _spare_error_ids.pop()
    except IndexError:
        # Drawn a batch at a time: one draw of randomness per failing call, from any source,
        # cost more in the server's loop than the rest of writing the result
        # (docs/performance.md). 48 random bits: enough to find one log line, and unlike a
        # counter they do not tell an agent how many failures the server had.
        digits = os.urandom(6 * _ERROR_ID_BATCH).hex()
        _spare_error_ids.extend(digits[start : start + 12] for start in range(0, len(digits), 12))
        return _spare_error_ids.pop()


_ERROR_ID_BATCH: Final = 256
_spare_error_ids: Final[list[str]] = []
if hasattr(os, "register_at_fork"):  # POSIX
    # A forked worker must not hand out the ids its parent holds.
    os.register_at_fork(after_in_child=_spare_error_ids.clear)


def classify_failure(exc: BaseException, *, error_id: str, tool_name: str | None = None) -> FailureDetails:
    """Classify an exception raised while a tool ran, and log it with its `errorId`.

    SDK wrappers (the `mcp` and fastmcp `ToolError`s that carry the original exception as
    `__cause__`) are looked through. Exception text reaches the result only when the tool
    put it in a `ToolError`.

    Args:
        exc: What the tool (or the SDK around it) raised.
        error_id: This failure's id (`new_error_id`), for the log line; give the same one
            to `error_result`.
        tool_name: For the log line.

    Returns:
        The classified failure, sanitised. Failures of the same kind share one instance.
    """
    try:
        klass = type(exc)
        if not _registry:
            if klass in _builtin_kinds:
                # A builtin exception (the unclassified and crash paths): what it is depends on
                # its class alone, answered once per class (docs/performance.md).
                return _logged(_builtin_kinds[klass], exc, error_id, tool_name)
            if klass is _SDKToolError and exc.__cause__ is None:
                # The SDK's own ToolError, raised by the tool: the path below ends here too.
                return _logged(_uncategorised_tool_error(str(exc)), exc, error_id, tool_name)
        # The common case, looked at first: a tool raised our ToolError and MCPServer (or
        # fastmcp) wrapped it once; `_unwrap` would reach the same leaf through its loop.
        cause = exc.__cause__
        if isinstance(exc, ToolError):
            leaf: BaseException = exc
        elif isinstance(cause, ToolError) and isinstance(exc, _SDK_WRAPPERS):
            leaf = cause
        elif isinstance(exc, BaseExceptionGroup) or isinstance(cause, BaseExceptionGroup):
            leaf = _unwrap(exc)
        elif cause is None:
            # Nothing behind it and no members: `_unwrap` would end where it starts, after
            # asking whether it is a wrapper (for a builtin exception, most of the cost of the
            # unclassified and crash paths: docs/performance.md).
            leaf = exc
        elif cause.__cause__ is None:
            # One link, what a framework's wrapper around the tool's exception makes: the
            # same answer as `_unwrap`'s loop, without its generator.
            leaf = cause if _is_sdk_wrapper(exc) else exc
        else:
            leaf = _unwrap(exc)
        # The two commonest failures first, inline (docs/performance.md): our ToolError, and
        # the framework's own plain ToolError, which most existing servers raise.
        if isinstance(leaf, ToolError):
            details: FailureDetails | None = _details_from_tool_error(leaf)
        elif not _registry and _is_exactly_a_plain_tool_error(type(leaf)):
            details = _uncategorised_tool_error(str(leaf))
        else:
            details = _kind_of(leaf)
            if details is None and _is_plain_tool_error(leaf):
                details = _uncategorised_tool_error(str(leaf))
            if leaf is exc and klass.__module__ == "builtins" and not _registry:
                # Nothing of a builtin exception but its class decides what it is (a group's
                # members do, and groups are never builtin leaves here: `_unwrap` opens them).
                _remember_builtin_kind(klass, details)
        return _logged(details, leaf, error_id, tool_name)
    except Exception:
        # An exception the classifier cannot read (a broken `response` property, a header
        # it cannot parse) is still a failure to report: never the raw text, which the SDK
        # would send if this raised.
        logger.exception(
            "could not classify the failure of tool %r, errorId %s",
            tool_name,
            error_id,
            extra=log_fields(tool_name, error_id, ErrorCategory.BUSINESS),
        )
        return _INTERNAL_ERROR


def _logged(
    details: FailureDetails | None, leaf: BaseException, error_id: str, tool_name: str | None
) -> FailureDetails:
    """`details` (an unclassified failure when `None`), logged with its `errorId`."""
    if details is None:
        if logger.isEnabledFor(logging.ERROR):  # the arguments cost more than the call
            logger.error(
                "tool %r raised an unclassified exception, errorId %s",
                tool_name,
                error_id,
                exc_info=(type(leaf), leaf, leaf.__traceback__),
                extra=log_fields(tool_name, error_id, ErrorCategory.BUSINESS),
            )
        return _INTERNAL_ERROR
    # Checked first so that a server with INFO off does not build the record's arguments.
    if logger.isEnabledFor(logging.INFO):
        # No brackets or `name=value` in the line: MCPServer's RichHandler highlights them, which
        # made this line dearer than the SDK's own per failure (benchmarks/overhead.py).
        logger.info(
            "tool %r failed: %s, errorId %s",
            tool_name,
            f"{details.category.value} {details.code}" if details.code else details.category.value,
            error_id,
            extra=log_fields(tool_name, error_id, details.category),
        )
    return details


_builtin_kinds: Final[dict[type[BaseException], FailureDetails | None]] = {}
"""What each builtin exception class seen so far is (`None`: unclassified), read before anything else.

Bounded: only classes whose module is `builtins` enter, never a user's class."""


def _remember_builtin_kind(klass: type[BaseException], details: FailureDetails | None) -> None:
    if not issubclass(klass, BaseExceptionGroup):
        _builtin_kinds[klass] = details


def _unwrap(exc: BaseException) -> BaseException:
    """What the tool raised, inside the SDKs' wrappers and one-member exception groups."""
    return innermost(exc, behind=_wrapped)


def _wrapped(exc: BaseException) -> BaseException | None:
    if isinstance(exc, ToolError):
        return None
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return exc.exceptions[0]
    return exc.__cause__ if _is_sdk_wrapper(exc) else None


_SDK_WRAPPERS: Final = (_SDKToolError, _SDKResourceError)


def _kind_of(leaf: BaseException) -> FailureDetails | None:
    """What a failure is, from the tool, the registry, its type or, for a group, its members."""
    # The registry is checked here, not in `_from_registry`, to spare the common unclassified
    # path (nothing registered) a call (docs/performance.md).
    tool_error = leaf if isinstance(leaf, ToolError) else (_from_registry(leaf) if _registry else None)
    if tool_error is not None:
        return _details_from_tool_error(tool_error)
    if isinstance(leaf, BaseExceptionGroup):
        return _one_kind(leaf)
    return _from_known_types(leaf)


def _one_kind(group: BaseExceptionGroup[BaseException]) -> FailureDetails | None:
    """What several failures at once are (a task group's two timeouts), when all are one kind."""
    kinds = [_kind_of(_unwrap(member)) for member in group.exceptions]
    first = kinds[0]
    return first if first is not None and all(kind == first for kind in kinds) else None


def _is_sdk_wrapper(exc: BaseException) -> bool:
    # The SDKs wrap what a tool raised in their own ToolError, with the original as
    # `__cause__`. A ToolError the tool raised itself (`raise ToolError("...") from exc`) is
    # the same class: what tells them apart is where it was raised. Its own message is what
    # the tool meant the client to read.
    if isinstance(exc, _SDK_ALWAYS_WRAPPERS):
        return True
    if isinstance(exc, _SDKToolError):
        return _raised_in(exc, "mcp.")
    if is_fastmcp(exc, "ToolError"):
        return _raised_in(exc, "fastmcp.")
    # fastmcp's other wrappers (its ValidationError, ...); checking the module keeps fastmcp
    # an optional dependency.
    return type(exc).__module__.startswith("fastmcp.")


_SDK_ALWAYS_WRAPPERS: Final = (_SDKUnexpectedToolError, _SDKResourceError)


def _raised_in(exc: BaseException, package: str) -> bool:
    """Whether the innermost frame of `exc`'s traceback, where it was raised, is in `package`."""
    frame = exc.__traceback__
    if frame is None:
        return False
    while frame.tb_next is not None:
        frame = frame.tb_next
    return str(frame.tb_frame.f_globals.get("__name__", "")).startswith(package)


def _is_plain_tool_error(exc: BaseException) -> bool:
    # The SDK's and fastmcp's own `ToolError` are how a tool author *means* to send a message
    # to the client; only the SDK's UnexpectedToolError marks a crash.
    if type(exc).__module__ == "builtins" or isinstance(exc, _SDKUnexpectedToolError):
        return False
    if isinstance(exc, _SDKToolError):
        return True
    return is_fastmcp(exc, "ToolError")


def _uncategorised_tool_error(message: str) -> FailureDetails:
    # The tool's message is all it said: it goes into the description too, which is what
    # hosts that show only structuredContent give the model. Shared per message, like the
    # failures of our own ToolError.
    if len(message) > _SHARED_TEXT_CHARS:
        return _write_uncategorised_tool_error(message)
    return _shared_uncategorised_tool_error(message)


def _write_uncategorised_tool_error(message: str) -> FailureDetails:
    said = sanitize_text(message, limit=MAX_DESCRIPTION_CHARS - len(_UNCATEGORISED_ADVICE) - 2)
    return FailureDetails(
        message="",
        category=ErrorCategory.BUSINESS,
        description=f"{as_sentence(said)} {_UNCATEGORISED_ADVICE}" if said else _UNCATEGORISED_ADVICE,
        code="TOOL_ERROR",
    )


_UNCATEGORISED_ADVICE: Final = "Do not resend it unchanged: change the request as this says, or escalate."
_shared_uncategorised_tool_error: Final = functools.lru_cache(maxsize=256)(_write_uncategorised_tool_error)


def _is_exactly_a_plain_tool_error(klass: type[BaseException]) -> bool:
    # Exact classes only, for the fast path (fastmcp's by name: it is optional); their
    # subclasses take the full path through `_is_plain_tool_error`.
    # The module first: a builtin class's `__name__` is a new string on every read.
    return klass is _SDKToolError or (klass.__module__ == "fastmcp.exceptions" and klass.__name__ == "ToolError")


def _from_registry(exc: BaseException) -> ToolError | None:
    for klass in type(exc).__mro__:
        handler = _registry.get(klass)
        if handler is None:
            continue
        try:
            result = handler(exc)
        except Exception:
            # A broken handler must not turn a tool failure into a protocol error: the
            # failure is reported as unclassified and the handler's bug is logged.
            logger.exception("register_exception handler for %s failed", klass.__qualname__)
            return None
        return result if isinstance(result, ToolError) else None
    return None


def _transient(message: str, description: str, code: str, retry_after: float | None = None) -> FailureDetails:
    # A tool may have written before the exception it did not catch: only the tool itself
    # can claim that nothing was applied (`ToolError(..., execution_state="not_executed")`).
    return FailureDetails(
        message=message,
        category=ErrorCategory.TRANSIENT,
        description=f"{description} {may_have_applied()}",
        code=code,
        retry_after_seconds=retry_after,
        execution_state=ExecutionState.OUTCOME_UNKNOWN,
    )


# What a type alone decides is built once; the results of every such failure share it.
_UPSTREAM_TIMEOUT: Final = _transient(
    "Upstream timeout",
    f"A service this tool depends on did not answer in time. {resend_after(None)}",
    "UPSTREAM_TIMEOUT",
)
_UPSTREAM_REFUSED: Final = _transient(
    "Upstream service unreachable",
    f"A service this tool depends on refused the connection. {resend_after(None)}",
    "UPSTREAM_UNAVAILABLE",
)
_UPSTREAM_CONNECTION_LOST: Final = _transient(
    "Upstream connection failed",
    f"The connection to a service this tool depends on broke. {resend_after(None)}",
    "UPSTREAM_CONNECTION_LOST",
)
_TOOL_TIMEOUT: Final = _transient(
    "Tool timed out",
    f"The tool ran out of the time its server allows it before it finished. {resend_after(None)}",
    "TOOL_TIMEOUT",
)
_DATABASE_BUSY: Final = _transient(
    "Database busy",
    f"The database is busy with other writes. {resend_after(None)}",
    "DATABASE_BUSY",
)
_ACCESS_DENIED: Final = FailureDetails(
    message="Access denied",
    category=ErrorCategory.PERMISSION,
    description="The server was refused access to something this tool needs. "
    "Resending will not help; escalate to someone who can grant access.",
    code="ACCESS_DENIED",
)
_INTERNAL_ERROR: Final = FailureDetails(
    message="Internal error",
    category=ErrorCategory.BUSINESS,
    description="The tool hit an unexpected internal error; resending the same call is unlikely to help "
    "and may repeat a partial change. Take another path or escalate to a human, quoting the errorId.",
    code="INTERNAL_ERROR",
    execution_state=ExecutionState.OUTCOME_UNKNOWN,
)


def _from_signal(kind: FailureKind, message: str, retry_after: float | None = None) -> FailureDetails:
    """A failure a signal table names (`_shared/signals.py`): its code, category and execution state."""
    if kind.category is ErrorCategory.TRANSIENT:
        return _transient(message, f"{kind.what_happened} {resend_after(retry_after)}", kind.code, retry_after)
    return FailureDetails(
        message=message,
        category=kind.category,
        description=f"{kind.what_happened} {advice(kind.category, code=kind.code)}",
        code=kind.code,
        execution_state=kind.execution_state,
    )


# A downstream MCP server's answer that a tool (a gateway, a proxy) let escape, as each
# JSON-RPC code's entry says: the ones a type alone decides, built once.
_FROM_JSONRPC_CODE: Final[Mapping[int, FailureDetails]] = {
    code: _from_signal(signal.kind, f"JSON-RPC error {code}") for code, signal in JSONRPC_CODES.items()
}


def _from_known_types(exc: BaseException) -> FailureDetails | None:
    # Builtin types first: they are the common case and the cheapest checks.
    if isinstance(exc, TimeoutError):
        return _UPSTREAM_TIMEOUT
    if isinstance(exc, ConnectionRefusedError):
        return _UPSTREAM_REFUSED
    if isinstance(exc, ConnectionError):
        return _UPSTREAM_CONNECTION_LOST
    if isinstance(exc, PermissionError):
        return _ACCESS_DENIED
    if type(exc).__module__ == "builtins":
        # A bug's `ValueError`, `KeyError`, ...: none of the checks below can match it, and
        # they cost more than the rest of the crash path (docs/performance.md).
        return None
    # Only a process that imported sqlite3 can raise its errors: a server (or proxy) without it
    # is not made to load it (docs/performance.md#proxy-start-up-and-memory).
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.OperationalError) and _is_sqlite_busy(exc, sqlite3):
        return _DATABASE_BUSY
    if isinstance(exc, MCPError):
        if exc.code == CONNECTION_CLOSED and _raised_in(exc, "fastmcp.tools"):
            return _TOOL_TIMEOUT  # fastmcp's own limit on a tool (`@tool(timeout=...)`), its only -32000
        # A downstream MCP server's answer that a tool (a gateway, a proxy) let escape.
        return _FROM_JSONRPC_CODE.get(exc.code)
    status = _status_of(exc)
    if status is not None:
        return _from_http_status(status, _retry_after(exc))
    if is_httpx(exc, "TimeoutException"):
        return _UPSTREAM_TIMEOUT
    if is_httpx(exc, "ConnectError"):
        return _UPSTREAM_REFUSED
    if is_httpx(exc, "TransportError"):
        return _UPSTREAM_CONNECTION_LOST
    return None


def _is_sqlite_busy(exc: BaseException, sqlite3: ModuleType) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        # Extended codes (e.g. SQLITE_BUSY_SNAPSHOT) keep the primary code in the low byte.
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "database is locked" in str(exc) or "database table is locked" in str(exc)


def _from_http_status(status: int, retry_after: float | None) -> FailureDetails | None:
    kind = HTTP_STATUSES.get(status)
    return None if kind is None else _from_signal(kind, f"Upstream HTTP {status}", retry_after)


def classify_known(exc: BaseException) -> FailureDetails | None:
    """What `exc` is from its type alone (and the registry), or `None`; nothing is logged.

    For a failure described in words rather than raised (a proxied server's "ETIMEDOUT"):
    the words name the exception, and the failure is the one that exception would get.
    """
    return _kind_of(exc)


def classify_http_status(status: int, *, retry_after: float | None = None) -> FailureDetails | None:
    """Deprecated: classify the exception that carries the status with `classify_failure`.

    The failure an HTTP status means, as for an exception that carries it; `None` if it says
    nothing. Nothing in mcp-errors calls it; it stays importable, with a `DeprecationWarning`,
    for code written against it.
    """
    warnings.warn(
        "classify_http_status is deprecated and will be removed: classify the exception that carries "
        "the status (httpx.HTTPStatusError, requests.HTTPError) with classify_failure instead",
        DeprecationWarning,
        stacklevel=2,
    )
    return _from_http_status(status, None if retry_after is None else capped_wait(retry_after))


def _status_of(exc: BaseException) -> int | None:
    # httpx.HTTPStatusError and requests.HTTPError both carry `.response.status_code`.
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if status is None:
        status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) and 100 <= status <= 599 else None


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    getter = getattr(headers, "get", None)
    return retry_after_header(getter("retry-after")) if callable(getter) else None


def _details_from_tool_error(error: ToolError) -> FailureDetails:
    # Tools fail with the same few errors over and over: one shared instance per kind spares
    # sanitising and writing them again on every call (docs/performance.md). Long texts are
    # not kept, so that the cache stays small whatever the tools raise.
    message, description = error.message, error.description
    if error.field_errors or error.extra or len(message) + len(description) > _SHARED_TEXT_CHARS:
        return _sanitized_details(
            message,
            error.category,
            description,
            error.code,
            error.retry_after_seconds,
            error.execution_state,
            error.field_errors,
            error.extra,
        )
    return _shared_details(
        message, error.category, description, error.code, error.retry_after_seconds, error.execution_state
    )


def _sanitized_details(
    message: str,
    category: ErrorCategory,
    description: str,
    code: str | None,
    retry_after_seconds: float | None,
    execution_state: ExecutionState | None,
    field_errors: tuple[FieldError, ...] = (),
    extra: Mapping[str, Any] | None = None,
) -> FailureDetails:
    return FailureDetails(
        message=sanitize_text(message, limit=MAX_MESSAGE_CHARS) or "Tool failed",
        category=category,
        description=sanitize_text(description, limit=MAX_DESCRIPTION_CHARS) or "The tool failed without saying why.",
        code=code,
        retry_after_seconds=retry_after_seconds,
        field_errors=tuple(map(_sanitize_field_error, field_errors)),
        execution_state=execution_state,
        extra=sanitize_json(extra) if extra else {},
    )


_shared_details: Final = functools.lru_cache(maxsize=256)(_sanitized_details)
_SHARED_TEXT_CHARS: Final = 2000


def _sanitize_field_error(error: FieldError) -> FieldError:
    return FieldError(
        field=sanitize_text(error.field, limit=MAX_MESSAGE_CHARS),
        problem=sanitize_text(error.problem, limit=MAX_MESSAGE_CHARS),
        expected=None if error.expected is None else sanitize_text(error.expected, limit=MAX_MESSAGE_CHARS),
        received=None if error.received is None else sanitize_text(error.received, limit=MAX_RECEIVED_CHARS),
    )
