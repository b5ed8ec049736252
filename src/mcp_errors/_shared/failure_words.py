"""The one vocabulary of failure words: what a failure's text, name or code says it is.

A failure that arrives as words, not as an exception or an envelope, is judged here: an
`isError` result without the contract (the client's `read_result`), a proxied server's
failure (`mcp-errors proxy`, after its structured sources), a success that leads with a
failure (`--disguised-failures`, the checker's ME022), and the signals the checker looks for
in an error's text. One vocabulary, so that the reader, the proxy and the checker agree.

What it knows comes from the sources a failure's words come from: Python's and Node's
exception and errno names, HTTP status semantics (RFC 9110), PostgreSQL's error classes
(SQLSTATE) and the messages of PostgreSQL, MySQL, SQLite and Redis, gRPC's status codes, the
error names of AWS, Google Cloud and Azure APIs and of the model APIs, and the failure texts
of real MCP servers (tests/corpus/). docs/failure-words.md has the table.

How a text is read
------------------
The text's start (`MAX_JUDGED_CHARS`) is cut into lowercase words (`ReadTimeout` is one
word, `EAI_AGAIN` two), and the words are matched against phrases with dictionary lookups:
linear in the text, with no regular expression that could backtrack. Each phrase names a
*kind* of failure (its code, category and execution state) and has a strength: an exact
exception, errno or API error name is strong, a specific phrase ("connection refused") is
medium, a lone word ("timeout", "invalid") is weak. The strongest match wins; between matches
of equal strength the one that is not transient wins, because a wrong "retryable" is the
costly mistake (an agent resends what a wait will not fix); then the first in the text.

Every judgment is inferred, never declared: readers mark it so (`categoryInferred`,
`(inferred)` in the head).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcp_errors._shared.contract import ErrorCategory, ExecutionState

__all__ = [
    "KINDS",
    "MAX_JUDGED_CHARS",
    "FailureKind",
    "Judgment",
    "judge_code",
    "judge_failure",
    "judge_status",
    "judge_success",
    "strip_sdk_wrappers",
    "vocabulary_table",
]

MAX_JUDGED_CHARS: Final = 4096
"""How much of a text is judged: what a failure is, its words say early."""

_T = ErrorCategory.TRANSIENT
_V = ErrorCategory.VALIDATION
_B = ErrorCategory.BUSINESS
_P = ErrorCategory.PERMISSION
_NOT_RUN = ExecutionState.NOT_EXECUTED
_UNKNOWN = ExecutionState.OUTCOME_UNKNOWN


@dataclass(frozen=True, slots=True)
class FailureKind:
    """A kind of failure the words can name: its code, category, execution state, and what happened."""

    code: str
    category: ErrorCategory
    execution_state: ExecutionState | None
    """`not_executed` when a failure of this kind means the call was refused before it did
    anything; `outcome_unknown` when it may have been cut off part-way; `None` when the kind
    does not say."""
    what_happened: str
    """One sentence for a description, about the failure, not about what to do next."""


def _kind(code: str, category: ErrorCategory, state: ExecutionState | None, what_happened: str) -> FailureKind:
    return FailureKind(code, category, state, what_happened)


KINDS: Final[Mapping[str, FailureKind]] = {
    kind.code: kind
    for kind in (
        _kind("UPSTREAM_TIMEOUT", _T, _UNKNOWN, "A service the tool depends on did not answer in time."),
        _kind("UPSTREAM_UNAVAILABLE", _T, _NOT_RUN, "A service the tool depends on could not be reached or is "
              "temporarily unavailable."),
        _kind("UPSTREAM_CONNECTION_LOST", _T, _UNKNOWN, "The connection to a service the tool depends on broke "
              "during the call."),
        _kind("UPSTREAM_BAD_GATEWAY", _T, _UNKNOWN, "A gateway in front of a service the tool depends on got no "
              "valid answer from it."),
        _kind("UPSTREAM_RATE_LIMITED", _T, _NOT_RUN, "A service the tool depends on is rate limiting its callers."),
        _kind("DATABASE_BUSY", _T, _NOT_RUN, "The database was busy (a lock, a deadlock, a conflict between "
              "transactions or no free connection) and gave up on the statement."),
        _kind("SERVER_RESOURCES_EXHAUSTED", _T, _UNKNOWN, "The server ran short of a resource it frees again "
              "(open files, memory)."),
        _kind("UPSTREAM_SAYS_TRY_AGAIN", _T, _UNKNOWN, "A service the tool depends on failed and says to try "
              "the request again."),
        _kind("INVALID_ARGUMENTS", _V, _NOT_RUN, "The server rejected the arguments."),
        _kind("INVALID_QUERY", _V, _NOT_RUN, "The query or expression in the arguments cannot run as written."),
        _kind("UNKNOWN_TOOL", _V, _NOT_RUN, "The server has no tool of that name."),
        _kind("ACCESS_DENIED", _P, _NOT_RUN, "The server, or a service behind it, refused access."),
        _kind("NOT_AUTHENTICATED", _P, _NOT_RUN, "The credentials in use are missing, invalid or expired."),
        _kind("NOT_FOUND", _V, _NOT_RUN, "What the call names does not exist (a file, table, revision, host or "
              "record)."),
        _kind("CONFLICT", _B, _NOT_RUN, "The request conflicts with the current state of the data (it exists "
              "already, or it changed)."),
        _kind("POLICY_REFUSED", _B, _NOT_RUN, "A rule or limit of the service refused the request (a plan or "
              "quota used up, a payment declined, a feature not offered)."),
        _kind("SERVER_MISCONFIGURED", _B, None, "The server cannot use its own resources (a file, database, "
              "disk or setting of its own), which no change to the call fixes."),
        _kind("UPSTREAM_INTERNAL_ERROR", _B, _UNKNOWN, "The server, or a service behind it, failed with an "
              "internal error."),
        _kind("TOOL_ERROR", _B, None, "The tool reported a failure."),
    )
}  # fmt: skip
"""Every kind the vocabulary can name, by code."""


@dataclass(frozen=True, slots=True)
class Judgment:
    """What a failure's words say it is. Always inferred."""

    kind: FailureKind
    evidence: str
    """The words that decided it, as they were matched (lowercase): for logs and reports."""
    retry_after_seconds: float | None = None
    """A wait the text asked for ("retry after 30 seconds"), for a transient failure."""
    execution_state: ExecutionState | None = None

    @property
    def category(self) -> ErrorCategory:
        return self.kind.category

    @property
    def code(self) -> str:
        return self.kind.code

    @property
    def retryable(self) -> bool:
        """Whether resending the same call can succeed: transient only."""
        return self.kind.category is ErrorCategory.TRANSIENT


def judge_failure(
    text: str,
    *,
    read_only: bool = False,
    arguments: Mapping[str, Any] | None = None,
) -> Judgment | None:
    """What the words of a failure say it is, or `None` when they say nothing this vocabulary knows.

    Args:
        text: The failure's words (an error result's text, an exception's message).
        read_only: The tool changes nothing (`readOnlyHint`), so nothing was applied
            whatever the failure: its execution state is `not_executed`.
        arguments: The call's arguments. A "does not exist" that names none of them is about
            the server's own files or data, not about the call (`SERVER_MISCONFIGURED`).

    Returns:
        The judgment, or `None`.
    """
    judged = _ECHOED_INPUT.sub("", text[:MAX_JUDGED_CHARS])
    words = _words(judged)
    found = _best_match(words)
    if found is None:
        return None
    kind, evidence = _qualified(found, words, judged, arguments)
    wait = _asked_wait(words) if kind.category is ErrorCategory.TRANSIENT else None
    state = _NOT_RUN if read_only else kind.execution_state
    return Judgment(kind=kind, evidence=evidence, retry_after_seconds=wait, execution_state=state)


def judge_code(word: str, *, read_only: bool = False) -> Judgment | None:
    """What a failure's declared code or name says it is (`ECONNREFUSED`, `RESOURCE_EXHAUSTED`,
    `ThrottlingException`, `40P01`, `rate_limit_error`), or `None`.

    A code is read with the same vocabulary as prose, but only its exact names and whole
    phrases count, never a lone word of it.
    """
    words = _words(word[:_MAX_CODE_CHARS])
    if not words:
        return None
    exact = _EXACT_CODES.get("".join(words))
    found = (exact, words[0], 3, 0) if exact is not None else _best_match(words, minimum_strength=2)
    if found is None:
        return None
    kind = found[0]
    return Judgment(kind=kind, evidence=found[1], execution_state=_NOT_RUN if read_only else kind.execution_state)


def judge_success(
    text: str, structured: object = None, *, read_only: bool = False, arguments: Mapping[str, Any] | None = None
) -> Judgment | None:
    """A success (`isError` false) that plainly reads as a failure, judged; `None` for a real success.

    Only a result that *leads* with a failure counts: a top-level `error` (a non-empty
    string or object) or `success`/`ok` false in its structured content or in a text that is
    a JSON object, or a first line that starts with an error label followed by words
    ("Error: ...", "Database error: no such table", "Failed to ...", a traceback). A success
    that mentions "error", "failed" or "timeout" inside its data ("No errors found",
    "Standard error: 0.051", a log line) stays a success.

    Returns:
        The failure's judgment (its words judged by `judge_failure`; `TOOL_ERROR` when they
        say nothing more), its evidence saying what gave it away; or `None`.
    """
    said = _leading_failure(text, structured)
    if said is None:
        return None
    how, words = said
    judged = judge_failure(words, read_only=read_only, arguments=arguments)
    if judged is not None:
        return Judgment(
            kind=judged.kind,
            evidence=how,
            retry_after_seconds=judged.retry_after_seconds,
            execution_state=judged.execution_state,
        )
    kind = KINDS["TOOL_ERROR"]
    return Judgment(kind=kind, evidence=how, execution_state=_NOT_RUN if read_only else kind.execution_state)


def judge_status(status: int, *, read_only: bool = False) -> Judgment | None:
    """What an HTTP status a failure reports as data (`{"status": 503}`) says it is (RFC 9110), or `None`."""
    kind = _STATUS_KINDS.get(status)
    if kind is None:
        return None
    return Judgment(
        kind=kind, evidence=f"status {status}", execution_state=_NOT_RUN if read_only else kind.execution_state
    )


def strip_sdk_wrappers(text: str) -> str:
    """A tool's own words without what the SDKs put before them.

    MCPServer writes "Error executing tool x: ", fastmcp "Error calling tool 'x': ", the
    TypeScript SDK "MCP error -32602: "; many servers add "Error: ".
    """
    text = text.lstrip()
    if _MASKED_CRASH.fullmatch(text[:_MASKED_CRASH_CHARS]) is not None:
        return ""  # the SDK's masked crash says only which tool failed
    return _SDK_WRAPPERS.sub("", text, count=1)


# -- reading words ------------------------------------------------------------------------

# pydantic repeats the caller's input in its report (`input_value='A-403', input_type=str]`,
# always on one line): the caller's own words say nothing of why the call failed.
_ECHOED_INPUT: Final = re.compile(r"input_value=[^\n]*")

_WORD: Final = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")
_MAX_CODE_CHARS: Final = 200


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


Match = tuple[FailureKind, str, int, int]
"""A kind, the words that named it, their strength, and where they start (in words)."""


def _best_match(words: Sequence[str], *, minimum_strength: int = 1) -> Match | None:
    """The deciding match among the words, read left to right as a lexer reads (longest phrase first).

    A phrase's words are not read again inside it: "TypeError: fetch failed" is Node's
    network failure, not a `TypeError` and a "fetch failed" besides.
    """
    whole = _EXACT_CODES.get("".join(words)) if len(words) <= 3 else None
    if whole is not None:
        return (whole, " ".join(words), 3, 0)  # the whole text is a code name: "ABORTED", "backendError"
    best: Match | None = None
    start = 0
    while start < len(words):
        # Most words start no phrase and are no status: two look-ups decide, before any call.
        word = words[start]
        found = _longest_phrase_at(words, start) if word in _PHRASES_BY_FIRST_WORD else None
        if found is None and len(word) == 3 and word.isdigit():
            found = _http_status(words, start)
        if found is None:
            start += 1
            continue
        if found[2] >= minimum_strength and (best is None or _beats(found, best)):
            best = found
        start += max(1, len(found[1].split()) if found[1] else 1)
    return best


def _longest_phrase_at(words: Sequence[str], start: int) -> Match | None:
    following = words[start + 1] if start + 1 < len(words) else None
    for phrase, kind, strength in _PHRASES_BY_FIRST_WORD.get(words[start], ()):
        # Most phrases that share a first word differ at the second: compare it before slicing.
        if len(phrase) > 1 and phrase[1] != following:
            continue
        if tuple(words[start : start + len(phrase)]) == phrase:
            return (kind, " ".join(phrase), strength, start)  # sorted longest first
    return None


def _beats(candidate: Match, best: Match) -> bool:
    """Stronger wins; at equal strength, not transient wins (a wrong "retryable" costs most); then the first."""
    if candidate[2] != best[2]:
        return candidate[2] > best[2]
    candidate_transient = candidate[0].category is ErrorCategory.TRANSIENT
    best_transient = best[0].category is ErrorCategory.TRANSIENT
    return best_transient and not candidate_transient


def _http_status(words: Sequence[str], at: int) -> Match | None:
    """An HTTP status number where the words around it say it is one ("HTTP 503", "status code 429")."""
    word = words[at]
    if len(word) != 3 or not word.isdigit():
        return None
    kind = _STATUS_KINDS.get(int(word))
    if kind is None:
        return None
    before = words[at - 1] if at > 0 else ""
    if at == 0 or before in _STATUS_LEADS or (at > 0 and words[at - 1].startswith("1.")):
        return (kind, word, 2, at)
    return None


_STATUS_LEADS: Final = frozenset(
    {"http", "https", "status", "code", "statuscode", "error", "returned", "got", "response"}
)


def _qualified(
    found: Match, words: Sequence[str], text: str, arguments: Mapping[str, Any] | None
) -> tuple[FailureKind, str]:
    """The matched kind, turned where the rest of the words say more."""
    kind, evidence = found[0], found[1]
    present = set(words)
    if kind.code == "UPSTREAM_RATE_LIMITED" and present & _NO_WAIT_FIXES_QUOTA:
        # "You exceeded your current quota, please check your plan and billing": a wait does not refill it.
        return KINDS["POLICY_REFUSED"], f"{evidence} ({', '.join(sorted(present & _NO_WAIT_FIXES_QUOTA))})"
    if kind.code == "NOT_FOUND" and _SCHEMA_OBJECTS.intersection(words[max(0, found[3] - 4) : found[3]]):
        # 'relation "users" does not exist', 'column "x" does not exist': the query names them.
        return KINDS["INVALID_QUERY"], f"{words[max(0, found[3] - 4)]} ... {evidence}"
    if kind.code == "NOT_FOUND" and arguments is not None and _names_only_its_own(text, arguments):
        return KINDS["SERVER_MISCONFIGURED"], f"{evidence} (of a path the call did not name)"
    return kind, evidence


_SCHEMA_OBJECTS: Final = frozenset(
    {"relation", "column", "table", "function", "view", "schema", "index", "sequence", "operator"}
)

# A rate limit or quota that these words qualify is used up for a period no retry waits out.
_NO_WAIT_FIXES_QUOTA: Final = frozenset(
    {"daily", "day", "monthly", "month", "billing", "plan", "upgrade", "credits", "credit", "subscription"}
)

# A path token: `/srv/x`, `C:\\x`; linear (no nested repetition).
_PATH: Final = re.compile(r"(?<![\w.])(?:[A-Za-z]:)?[/\\][^\s'\"`,;()<>\[\]{}]{1,512}")


def _names_only_its_own(text: str, arguments: Mapping[str, Any]) -> bool:
    """Whether a not-found names something (a path, a quoted name), and none of it comes from the call's arguments."""
    named = [match.group(0).rstrip(".:") for match in _PATH.finditer(text, 0, MAX_JUDGED_CHARS)]
    named += [match.group(1) for match in _QUOTED.finditer(text, 0, MAX_JUDGED_CHARS)]
    named = [name.lower() for name in named if len(name) >= 2]
    if not named:
        return False
    given = [value.lower() for value in _strings(arguments.values()) if len(value) >= 2]
    return not any(_mentions(value, name) for name in named for value in given)


def _mentions(value: str, name: str) -> bool:
    # `shop.customers` is named by a query on `customers`; `./x.txt` by `x.txt`.
    last = name.rsplit("/", 1)[-1] if "/" in name else name.rsplit(".", 1)[-1]
    return name in value or value in name or (len(last) >= 3 and last in value)


_QUOTED: Final = re.compile(r"""['"`]([^'"`\n]{1,200})['"`]""")


def _strings(values: Iterable[Any], depth: int = 0) -> Iterable[str]:
    for value in values:
        if isinstance(value, str):
            yield value
        elif depth < 3 and isinstance(value, list | tuple):
            yield from _strings(value, depth + 1)
        elif depth < 3 and isinstance(value, Mapping):
            yield from _strings(value.values(), depth + 1)


# "retry after 30 seconds", "Retry-After: 120", "try again in 5s", "please wait 2 minutes".
_WAIT_LEADS: Final = (("retry", "after"), ("try", "again", "in"), ("retry", "in"), ("wait",), ("try", "again", "after"))
_UNIT_SECONDS: Final = {
    "ms": 0.001, "millisecond": 0.001, "milliseconds": 0.001,
    "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
    "m": 60.0, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0,
    "h": 3600.0, "hr": 3600.0, "hrs": 3600.0, "hour": 3600.0, "hours": 3600.0,
    "d": 86400.0, "day": 86400.0, "days": 86400.0,
}  # fmt: skip
_MAX_WAIT: Final = 86_400.0


def _asked_wait(words: Sequence[str]) -> float | None:
    for start, word in enumerate(words):
        for lead in _WAIT_LEADS_BY_FIRST_WORD.get(word, ()):
            end = start + len(lead)
            if len(lead) > 1 and (end > len(words) or words[start + 1] != lead[1]):
                continue
            if tuple(words[start:end]) != lead:
                continue
            for at in range(end, min(end + 3, len(words))):  # "retry after 30", "wait for at least 2 minutes"
                number = _NUMBER.fullmatch(words[at]) if words[at][0].isdigit() else None
                if number is not None:
                    # "5s" is one word, its unit inside it; "5 seconds" two.
                    unit = number.group(2) or (words[at + 1] if at + 1 < len(words) else "s")
                    return min(float(number.group(1)) * _UNIT_SECONDS.get(unit, 1.0), _MAX_WAIT)
                if words[at] not in ("for", "at", "least"):
                    break
    return None


_NUMBER: Final = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,6})?)([a-z]{0,12})")
_WAIT_LEADS_BY_FIRST_WORD: Final[Mapping[str, tuple[tuple[str, ...], ...]]] = {
    first: tuple(lead for lead in _WAIT_LEADS if lead[0] == first) for first in {lead[0] for lead in _WAIT_LEADS}
}
"""`_WAIT_LEADS` by their first word, each in `_WAIT_LEADS`'s order: most words lead no wait."""


# -- successes that lead with a failure ----------------------------------------------------

_FIRST_LINE_CHARS: Final = 200
_JSON_TEXT_CHARS: Final = 200_000
"""A success's text is read as a JSON object only up to this size."""

# A first line that is a failure: "Error: ...", "sqlite3.OperationalError: ...", "Failed to
# ...", GitPython's "Cmd('git') failed ...", "fatal: ...". Not a traceback: a tool that reads a
# log or a file may be asked for one, and a crash sent as a success names its error after it.
_LEADS_WITH_FAILURE: Final = re.compile(
    r"(?:error|exception|fatal)\s{0,3}[:!\-–—]"
    r"|[\w.]{0,80}(?:error|exception)\s{0,3}:"
    r"|failed to\s"
    r"|cmd\('[^']{0,80}'\) failed",
    re.IGNORECASE,
)
# ... or a label ending in error or failed ("Database error: near ...", "Request failed: ..."),
# but only when prose follows it: after "Standard error:" or "Jobs failed:" a value is data.
_FAILURE_LABEL: Final = re.compile(
    r"\w[\w .'\"()-]{0,40}\s(?:error|exception|failed)\s{0,3}[:!\-–—]\s{0,3}", re.IGNORECASE
)
# ... or "Error <doing what>:" ("Error executing query: ...", "Error retrieving key a: ..."),
# with prose after it too ("Error rate: 0.1%" is data).
_ERROR_FIRST_LABEL: Final = re.compile(
    r"(?:error|failure|exception)\s[\w .'\"()/-]{1,60}?[:!\-–—]\s{0,3}", re.IGNORECASE
)
# Prose: a word that is not a value ("none", "n/a"), or a code with its words ("503 Service
# Unavailable"); not a number ("0.051", "0 of 12", "±3%").
_PROSE: Final = re.compile(
    r"(?!(?:none|nil|null|zero|n/?a)\s{0,3}(?:[.;,)]|$))[^\W\d_]|(?-i:\d{1,6}\s{1,3}[A-Z][a-z])", re.IGNORECASE
)


def _leading_failure(text: str, structured: object) -> tuple[str, str] | None:
    """How a success gives away that it failed, and the failure's words; `None` for a success."""
    found = _failure_in_object(structured)
    if found is not None:
        return f"its structuredContent has {found[0]}{_quoted(found[1])}", found[1]
    stripped = text.lstrip()
    if stripped.startswith("{") and len(stripped) <= _JSON_TEXT_CHARS:
        # Read only when whole (json.loads is linear; a cut object is no object).
        try:
            data = json.loads(stripped)
        except (ValueError, RecursionError):
            data = None
        found = _failure_in_object(data)
        if found is not None:
            return f"its text is a JSON object where {found[0]}{_quoted(found[1])}", found[1]
    first_line = stripped[:_FIRST_LINE_CHARS].split("\n", 1)[0]
    label = _FAILURE_LABEL.match(first_line) or _ERROR_FIRST_LABEL.match(first_line)
    if _LEADS_WITH_FAILURE.match(first_line) or (label is not None and _PROSE.match(first_line, label.end())):
        shown = first_line[:80] + ("…" if len(first_line) > 80 else "")
        return f"its text starts {shown!r}", stripped[:MAX_JUDGED_CHARS]
    return None


def _quoted(words: str) -> str:
    shown = " ".join(words.split())
    if not shown:
        return ""
    return f": {shown[:80] + ('…' if len(shown) > 80 else '')!r}"


def _failure_in_object(value: object, depth: int = 0) -> tuple[str, str] | None:
    """How a JSON object reports that it failed (`error`, `errors`, `ok: false`, `status: "failed"`), and its words."""
    if isinstance(value, str) and depth and value.lstrip().startswith("{") and len(value) <= _JSON_TEXT_CHARS:
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    if not isinstance(value, Mapping):
        return None
    if value.keys() == {"result"} and depth == 0:
        # The SDKs wrap a tool's return value that is no object as `{"result": value}`.
        return _failure_in_object(value["result"], depth + 1)
    for key in ("error", "errors"):
        error = value.get(key)
        if not ((isinstance(error, str) and error.strip()) or (isinstance(error, Mapping | list) and error)):
            continue
        if key == "errors" and any(value.get(data) for data in ("data", "result", "results", "items")):
            continue  # GraphQL's partial result: data beside the errors of some fields
        return f"a top-level {key!r}", _words_of(error)
    for flag in ("success", "ok"):
        if value.get(flag) is False:
            return f"{flag!r} is false", _words_of(value.get("message") or value.get("detail") or value.get("reason"))
    status = value.get("status")
    if isinstance(status, str) and status.strip().lower() in _FAILED_STATUSES:
        return f"'status' is {status!r}", _words_of(value.get("message") or value.get("detail") or value.get("reason"))
    return None


_FAILED_STATUSES: Final = frozenset({"error", "failed", "failure", "fail"})


def _words_of(value: object) -> str:
    """A reported error's words: its message where it has one, else the whole of it as JSON (capped)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value:
        return _words_of(value[0])
    if isinstance(value, Mapping):
        for key in ("message", "detail", "reason", "error", "code", "title"):
            if isinstance(value.get(key), str | Mapping):
                return _words_of(value[key])
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:MAX_JUDGED_CHARS]
    except (ValueError, RecursionError):
        return ""


# What the SDKs put before a tool's own words: MCPServer's "Error executing tool x: ",
# fastmcp's "Error calling tool 'x': ", the TypeScript SDK's "MCP error -32602: ".
_SDK_WRAPPERS: Final = re.compile(
    r"^(?:Error executing tool [^:\n]{1,200}: |Error calling tool [^:\n]{1,200}: |MCP error -?\d{1,6}: |Error: ){1,4}"
)


# The SDKs' text for a tool that crashed, with nothing of its own: "Error executing tool x".
_MASKED_CRASH: Final = re.compile(r"(?:Error executing tool|Error calling tool) \S{1,200}\s{0,2}")
_MASKED_CRASH_CHARS: Final = 240


# -- the vocabulary ------------------------------------------------------------------------
#
# (code, strength, phrases): a phrase is its words as `_words` cuts them, so "EAI_AGAIN" is
# "eai again" and "ReadTimeout" is "readtimeout". Strength 3: an exact name (exception class,
# errno, API error code); 2: a specific phrase; 1: a lone word that only hints.

_VOCABULARY: Final[Sequence[tuple[str, int, str]]] = (
    # --- transient: timeouts (the call may have run) ---
    ("UPSTREAM_TIMEOUT", 3, "timeouterror | readtimeout | writetimeout | pooltimeout | timeoutexception | etimedout "
     "| deadlineexceeded | deadline exceeded | sockettimeoutexception | requesttimeout | requesttimeoutexception "
     "| operationtimedout | gatewaytimeout | readtimeouterror | servertimeouterror | und err headers timeout "
     "| und err body timeout | esockettimedout | request timeout | query canceled | connecttimeouterror "
     "| canceling statement due to statement timeout | canceling statement due to user request"),
    ("UPSTREAM_TIMEOUT", 2, "timed out | timedout | time out | times out | did not respond in time "
     "| did not answer in time | no response within | took too long | took more than | statement timeout "
     "| read timeout | connection timeout | socket timeout | timeout exceeded | timeout expired"),
    ("UPSTREAM_TIMEOUT", 1, "timeout"),
    # --- transient: not reached (the call did not run) ---
    ("UPSTREAM_UNAVAILABLE", 3, "connectionrefusederror | econnrefused | connecterror | connecttimeout "
     "| newconnectionerror | clientconnectorerror | clientconnectorconnectionerror "
     "| serviceunavailable | serviceunavailableexception | serverbusy | ehostunreach | enetunreach | enetdown "
     "| eai again | overloaded error | slowdown | ehostdown | und err connect timeout | cannotconnecterror "
     "| temporary failure in name resolution | connection refused | service unavailable | clusterdown "
     "| tryagain | masterdown | the database system is starting up | the database system is shutting down "
     "| the database system is in recovery mode | redis is loading | loading redis is loading"),
    ("UPSTREAM_UNAVAILABLE", 2, "temporarily unavailable | currently unavailable | service is unavailable "
     "| is unavailable | server is busy | overloaded | try again later | retry later | please try again later "
     "| no route to host | network is unreachable | network is down | host is unreachable | could not connect "
     "| failed to connect | unable to connect | cannot connect | can not connect | couldn t connect "
     "| can t connect | connect call failed | all connection attempts failed | is the server running "
     "| is starting up | is shutting down | under maintenance | down for maintenance | web server is down "
     "| origin is unreachable | connection attempt failed | upstream connect error | the cluster is down"),
    ("UPSTREAM_UNAVAILABLE", 1, "unavailable | temporarily | maintenance"),
    # --- transient: cut off (the call may have run) ---
    ("UPSTREAM_CONNECTION_LOST", 3, "connectionreseterror | econnreset | epipe | brokenpipeerror "
     "| remoteprotocolerror | serverdisconnectederror | connectionabortederror | econnaborted "
     "| incompleteread | chunkedencodingerror | protocolerror | clientoserror | readerror | writeerror "
     "| und err socket | closedresourceerror | brokenresourceerror | endofstream | typeerror fetch failed "
     "| server has gone away | lost connection to server | connection reset by peer | software caused connection "
     "abort"),
    ("UPSTREAM_CONNECTION_LOST", 2, "connection reset | connection closed | connection aborted | connection abort "
     "| connection lost | connection error | connection issue | connection problem | connection failed "
     "| connection was closed | connection was reset | connection has been closed | connection terminated "
     "| broken pipe | socket hang up | server disconnected | server closed the connection | terminating connection "
     "| fetch failed | stream ended | unexpected eof | eof occurred | incomplete read | peer closed | network error "
     "| network failure | lost connection | other side closed | remote end closed"),
    ("UPSTREAM_BAD_GATEWAY", 2, "bad gateway | gateway timeout | gateway time out | gateway timed out "
     "| invalid response from upstream | upstream request timeout | a timeout occurred"),
    ("UPSTREAM_SAYS_TRY_AGAIN", 3, "internal error please try again | please try your request again "
     "| backenderror | internal error try again"),
    # --- transient: rate limits ---
    ("UPSTREAM_RATE_LIMITED", 3, "throttlingexception | throttling | throttled | requestlimitexceeded "
     "| toomanyrequests | toomanyrequestsexception | ratelimitexceeded | userratelimitexceeded "
     "| ratelimiterror | rate limit error | rate limit exceeded | rate limit reached | too many requests "
     "| requestthrottled | provisionedthroughputexceededexception | transactionthrottled | secondary rate limit"),
    ("UPSTREAM_RATE_LIMITED", 2, "rate limit | rate limited | rate limiting | ratelimit | ratelimited "
     "| slow down | quota exceeded | resource exhausted | resource has been exhausted | too many calls "
     "| request limit | requests per"),
    # --- transient: a busy database ---
    ("DATABASE_BUSY", 3, "sqlite busy | sqlite locked | deadlockdetected | serializationfailure "
     "| lockwaittimeout | lock wait timeout exceeded | toomanyconnections | locknotavailable | busy redis is busy "
     "| database is locked | database table is locked | deadlock detected | deadlock found "
     "| could not serialize access | serialization failure | conflict with recovery "
     "| another git process seems to be running | index lock | too many connections | too many clients "
     "| remaining connection slots are reserved | sorry too many clients already"),
    ("DATABASE_BUSY", 2, "could not obtain lock | lock not available | lock timeout | connection pool exhausted "
     "| pool exhausted | database is busy | try restarting transaction"),
    ("DATABASE_BUSY", 1, "deadlock"),
    # --- transient: the server's own resources, freed again ---
    ("SERVER_RESOURCES_EXHAUSTED", 3, "emfile | enfile | enomem | eagain"),
    ("SERVER_RESOURCES_EXHAUSTED", 2, "too many open files | cannot allocate memory "
     "| resource temporarily unavailable"),
    # --- validation ---
    ("INVALID_ARGUMENTS", 3, "extra forbidden | int parsing | float parsing | string too short | string too long "
     "| literal error | enum error | validationerror | validationexception | invalidparametervalue "
     "| invalidparametervalueexception | invalidparameter | invalidparameterexception | invalidargument "
     "| invalid argument | invalidrequestexception | invalid request error | invalidinput | badrequest "
     "| badrequestexception | missingparameter | missingrequiredparameter | valueerror "
     "| unprocessableentity | invalidparametercombination | validation failed | malformedpolicydocument "
     "| malformedquerystring | invalidquery | invalid request | out of range | outofrange | idempotency error "
     "| crossslot | wrongtype | wrong kind of value | wrong number of arguments | unknown command "
     "| math domain error | datatype mismatch | type mismatch | conversion error | could not convert "
     "| cannot specify both | mutually exclusive | cannot be used together | not in the allowed domains "
     "| path outside allowed directories | outside allowed directories | outside the allowed directories "
     "| outside allowed | outside the allowed | outside of the allowed | not in allowed directories "
     "| only select queries are allowed | select queries are not allowed | only create table statements are "
     "allowed | in a read only transaction | unsupported url | unsupported protocol | unsupported operation "
     "| eisdir | is a directory | illegal operation on a directory | not null constraint | violates not null "
     "| cannot be null | foreign key constraint | ambiguous argument "
     "| access denied path outside allowed directories"),
    ("INVALID_ARGUMENTS", 2, "validation error | validation errors | invalid arguments | invalid input "
     "| invalid param | invalid params | invalid parameter | invalid parameters | invalid value | invalid format "
     "| missing required | is required | are required | required argument | required parameter "
     "| required field | required property | is a required property | field required | must be "
     "| must not be | must have | must contain | expected a | expected an | is not valid | not a valid "
     "| is invalid | are invalid | was invalid | not valid for | bad request | unprocessable entity "
     "| malformed | wrong type | unexpected keyword | unexpected argument | unknown argument | unknown parameter "
     "| unknown field | unrecognized argument | unrecognized arguments | not one of | does not match "
     "| should be | cannot be empty | can t be blank | is too long | is too short "
     "| too long | too short | too large | exceeds the maximum | payload too large | unsupported media type "
     "| not allowed value | unsupported value | unsupported format | unsupported option "
     "| invalid date | invalid email | invalid url | invalid path | invalid id | invalid json | invalid syntax "
     "| invalid timezone | invalid time zone | invalid expression | cannot parse | could not parse "
     "| failed to parse | unable to parse | parse error | not a number | is not a number | typeerror"),
    ("INVALID_ARGUMENTS", 1, "invalid | required | missing"),
    ("INVALID_QUERY", 3, "syntaxerror | zerodivisionerror | nameerror | programmingerror | undefinedtable "
     "| undefinedcolumn | undefinedfunction | pathspec | sql syntax | syntax error | division by zero "
     "| divide by zero | no such table | no such column | no such function | unknown column | unknown table"),
    ("INVALID_QUERY", 2, "unknown identifier | undefined variable | undefined identifier | undefined symbol "
     "| is not defined | unexpected token | unterminated | did not match any file | did not match any files "
     "| not a valid expression | invalid expression | ambiguous column | no such collation"),
    ("UNKNOWN_TOOL", 2, "unknown tool | no such tool | tool not found | tool does not exist | method not found"),
    # --- permission ---
    ("ACCESS_DENIED", 3, "accessdenied | accessdeniedexception | unauthorizedoperation | authorizationfailed "
     "| permissionerror | eacces | eperm | permission denied | access denied | access is denied "
     "| permission error | insufficient permissions | insufficient privilege | insufficientprivilege "
     "| resource not accessible by integration | not accessible by integration | authorizationerror "
     "| forbiddenexception | operation not permitted | command denied to user | refused to fetch "
     "| user is disabled"),
    ("ACCESS_DENIED", 2, "forbidden | not authorized | not authorised | not allowed | not permitted "
     "| do not have permission | don t have permission | does not have permission | doesn t have permission "
     "| no permission | lacks permission | missing permission | missing permissions | requires permission "
     "| not accessible | disallowed | denied | blocked by policy "
     "| requires approval | insufficient scope | insufficient scopes | scope required | read only access"),
    ("ACCESS_DENIED", 1, "permission | permissions"),
    ("NOT_AUTHENTICATED", 3, "expiredtoken | expiredtokenexception | invalidclienttokenid | signaturedoesnotmatch "
     "| invalidauthenticationtoken | expiredauthenticationtoken | unrecognizedclientexception "
     "| notauthorizedexception | authenticationerror | authentication error | unauthenticated | noauth | wrongpass "
     "| invalidsignatureexception | missingauthenticationtoken | authfailure | invalid api key | invalid token "
     "| invalid credentials | bad credentials | password authentication failed | authentication failed "
     "| invalid username password pair | could not read username | client already authenticated "
     "| api key not valid | security token included in the request is expired "
     "| security token included in the request is invalid"),
    ("NOT_AUTHENTICATED", 2, "token is expired | token is invalid "
     "| unauthorized | unauthorised | authentication required | requires authentication "
     "| not authenticated | login required | not logged in | token expired | token has expired | expired token "
     "| session expired | credentials expired | credentials have expired | invalid authentication "
     "| invalid authentication credentials | missing api key | api key is missing | no api key "
     "| incorrect api key | invalid client | invalid grant | access token expired | jwt expired "
     "| signature expired | missing credentials | no credentials | could not validate credentials"),
    # --- the call names what does not exist ---
    ("NOT_FOUND", 3, "filenotfounderror | enoent | nosuchkey | nosuchbucket | nosuchentity | resourcenotfoundexception "
     "| resourcenotfound | notfoundexception | notfounderror | enotdir | nosuchfileexception | name or service "
     "not known | nodename nor servname provided | enotfound | could not resolve host | nxdomain "
     "| not a git repository | unknown revision | did not resolve to an object | not a directory | noscript"),
    ("NOT_FOUND", 2, "not found | no such file | no such file or directory | does not exist | doesn t exist "
     "| do not exist | don t exist | could not find | cannot find | can t find | unable to find | no such "
     "| not exist | nonexistent | non existent | no longer exists | has been deleted | was deleted "
     "| unknown repository | no matching"),
    # --- business ---
    ("CONFLICT", 3, "conditionalcheckfailedexception | integrityerror | uniqueviolation | eexist | fileexistserror "
     "| alreadyexists | alreadyexistsexception | resourceinuseexception | transactioncanceledexception "
     "| concurrentmodificationexception | optimisticlockexception | precondition failed | failed precondition "
     "| preconditionfailed | entityalreadyexists | bucketalreadyexists | failed to push | would be overwritten "
     "| merge conflict | unique constraint | duplicate key | duplicate entry | already exists"),
    ("CONFLICT", 2, "already exist | violates unique constraint | violates check constraint "
     "| check constraint failed | conflict | conflicts with | version mismatch | has changed since "
     "| was modified | is in use | in use by | is locked by | already in progress | file exists "
     "| directory not empty | rejected | gone"),
    ("POLICY_REFUSED", 3, "card declined | card was declined | card has expired | card does not support "
     "| insufficient funds | insufficient quota | exceeded your current quota "
     "| limitexceededexception | servicequotaexceededexception | dailylimitexceeded | quotaexceeded "
     "| billing hard limit | payment required | do not honor | expired card | incorrect cvc | account suspended "
     "| account disabled | plan limit | subscription required | feature not available | exceeds max of"),
    ("POLICY_REFUSED", 2, "declined | insufficient balance | limit exceeded | limit reached | exceeds the limit "
     "| exceeds your | over the limit | not supported | unsupported | not available on your plan | upgrade your plan "
     "| not enabled | is disabled | has been disabled | is suspended | policy violation | violates policy "
     "| not eligible | cannot be refunded | already refunded | already shipped | already cancelled "
     "| already canceled | already closed | already been | method not allowed"),
    ("SERVER_MISCONFIGURED", 3, "enospc | erofs | edquot | readonly database | attempt to write a readonly database "
     "| unable to open database file | disk i o error | read only file system | no space left on device "
     "| disk quota exceeded | diskfull | disk full | disk is full | notconfigured | modulenotfounderror "
     "| importerror | file is not a database | database disk image is malformed | out of shared memory "
     "| could not extend file | read only replica | write against a read only | oom command not allowed "
     "| command not allowed when used memory | misconf | read only option | read only mode "
     "| input output error"),
    ("SERVER_MISCONFIGURED", 2, "not configured | is not configured | misconfigured | missing configuration "
     "| configuration error | invalid configuration | environment variable | env var | no module named "
     "| command not found | executable not found | not installed | database file | cannot open database"),
    ("UPSTREAM_INTERNAL_ERROR", 3, "internalservererror | internalerror | internalfailure | internal server error "
     "| internal error | api error | apierror | servererror | unhandled exception | unexpected error "
     "| an unexpected error occurred | something went wrong | returned non zero exit status "
     "| maximum recursion depth exceeded | memoryerror | is not valid json | unexpected end of json input "
     "| in json at position | jsondecodeerror | expecting value | web server is returning an unknown error "
     "| script killed | operation was aborted | aborterror | the server had an error"),
    ("UPSTREAM_TIMEOUT", 3, "operation was aborted due to timeout"),
    ("UPSTREAM_INTERNAL_ERROR", 2, "out of memory"),
)  # fmt: skip

# Codes that name a kind only as a whole (`judge_code`): gRPC statuses, SQLSTATEs, errno
# names and API error codes, written as `_words` would join them.
_EXACT_CODES: Final[Mapping[str, FailureKind]] = {
    name: KINDS[code]
    for code, names in (
        # gRPC status codes (grpc.io/docs/guides/status-codes): the retryable three are transient.
        ("UPSTREAM_UNAVAILABLE", "unavailable"),
        ("UPSTREAM_TIMEOUT", "deadlineexceeded"),
        ("UPSTREAM_RATE_LIMITED", "resourceexhausted"),
        ("INVALID_ARGUMENTS", "invalidargument outofrange badrequest 400 422 413 415 idempotencyerror"),
        ("POLICY_REFUSED", "unimplemented 405"),
        ("NOT_FOUND", "notfound 404"),
        ("CONFLICT", "alreadyexists failedprecondition 409 410 412"),
        # gRPC: "retry at a higher level" (the read-modify-write), which for a tool call is the call.
        ("DATABASE_BUSY", "aborted"),
        ("UPSTREAM_SAYS_TRY_AGAIN", "backenderror"),
        ("ACCESS_DENIED", "permissiondenied 403"),
        ("NOT_AUTHENTICATED", "unauthenticated 401"),
        ("UPSTREAM_INTERNAL_ERROR", "internal unknown dataloss cancelled canceled 500 501"),
        # PostgreSQL SQLSTATEs (postgresql.org/docs/current/errcodes-appendix.html).
        ("DATABASE_BUSY", "40001 40p01 55p03 53300 57p03"),
        ("UPSTREAM_TIMEOUT", "57014"),
        ("UPSTREAM_UNAVAILABLE", "08000 08001 08004 08006 57p01 57p02"),
        ("SERVER_RESOURCES_EXHAUSTED", "53000 53100 53200"),
        ("INVALID_QUERY", "42601 42p01 42703 42883 42704 22012"),
        ("INVALID_ARGUMENTS", "22000 22001 22003 22007 22008 22023 22p02"),
        ("CONFLICT", "23505 23503 23514 23502 23000"),
        ("ACCESS_DENIED", "42501"),
        ("NOT_AUTHENTICATED", "28000 28p01"),
        ("SERVER_MISCONFIGURED", "58030 53100"),
        # HTTP statuses a service writes as its code.
        ("UPSTREAM_TIMEOUT", "408"),
        ("UPSTREAM_RATE_LIMITED", "429"),
        ("UPSTREAM_UNAVAILABLE", "503"),
        ("UPSTREAM_BAD_GATEWAY", "502 504"),
        ("POLICY_REFUSED", "402"),
    )
    for name in names.split()
}


def _build_phrases() -> dict[str, list[tuple[tuple[str, ...], FailureKind, int]]]:
    by_first: dict[str, list[tuple[tuple[str, ...], FailureKind, int]]] = {}
    for code, strength, phrases in _VOCABULARY:
        for phrase in phrases.split("|"):
            words = tuple(_words(phrase))
            if words:
                by_first.setdefault(words[0], []).append((words, KINDS[code], strength))
    # Longer phrases first: the longest phrase at a place is the one read there.
    for entries in by_first.values():
        entries.sort(key=lambda entry: (-len(entry[0]), -entry[2]))
    return by_first


_PHRASES_BY_FIRST_WORD: Final = _build_phrases()

_STATUS_KINDS: Final[Mapping[int, FailureKind]] = {
    **dict.fromkeys((400, 411, 413, 414, 415, 416, 422), KINDS["INVALID_ARGUMENTS"]),
    405: KINDS["POLICY_REFUSED"],
    401: KINDS["NOT_AUTHENTICATED"],
    402: KINDS["POLICY_REFUSED"],
    403: KINDS["ACCESS_DENIED"],
    404: KINDS["NOT_FOUND"],
    408: KINDS["UPSTREAM_TIMEOUT"],
    409: KINDS["CONFLICT"],
    410: KINDS["CONFLICT"],
    412: KINDS["CONFLICT"],
    423: KINDS["DATABASE_BUSY"],
    425: KINDS["UPSTREAM_UNAVAILABLE"],
    429: KINDS["UPSTREAM_RATE_LIMITED"],
    500: KINDS["UPSTREAM_INTERNAL_ERROR"],
    501: KINDS["POLICY_REFUSED"],
    502: KINDS["UPSTREAM_BAD_GATEWAY"],
    503: KINDS["UPSTREAM_UNAVAILABLE"],
    504: KINDS["UPSTREAM_BAD_GATEWAY"],
    507: KINDS["SERVER_MISCONFIGURED"],
    **dict.fromkeys((521, 522, 523, 525, 526, 529), KINDS["UPSTREAM_UNAVAILABLE"]),
    520: KINDS["UPSTREAM_INTERNAL_ERROR"],
    524: KINDS["UPSTREAM_BAD_GATEWAY"],
}
"""RFC 9110's statuses (and Cloudflare's 52x) where a text names them."""


def vocabulary_table() -> list[tuple[str, str, str, str, str]]:
    """The vocabulary as rows (code, category, execution state, strength, phrases), for docs/failure-words.md."""
    rows = []
    for code, strength, phrases in _VOCABULARY:
        kind = KINDS[code]
        state = kind.execution_state.value if kind.execution_state is not None else "-"
        words = ", ".join(f"`{phrase.strip()}`" for phrase in phrases.split("|"))
        rows.append((code, kind.category.value, state, str(strength), words))
    return rows
