"""What an upstream's failure is: the classification chain of `mcp-errors proxy`.

A proxied server fails in one of two shapes: it returns an `isError` result, or it answers
with a JSON-RPC error. Both are read into an `UpstreamFailure` and classified; the first
source that says something wins:

1. a result already in the contract (its structuredContent valid against the envelope
   schema) passes through unchanged;
2. SEP-3313 `_meta["io.modelcontextprotocol/toolFailure"]` (`_shared/tool_failure.py`);
3. the upstream's own structured fields: a category-like field, an HTTP status number, a
   `code` (gRPC, errno and common API spellings), a `retryable` flag;
4. the JSON-RPC code (`-32602` invalid params is validation and names the arguments; a
   TypeScript server's "MCP error -32602: ..." text counts too), and arguments that break
   the tool's inputSchema, checked here;
5. the user's rules file (`_rules`);
6. the words, read with the shared vocabulary (`_shared/failure_words.py`): exception and
   errno names, HTTP statuses, database, cloud and API error names, the phrases of real
   servers' failures; marked inferred (`categoryInferred: true`, `(inferred)` in the head);
   a read-only tool's failure is `not_executed` and gets no advice about writes;
7. otherwise install's safe default for a failure nobody classified: `business`,
   `TOOL_ERROR`, do not resend unchanged.

The upstream's own words stay, sanitised and capped, at the end of the description: "The
server said: ...". Failures of a kind an exception would have (a timeout, a refused
connection) are the ones `_server/classify.py` gives that exception; an HTTP status and a
JSON-RPC code read as their entries in the signal tables (`_shared/signals.py`) say, as the
server side, the reader and the checker read them.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcp_types import METHOD_NOT_FOUND

from mcp_errors._server.arguments import classify_schema_violations, unknown_tool
from mcp_errors._shared.advice import HEADLINES, advice
from mcp_errors._shared.contract import (
    ENVELOPE_SCHEMA,
    RETIRED_RESOURCE_NOT_FOUND,
    ErrorCategory,
    ExecutionState,
    FieldError,
)
from mcp_errors._shared.envelope import FailureDetails
from mcp_errors._shared.failure_vocabulary import KINDS
from mcp_errors._shared.failure_words import (
    Judgment,
    judge_code,
    judge_failure,
    judge_status,
    judge_success,
    strip_sdk_wrappers,
)
from mcp_errors._shared.sanitize import (
    MAX_DESCRIPTION_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_RECEIVED_CHARS,
    Known,
    known_to_the_agent,
    sanitize_text,
)
from mcp_errors._shared.signals import JSONRPC_CODES
from mcp_errors._shared.tool_failure import TOOL_FAILURE_META, read_tool_failure
from mcp_errors._shared.waits import wait_seconds
from mcp_errors.proxy._rules import MatchedRule, Rules

__all__ = ["MAX_SAID_CHARS", "UpstreamClassifier", "UpstreamFailure"]

MAX_SAID_CHARS: Final = 500
"""The most of an upstream's own words kept in a description."""


@dataclass(frozen=True, slots=True)
class UpstreamFailure:
    """What an upstream answered for a failed call, whichever shape it came in."""

    tool: str
    text: str
    """Its words: the text blocks of the result, or the JSON-RPC error's message."""
    structured: Any = None
    meta: Mapping[str, Any] | None = None
    jsonrpc_code: int | None = None
    """The code of a JSON-RPC error (`None` for a returned result)."""
    jsonrpc_data: Any = None
    arguments: Mapping[str, Any] | None = None
    input_schema: Mapping[str, Any] | None = None
    known_tools: Sequence[str] = ()
    read_only: bool = False
    """The tool is annotated `readOnlyHint`: nothing it did can need undoing, or a resend applies twice."""
    roots: tuple[str, ...] = ()
    """The places the upstream announced as its own (`list_allowed_directories`): not secret to the agent."""


class UpstreamClassifier:
    """Classify upstream failures with the built-in chain and the user's rules (if any).

    Servers fail with the same few texts over and over: a failure that only has words (no
    structured content, `_meta` or error data) is classified once per tool, text and
    arguments, and the result shared (like `_server/classify.py`'s).

    Args:
        rules: The user's rules file, tried at step 5.
    """

    def __init__(self, rules: Rules | None = None) -> None:
        self.rules = rules
        self._validators: dict[str, tuple[object, Any]] = {}
        self._by_words: OrderedDict[tuple[Any, ...], FailureDetails] = OrderedDict()

    def classify(self, failure: UpstreamFailure, *, error_id: str) -> FailureDetails | None:
        """The failure in the contract's terms, or `None` when the result already is in it.

        Args:
            failure: What the upstream answered.
            error_id: This occurrence's id, for log lines.

        Returns:
            The classified failure, with the upstream's words in its description.
        """
        structured = failure.structured if isinstance(failure.structured, Mapping) else None
        if structured is not None and "errorCategory" in structured and _envelope_validator().is_valid(structured):
            return None
        if structured is not None or failure.meta or failure.jsonrpc_data is not None:
            return self._classify(failure, structured, error_id, self._arguments_fit(failure))
        arguments = _canonical(failure.arguments)
        if arguments is None or len(failure.text) + len(arguments) > _MAX_SHARED_CHARS:
            return self._classify(failure, None, error_id, self._arguments_fit(failure))
        # Only words and arguments: the same call failing the same way is read once.
        key = (
            failure.tool,
            failure.text,
            failure.jsonrpc_code,
            arguments,
            tuple(failure.known_tools),
            failure.read_only,
            failure.roots,
        )
        details = self._by_words.get(key)
        if details is None:
            details = self._by_words[key] = self._classify(failure, None, error_id, self._arguments_fit(failure))
            if len(self._by_words) > _MAX_SHARED:
                self._by_words.popitem(last=False)
        return details

    def classify_success(self, failure: UpstreamFailure, *, error_id: str, judge_words: bool) -> FailureDetails | None:
        """A success the upstream answered for a call that failed, in the contract's terms; `None` for a success.

        The user's success rules are tried first; then, with `judge_words`, the shared judge of
        failures disguised as successes (the checker's ME022): only a success that *leads*
        with a failure counts.

        Args:
            failure: What the upstream answered (`text`, `structured`), as for a failure.
            error_id: This occurrence's id, for log lines.
            judge_words: Judge the success's words too (`--disguised-failures`).
        """
        structured = failure.structured if isinstance(failure.structured, Mapping) else None
        said = _said(failure.text, _known(failure))
        if self.rules is not None and self.rules.match_successes:
            hit = self.rules.first_match(
                failure.tool, code=None, text=failure.text, structured=structured, success=True
            )
            if hit is not None:
                return _from_rule(hit, failure, said)
        if not judge_words:
            return None
        judged = judge_success(
            failure.text, failure.structured, read_only=failure.read_only, arguments=failure.arguments
        )
        if judged is None:
            return None
        details = from_judgment(judged)
        described = f"The server answered this call as a success, but {judged.evidence}. {details.description}"
        return _with_words(dataclasses.replace(details, description=described), said)

    def _classify(
        self, failure: UpstreamFailure, structured: Mapping[str, Any] | None, error_id: str, fits: bool | None
    ) -> FailureDetails:
        said = _said(failure.text, _known(failure))
        for step in (_from_tool_failure_meta, _from_structured_fields):
            details = step(failure, structured, error_id)
            if details is not None:
                return _with_words(details, said)
        details = _from_jsonrpc_code(failure, error_id, fits)
        if details is not None:
            return _with_words(details, said)
        if self.rules is not None:
            hit = self.rules.first_match(failure.tool, code=_code_of(failure), text=failure.text, structured=structured)
            if hit is not None:
                return _from_rule(hit, failure, said)
        judged = judge_failure(
            strip_sdk_wrappers(failure.text), read_only=failure.read_only, arguments=failure.arguments
        )
        if _code_of(failure) == RETIRED_RESOURCE_NOT_FOUND and (judged is None or judged.code != "NOT_FOUND"):
            # -32002 says what failed (resource not found) whatever its words say of whose path
            # it was: a resource that is not there, not a server that cannot use its own.
            return _with_words(_RESOURCE_NOT_FOUND, said)
        if judged is None:
            return _with_words(_UNCLASSIFIED, said)
        if judged.code == "UNKNOWN_TOOL":
            return _with_words(unknown_tool(failure.tool, error_id=error_id, known=failure.known_tools), said)
        return _with_words(from_judgment(judged), said)

    def _arguments_fit(self, failure: UpstreamFailure) -> bool | None:
        """Whether the call's arguments fit the tool's inputSchema; `None` when that cannot be told."""
        schema = failure.input_schema
        if schema is None or failure.arguments is None:
            return None
        known = self._validators.get(failure.tool)
        if known is None or known[0] is not schema:
            import jsonschema  # on first use: the proxy's start-up does without it

            try:
                validator = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(
                    dict(schema)
                )
            except Exception:
                validator = None  # an upstream's schema we cannot apply says nothing
            known = self._validators[failure.tool] = (schema, validator)
        if known[1] is None:
            return None
        try:
            return bool(known[1].is_valid(dict(failure.arguments)))
        except Exception:
            return None


def _canonical(arguments: Mapping[str, Any] | None) -> str | None:
    try:
        return _CANONICAL_JSON.encode(arguments)
    except (TypeError, ValueError):
        return None


# What `json.dumps(..., sort_keys=True, separators=(",", ":"), ensure_ascii=False)` builds on each call.
_CANONICAL_JSON: Final = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_MAX_SHARED: Final = 256
_MAX_SHARED_CHARS: Final = 2000
_MAX_READ_CHARS: Final = 8000
"""The most of an upstream's text read for its words: every pattern below runs on this much."""

# What says nothing: the SDKs' masked crash ("Error executing tool x"), pydantic's doc links,
# and pydantic's `[type=..., input_value=..., input_type=...]`, which echoes the caller's own
# value back (the words before it say what is wrong; `fieldErrors` say it per field). Each
# alternative starts at a literal, never at a run of blanks that could be split many ways.
_NOISE: Final = re.compile(
    r"^(?:Error executing tool|Error calling tool) \S{1,200}$|For further information visit \S{1,500}"
    r"|\[type=\w{1,64}, input_value=[^\n]{0,2000}?, input_type=\w{1,64}\]",
    re.MULTILINE,
)


# Each alternative of `_NOISE` holds one of these: a text without them is not searched.
_NOISE_MARKERS: Final = ("Error executing tool", "Error calling tool", "For further information visit", "input_value=")


def _known(failure: UpstreamFailure) -> Known:
    """What the agent knows already, which the upstream's words may say back: the paths its own
    call carries, and the places the upstream announced as its own."""
    return known_to_the_agent(failure.arguments, failure.roots)


def _said(text: str, keep: Known | None = None) -> str:
    words = strip_sdk_wrappers(text[:_MAX_READ_CHARS].strip())
    if any(marker in words for marker in _NOISE_MARKERS):
        words = _NOISE.sub("", words)
    return sanitize_text(words, limit=MAX_SAID_CHARS, keep=keep)


def _with_words(details: FailureDetails, said: str) -> FailureDetails:
    if not said or said in details.description:
        return details
    room = MAX_DESCRIPTION_CHARS - len(details.description) - len(_SAID)
    if room < 20:
        return details
    if len(said) > room:
        said = said[: room - 1].rstrip() + "…"  # already sanitised: only cut
    return dataclasses.replace(details, description=f"{details.description}{_SAID}{said}")


_SAID: Final = " The server said: "


# --- 2. SEP-3313 _meta ----------------------------------------------------------------


def _from_tool_failure_meta(
    failure: UpstreamFailure, structured: Mapping[str, Any] | None, error_id: str
) -> FailureDetails | None:
    raw = (failure.meta or {}).get(TOOL_FAILURE_META)
    if not isinstance(raw, Mapping):
        return None
    read = read_tool_failure(raw)
    if read.category is None:
        return None
    guidance = sanitize_text(read.guidance, limit=MAX_DESCRIPTION_CHARS // 2) if read.guidance else ""
    return FailureDetails(
        message=HEADLINES[read.category],
        category=read.category,
        description=f"{guidance} {advice(read.category)}".strip() if guidance else advice(read.category),
        code=_contract_code(read.code),
        retry_after_seconds=read.retry_after_seconds if read.category is ErrorCategory.TRANSIENT else None,
        inferred=read.inferred,
    )


# --- 3. structured fields ---------------------------------------------------------------

_CATEGORY_KEYS: Final = ("errorCategory", "category", "errorClass", "error_class", "errorType", "error_type", "class")
_STATUS_KEYS: Final = ("status", "statusCode", "status_code", "httpStatus", "http_status")
_CODE_KEYS: Final = ("code", "errorCode", "error_code")
_RETRY_AFTER_KEYS: Final = ("retryAfterSeconds", "retry_after_seconds", "retryAfter", "retry_after")
_RETRYABLE_KEYS: Final = ("retryable", "isRetryable", "is_retryable")


def _from_structured_fields(
    failure: UpstreamFailure, structured: Mapping[str, Any] | None, error_id: str
) -> FailureDetails | None:
    if structured is None:
        return None
    # The fields, at the top or in an `error` object (`{"error": {"code": ..., "message": ...}}`).
    nested = structured.get("error")
    for fields in (structured, nested) if isinstance(nested, Mapping) else (structured,):
        details = _from_fields(fields, failure, error_id)
        if details is not None:
            return details
    return None


def _from_fields(fields: Mapping[str, Any], failure: UpstreamFailure, error_id: str) -> FailureDetails | None:
    wait = _first_number(fields, _RETRY_AFTER_KEYS)
    for key in _CATEGORY_KEYS:
        value = fields.get(key)
        if isinstance(value, str):
            category = read_tool_failure({"class": value}).category
            if category is not None:
                return _declared(category, _first_code(fields), wait)
            details = _from_code_word(value, failure, error_id, wait)
            if details is not None:
                return details
    for key in _STATUS_KEYS:
        status = _as_status(fields.get(key))
        if status is not None:
            details = _from_status(status, wait, failure)
            if details is not None:
                return details
    for key in _CODE_KEYS:
        value = fields.get(key)
        status = _as_status(value)
        if status is not None:
            details = _from_status(status, wait, failure)
            if details is not None:
                return details
        elif isinstance(value, str):
            details = _from_code_word(value, failure, error_id, wait)
            if details is not None:
                return details
    for key in _RETRYABLE_KEYS:
        if fields.get(key) is True:
            return _declared(ErrorCategory.TRANSIENT, _first_code(fields), wait)
    return None


def _declared(category: ErrorCategory, code: str | None, wait: float | None) -> FailureDetails:
    return FailureDetails(
        message=HEADLINES[category],
        category=category,
        description=advice(category, code=code),
        code=code,
        retry_after_seconds=wait if category is ErrorCategory.TRANSIENT else None,
    )


def _from_code_word(word: str, failure: UpstreamFailure, error_id: str, wait: float | None) -> FailureDetails | None:
    # A declared code is read with the same vocabulary as prose, but it is not prose: the
    # category is the server's, and its code is kept when it is one.
    judged = judge_code(word, read_only=failure.read_only)
    if judged is None:
        return None
    if judged.code == "UNKNOWN_TOOL":
        return unknown_tool(failure.tool, error_id=error_id, known=failure.known_tools)
    details = from_judgment(judged, inferred=False)
    if wait is not None and details.category is ErrorCategory.TRANSIENT:
        details = dataclasses.replace(details, retry_after_seconds=wait)
    return dataclasses.replace(details, code=_contract_code(word) or details.code)


def _first_code(fields: Mapping[str, Any]) -> str | None:
    return next((code for key in _CODE_KEYS if (code := _contract_code(fields.get(key))) is not None), None)


def _first_number(fields: Mapping[str, Any], keys: Sequence[str]) -> float | None:
    for key in keys:
        value = fields.get(key)
        if not isinstance(value, str) and (wait := wait_seconds(value)) is not None:
            return wait
    return None


def _as_status(value: object) -> int | None:
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599 else None


def _from_status(status: int, wait: float | None, failure: UpstreamFailure) -> FailureDetails | None:
    judged = judge_status(status, read_only=failure.read_only)
    if judged is None:
        return None
    details = from_judgment(judged, inferred=False)
    return dataclasses.replace(details, retry_after_seconds=wait) if wait is not None and judged.retryable else details


_CONTRACT_CODE: Final = re.compile(r"[A-Z][A-Z0-9_]{0,63}")


def _contract_code(value: object) -> str | None:
    """An upstream's code as the contract spells codes (UPPER_SNAKE), when it is one."""
    if not isinstance(value, str):
        return None
    normal = re.sub(r"[^A-Za-z0-9]+", "_", value.strip()).strip("_").upper()
    return normal if _CONTRACT_CODE.fullmatch(normal) else None


# --- 4. JSON-RPC codes and the inputSchema ------------------------------------------------

_TEXT_CODE: Final = re.compile(r"^(?:Error calling tool [^:]{1,200}: )?MCP error (-?\d{1,6}):")


def _code_of(failure: UpstreamFailure) -> int | None:
    if failure.jsonrpc_code is not None:
        return failure.jsonrpc_code
    # The TypeScript SDK answers a tool's thrown McpError (and its own argument check) with
    # an `isError` result whose text starts "MCP error <code>: ".
    found = _TEXT_CODE.match(failure.text)
    return int(found.group(1)) if found is not None else None


def _from_jsonrpc_code(failure: UpstreamFailure, error_id: str, fits: bool | None) -> FailureDetails | None:
    code = _code_of(failure)
    if code == METHOD_NOT_FOUND and failure.known_tools and failure.tool not in failure.known_tools:
        return unknown_tool(failure.tool, error_id=error_id, known=failure.known_tools)
    # What the code says is its entry in the signal table (`_shared/signals.py`), as the server and the reader read it.
    signal = JSONRPC_CODES.get(code) if code is not None else None
    if signal is not None and signal.category is ErrorCategory.VALIDATION:
        # The protocol's own rejections: the call did not run.
        checked = _schema_check(failure, error_id) if fits is False else None
        if checked is not None:
            return checked
        named = _fields_from_data(failure.jsonrpc_data)
        return FailureDetails(
            message="Invalid request",
            category=signal.category,
            description=(
                f"The server rejected these arguments: {', '.join(sorted({e.field for e in named}))}. "
                if named
                else "The server rejected the call as malformed. "
            )
            + "Check the tool name and arguments against tools/list, correct them and call again.",
            code=signal.code,
            field_errors=named,
            execution_state=signal.execution_state,
        )
    if signal is not None:
        # A read-only tool applied nothing, whatever stopped it.
        state = ExecutionState.NOT_EXECUTED if failure.read_only else signal.execution_state
        return from_judgment(Judgment(signal.kind, f"JSON-RPC error {code}", execution_state=state), inferred=False)
    checked = _schema_check(failure, error_id) if fits is False else None
    if checked is not None:
        # The server failed and the arguments break its own schema: whatever it said, the
        # first thing to fix is the arguments. Whether it ran is for the server to say.
        return dataclasses.replace(checked, execution_state=None)
    return None


def _schema_check(failure: UpstreamFailure, error_id: str) -> FailureDetails | None:
    if failure.input_schema is None or failure.arguments is None:
        return None
    return classify_schema_violations(
        failure.arguments, failure.input_schema, error_id=error_id, tool_name=failure.tool
    )


def _fields_from_data(data: object) -> tuple[FieldError, ...]:
    """The bad arguments a JSON-RPC error's `data` names, in the shapes servers use."""
    items: list[Any] = []
    if isinstance(data, Mapping):
        for key in ("field", "argument", "param", "name", "path"):
            if isinstance(data.get(key), str | list):
                items.append(data)
                break
        for key in ("errors", "issues", "fieldErrors", "details"):
            if isinstance(data.get(key), list):
                items.extend(data[key])
    elif isinstance(data, list):
        items = data
    errors: dict[str, FieldError] = {}
    for item in items[:_MAX_DATA_FIELDS]:
        if not isinstance(item, Mapping):
            continue
        where = next((item[key] for key in ("field", "argument", "param", "name", "path", "loc") if key in item), None)
        if isinstance(where, list):
            where = ".".join(str(part) for part in where)
        if not isinstance(where, str) or not where:
            continue
        problem = next((item[key] for key in ("problem", "message", "msg", "reason") if key in item), "invalid value")
        field = sanitize_text(where, limit=MAX_MESSAGE_CHARS)
        errors.setdefault(field, FieldError(field=field, problem=sanitize_text(str(problem), limit=MAX_MESSAGE_CHARS)))
    return tuple(errors.values())


_MAX_DATA_FIELDS: Final = 50


# --- 5. the user's rules ------------------------------------------------------------------


def _from_rule(hit: MatchedRule, failure: UpstreamFailure, said: str) -> FailureDetails:
    rule = hit.rule
    keep = _known(failure)
    values = {name: sanitize_text(value, limit=MAX_RECEIVED_CHARS, keep=keep) for name, value in hit.values.items()}
    values.setdefault("match", "")
    values["text"] = said
    values["tool"] = sanitize_text(failure.tool, limit=MAX_RECEIVED_CHARS)
    description = (
        rule.description.format_map(values) if rule.description is not None else advice(rule.category, code=rule.code)
    )
    wait: float | None = None
    if isinstance(rule.retry_after, int | float):
        wait = wait_seconds(rule.retry_after)
    elif isinstance(rule.retry_after, str):
        wait = wait_seconds(rule.retry_after.format_map({**hit.values, "match": hit.values.get("match", "")}))
    details = FailureDetails(
        message=HEADLINES[rule.category],
        category=rule.category,
        description=sanitize_text(description, limit=MAX_DESCRIPTION_CHARS, keep=keep)
        or advice(rule.category, code=rule.code),
        code=rule.code,
        retry_after_seconds=wait,
        execution_state=rule.execution_state,
    )
    return details if rule.description is not None and "{text}" in rule.description else _with_words(details, said)


# --- 6. the words, read with the shared vocabulary -------------------------------------------


def from_judgment(judged: Judgment, *, inferred: bool = True) -> FailureDetails:
    """A failure judged from its words (or a declared code) as the contract writes it.

    Args:
        judged: What `_shared/failure_words.py` made of it.
        inferred: The words were prose (`categoryInferred`); a code the server declared is not.
    """
    kind = judged.kind
    return FailureDetails(
        message=HEADLINES[kind.category],
        category=kind.category,
        description=f"{kind.what_happened} "
        + advice(kind.category, code=kind.code, execution_state=judged.execution_state),
        code=kind.code,
        retry_after_seconds=judged.retry_after_seconds if judged.retryable else None,
        execution_state=judged.execution_state,
        inferred=inferred,
    )


_RESOURCE_NOT_FOUND: Final = from_judgment(
    Judgment(KINDS["NOT_FOUND"], "JSON-RPC error -32002 (resource not found)"), inferred=False
)

_UNCLASSIFIED: Final = FailureDetails(
    message="The tool failed",
    category=ErrorCategory.BUSINESS,
    description="The server reported this failure without saying what kind it is. Do not resend the same call "
    "unchanged: change the request as its words suggest, or escalate.",
    code="TOOL_ERROR",
)


@functools.cache
def _envelope_validator() -> Any:
    """The envelope's validator, built on first use: the proxy's start-up does without jsonschema."""
    import jsonschema

    return jsonschema.Draft202012Validator(ENVELOPE_SCHEMA)
