"""The check's report: filtering (select, ignore, baseline), JSON and a rich rendering."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcp_errors.check._rules import RULES, Finding, Severity

__all__ = ["CheckReport", "load_baseline", "resolve_rules"]


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
    """Tools left unchecked because the server crashed or the total timeout ran out."""
    tools_without_valid_call: list[str] = field(default_factory=list[str])
    """With `call_valid`: tools checked without their valid call, because no arguments that
    satisfy the inputSchema could be built (the valid-call rules were not applied to them)."""
    calls: int = 0
    duration_seconds: float = 0.0
    suppressed: int = 0
    """Findings removed by `filtered` (ignored, not selected, or in the baseline)."""

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

        Args:
            select: Rule ids to keep (all when `None`).
            ignore: Rule ids to drop.
            baseline: `(rule, tool)` pairs of known failures to drop.
        """
        kept = [
            finding
            for finding in self.findings
            if (select is None or finding.rule in select)
            and finding.rule not in ignore
            and (finding.rule, finding.tool) not in baseline
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
            "calls": self.calls,
            "durationSeconds": self.duration_seconds,
        }

    def to_json(self) -> dict[str, Any]:
        """`{"server": ..., "findings": [{"rule", "severity", "tool", "message"}], "summary": ...}`."""
        return {
            "server": dict(self.server),
            "findings": [finding.to_json() for finding in self.findings],
            "summary": self.summary(),
        }

    def render(self, console: Console) -> None:
        """Print the report grouped by tool, server-wide findings first."""
        name = self.server.get("name") or self.server.get("target") or "server"
        version = self.server.get("version")
        console.print(Text.assemble(("mcp-errors check ", "bold"), (f"{name} {version or ''}".strip(), "cyan")))
        by_tool: dict[str | None, list[Finding]] = {}
        for finding in self.findings:
            by_tool.setdefault(finding.tool, []).append(finding)
        order: list[str | None] = [None, *self.tools_checked]
        order += [tool for tool in by_tool if tool not in order]
        for tool in order:
            found = by_tool.get(tool, [])
            if tool is None and not found:
                continue
            title = "server" if tool is None else tool
            if not found:
                console.print(Text.assemble(("  ✓ ", "green"), (title, "bold")))
                continue
            console.print(Text.assemble(("  ✗ ", "red"), (title, "bold")))
            table = Table(show_header=False, box=None, padding=(0, 1, 0, 4))
            for finding in found:
                style = "red" if finding.severity is Severity.ERROR else "yellow"
                table.add_row(
                    Text(finding.rule, style="bold"),
                    Text(finding.severity.value, style=style),
                    Text(RULES[finding.rule].name, style="dim"),
                    Text(finding.message),
                )
            console.print(table)
        for tool, reason in self.tools_skipped.items():
            console.print(Text.assemble(("  - ", "dim"), (tool, "bold"), (f" skipped: {reason}", "dim")))
        for tool in self.tools_without_valid_call:
            console.print(
                Text.assemble(
                    ("  - ", "dim"),
                    (tool, "bold"),
                    (": no valid call made (no arguments found that satisfy its inputSchema)", "dim"),
                )
            )
        for tool in self.tools_unchecked:
            console.print(Text.assemble(("  - ", "dim"), (tool, "bold"), (" not checked: the run stopped", "dim")))
        summary = self.summary()
        verdict = Text("passed", style="bold green") if summary["passed"] else Text("failed", style="bold red")
        console.print(
            Text.assemble(
                verdict,
                f": {summary['errors']} error(s), {summary['warnings']} warning(s), {summary['suppressed']} suppressed;"
                f" {summary['toolsChecked']} tool(s), {summary['calls']} call(s) in {summary['durationSeconds']:.2f}s",
            )
        )


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


def load_baseline(path: Path) -> set[tuple[str, str | None]]:
    """Known failures from a file written with `--format json` (or a bare list of findings).

    A baselined finding is matched by rule and tool, not by message, so it stays matched when
    a message's detail changes.

    Raises:
        ValueError: When the file is not such a JSON document.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    items = data.get("findings") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError("a baseline is a `--format json` report or a list of findings")
    baseline: set[tuple[str, str | None]] = set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("rule"), str):
            raise ValueError("every baseline finding needs a `rule`")
        tool = item.get("tool")
        baseline.add((item["rule"], tool if isinstance(tool, str) else None))
    return baseline
