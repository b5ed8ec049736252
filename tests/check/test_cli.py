"""`mcp-errors check` on the command line: JSON report, exit codes, baseline, select, ignore, URL."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from mcp_errors._cli import app
from servers import CHECK_SERVERS_DIR
from servers.check import unusable_schema_server

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

FIXTURES = CHECK_SERVERS_DIR
DEFECTS = [sys.executable, str(FIXTURES / "defects_server.py")]
PLAIN_DEFECTS = [sys.executable, str(FIXTURES / "plain_defects_server.py")]
GOOD = [sys.executable, str(FIXTURES / "good_server.py")]
SLOW_START = ["--connect-timeout", "60"]
FINDING_KEYS = {"rule", "severity", "family", "tool", "tools", "call", "message"}

runner = CliRunner()


def check(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["check", "--format", "json", *SLOW_START, *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


def test_a_compliant_server_exits_zero_with_an_empty_json_report() -> None:
    code, report = check("--call-valid", "--", *GOOD)

    assert code == 0
    assert report["findings"] == []
    assert report["summary"]["passed"] is True
    assert report["server"]["name"] == "good-orders"


def test_error_findings_make_the_check_exit_non_zero() -> None:
    code, report = check("--", *DEFECTS)

    assert code == 1
    assert {"ME001", "ME002", "ME006"} <= {finding["rule"] for finding in report["findings"]}
    assert all(set(finding) == FINDING_KEYS for finding in report["findings"])


def test_a_tool_schema_the_checker_cannot_use_fails_the_check() -> None:
    code, report = check("--call-valid", "--", sys.executable, str(FIXTURES / "unusable_schema_server.py"))

    assert code == 1
    assert report["summary"]["passed"] is False
    flagged = {(finding["tool"], finding["rule"]) for finding in report["findings"]}
    assert flagged == {(tool, "ME020") for tool in unusable_schema_server.BROKEN}


def recipe_commands() -> tuple[list[str], list[str]]:
    """docs/rules.md's CI recipe: the command that makes the baseline, and the job's check (options only)."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")
    recipe = text[text.index("### In CI") :]
    make = next(line for line in recipe.splitlines() if line.startswith("mcp-errors check --format json"))
    job = yaml.safe_load(
        recipe[recipe.index("```yaml") + len("```yaml") : recipe.index("```", recipe.index("```yaml") + 7)]
    )
    (run,) = [
        step["run"] for step in job["jobs"]["mcp-errors-check"]["steps"] if "mcp-errors check" in step.get("run", "")
    ]

    def options(command: str) -> list[str]:
        words = shlex.split(command)
        return words[words.index("check") + 1 : words.index("--")]

    return options(make), options(run)


def test_the_ci_recipe_fails_only_on_findings_its_baseline_does_not_hold(tmp_path: Path) -> None:
    make, job = recipe_commands()
    assert {"--format", "--baseline"} <= set(job)
    _, first = check(*make, "--", *DEFECTS)
    baseline = tmp_path / job[job.index("--baseline") + 1]
    baseline.write_text(json.dumps(first), encoding="utf-8")

    job[job.index("--baseline") + 1] = str(baseline)
    code, report = check(*job, "--", *DEFECTS)

    assert code == 0
    assert report["findings"] == []
    assert report["summary"]["suppressed"] == len(first["findings"])


def test_a_baseline_recorded_while_the_server_was_down_does_not_pass_a_server_still_down(tmp_path: Path) -> None:
    missing = str(FIXTURES / "no-such-server")
    _, down = check("--", missing)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(down), encoding="utf-8")

    code, report = check("--baseline", str(baseline), "--", missing)
    selected_code, _ = check("--select", "ME002", "--", missing)

    assert (code, selected_code) == (1, 1)
    assert [finding["rule"] for finding in report["findings"]] == ["ME015"]


def test_warnings_alone_do_not_fail_the_check() -> None:
    code, report = check("--select", "ME005,description-repeats-message", "--", *DEFECTS)

    assert code == 0
    assert {finding["rule"] for finding in report["findings"]} == {"ME005", "ME007"}
    assert {finding["severity"] for finding in report["findings"]} == {"warning"}


def test_ignored_rules_are_left_out() -> None:
    _, full = check("--", *DEFECTS)

    _, report = check("--ignore", "ME002", "--ignore", "generic-description", "--", *DEFECTS)

    rules = {finding["rule"] for finding in report["findings"]}
    assert rules == {finding["rule"] for finding in full["findings"]} - {"ME002", "ME006"}


def test_contract_off_reports_only_what_any_server_must_pass() -> None:
    code, report = check("--call-valid", "--contract", "off", "--", *PLAIN_DEFECTS)

    assert code == 1  # disguised failures and generic texts are errors for any server
    assert {finding["family"] for finding in report["findings"]} == {"any-server"}
    assert "ME002" not in {finding["rule"] for finding in report["findings"]}
    assert report["summary"]["contract"] is False


def test_an_args_file_makes_real_valid_and_empty_calls(tmp_path: Path) -> None:
    calls = tmp_path / "calls.toml"
    calls.write_text(
        '[tools.find_orders]\nvalid = { order_id = "#12345" }\nempty = { order_id = "#99999" }\n', encoding="utf-8"
    )

    code, report = check("--args", str(calls), "--", *GOOD)

    assert code == 0
    summary = report["summary"]
    assert summary["validCalls"] == {
        "find_orders": {"outcome": "succeeded", "arguments": "--args", "sent": {"order_id": "#12345"}}
    }
    assert summary["emptyCalls"] == {
        "find_orders": {"outcome": "succeeded", "arguments": "--args", "sent": {"order_id": "#99999"}}
    }


def test_an_unreadable_args_file_is_a_usage_error(tmp_path: Path) -> None:
    calls = tmp_path / "calls.toml"
    calls.write_text("[tools.find_orders]\nvalid = 3\n", encoding="utf-8")

    result = runner.invoke(app, ["check", "--args", str(calls), "--", *GOOD])

    assert result.exit_code == 2
    assert "tools.find_orders.valid" in result.output


def test_the_rich_report_keeps_the_two_rule_families_apart_and_says_what_each_valid_call_did() -> None:
    result = runner.invoke(app, ["check", *SLOW_START, "--call-valid", "--", *PLAIN_DEFECTS], env={"COLUMNS": "200"})

    lines = result.stdout.splitlines()
    any_server = next(i for i, line in enumerate(lines) if line.startswith("What any agent needs"))
    contract = next(i for i, line in enumerate(lines) if line.startswith("What the mcp-errors contract adds"))
    assert any_server < contract
    assert any("ME022" in line for line in lines[any_server:contract])
    assert not any("ME002" in line for line in lines[any_server:contract])
    assert any(line.strip().startswith("- well_behaved valid call: succeeded") for line in lines)
    # ... and with which values.
    assert any(line.strip().startswith("- well_behaved valid call: succeeded") and "{" in line for line in lines)


def test_an_unknown_rule_is_a_usage_error() -> None:
    result = runner.invoke(app, ["check", "--select", "ME999", "--", *GOOD])

    assert result.exit_code == 2


def test_the_rich_report_groups_findings_by_tool() -> None:
    result = runner.invoke(app, ["check", *SLOW_START, "--", *DEFECTS], env={"COLUMNS": "200"})

    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    no_envelope = next(i for i, line in enumerate(lines) if line.strip() == "✗ no_envelope")
    assert "ME002" in lines[no_envelope + 1]
    assert any(line.strip() == "✓ well_behaved" for line in lines)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen(
        [*GOOD, "--http", str(port)], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    try:
        assert process.stderr is not None
        # uvicorn says when it listens; reading its log waits exactly as long as needed.
        for line in process.stderr:
            if "Uvicorn running on" in line:
                break
        else:
            pytest.fail("the HTTP fixture server did not start")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_streamable_http_url_is_checked(http_server: str) -> None:
    code, report = check("--call-valid", http_server)

    assert code == 0
    assert report["server"]["target"] == http_server
    assert report["summary"]["toolsChecked"] == 3


GIT = [sys.executable, "-m", "mcp_server_git"]
"""mcp-server-git (PyPI): a real server without the contract, eleven tools that take arguments."""


def test_a_server_without_the_contract_gets_one_missing_envelope_finding_naming_its_tools_and_the_fix() -> None:
    # A real subprocess with stdout on a pipe, as in a CI log: no terminal, no COLUMNS.
    done = subprocess.run(
        [sys.executable, "-m", "mcp_errors", "check", *SLOW_START, "--", *GIT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={key: value for key, value in os.environ.items() if key != "COLUMNS"},
    )

    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    (missing,) = [line for line in lines if "ME002" in line]
    for tool in ("git_status", "git_log", "git_diff", "git_show", "git_branch"):
        assert tool in missing
    assert "install(server)" in missing
    assert "mcp-errors proxy" in missing
    assert "--contract off" in missing
    # One line per finding, as long as it needs to be: nothing wrapped into a narrow column.
    assert not any(line.startswith(" " * 20) for line in lines)


def test_the_json_report_keeps_one_missing_envelope_finding_per_tool_with_the_fix() -> None:
    code, report = check("--select", "ME002", "--", *GIT)

    assert code == 1
    missing = [finding for finding in report["findings"] if finding["rule"] == "ME002"]
    assert len({finding["tool"] for finding in missing}) == len(missing) > 1
    assert all("install(server)" in finding["message"] for finding in missing)
