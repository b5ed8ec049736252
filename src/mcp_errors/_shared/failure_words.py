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
of real MCP servers (tests/corpus/): the vocabulary itself is data, in
`failure_vocabulary.py`; this module is how a text is read against it. docs/failure-words.md
has the table.

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

import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcp_errors._shared import failure_model
from mcp_errors._shared.contract import ErrorCategory, ExecutionState
from mcp_errors._shared.failure_vocabulary import (
    CALLER_SCOPE_PHRASES,
    EXACT_CODES,
    KINDS,
    LIMIT_PHRASES,
    FailureKind,
    PhraseTable,
    phrases_by_first_word,
    words_of,
)
from mcp_errors._shared.signals import HTTP_STATUSES
from mcp_errors._shared.waits import capped_wait

__all__ = [
    "MAX_JUDGED_CHARS",
    "Judgment",
    "judge_code",
    "judge_failure",
    "judge_status",
    "judge_success",
    "names_its_caller",
    "strip_sdk_wrappers",
]

MAX_JUDGED_CHARS: Final = 4096
"""How much of a text is judged: what a failure is, its words say early."""


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
    # A path or URL is a name, not prose: `/srv/no-such-repository` says nothing of a failure.
    unpathed = _PATH.sub(" ", judged) if "/" in judged or "\\" in judged else judged
    words = _words(unpathed)
    found = _best_match(words)
    # Names written together say their words apart: "AccessDeniedException", "userRateLimitExceeded".
    if found is None and _HAS_CAMEL_CASE.search(unpathed) is not None:
        words = _words(_CAMEL_CASE.sub(" ", unpathed))
        found = _best_match(words)
    if found is None:
        # A status no table knows ("HTTP 418") says what the failure is in a way nobody here can
        # read: the words around it are the client's template ("Client error ... for url"),
        # which every status shares, so the word model would only guess.
        return None if _names_unknown_status(words) else _inferred(words, read_only=read_only)
    if found[2] == 1:
        # A lone word only hints ("invalid", "timeout"): where the word model reads the whole text
        # plainly as another category, it decides ("Invalid Credentials" is who calls, not what).
        inferred = _inferred(words, read_only=read_only, confident=_OVERRULE_MARGIN)
        if inferred is not None and inferred.category is not found[0].category:
            return inferred
    kind, evidence = _qualified(found, words, judged, arguments)
    wait = _asked_wait(words) if kind.category is ErrorCategory.TRANSIENT else None
    state = _state(kind, read_only=read_only)
    return Judgment(kind=kind, evidence=evidence, retry_after_seconds=wait, execution_state=state)


_OVERRULE_MARGIN: Final = 2.0
"""How far the word model must lead to overrule a lone word's hint (natural-log units)."""


def _inferred(words: Sequence[str], *, read_only: bool, confident: float = 0.0) -> Judgment | None:
    """No name, code or phrase matched: what the word model reads, when it is confident (`failure_model.py`)."""
    inference = failure_model.infer(words)
    if inference is None or inference.margin < confident:
        return None
    present = set(words)
    category = inference.category
    if category is ErrorCategory.TRANSIENT:
        code = (
            "UPSTREAM_TIMEOUT"
            if present & _TIMEOUT_WORDS
            else "DATABASE_BUSY"
            if present & _LOCK_WORDS
            else "UPSTREAM_SAYS_TRY_AGAIN"
            if present & _RETRY_WORDS
            else "UPSTREAM_UNAVAILABLE"
        )
    elif category is ErrorCategory.PERMISSION:
        code = "NOT_AUTHENTICATED" if present & _CREDENTIAL_WORDS else "ACCESS_DENIED"
    elif category is ErrorCategory.VALIDATION and (
        present & _SECRET_WORDS or not _SECRET_PAIRS.isdisjoint(itertools.pairwise(words))
    ):
        # "Invalid Credentials", "API key not valid": the input that is wrong is who calls, not what.
        code = "NOT_AUTHENTICATED"
    elif category is ErrorCategory.VALIDATION:
        code = "INVALID_ARGUMENTS"
    else:
        code = "REQUEST_FAILED"
    kind = KINDS[code]
    evidence = f"word model: {', '.join(inference.words)} (margin {inference.margin})"
    wait = _asked_wait(words) if category is ErrorCategory.TRANSIENT else None
    return Judgment(
        kind=kind, evidence=evidence, retry_after_seconds=wait, execution_state=_state(kind, read_only=read_only)
    )


_SECRET_WORDS: Final = frozenset({"credentials", "credential", "password", "passwd", "apikey"})
# Not "token" alone: a parser's token ("cannot start any token") is no secret.
_SECRET_PAIRS: Final = frozenset({("api", "key"), ("access", "token"), ("auth", "token"), ("bearer", "token")})
_TIMEOUT_WORDS: Final = frozenset({"timeout", "timeouts", "timed"})
_LOCK_WORDS: Final = frozenset({"lock", "locks", "deadlock", "deadlocked", "serialize", "serialization"})
_RETRY_WORDS: Final = frozenset({"retry", "retrying", "again", "later", "wait"})
_CREDENTIAL_WORDS: Final = frozenset(
    {"login", "logged", "credential", "credentials", "password", "authenticate", "authentication", "authenticated",
     "token", "unauthenticated", "key"}
)  # fmt: skip


def judge_code(word: str, *, read_only: bool = False) -> Judgment | None:
    """What a failure's declared code or name says it is (`ECONNREFUSED`, `RESOURCE_EXHAUSTED`,
    `ThrottlingException`, `40P01`, `rate_limit_error`), or `None`.

    A code is read with the same vocabulary as prose, but only its exact names and whole
    phrases count, never a lone word of it.
    """
    words = _words(word[:_MAX_CODE_CHARS])
    if not words:
        return None
    exact = EXACT_CODES.get("".join(words))
    found = (exact, words[0], 3, 0) if exact is not None else _best_match(words, minimum_strength=2)
    if found is None:
        return None
    kind = found[0]
    return Judgment(kind=kind, evidence=found[1], execution_state=_state(kind, read_only=read_only))


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
    return Judgment(kind=kind, evidence=how, execution_state=_state(kind, read_only=read_only))


def names_its_caller(text: str) -> bool:
    """Whether a failure's words say it is a limit on the caller's own calls (a per-user quota).

    "Rate limit exceeded for user 42", "per-user quota exhausted", "you have exceeded your
    rate limit": a limit phrase and a caller phrase of the vocabulary (`LIMIT_PHRASES`,
    `CALLER_SCOPE_PHRASES`), anywhere in the first `MAX_JUDGED_CHARS` characters.
    """
    words = words_of(text[:MAX_JUDGED_CHARS])
    return _has_phrase(words, LIMIT_PHRASES) and _has_phrase(words, CALLER_SCOPE_PHRASES)


def _has_phrase(words: Sequence[str], phrases: frozenset[tuple[str, ...]]) -> bool:
    longest = max(map(len, phrases))
    return any(
        tuple(words[start : start + size]) in phrases for start in range(len(words)) for size in range(1, longest + 1)
    )


def judge_status(status: int, *, read_only: bool = False) -> Judgment | None:
    """What an HTTP status a failure reports as data (`{"status": 503}`) says it is (RFC 9110), or `None`."""
    kind = HTTP_STATUSES.get(status)
    if kind is None:
        return None
    return Judgment(kind=kind, evidence=f"status {status}", execution_state=_state(kind, read_only=read_only))


def _state(kind: FailureKind, *, read_only: bool) -> ExecutionState | None:
    # A read-only tool applied nothing, whatever stopped it.
    return ExecutionState.NOT_EXECUTED if read_only else kind.execution_state


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

_MAX_CODE_CHARS: Final = 200

# Where a name written in camel case starts a word: "accessDenied", "HTTPError" (fixed-width look-arounds: linear).
_CAMEL_CASE: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# Whether there is one: the same places without look-behinds, which a scan of a long text pays at every character.
_HAS_CAMEL_CASE: Final = re.compile(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]")


def _words(text: str) -> list[str]:
    return words_of(text)


PHRASES_BY_FIRST_WORD: PhraseTable
"""The phrase table the words are read against: the shipped one (`failure_vocabulary.phrases_by_first_word`),
bound here on first use, not at import (its mined half is 200 KB of JSON). A measuring tool may bind another
(tools/evaluate_failure_words.py judges each source without what came from it)."""


def _phrases() -> PhraseTable:
    try:
        return PHRASES_BY_FIRST_WORD
    except NameError:
        table = globals()["PHRASES_BY_FIRST_WORD"] = phrases_by_first_word()
        return table


def __getattr__(name: str) -> object:
    # `PHRASES_BY_FIRST_WORD` read from outside before any text was judged: bound now (PEP 562).
    if name == "PHRASES_BY_FIRST_WORD":
        return _phrases()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Match = tuple[FailureKind, str, int, int]
"""A kind, the words that named it, their strength, and where they start (in words)."""


def _best_match(words: Sequence[str], *, minimum_strength: int = 1) -> Match | None:
    """The deciding match among the words, read left to right as a lexer reads (longest phrase first).

    A phrase's words are not read again inside it: "TypeError: fetch failed" is Node's
    network failure, not a `TypeError` and a "fetch failed" besides.
    """
    whole = EXACT_CODES.get("".join(words)) if len(words) <= 3 else None
    if whole is not None:
        return (whole, " ".join(words), 3, 0)  # the whole text is a code name: "ABORTED", "backendError"
    if 2 <= len(words) <= 3 and minimum_strength <= 3:
        # A code written apart is the name written together: "DEADLINE_EXCEEDED" is `DeadlineExceeded`.
        joined = "".join(words)
        for phrase, kind, strength in _phrases().get(joined, ()):
            if len(phrase) == 1 and strength == 3:
                return (kind, " ".join(words), 3, 0)
    phrases = _phrases()
    by_second = _by_second_word(phrases)
    best: Match | None = None
    resume = 0
    # Most words start no phrase and are no status: one pass at C speed keeps the places that may.
    for start in [at for at, word in enumerate(words) if word in phrases or (len(word) == 3 and word.isdigit())]:
        if start < resume:
            continue  # inside the phrase matched before
        found = _longest_phrase_at(by_second, words, start)
        if found is None and len(words[start]) == 3 and words[start].isdigit():
            found = _http_status(words, start)
        if found is None:
            continue
        if found[2] >= minimum_strength and (best is None or _beats(found, best)):
            best = found
        resume = start + max(1, len(found[1].split()) if found[1] else 1)
    return best


PhraseEntry = tuple[tuple[str, ...], FailureKind, int]
PhrasesBySecondWord = tuple[dict[str, dict[str, list[PhraseEntry]]], dict[str, PhraseEntry]]
"""A phrase table's longer phrases by first word, then by second word (longest first); and its one-word phrases."""

_INDEXED: list[tuple[PhraseTable, PhrasesBySecondWord]] = []


def _by_second_word(phrases: PhraseTable) -> PhrasesBySecondWord:
    """The table indexed by its phrases' second words too, built once per table (a measuring tool binds others).

    Most first words start no longer phrase: they are in the one-word phrases only, each as the table's own
    entry (memory: nothing more is kept for them).
    """
    if _INDEXED and _INDEXED[0][0] is phrases:
        return _INDEXED[0][1]
    longer_by_first: dict[str, dict[str, list[PhraseEntry]]] = {}
    single_by_first: dict[str, PhraseEntry] = {}
    for first, entries in phrases.items():
        for entry in entries:  # longest first
            if len(entry[0]) > 1:
                longer_by_first.setdefault(first, {}).setdefault(entry[0][1], []).append(entry)
            elif first not in single_by_first:
                single_by_first[first] = entry
    index = (longer_by_first, single_by_first)
    _INDEXED[:] = [(phrases, index)]
    return index


def _longest_phrase_at(by_second: PhrasesBySecondWord, words: Sequence[str], start: int) -> Match | None:
    longer_by_first, single_by_first = by_second
    first = words[start]
    longer = longer_by_first.get(first)
    if longer is not None and start + 1 < len(words):
        for phrase, kind, strength in longer.get(words[start + 1], ()):
            if tuple(words[start : start + len(phrase)]) == phrase:
                return (kind, " ".join(phrase), strength, start)  # sorted longest first
    single = single_by_first.get(first)
    if single is None:
        return None
    return (single[1], first, single[2], start)


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
    kind = HTTP_STATUSES.get(int(word))
    if kind is None:
        return None
    if at == 0 or _led_as_status(words, at):
        return (kind, word, 2, at)
    return None


def _names_unknown_status(words: Sequence[str]) -> bool:
    """Whether the words name an HTTP status ("HTTP 418", "error 418") that `HTTP_STATUSES` lacks."""
    return any(
        len(word) == 3
        and word.isdigit()
        and 400 <= int(word) < 600
        and int(word) not in HTTP_STATUSES
        and _led_as_status(words, at)
        for at, word in enumerate(words)
    )


def _led_as_status(words: Sequence[str], at: int) -> bool:
    """Whether the word before `at` says a status follows: a status word, or a protocol version ("HTTP/1.1 503")."""
    if at == 0:
        return False
    before = words[at - 1]
    return before in _STATUS_LEADS or before.startswith("1.")


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
    if kind.code == "UPSTREAM_RATE_LIMITED" and "quota" in evidence.split() and not present & _SHORT_PERIOD:
        # "ServiceQuotaExceededException", "Disk quota exceeded": a quota with no period a wait runs out.
        return KINDS["POLICY_REFUSED"], f"{evidence} (no period)"
    if evidence in _REFUSAL_WORDS and _INPUT_FORMS.intersection(_around(words, found, before=2, after=3)):
        # "Unsupported URL scheme", "format not supported", "Additional properties are not allowed":
        # what is refused is a form of the call's own input, which the caller can change.
        return KINDS["INVALID_ARGUMENTS"], f"{evidence} ({', '.join(sorted(_INPUT_FORMS.intersection(words)))})"
    if kind.code == "NOT_FOUND" and _SCHEMA_OBJECTS.intersection(words[max(0, found[3] - 4) : found[3]]):
        # 'relation "users" does not exist', 'column "x" does not exist': the query names them.
        return KINDS["INVALID_QUERY"], f"{words[max(0, found[3] - 4)]} ... {evidence}"
    if kind.code == "NOT_FOUND" and arguments is not None and _names_only_its_own(text, arguments):
        return KINDS["SERVER_MISCONFIGURED"], f"{evidence} (of a path the call did not name)"
    return kind, evidence


def _around(words: Sequence[str], found: Match, *, before: int, after: int) -> Sequence[str]:
    """The words just before and just after a match (not the match's own)."""
    end = found[3] + len(found[1].split())
    return [*words[max(0, found[3] - before) : found[3]], *words[end : end + after]]


# A refusal ("not supported", "not allowed") of one of these is a refusal of what the call sent, not of who sent it
# or of what the service offers: general words for the parts of an input, in no one source's wording.
_REFUSAL_WORDS: Final = frozenset({"unsupported", "not supported", "not allowed"})
_INPUT_FORMS: Final = frozenset(
    {"format", "formats", "url", "uri", "scheme", "schemes", "protocol", "operation", "operator", "option",
     "options", "encoding", "media", "extension", "compression", "algorithm", "value", "values",
     "argument", "arguments", "parameter", "parameters", "property", "properties", "field", "fields", "character",
     "characters", "query", "queries", "statement", "statements", "syntax", "charset"}
)  # fmt: skip

_SCHEMA_OBJECTS: Final = frozenset(
    {"relation", "column", "table", "function", "view", "schema", "index", "sequence", "operator"}
)

# A rate limit or quota that these words qualify is used up for a period no retry waits out.
_NO_WAIT_FIXES_QUOTA: Final = frozenset(
    {
        "daily",
        "day",
        "today",
        "monthly",
        "month",
        "billing",
        "plan",
        "upgrade",
        "credits",
        "credit",
        "subscription",
        "disk",
    }
)

# Words that give a quota a short period, or ask for a wait: without one, a quota is used up for good.
_SHORT_PERIOD: Final = frozenset(
    {"second", "seconds", "minute", "minutes", "per", "rate", "retry", "wait", "again", "later", "sec", "min", "s"}
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
                    return capped_wait(float(number.group(1)) * _UNIT_SECONDS.get(unit, 1.0))
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
