"""Report filtering, baselines, and a rendering that shows what servers send as text."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import StdioServerParameters
from rich.console import Console

from mcp_errors.check import CheckOptions, CheckReport, Finding, check_server
from mcp_errors.check._report import load_baseline, printable, resolve_rules
from servers import CHECK_SERVERS_DIR
from servers.check import terminal_escapes_server


def rules_by_tool(report: CheckReport) -> dict[str | None, set[str]]:
    return {finding.tool: {f.rule for f in report.findings if f.tool == finding.tool} for finding in report.findings}


def report() -> CheckReport:
    return CheckReport(
        server={"target": "x"},
        findings=[
            Finding("ME002", "lookup", "no envelope"),
            Finding("ME007", "lookup", "repeats"),
            Finding("ME021", None, "noise on stdout"),
        ],
        tools_checked=["lookup"],
    )


def test_only_error_severity_findings_fail_the_report() -> None:
    assert report().failed
    assert not report().filtered(select={"ME007"}).failed


def test_filtering_counts_what_it_suppresses() -> None:
    filtered = report().filtered(ignore={"ME002"}, baseline={("ME021", None)})

    assert [f.rule for f in filtered.findings] == ["ME007"]
    assert filtered.summary()["suppressed"] == 2


@pytest.mark.parametrize("rule", ["ME015", "ME016", "ME017"])
def test_a_run_that_did_not_check_the_server_never_passes_whatever_is_filtered(rule: str) -> None:
    down = CheckReport(
        server={"target": "x"}, findings=[Finding(rule, None, "the check did not happen")], tools_checked=[]
    )

    for filtered in (
        down.filtered(baseline={(rule, None)}),
        down.filtered(select={"ME002"}),
        down.filtered(ignore={rule}),
    ):
        assert [finding.rule for finding in filtered.findings] == [rule]
        assert filtered.failed


def test_rules_are_named_by_id_or_name_in_any_case() -> None:
    assert resolve_rules(["me001,generic-description", " ME010 "]) == {"ME001", "ME006", "ME010"}
    with pytest.raises(ValueError, match="unknown rule"):
        resolve_rules(["no-such-rule"])


def test_a_baseline_is_a_json_report_or_a_list_of_findings(tmp_path: Path) -> None:
    as_report = tmp_path / "report.json"
    as_report.write_text(json.dumps(report().to_json()), encoding="utf-8")
    as_list = tmp_path / "list.json"
    as_list.write_text(json.dumps([{"rule": "ME002", "tool": "lookup"}]), encoding="utf-8")

    assert load_baseline(as_report) == {("ME002", "lookup"), ("ME007", "lookup"), ("ME021", None)}
    assert load_baseline(as_list) == {("ME002", "lookup")}


def test_a_baseline_without_findings_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"rules": []}), encoding="utf-8")

    with pytest.raises(ValueError, match="baseline"):
        load_baseline(path)


def test_one_cause_shared_by_several_tools_is_baselined_by_its_tools_or_as_the_servers() -> None:
    shared = CheckReport(
        server={"target": "x"},
        findings=[Finding("ME024", None, "the same raw report on 2 tools", tools=("a", "b"))],
        tools_checked=["a", "b"],
    )

    assert shared.filtered(baseline={("ME024", "a"), ("ME024", "b")}).findings == []  # a baseline from before
    assert shared.filtered(baseline={("ME024", None)}).findings == []
    assert shared.filtered(baseline={("ME024", "a")}).findings == shared.findings  # "b" is news


@pytest.mark.slow  # a server in a subprocess
@pytest.mark.anyio
async def test_what_a_server_sends_is_printed_as_text_and_never_acted_on_by_the_terminal() -> None:
    """Tool names, server names and quoted stderr lines with ANSI/OSC escapes, a bidi override and
    rich markup: shown escaped, never clearing the screen, retitling the window or styling text."""
    params = StdioServerParameters(command=sys.executable, args=[str(CHECK_SERVERS_DIR / "terminal_escapes_server.py")])
    with anyio.fail_after(90):
        checked = await check_server(params, CheckOptions(contract=False, connect_timeout=60))
    assert rules_by_tool(checked) == {terminal_escapes_server.HOSTILE_NAME: {"ME016"}}
    screen = io.StringIO()

    checked.render(Console(file=screen, force_terminal=True, color_system="truecolor", width=400))

    shown = screen.getvalue()
    for raw in ("\x1b[2J", "\x1b[H", "\x1b]", "\x07", "\u202e"):
        assert raw not in shown
    assert "lookup\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07" in shown
    assert "\\x1b]8;;https://evil.example/" in shown
    assert "\\u202eenil siht daer" in shown
    assert "[bold red]Order lookup failed[/bold red]" in shown  # markup shown, not applied


@pytest.mark.parametrize(
    ("text", "shown"),
    [("plain words", "plain words"), ("a\x1bb", "a\\x1bb"), ("tab\there", "tab\\x09here"), ("\x9b2J", "\\x9b2J")],
)
def test_printable_text_escapes_every_control_character(text: str, shown: str) -> None:
    assert printable(text) == shown
