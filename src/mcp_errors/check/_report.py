"""The check's report: filtering (select, ignore, baseline), JSON and a rich rendering."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcp_errors._shared.sanitize import (
    MAX_MESSAGE_CHARS,
    REDACTED,
    encodable,
    escape_surrogates,
    has_secret,
    is_secret_name,
)
from mcp_errors._shared.text import one_line
from mcp_errors.check._rules import RULES, Family, Finding, Severity

__all__ = [
    "BASELINE_FINGERPRINT",
    "CHECK_NOT_DONE",
    "CallRecord",
    "CheckReport",
    "finding_identity",
    "grouped_for_reading",
    "load_baseline",
    "printable",
    "resolve_rules",
    "shown_arguments",
]

_SHOWN_ITEMS: Final = 10
"""The most items of one list or object argument the report shows."""

CHECK_NOT_DONE: Final = frozenset({"ME015", "ME016", "ME017"})
"""The rules that say the check itself did not happen (the server never answered, crashed or
hung, or the run stopped): no baseline, --select or --ignore can turn that into a pass."""
BASELINE_FINGERPRINT: Final = "mcpErrorsFinding/v1"
"""The `partialFingerprints` key of a SARIF result: its `finding_identity`, as JSON."""

_FAMILY_TITLES: Final = {
    Family.ANY_SERVER: "What any agent needs from any MCP server (MCP spec, SEP-1303, usability)",
    Family.CONTRACT: "What the mcp-errors contract adds (envelope and first text line)",
}


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What became of one tool's valid call (or empty-result call)."""

    outcome: str
    """`succeeded`, `failure marked as success` (isError false, but the answer reports a failure),
    `error result`, `JSON-RPC error`, `timed out`, `asked for client input` or `not made`."""
    arguments: str | None = None
    """Where the arguments came from: `--args` or `generated from the inputSchema`."""
    note: str | None = None
    """Why the call was not made, or what else to know about it."""
    sent: Mapping[str, Any] | None = None
    """The arguments' values as `shown_arguments` shows them: texts clipped, secrets redacted."""

    @property
    def made(self) -> bool:
        return self.outcome != "not made"

    @property
    def succeeded(self) -> bool:
        return self.outcome == "succeeded"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"outcome": self.outcome}
        if self.arguments is not None:
            out["arguments"] = self.arguments
        if self.sent is not None:
            out["sent"] = dict(self.sent)
        if self.note is not None:
            out["note"] = self.note
        return out

    def describe(self) -> str:
        text = self.outcome
        if self.arguments is not None:
            sent = "" if self.sent is None else ": " + json.dumps(self.sent, ensure_ascii=False)
            text += f" (arguments {self.arguments}{sent})"
        return text if self.note is None else f"{text}: {self.note}"


def shown_arguments(arguments: Mapping[str, Any], *, limit: int | None = MAX_MESSAGE_CHARS) -> dict[str, Any]:
    """Arguments as a report may show them: a value under a secret-looking name or of a
    secret's shape replaced by `[REDACTED]`, each text folded onto one line and clipped to
    `limit` characters, lists and objects cut to their first items (`limit=None`: whole, for
    a list of what a run may have changed, which must name every path it wrote)."""
    items = list(arguments.items())
    return {
        _clipped(str(name), limit): _shown(value, str(name), limit)
        for name, value in (items if limit is None else items[:_SHOWN_ITEMS])
    }


def _shown(value: Any, name: str, limit: int | None) -> Any:
    if is_secret_name(name) and value not in (None, ""):
        return REDACTED
    if isinstance(value, str):
        return REDACTED if has_secret(value) else _clipped(value, limit)
    if isinstance(value, Mapping):
        return shown_arguments(value, limit=limit)
    if isinstance(value, list | tuple):
        if limit is None or len(value) <= _SHOWN_ITEMS:
            return [_shown(item, name, limit) for item in value]
        return [_shown(item, name, limit) for item in value[:_SHOWN_ITEMS]] + ["…"]
    return value


def _clipped(text: str, limit: int | None) -> str:
    printable = "".join(char if char.isprintable() else " " for char in encodable(text))
    return one_line(printable, limit)


MAX_NAME_CHARS: Final = 200
"""The most of a tool name a report shows: a server can name a tool with 100 KB."""


def capped_name(name: str) -> str:
    """A tool name as the reports show it: whole up to 200 characters, else its first 200, `…`
    and 12 hex digits of its SHA-256, so that names alike in their first 200 stay apart.

    The same name always gives the same text, so a baseline written from a report matches.
    """
    if len(name) <= MAX_NAME_CHARS:
        return name
    digest = hashlib.sha256(escape_surrogates(name).encode("utf-8", "replace")).hexdigest()[:12]
    return f"{name[:MAX_NAME_CHARS]}…{digest}"


def capped_names(report: CheckReport) -> CheckReport:
    """`report` with every tool name in it capped (`capped_name`), for every format it is written in."""
    cap = capped_name
    return replace(
        report,
        findings=[
            replace(
                finding,
                tool=None if finding.tool is None else cap(finding.tool),
                tools=tuple(cap(tool) for tool in finding.tools),
            )
            for finding in report.findings
        ],
        tools_checked=[cap(tool) for tool in report.tools_checked],
        tools_skipped={cap(tool): reason for tool, reason in report.tools_skipped.items()},
        tools_unchecked=[cap(tool) for tool in report.tools_unchecked],
        tools_without_valid_call=[cap(tool) for tool in report.tools_without_valid_call],
        valid_calls={cap(tool): record for tool, record in report.valid_calls.items()},
        empty_calls={cap(tool): record for tool, record in report.empty_calls.items()},
        changes=[{**change, "tool": cap(str(change.get("tool", "")))} for change in report.changes],
        unused_arguments=[cap(tool) for tool in report.unused_arguments],
    )


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What `check_server` found."""

    server: dict[str, str | None]
    """`target` (command line or URL) and, when the server said, its `name` and `version`."""
    findings: list[Finding]
    tools_checked: list[str]
    tools_skipped: dict[str, str] = field(default_factory=dict[str, str])
    """Tools not called, with the reason (e.g. annotated destructive)."""
    tools_unchecked: list[str] = field(default_factory=list[str])
    """Tools left unchecked because the server crashed or hung, or the total timeout ran out."""
    tools_without_valid_call: list[str] = field(default_factory=list[str])
    """Tools checked whose planned valid call got no answer (no arguments satisfy the
    inputSchema, the tool declares it writes, the call or an earlier one timed out); the
    valid-call rules did not judge them."""
    calls: int = 0
    """Every `tools/call` sent, answered or not."""
    duration_seconds: float = 0.0
    suppressed: int = 0
    """Findings removed by `filtered` (ignored, not selected, or in the baseline)."""
    valid_calls: dict[str, CallRecord] = field(default_factory=dict[str, CallRecord])
    """Per tool, whether a valid call was made, with which arguments, and whether it succeeded."""
    empty_calls: dict[str, CallRecord] = field(default_factory=dict[str, CallRecord])
    """Per tool with an `empty` call in `--args`, what became of it."""
    changes: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """Calls that may have changed the server's data: `{"tool", "call", "arguments"}` for every
    answer that was not an error from a tool that does not declare `readOnlyHint: true`."""
    roots: list[str] = field(default_factory=list[str])
    """Paths taken as the server's own domain (from `--args` or a tool that lists them)."""
    unused_arguments: list[str] = field(default_factory=list[str])
    """Tools named in `--args` that the server does not list."""
    contract: bool = True
    """Whether the contract's rules were applied (`--contract on`)."""
    listing_pages: int = 0
    """How many pages of `tools/list` were read."""
    listing_complete: bool = True
    """`False` when the server still offered a next page after the last one read (then an ME017
    finding says so): tools on later pages were not checked."""

    @property
    def failed(self) -> bool:
        """Whether any error-severity rule failed: the CLI then exits non-zero."""
        return any(finding.severity is Severity.ERROR for finding in self.findings)

    def filtered(
        self,
        *,
        select: Collection[str] | None = None,
        ignore: Collection[str] = (),
        baseline: Collection[tuple[str, str | None]] = (),
    ) -> CheckReport:
        """The report without ignored, unselected and baselined findings.

        The findings that say the check did not happen (ME015, ME016, ME017) are always kept:
        a run that could not check the server never passes.

        Args:
            select: Rule ids to keep (all when `None`).
            ignore: Rule ids to drop.
            baseline: `(rule, tool)` pairs of known failures to drop.
        """
        kept = [
            finding
            for finding in self.findings
            if finding.rule in CHECK_NOT_DONE
            or (
                (select is None or finding.rule in select)
                and finding.rule not in ignore
                and not _baselined(finding, baseline)
            )
        ]
        return replace(self, findings=kept, suppressed=self.suppressed + len(self.findings) - len(kept))

    def summary(self) -> dict[str, Any]:
        errors = sum(1 for f in self.findings if f.severity is Severity.ERROR)
        return {
            "passed": not self.failed,
            "errors": errors,
            "warnings": len(self.findings) - errors,
            "suppressed": self.suppressed,
            "toolsChecked": len(self.tools_checked),
            "toolsSkipped": dict(self.tools_skipped),
            "toolsUnchecked": list(self.tools_unchecked),
            "toolsWithoutValidCall": list(self.tools_without_valid_call),
            "validCalls": {tool: record.to_json() for tool, record in self.valid_calls.items()},
            "emptyCalls": {tool: record.to_json() for tool, record in self.empty_calls.items()},
            "possibleChanges": [dict(change) for change in self.changes],
            "roots": list(self.roots),
            "unusedArguments": list(self.unused_arguments),
            "contract": self.contract,
            "listing": {"pages": self.listing_pages, "complete": self.listing_complete},
            "calls": self.calls,
            "durationSeconds": self.duration_seconds,
        }

    def to_json(self) -> dict[str, Any]:
        """`{"server": ..., "findings": [{"rule", "severity", "family", "tool", "tools", "call", "message"}],
        "summary": ...}`."""
        return {
            "server": dict(self.server),
            "findings": [finding.to_json() for finding in self.findings],
            "summary": self.summary(),
        }

    def render(self, console: Console) -> None:
        """Print the report: one section per rule family, grouped by tool, then per-tool calls.

        One cause on several tools (ME002 on a server without the contract) is printed once,
        naming its tools. On a terminal each tool's findings are a table; elsewhere (a CI log, a
        file) each finding is one unwrapped line, so no column is squeezed to the default width.
        """
        name = self.server.get("name") or self.server.get("target") or "server"
        version = self.server.get("version")
        title = printable(f"{name} {version or ''}".strip())
        _say(console, Text.assemble(("mcp-errors check ", "bold"), (title, "cyan")))
        families = [Family.ANY_SERVER, Family.CONTRACT] if self.contract else [Family.ANY_SERVER]
        for family in families:
            _say(console, Text(_FAMILY_TITLES[family], style="bold underline"))
            self._render_family(console, [f for f in self.findings if f.family is family])
        self._render_calls(console)
        summary = self.summary()
        verdict = Text("passed", style="bold green") if summary["passed"] else Text("failed", style="bold red")
        _say(
            console,
            Text.assemble(
                verdict,
                f": {summary['errors']} error(s), {summary['warnings']} warning(s), {summary['suppressed']} suppressed;"
                f" {summary['toolsChecked']} tool(s), {summary['calls']} call(s) in {summary['durationSeconds']:.2f}s",
            ),
        )

    def _render_family(self, console: Console, findings: list[Finding]) -> None:
        findings = grouped_for_reading(findings)
        by_tool: dict[str | None, list[Finding]] = {}
        covered: dict[str, list[str]] = {}
        for finding in findings:
            by_tool.setdefault(finding.tool, []).append(finding)
            if finding.tool is None:
                for covered_tool in finding.tools:
                    covered.setdefault(covered_tool, []).append(finding.rule)
        order: list[str | None] = [None, *self.tools_checked]
        order += [tool for tool in by_tool if tool not in order]
        for tool in order:
            found = by_tool.get(tool, [])
            if tool is None and not found:
                continue
            title = "server" if tool is None else printable(tool)
            shared = covered.get(tool, []) if tool is not None else []
            if not found:
                # A tool whose only findings are named under the server is not listed again.
                if not shared:
                    _say(console, Text.assemble(("  ✓ ", "green"), (title, "bold")))
                continue
            also = f" (and {', '.join(shared)} above)" if shared else ""
            _say(console, Text.assemble(("  ✗ ", "red"), (title, "bold"), (also, "dim")))
            if not console.is_terminal:
                for finding in found:
                    _say(
                        console,
                        Text(f"    {finding.rule} {finding.severity.value} {RULES[finding.rule].name}: ")
                        + Text(printable(finding.message)),
                    )
                continue
            table = Table(show_header=False, box=None, padding=(0, 1, 0, 4))
            for finding in found:
                style = "red" if finding.severity is Severity.ERROR else "yellow"
                table.add_row(
                    Text(finding.rule, style="bold"),
                    Text(finding.severity.value, style=style),
                    Text(RULES[finding.rule].name, style="dim"),
                    Text(printable(finding.message)),
                )
            console.print(table)

    def _render_calls(self, console: Console) -> None:
        lines: list[Text] = []
        for tool, reason in self.tools_skipped.items():
            lines.append(_line(tool, f" skipped: {reason}", "dim"))
        for tool, record in self.valid_calls.items():
            lines.append(_line(tool, " valid call: ", "green" if record.succeeded else "yellow", record.describe()))
        for tool, record in self.empty_calls.items():
            style = "green" if record.succeeded else "yellow"
            lines.append(_line(tool, " empty-result call: ", style, record.describe()))
        for tool in self.tools_unchecked:
            lines.append(_line(tool, " not checked: the run stopped", "dim"))
        if not self.listing_complete:
            lines.append(Text(f"  the tool listing was cut after {self.listing_pages} pages", style="yellow"))
        if self.roots:
            roots = printable(", ".join(self.roots))
            lines.append(Text(f"  roots taken as the server's own domain: {roots}", style="dim"))
        if self.unused_arguments:
            unused = printable(", ".join(self.unused_arguments))
            lines.append(Text(f"  --args names tools the server does not list: {unused}", style="yellow"))
        if self.changes:
            lines.append(Text("  calls that may have changed data (their tools do not declare readOnlyHint: true):"))
            for change in self.changes:
                arguments = json.dumps(change["arguments"], ensure_ascii=False)
                lines.append(Text(printable(f"    {change['tool']} ({change['call']}) {arguments}"), style="dim"))
        if lines:
            _say(console, Text("Calls", style="bold underline"))
            for line in lines:
                _say(console, line)


def _say(console: Console, text: Text) -> None:
    """One line of the report: wrapped to a terminal's width, unwrapped anywhere else (a CI log)."""
    console.print(text, soft_wrap=not console.is_terminal)


_GROUPED_RULES: Final = frozenset({"ME002"})
"""Rules whose findings of one cause on several tools are read once: the missing envelope is
the server's (its framework's) choice, not each tool's."""
_MORE_CALLS: Final = re.compile(r" \(and \d+ more\)$")


def grouped_for_reading(findings: Iterable[Finding]) -> list[Finding]:
    """`findings` with each cause of a `_GROUPED_RULES` rule that two or more tools share as one
    finding for the server naming those tools (`tool` None, `tools` set).

    Only the human report groups them; JSON and SARIF keep one finding per tool, so baselines and
    code-scanning locations stay per tool.
    """
    findings = list(findings)
    by_cause: dict[tuple[str, str], list[Finding]] = {}
    for finding in findings:
        if finding.rule in _GROUPED_RULES and finding.tool is not None:
            by_cause.setdefault((finding.rule, _cause(finding)), []).append(finding)
    groups = {cause: found for cause, found in by_cause.items() if len(found) >= _GROUPED_TOOLS}
    grouped = {id(finding) for found in groups.values() for finding in found}
    merged = [
        Finding(
            rule,
            None,
            f"{len(found)} tools: {cause}. Tools: {', '.join(sorted(f.tool or '' for f in found))}",
            tools=tuple(sorted(f.tool or "" for f in found)),
            call=found[0].call,
        )
        for (rule, cause), found in groups.items()
    ]
    return merged + [finding for finding in findings if id(finding) not in grouped]


_GROUPED_TOOLS: Final = 2


def _cause(finding: Finding) -> str:
    """A finding's message without the call that showed it and the count of calls that did too."""
    message = finding.message
    if finding.call is not None:
        message = message.removeprefix(f"{finding.call}: ")
    return _MORE_CALLS.sub("", message)


def _line(tool: str, label: str, style: str, detail: str = "") -> Text:
    """`  - <tool><label><detail>`: one line of the calls section, server text escaped."""
    return Text.assemble(
        ("  - ", "dim"),
        (printable(tool), "bold"),
        (printable(label), "dim" if detail else style),
        (printable(detail), style),
    )


# What a terminal would act on instead of showing: C0 and C1 controls (ESC starts ANSI and OSC
# sequences: clear screen, window title, hyperlinks), DEL, and the invisible characters that
# hide or reorder text a human reads (zero-width, bidi overrides).
_UNPRINTABLE: Final = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def printable(text: str) -> str:
    """`text` as a terminal shows it and acts on nothing: each control or invisible character
    written as its escape (`\\x1b`, `\\u202e`), lone surrogates replaced.

    Rich markup needs no escaping here: the report prints `Text` objects, never markup strings.
    """
    return _UNPRINTABLE.sub(_escaped, encodable(text))


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _baselined(finding: Finding, baseline: Collection[tuple[str, str | None]]) -> bool:
    """A finding is known when its (rule, tool) is in the baseline; a finding for one cause shared
    by several tools also when every one of those tools is (a baseline written before grouping)."""
    if (finding.rule, finding.tool) in baseline:
        return True
    return bool(finding.tools) and all((finding.rule, tool) in baseline for tool in finding.tools)


def resolve_rules(values: Iterable[str]) -> set[str]:
    """Rule ids from ids or names, comma-separated or repeated (`ME001,generic-description`).

    Raises:
        ValueError: For a value that names no rule.
    """
    by_name = {rule.name: rule.id for rule in RULES.values()}
    out: set[str] = set()
    for value in values:
        for part in value.split(","):
            token = part.strip()
            if not token:
                continue
            rule_id = token.upper() if token.upper() in RULES else by_name.get(token.lower())
            if rule_id is None:
                raise ValueError(f"unknown rule {token!r}; see docs/rules.md")
            out.add(rule_id)
    return out


def finding_identity(finding: Finding) -> list[Any]:
    """What a baseline knows a finding by: `[rule, tool]`, and for one cause shared by several
    tools also their names (`[rule, null, [tools]]`); never the message, which may be reworded."""
    identity: list[Any] = [finding.rule, finding.tool]
    return [*identity, list(finding.tools)] if finding.tools else identity


def load_baseline(path: Path) -> set[tuple[str, str | None]]:
    """Known failures from a report written with `--format json` or `--format sarif` (or a bare
    list of findings).

    A baselined finding is matched by rule and tool, not by message, so it stays matched when
    a message's detail changes.

    Raises:
        ValueError: When the file is not such a JSON document.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict) and "runs" in data:
        return _sarif_baseline(data["runs"])
    items = data.get("findings") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("a baseline is a `--format json` or `--format sarif` report, or a list of findings")
    baseline: set[tuple[str, str | None]] = set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("rule"), str):
            raise ValueError("every baseline finding needs a `rule`")
        tool = item.get("tool")
        baseline.add((item["rule"], tool if isinstance(tool, str) else None))
    return baseline


def _sarif_baseline(runs: object) -> set[tuple[str, str | None]]:
    if not isinstance(runs, list):
        raise ValueError("a SARIF baseline needs a list of `runs`")
    baseline: set[tuple[str, str | None]] = set()
    for run in runs:
        results = run.get("results", []) if isinstance(run, dict) else None
        if not isinstance(results, list):
            raise ValueError("every SARIF run needs a list of `results`")
        for result in results:
            fingerprints = result.get("partialFingerprints") if isinstance(result, dict) else None
            identity = fingerprints.get(BASELINE_FINGERPRINT) if isinstance(fingerprints, dict) else None
            try:
                rule, tool = json.loads(identity)[:2] if isinstance(identity, str) else (None, None)
            except (ValueError, TypeError):
                rule, tool = None, None
            if not isinstance(rule, str):
                raise ValueError(f"a SARIF baseline result needs the {BASELINE_FINGERPRINT!r} fingerprint")
            baseline.add((rule, tool if isinstance(tool, str) else None))
    return baseline
