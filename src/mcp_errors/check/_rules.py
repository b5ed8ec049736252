"""The checker's rules: stable ids, severities, and why each one matters.

Ids never change meaning once published, so baselines and `--select`/`--ignore` lists stay
valid across versions. `docs/rules.md` documents every rule; a test keeps the two in step.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["RULES", "Family", "Finding", "Rule", "RuleId", "Severity"]


class Severity(enum.StrEnum):
    """How much a failed rule matters: only `error` makes `mcp-errors check` exit non-zero."""

    ERROR = "error"
    WARNING = "warning"


class Family(enum.StrEnum):
    """Whom a rule speaks for; `--contract off` keeps only `ANY_SERVER`."""

    ANY_SERVER = "any-server"
    """What any agent needs from any MCP server: the spec, SEP-1303 and plain usability."""
    CONTRACT = "contract"
    """What this project's wire contract adds: the error envelope and its first text line."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One conformance rule."""

    id: str
    """Stable id, `ME` and three digits."""
    name: str
    """Short kebab-case name."""
    severity: Severity
    summary: str
    """What a server must do to pass."""
    source: str
    """Where the requirement comes from: the MCP spec, SEP-1303, usability or this project's contract."""
    family: Family = Family.ANY_SERVER


class RuleId(enum.StrEnum):
    """Each rule's id under its name, for code that raises a finding (`RuleId.SCHEMA_UNUSABLE` is `"ME020"`)."""

    VALIDATION_AS_PROTOCOL_ERROR = "ME001"
    MISSING_ENVELOPE = "ME002"
    INVALID_ENVELOPE_VALUES = "ME003"
    INVALID_ARGUMENTS_NOT_VALIDATION = "ME004"
    INVALID_ARGUMENTS_ACCEPTED = "ME005"
    GENERIC_DESCRIPTION = "ME006"
    DESCRIPTION_REPEATS_MESSAGE = "ME007"
    VALIDATION_DESCRIPTION_UNNAMED_FIELD = "ME008"
    TEXT_NOT_SELF_SUFFICIENT = "ME009"
    LEAKS_INTERNALS = "ME010"
    OUTPUT_SCHEMA_REJECTS_ERROR = "ME011"
    EMPTY_RESULT_AS_ERROR = "ME012"
    SILENT_EMPTY_RESULT = "ME013"
    CALL_TIMEOUT = "ME014"
    SERVER_UNAVAILABLE = "ME015"
    SERVER_CRASHED = "ME016"
    CHECK_INCOMPLETE = "ME017"
    FAILURE_AS_PROTOCOL_ERROR = "ME018"
    SUCCESS_BREAKS_OUTPUT_SCHEMA = "ME019"
    SCHEMA_UNUSABLE = "ME020"
    STDOUT_NOT_PROTOCOL = "ME021"
    FAILURE_AS_SUCCESS = "ME022"
    GENERIC_ERROR_TEXT = "ME023"
    RAW_ERROR_TEXT = "ME024"
    NO_RECOVERY_HINT = "ME025"


_SPEC_TOOLS_ERRORS: Final = "MCP spec, Server features > Tools > Error handling"
_CONTRACT: Final = "mcp-errors wire contract"
_USABILITY: Final = "usability: what a model can act on"
_OURS: Final = Family.CONTRACT

_ALL: Final = (
    Rule(
        RuleId.VALIDATION_AS_PROTOCOL_ERROR,
        "validation-as-protocol-error",
        Severity.ERROR,
        "Invalid arguments are answered with an isError tool result, not a JSON-RPC error.",
        f"SEP-1303; {_SPEC_TOOLS_ERRORS}",
    ),
    Rule(
        RuleId.MISSING_ENVELOPE,
        "missing-envelope",
        Severity.ERROR,
        "An error result carries a structuredContent object with errorCategory, isRetryable and description.",
        _CONTRACT,
        _OURS,
    ),
    Rule(
        RuleId.INVALID_ENVELOPE_VALUES,
        "invalid-envelope-values",
        Severity.ERROR,
        "The envelope's values are valid: a known category, isRetryable true only with transient, "
        "a non-empty description, UPPER_SNAKE codes, retryAfterSeconds only when transient.",
        f"{_CONTRACT} (error-envelope.schema.json)",
        _OURS,
    ),
    Rule(
        RuleId.INVALID_ARGUMENTS_NOT_VALIDATION,
        "invalid-arguments-not-validation",
        Severity.ERROR,
        "Arguments that break the tool's inputSchema are reported with errorCategory validation.",
        _CONTRACT,
        _OURS,
    ),
    Rule(
        RuleId.INVALID_ARGUMENTS_ACCEPTED,
        "invalid-arguments-accepted",
        Severity.WARNING,
        "Arguments that break the tool's inputSchema are rejected, not run.",
        "MCP spec, Server features > Tools > Security considerations (servers MUST validate all tool inputs)",
    ),
    Rule(
        RuleId.GENERIC_DESCRIPTION,
        "generic-description",
        Severity.ERROR,
        'The description is actionable, not generic ("Operation failed", "Internal error").',
        _CONTRACT,
        _OURS,
    ),
    Rule(
        RuleId.DESCRIPTION_REPEATS_MESSAGE,
        "description-repeats-message",
        Severity.WARNING,
        "The description adds what to do next instead of repeating the message.",
        _CONTRACT,
        _OURS,
    ),
    Rule(
        RuleId.VALIDATION_DESCRIPTION_UNNAMED_FIELD,
        "validation-description-unnamed-field",
        Severity.WARNING,
        "A validation error's description names the argument that is wrong.",
        _CONTRACT,
        _OURS,
    ),
    Rule(
        RuleId.TEXT_NOT_SELF_SUFFICIENT,
        "text-not-self-sufficient",
        Severity.ERROR,
        "The first content block is text naming the category, the retry verdict and the description, "
        "for hosts that show the model only that text.",
        f"{_CONTRACT}; {_SPEC_TOOLS_ERRORS}",
        _OURS,
    ),
    Rule(
        RuleId.LEAKS_INTERNALS,
        "leaks-internals",
        Severity.ERROR,
        "No stack trace, secret, or file path the caller could not know (source files, installed packages, "
        "home folders) appears in any text of an error result; paths in the server's own domain are information.",
        "MCP spec, Server features > Tools > Security considerations",
    ),
    Rule(
        RuleId.OUTPUT_SCHEMA_REJECTS_ERROR,
        "output-schema-rejects-error",
        Severity.ERROR,
        "The tool's outputSchema admits the structuredContent of its error results.",
        "MCP spec, Tools > Output schema (strict clients validate every structuredContent)",
    ),
    Rule(
        RuleId.EMPTY_RESULT_AS_ERROR,
        "empty-result-as-error",
        Severity.ERROR,
        "A valid query that matched nothing is a success (isError false), not an error.",
        f"{_USABILITY} (agents retry or give up on errors)",
    ),
    Rule(
        RuleId.SILENT_EMPTY_RESULT,
        "silent-empty-result",
        Severity.WARNING,
        "An empty success says in text that the query ran and matched nothing.",
        f"{_USABILITY} (an empty answer looks like a swallowed failure)",
    ),
    Rule(
        RuleId.CALL_TIMEOUT,
        "call-timeout",
        Severity.ERROR,
        "Every tools/call with small arguments is answered within the per-call timeout.",
        "MCP spec, Basic protocol > Lifecycle > Timeouts",
    ),
    Rule(
        RuleId.SERVER_UNAVAILABLE,
        "server-unavailable",
        Severity.ERROR,
        "The server starts, completes the handshake and lists its tools within the timeout.",
        "MCP spec, Basic protocol > Lifecycle",
    ),
    Rule(
        RuleId.SERVER_CRASHED,
        "server-crashed",
        Severity.ERROR,
        "The server stays up while its tools are called, including with bad arguments.",
        "MCP spec, Basic protocol > Lifecycle",
    ),
    Rule(
        RuleId.CHECK_INCOMPLETE,
        "check-incomplete",
        Severity.ERROR,
        "The whole check finishes: within the total timeout, and without an error stopping it part-way.",
        "mcp-errors check",
    ),
    Rule(
        RuleId.FAILURE_AS_PROTOCOL_ERROR,
        "failure-as-protocol-error",
        Severity.WARNING,
        "A tool failure on valid arguments is an isError result the model can see, not a JSON-RPC error.",
        f"{_SPEC_TOOLS_ERRORS}; SEP-2145 (proposed)",
    ),
    Rule(
        RuleId.SUCCESS_BREAKS_OUTPUT_SCHEMA,
        "success-breaks-output-schema",
        Severity.ERROR,
        "A successful result's structuredContent matches the tool's outputSchema.",
        "MCP spec, Tools > Output schema (servers MUST provide conforming structured results)",
    ),
    Rule(
        RuleId.SCHEMA_UNUSABLE,
        "schema-unusable",
        Severity.ERROR,
        "The tool's inputSchema and outputSchema are valid JSON Schema whose patterns compile and match in "
        "bounded time, so the checker (and clients) can build and validate arguments and results.",
        "MCP spec, Server features > Tools (inputSchema and outputSchema are JSON Schema objects)",
    ),
    Rule(
        RuleId.STDOUT_NOT_PROTOCOL,
        "stdout-not-protocol",
        Severity.ERROR,
        "A stdio server writes nothing but MCP messages to its stdout; logs and prints go to stderr.",
        "MCP spec, Basic protocol > Transports > stdio (the server MUST NOT write anything else to stdout)",
    ),
    Rule(
        RuleId.FAILURE_AS_SUCCESS,
        "failure-as-success",
        Severity.ERROR,
        "A failure is marked isError: true; a result marked a success does not read as an error "
        '("Error: ...", "Database error: ...", "Cmd(\'git\') failed").',
        f"{_SPEC_TOOLS_ERRORS} (tool execution errors are reported with isError: true); {_USABILITY}",
    ),
    Rule(
        RuleId.GENERIC_ERROR_TEXT,
        "generic-error-text",
        Severity.ERROR,
        'The text of an error says what went wrong: not a stock phrase ("fetch failed", "Internal error") '
        'nor only a wrapper ("Error executing tool X").',
        f"SEP-1303 and {_SPEC_TOOLS_ERRORS} (errors are results so the model can correct itself); {_USABILITY}",
    ),
    Rule(
        RuleId.RAW_ERROR_TEXT,
        "raw-error-text",
        Severity.WARNING,
        "The text of an error is written for the model, not a library's raw dump (a pydantic report with "
        "input_value and a documentation URL, a subprocess command line).",
        f"{_USABILITY}; MCP spec, Server features > Tools > Security considerations",
    ),
    Rule(
        RuleId.NO_RECOVERY_HINT,
        "no-recovery-hint",
        Severity.WARNING,
        "An error tells the agent what kind of failure it is or whether resending can work: in structured "
        "content, in toolFailure metadata, or at least in its text.",
        f"{_USABILITY}; SEP-3313 (draft: toolFailure class and retryable)",
    ),
)

RULES: Final[dict[str, Rule]] = {rule.id: rule for rule in _ALL}
"""Every rule by id, in id order."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One failed rule, for one tool, for the whole server (`tool` is `None`), or for one cause
    that several tools share (`tool` is `None`, `tools` names them)."""

    rule: str
    tool: str | None
    message: str
    tools: tuple[str, ...] = ()
    """The tools a finding about one shared cause covers (a framework's raw validation text on
    every tool); empty for a finding about one tool or about the server itself."""
    call: str | None = None
    """The call that showed it first (`probe 'required url missing'`, `valid call`), when one did."""

    @property
    def severity(self) -> Severity:
        return RULES[self.rule].severity

    @property
    def family(self) -> Family:
        return RULES[self.rule].family

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "family": self.family.value,
            "tool": self.tool,
            "tools": list(self.tools),
            "call": self.call,
            "message": self.message,
        }
