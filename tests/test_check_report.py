"""Report filtering and baselines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcp_errors.check import CheckReport, Finding
from mcp_errors.check._report import load_baseline, resolve_rules


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
