"""One table per failure signal: what an HTTP status and a JSON-RPC error code say a failure is.

Each signal is mapped here once, and every side reads the same entry: the server side (an
exception a tool raised that carries a status or a JSON-RPC code, `_server/classify.py`), the
reader (`_client/outcome.py`'s `read_result`: a JSON-RPC error, a status in a failure's words),
the proxy (`proxy/_classify.py`'s chain, `proxy/_breaker.py`) and the checker (through the
shared reading of words, `failure_words.py`). An entry is a `FailureKind` of the vocabulary:
its code, its category (which says whether it is retryable: transient only) and its
execution state. docs/wire-format.md has both tables; `tests/shared/test_signals.py` feeds every
entry through all four sides over the real SDKs.

Where the entries come from, and why they read as they do:

- An HTTP status names a kind of the vocabulary (RFC 9110; Cloudflare's 52x), with that
  kind's code. A status reports *one request a tool made*, not the tool call: the tool may
  have written before it. So a status never says `not_executed` on its own: a transient one
  (a resend is what its category asks for) and one whose request may itself have applied (a
  500) say `outcome_unknown`, the others say nothing (a read-only tool's failure is still
  `not_executed`: nothing it did can need undoing). Only the tool can claim more
  (`ToolError(..., execution_state="not_executed")`).
- A JSON-RPC error code answers the `tools/call` itself. The protocol's rejections
  (`-32700`, `-32600`, `-32601`, `-32602`) come before the tool ran: `validation`,
  `not_executed`. `-32001` (request timeout) and `-32000` (connection closed) are the caller's
  SDK saying no answer came: `transient`, `outcome_unknown`, and, for the proxy's breaker,
  no answer from the upstream (`JsonRpcSignal.answered`). `-32042` and `-32021` are no
  failures but requests to the client (`contract.is_protocol_signal`): they are in no table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from mcp_types import CONNECTION_CLOSED, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, REQUEST_TIMEOUT

from mcp_errors._shared.contract import WRITTEN_CODES, ErrorCategory, ExecutionState
from mcp_errors._shared.failure_vocabulary import KINDS, FailureKind

__all__ = ["CONTRACT_CODES", "HTTP_STATUSES", "JSONRPC_CODES", "SIGNAL_CODES", "JsonRpcSignal"]


def _reported_status(code: str) -> FailureKind:
    """The vocabulary's kind `code`, as a status a tool's request got says it: never `not_executed` alone."""
    kind = KINDS[code]
    unknown = kind.category is ErrorCategory.TRANSIENT or kind.execution_state is ExecutionState.OUTCOME_UNKNOWN
    return dataclasses.replace(kind, execution_state=ExecutionState.OUTCOME_UNKNOWN if unknown else None)


HTTP_STATUSES: Final[Mapping[int, FailureKind]] = {
    status: _reported_status(code)
    for code, statuses in (
        ("INVALID_ARGUMENTS", (400, 411, 413, 414, 415, 416, 422)),
        ("NOT_AUTHENTICATED", (401,)),
        ("POLICY_REFUSED", (402, 405, 501)),
        ("ACCESS_DENIED", (403,)),
        ("NOT_FOUND", (404,)),
        ("UPSTREAM_TIMEOUT", (408,)),
        ("CONFLICT", (409, 410, 412)),
        ("DATABASE_BUSY", (423,)),
        ("UPSTREAM_UNAVAILABLE", (425, 503, 521, 522, 523, 525, 526, 529)),
        ("UPSTREAM_RATE_LIMITED", (429,)),
        ("UPSTREAM_INTERNAL_ERROR", (500, 520)),
        ("UPSTREAM_BAD_GATEWAY", (502, 504, 524)),
        ("SERVER_MISCONFIGURED", (507,)),
    )
    for status in statuses
}
"""What each HTTP status a failure reports says it is, by status: raised in a tool (an
exception with `.response.status_code`), given as data (`{"status": 503}`) or named in words
("HTTP 503"). A status not here says nothing."""


@dataclass(frozen=True, slots=True)
class JsonRpcSignal:
    """What a JSON-RPC error code answering a `tools/call` says."""

    kind: FailureKind
    """Its code, category and execution state."""
    answered: bool
    """Whether the code is the peer's answer; `False` for the caller's SDK saying none came (a
    timeout, a closed connection), which is what the proxy's breaker counts against an upstream."""

    @property
    def code(self) -> str:
        return self.kind.code

    @property
    def category(self) -> ErrorCategory:
        return self.kind.category

    @property
    def execution_state(self) -> ExecutionState | None:
        return self.kind.execution_state

    @property
    def retryable(self) -> bool:
        return self.kind.category.is_retryable


_REJECTED_REQUEST: Final = FailureKind(
    "INVALID_REQUEST",
    ErrorCategory.VALIDATION,
    ExecutionState.NOT_EXECUTED,
    "The server rejected the call as malformed before running it.",
)

JSONRPC_CODES: Final[Mapping[int, JsonRpcSignal]] = {
    PARSE_ERROR: JsonRpcSignal(_REJECTED_REQUEST, answered=True),
    INVALID_REQUEST: JsonRpcSignal(_REJECTED_REQUEST, answered=True),
    METHOD_NOT_FOUND: JsonRpcSignal(_REJECTED_REQUEST, answered=True),
    INVALID_PARAMS: JsonRpcSignal(KINDS["INVALID_ARGUMENTS"], answered=True),
    REQUEST_TIMEOUT: JsonRpcSignal(KINDS["UPSTREAM_TIMEOUT"], answered=False),
    CONNECTION_CLOSED: JsonRpcSignal(KINDS["UPSTREAM_CONNECTION_LOST"], answered=False),
}
"""What each JSON-RPC error code that answers a `tools/call` says it is, by code: from the
server a client called, from the upstream a proxy called, or raised in a tool by a downstream
it called (a gateway tool). A code not here says nothing (its words may)."""

SIGNAL_CODES: Final = frozenset(
    {kind.code for kind in HTTP_STATUSES.values()} | {signal.code for signal in JSONRPC_CODES.values()}
)
"""Every code the signal tables give."""

CONTRACT_CODES: Final = WRITTEN_CODES | SIGNAL_CODES | frozenset(KINDS)
"""Every code mcp-errors writes: by name (`contract.WRITTEN_CODES`), from a signal table, or
from the vocabulary of failure words (`failure_vocabulary.KINDS`).

Metrics keep these codes as labels whatever server sent them (`_shared/telemetry.py`);
`tests/test_contract.py` finds every code the package's source writes and checks it is here."""
