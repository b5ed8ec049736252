"""`--format sarif`: the report as SARIF 2.1.0, for GitHub code scanning and other CI tools.

One `rule` per checker rule (its id, name, descriptions, where docs/rules.md explains it and its
default level) and one `result` per finding. A finding is about a server and its tools, not
about a line of code, so each result carries a logical location (`<server>/<tool>`, the call
that showed it in `properties.call`). GitHub code scanning keeps only results that also have a
physical location: a result with logical locations alone fails processing ("expected a
physical location"), and one with no location at all fails the upload. So the results are
also anchored to a real file the user owns, never an invented one: `--sarif-location FILE`,
else the `--args` file (at the line of the tool's entry), else a file the server command
runs (`python server.py`), inside the working directory. With none of these the log is still
written, without physical locations, and the CLI warns that code scanning will drop it.

`partialFingerprints` carry the identity a baseline uses (rule and tool), so an alert keeps
its identity when a message is reworded, and a SARIF log can serve as a `--baseline`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

from mcp_errors.check._report import BASELINE_FINGERPRINT, CHECK_NOT_DONE, CheckReport, finding_identity
from mcp_errors.check._rules import RULES, Finding, Rule, Severity

__all__ = ["RULES_DOC", "SARIF_SCHEMA_URI", "choose_anchor", "rule_help_uri", "to_sarif"]

SARIF_SCHEMA_URI: Final = "https://json.schemastore.org/sarif-2.1.0.json"
RULES_DOC: Final = "docs/rules.md in mcp-errors"
"""Where each rule is explained, as its help text names it (`docs/rules.md in mcp-errors, #me010`).

SARIF's `helpUri` must be absolute, and the log is uploaded from the checked server's
repository, not from this one, so a repository-relative path would point into the wrong one;
mcp-errors has no published home yet, and a guessed one would be a broken link. So rules carry
no `helpUri` unless one is given: `--rules-uri URI` (`rules_uri=` in Python), the absolute URI
of docs/rules.md where the reader can open it (a fork, a mirror, an internal docs site)."""
_SOURCE_ROOT: Final = "%SRCROOT%"
_LEVELS: Final = {Severity.ERROR: "error", Severity.WARNING: "warning"}


def to_sarif(
    report: CheckReport, *, rules_uri: str | None = None, anchor: Path | None = None, root: Path | None = None
) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log with one run.

    Args:
        report: The (filtered) report; baselined and ignored findings are not in it.
        rules_uri: The absolute URI of docs/rules.md; each rule links to its anchor there.
            Omitted: rules carry no link, and their help text names the section.
        anchor: A file the results are attached to (see `choose_anchor`), relative to `root`.
        root: The directory `anchor` is relative to (the checkout; the working directory by default).

    Returns:
        The log, ready for `json.dumps`.

    Example:
        ```python
        from mcp_errors.check import CheckReport, Finding
        from mcp_errors.check._sarif import to_sarif

        report = CheckReport(server={"name": "orders"}, findings=[Finding("ME002", "refund", "no envelope")],
                             tools_checked=["refund"])
        log = to_sarif(report)
        assert log["runs"][0]["results"][0]["ruleId"] == "ME002"
        ```
    """
    root = (root or Path.cwd()).resolve()
    server = report.server.get("name") or report.server.get("target") or "server"
    anchor_text = _read(root / anchor) if anchor is not None else None
    rule_ids = list(RULES)
    driver: dict[str, Any] = {"name": "mcp-errors check", "version": _version()}
    if rules_uri is not None:
        driver["informationUri"] = rules_uri
    driver["rules"] = [_rule(rule, rules_uri) for rule in RULES.values()]
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [
            {"executionSuccessful": not any(finding.rule in CHECK_NOT_DONE for finding in report.findings)}
        ],
        "results": [
            _result(finding, rule_ids.index(finding.rule), server, anchor, anchor_text) for finding in report.findings
        ],
        "columnKind": "unicodeCodePoints",
        "properties": {"server": dict(report.server), "summary": report.summary()},
    }
    if anchor is not None:
        run["originalUriBaseIds"] = {_SOURCE_ROOT: {"uri": root.as_uri() + "/"}}
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def rule_help_uri(rule_id: str, rules_uri: str) -> str:
    """`<rules_uri>#me010`: the anchor docs/rules.md sets before each rule's heading."""
    return f"{rules_uri}#{rule_id.lower()}"


def choose_anchor(
    *,
    explicit: Path | None = None,
    arguments: Path | None = None,
    command: Sequence[str] = (),
    root: Path | None = None,
) -> Path | None:
    """The file SARIF results are attached to, relative to `root`, or `None` when none is known.

    In order: the file named with `--sarif-location`, the `--args` file, the first argument of
    the server command that is a file (`python server.py`, `node dist/index.js`). Only a file
    inside `root` (the checkout) counts: code scanning shows nothing outside it.
    """
    root = (root or Path.cwd()).resolve()
    candidates = [path for path in (explicit, arguments) if path is not None]
    candidates += [Path(token) for token in command[1:] if not token.startswith("-")]
    for candidate in candidates:
        path = (root / candidate).resolve()
        if path.is_file() and path.is_relative_to(root):
            return path.relative_to(root)
    return None


def _rule(rule: Rule, rules_uri: str | None) -> dict[str, Any]:
    described: dict[str, Any] = {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": f"{rule.summary} Source: {rule.source}."},
    }
    why = "Why it matters and how to pass"
    if rules_uri is None:
        where = f"{RULES_DOC}, #{rule.id.lower()}"
        linked = f"{why}: {where}."
    else:
        where = described["helpUri"] = rule_help_uri(rule.id, rules_uri)
        linked = f"[{why}]({where})"
    described["help"] = {
        "text": f"{rule.summary} Source: {rule.source}. {why}: {where}",
        "markdown": f"{rule.summary}\n\nSource: {rule.source}.\n\n{linked}",
    }
    return described | {
        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
        "properties": {"tags": ["mcp", rule.family.value]},
    }


def _result(finding: Finding, index: int, server: str, anchor: Path | None, anchor_text: str | None) -> dict[str, Any]:
    location: dict[str, Any] = {"logicalLocations": [_logical_location(finding, server)]}
    if anchor is not None:
        physical: dict[str, Any] = {"artifactLocation": {"uri": anchor.as_posix(), "uriBaseId": _SOURCE_ROOT}}
        line = _line_of(finding.tool, anchor_text) if finding.tool is not None and anchor_text else None
        if line is not None:
            physical["region"] = {"startLine": line}
        location["physicalLocation"] = physical
    properties: dict[str, Any] = {"server": server, "family": finding.family.value}
    if finding.tool is not None:
        properties["tool"] = finding.tool
    if finding.tools:
        properties["tools"] = list(finding.tools)
        properties["toolCount"] = len(finding.tools)
    if finding.call is not None:
        properties["call"] = finding.call
    return {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": _LEVELS[finding.severity],
        "message": {"text": finding.message},
        "locations": [location],
        "partialFingerprints": {BASELINE_FINGERPRINT: json.dumps(finding_identity(finding))},
        "properties": properties,
    }


def _logical_location(finding: Finding, server: str) -> dict[str, Any]:
    if finding.tool is None:
        return {"name": server, "fullyQualifiedName": server, "kind": "module"}
    return {"name": finding.tool, "fullyQualifiedName": f"{server}/{finding.tool}", "kind": "function"}


def _line_of(tool: str, text: str) -> int | None:
    """The line of the tool's entry in an `--args` file: `[tools.<tool>]` (TOML) or `"<tool>":` (JSON)."""
    name = re.escape(tool)
    entry = re.compile(rf"^\s*(?:\[tools\.(?:{name}|\"{name}\")[\].]|\"{name}\"\s*:)")
    for number, line in enumerate(text.splitlines(), start=1):
        if entry.match(line):
            return number
    return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8") if path.stat().st_size <= _ANCHOR_BYTES else None
    except (OSError, UnicodeDecodeError):
        return None


_ANCHOR_BYTES: Final = 1_000_000
"""A larger anchor file (a built server) is pointed at as a whole, not searched for lines."""


def _version() -> str:
    try:
        return version("mcp-errors")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"
