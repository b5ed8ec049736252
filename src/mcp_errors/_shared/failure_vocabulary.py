"""The vocabulary of failure words: the kinds of failure, and the words, names and codes that name each.

Data, read by `failure_words.py` (which says how a text is read against it) and rendered as
the table of docs/failure-words.md. A phrase is written as `words_of` cuts a text: lowercase
runs of letters and digits, so that `ReadTimeout` is the one word `readtimeout` and
`EAI_AGAIN` the two words `eai again`.

Built from the sources a failure's words come from: Python's and Node's exception and errno
names, RFC 9110's statuses, PostgreSQL's SQLSTATE classes and messages (and MySQL's,
SQLite's, Redis's), gRPC's status codes, the error names of AWS, Google Cloud, Azure and the
model APIs, and the failure texts of real MCP servers (tests/corpus/, each with its source).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Final

from mcp_errors._shared.contract import ErrorCategory, ExecutionState

__all__ = [
    "CALLER_SCOPE_PHRASES",
    "EXACT_CODES",
    "KINDS",
    "LIMIT_PHRASES",
    "MINED",
    "FailureKind",
    "MinedEntry",
    "MinedWords",
    "PhraseTable",
    "build_phrases",
    "mined_entries",
    "phrases_by_first_word",
    "words_of",
]

_WORD: Final = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?")


def words_of(text: str) -> list[str]:
    """`text` as the vocabulary is written: its lowercase runs of letters and digits (a decimal stays one word)."""
    return _WORD.findall(text.lower())


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
        _kind("REQUEST_FAILED", _B, None, "The service could not do what the call asked, for a reason a resend "
              "does not change."),
        _kind("TOOL_ERROR", _B, None, "The tool reported a failure."),
    )
}  # fmt: skip
"""Every kind the vocabulary can name, by code."""


#
# (code, strength, phrases): a phrase is its words as `_words` cuts them, so "EAI_AGAIN" is
# "eai again" and "ReadTimeout" is "readtimeout". Strength 3: an exact name (exception class,
# errno, API error code); 2: a specific phrase; 1: a lone word that only hints.

VOCABULARY: Final[Sequence[tuple[str, int, str]]] = (
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
     "| failed to parse | unable to parse | parse error | not a number | is not a number | typeerror "
     "| unknown option | unrecognized option | unrecognised option | no such option | invalid option "
     "| illegal option | not a gzipped file | not in gzip format | not a zip file | file format not recognized "
     "| format not recognized | unrecognized format | unknown format | not allowed here "
     "| additional properties are not allowed | uri scheme | url scheme | unknown service | is not of type "
     "| not supported url scheme | option requires an argument | bad magic number | not a public key file "
     "| not a private key file"),
    ("INVALID_ARGUMENTS", 1, "invalid | required | missing"),
    ("INVALID_QUERY", 3, "syntaxerror | zerodivisionerror | nameerror | programmingerror | undefinedtable "
     "| undefinedcolumn | undefinedfunction | pathspec | sql syntax | syntax error | division by zero "
     "| divide by zero | no such table | no such column | no such function | unknown column | unknown table"),
    ("INVALID_QUERY", 2, "unknown identifier | undefined variable | undefined identifier | undefined symbol "
     "| is not defined | unexpected token | unterminated | did not match any file | did not match any files "
     "| not a valid expression | invalid expression | ambiguous column | no such collation | incomplete input "
     "| unrecognized token"),
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
     "| signature expired | missing credentials | no credentials | could not validate credentials | invalid auth"),
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
     "| command not found | executable not found | not installed | database file | cannot open database "
     "| no configuration found | must specify a region"),
    ("UPSTREAM_INTERNAL_ERROR", 3, "internalservererror | internalerror | internalfailure | internal server error "
     "| internal error | servererror | unhandled exception | unexpected error "
     "| an unexpected error occurred | something went wrong | returned non zero exit status "
     "| maximum recursion depth exceeded | memoryerror | is not valid json | unexpected end of json input "
     "| in json at position | jsondecodeerror | expecting value | web server is returning an unknown error "
     "| script killed | operation was aborted | aborterror | the server had an error"),
    ("UPSTREAM_TIMEOUT", 3, "operation was aborted due to timeout"),
    ("UPSTREAM_INTERNAL_ERROR", 2, "out of memory"),
    # "API error" says only that an API answered with a failure; the words after it say which
    # ("GitLab API error: Forbidden"), so on its own it only hints.
    ("UPSTREAM_INTERNAL_ERROR", 1, "api error | apierror"),
    # Taught by blind batch 3 (issue 32: MCP servers and Node client libraries), after its blind score.
    # "<service> API error: <HTTP reason phrase>" is the status, not an unknown API error.
    ("NOT_AUTHENTICATED", 3, "api error unauthorized"),
    ("ACCESS_DENIED", 3, "api error forbidden"),
    ("NOT_FOUND", 3, "api error not found"),
    ("UPSTREAM_RATE_LIMITED", 3, "api error too many requests"),
    ("INVALID_ARGUMENTS", 2, "invalid scheme | unsupported uri scheme | no command provided | bad indentation "
     "| unbalanced parentheses | as the protocol | could not read private key"),
    ("NOT_AUTHENTICATED", 2, "invalid signature | missing required authentication credential"),
    ("ACCESS_DENIED", 3, "not in channel"),
    ("UPSTREAM_CONNECTION_LOST", 2, "connection is closed"),
    ("SERVER_MISCONFIGURED", 2, "region is missing"),
)  # fmt: skip

# Codes that name a kind only as a whole (`judge_code`): gRPC statuses, SQLSTATEs, errno
# names and API error codes, written as `_words` would join them.
EXACT_CODES: Final[Mapping[str, FailureKind]] = {
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


MinedEntry = tuple[tuple[str, ...], FailureKind, str]
"""A mined entry: its words, its kind, and where it came from (library, version, class; or catalogue)."""
PhraseTable = dict[str, list[tuple[tuple[str, ...], FailureKind, int]]]
"""Phrases by their first word, longest first: `(words, kind, strength)`."""


def _mined_text() -> str:
    return resources.files("mcp_errors._shared").joinpath("mined_vocabulary.json").read_text(encoding="utf-8")


def _read_mined() -> tuple[MinedEntry, ...]:
    """`mined_vocabulary.json`: exception class names mined from client libraries, and code catalogues.

    Written by tools/mine_exceptions.py (which says how each was labelled), each with where it
    came from: `(words, kind, provenance)`.
    """
    data = json.loads(_mined_text())
    entries = [(name, code, provenance) for name, code, provenance in data["names"]]
    entries += [(phrase, code, source) for phrase, code, source in data["catalogue"]]
    return tuple((tuple(words_of(phrase)), KINDS[code], provenance) for phrase, code, provenance in entries)


# `[name, code, provenance]` as tools/mine_exceptions.py writes each mined entry: the name and the
# code are read, the provenance passed over.
_MINED_SECTION: Final = re.compile(r'"(names|catalogue)":\s*\[\s*')
_MINED_ENTRY: Final = re.compile(r'\[\s*"([^"\\]*)",\s*"([A-Z_]+)",\s*"[^"\\]*(?:\\.[^"\\]*)*"\s*\]\s*([,\]])\s*')


MinedWords = tuple[list[tuple[str, ...]], list[FailureKind]]
"""The mined entries' words, and their kinds, in two lists of the same order."""


def _read_mined_phrases(words: dict[str, str] | None = None) -> MinedWords:
    """The mined entries' words and kinds, without where each came from: all that judging reads.

    Read entry by entry from the text, not through `json.loads`: the whole parsed file (its
    1,715 lists and their provenance, most of the file) would be dropped at once, and the
    interpreter keeps the memory it took, in every process that judges a failure. A layout
    other than the one tools/mine_exceptions.py writes is read by `json`. `words` gives the one
    string kept for each word (it may hold the typed vocabulary's already).
    """
    text = _mined_text()
    same_words: dict[str, str] = {} if words is None else words
    phrases: list[tuple[str, ...]] = []
    kinds: list[FailureKind] = []
    sections: list[str] = []
    complete = True
    at = 0
    while (section := _MINED_SECTION.search(text, at)) is not None:
        sections.append(section[1])
        at = section.end()
        while (entry := _MINED_ENTRY.match(text, at)) is not None:
            cut = words_of(entry[1])
            phrases.append(tuple(map(same_words.setdefault, cut, cut)))
            kinds.append(KINDS[entry[2]])
            at = entry.end()
            if entry[3] == "]":
                break
        else:
            complete = False  # not the miner's layout
            break
    if not complete or sections != ["names", "catalogue"]:
        mined = _read_mined()
        return [words for words, _, _ in mined], [kind for _, kind, _ in mined]
    return phrases, kinds


# The mined data (200 KB of JSON) is read on first use, not at import: importing the proxy, the
# client or the checker costs no parse; the first failure judged from words pays it once.
_LOADING: Final = threading.Lock()
_MINED: tuple[MinedEntry, ...] | None = None
_PHRASES: PhraseTable | None = None


def mined_entries() -> tuple[MinedEntry, ...]:
    """The mined entries, `(words, kind, provenance)`, read from `mined_vocabulary.json` on first use."""
    global _MINED
    found = _MINED
    if found is None:
        with _LOADING:
            found = _MINED
            if found is None:
                found = _MINED = _read_mined()
    return found


def phrases_by_first_word() -> PhraseTable:
    """The shipped phrase table (`build_phrases()`), built on first use."""
    global _PHRASES
    found = _PHRASES
    if found is None:
        with _LOADING:
            found = _PHRASES
            if found is None:
                # Judging needs no provenance: it is not kept (memory), unless a tool has read it already.
                mined = _MINED
                found = _PHRASES = _phrase_table((), None if mined is None else _words_and_kinds(mined))
    return found


MINED: tuple[MinedEntry, ...]
"""The mined entries, `(words, kind, provenance)`: read as exact names (strength 3) where the
hand-written vocabulary does not already have the same words. Read on first use (`mined_entries()`)."""


def __getattr__(name: str) -> object:
    # `MINED` is read when first asked for (PEP 562), not at import.
    if name == "MINED":
        return mined_entries()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_phrases(
    *,
    leave_out: Container[tuple[str, ...]] = (),
    mined: Iterable[MinedEntry] | None = None,
) -> PhraseTable:
    """The phrases by their first word, longest first: the typed vocabulary, then the mined entries it lacks.

    `leave_out` and `mined` are for measuring (tools/evaluate_failure_words.py judges each
    source by a vocabulary without what came from it); the shipped table is built with neither.
    """
    return _phrase_table(leave_out, _words_and_kinds(mined_entries() if mined is None else mined))


def _words_and_kinds(mined: Iterable[MinedEntry]) -> Iterable[tuple[tuple[str, ...], FailureKind]]:
    return ((words, kind) for words, kind, _provenance in mined)


def _phrase_table(
    leave_out: Container[tuple[str, ...]], mined: Iterable[tuple[tuple[str, ...], FailureKind]] | None
) -> PhraseTable:
    """The phrase table of the typed vocabulary and the mined entries (read without provenance when `None`)."""
    by_first: PhraseTable = {}
    canonical: dict[str, str] = {}  # each word kept once, however many phrases have it
    for code, strength, phrases in VOCABULARY:
        for phrase in phrases.split("|"):
            cut = words_of(phrase)
            words = tuple(map(canonical.setdefault, cut, cut))
            if words and words not in leave_out:
                by_first.setdefault(words[0], []).append((words, KINDS[code], strength))
    typed = {words for entries in by_first.values() for words, _, _ in entries}
    # Two lists zipped, not pairs: a pair made per entry and dropped would stay in the interpreter's free lists.
    for words, kind in zip(*_read_mined_phrases(canonical), strict=True) if mined is None else mined:
        if words and words not in typed:
            typed.add(words)
            by_first.setdefault(words[0], []).append((words, kind, 3))
    # Longer phrases first: the longest phrase at a place is the one read there.
    for entries in by_first.values():
        entries.sort(key=lambda entry: (-len(entry[0]), -entry[2]))
    return by_first


# --- limits that are the caller's own ---------------------------------------------------------
# A rate limit or quota that names whose it is ("per-user rate limit", "your quota", "rate
# limit exceeded for user 123") is the caller's: other callers of the same tool are not
# limited. Both a limit phrase and a caller phrase must be there.

LIMIT_PHRASES: Final[frozenset[tuple[str, ...]]] = frozenset(
    tuple(phrase.split())
    for phrase in (
        "rate limit", "rate limited", "rate limits", "ratelimit", "ratelimited", "quota", "quotas",
        "too many requests", "throttled", "throttling", "429",
    )
)  # fmt: skip
"""Words that say a failure is a limit on calls (a rate limit, a quota)."""

CALLER_SCOPE_PHRASES: Final[frozenset[tuple[str, ...]]] = frozenset(
    tuple(phrase.split())
    for phrase in (
        "per user", "per caller", "per client", "per account", "per key", "per api key", "per token",
        "per tenant", "per principal", "per organization", "your", "you have exceeded", "you exceeded",
        "for user", "for this user", "for account", "for this account", "for api key", "for this api key",
        "for client", "for this client", "for tenant", "for this tenant", "for organization", "in organization",
        "user quota", "user rate", "account quota", "account rate", "tenant quota", "client quota", "key quota",
    )
)  # fmt: skip
"""Words that say a limit is one caller's own (a user, an account, an API key, a tenant)."""
