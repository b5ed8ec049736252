"""`--format sarif`: logs that the SARIF 2.1.0 schema accepts, with what GitHub code scanning needs
(a file for every result, fingerprints a baseline can use) and nothing invented."""

from __future__ import annotations

import json
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from jsonschema import Draft202012Validator, FormatChecker
from typer.testing import CliRunner

from mcp_errors._cli import app
from mcp_errors.check import RULES, CheckOptions, CheckReport, Finding, check_server
from mcp_errors.check._args import parse_call_arguments
from mcp_errors.check._report import BASELINE_FINGERPRINT, MAX_NAME_CHARS, capped_name, load_baseline
from mcp_errors.check._sarif import RULES_DOC, choose_anchor, rule_help_uri, to_sarif
from servers import CHECK_SERVERS_DIR
from servers.check import framework_dumps_server, plain_defects_server, roles_server

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

SCHEMA = Path(__file__).parents[1] / "sarif" / "sarif-schema-2.1.0.json"
RULES_DOC_FILE = Path(__file__).parents[2] / "docs" / "rules.md"


@cache
def validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")), format_checker=FormatChecker())


def assert_valid_sarif(log: dict[str, Any]) -> None:
    errors = sorted(validator().iter_errors(log), key=lambda error: list(error.absolute_path))
    assert errors == [], [f"{list(error.absolute_path)}: {error.message}" for error in errors[:5]]
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        if "helpUri" in rule:
            parts = urlsplit(rule["helpUri"])  # the schema's "format": "uri" is not checked without rfc3987
            assert parts.scheme == "https"
            assert parts.netloc


def check(server: object, options: CheckOptions) -> CheckReport:
    async def run() -> CheckReport:
        with anyio.fail_after(60):
            return await check_server(server, options)  # type: ignore[arg-type]

    return anyio.run(run)


def test_a_log_of_many_rules_validates_against_the_sarif_schema() -> None:
    report = check(plain_defects_server.build_server(), CheckOptions(call_valid=True))
    assert len({finding.rule for finding in report.findings}) > 3

    log = to_sarif(report)

    assert_valid_sarif(log)
    assert log["version"] == "2.1.0"


def test_every_rule_is_described_with_its_id_name_level_and_where_its_section_is() -> None:
    rules = to_sarif(CheckReport(server={"target": "x"}, findings=[], tools_checked=[]))["runs"][0]["tool"]["driver"]

    assert [rule["id"] for rule in rules["rules"]] == list(RULES)
    for described in rules["rules"]:
        rule = RULES[described["id"]]
        assert described["name"] == rule.name
        assert described["shortDescription"]["text"] == rule.summary
        assert rule.source in described["fullDescription"]["text"]
        assert f"{RULES_DOC}, #{rule.id.lower()}" in described["help"]["text"]
        assert described["defaultConfiguration"]["level"] == rule.severity.value


def test_without_rules_uri_no_rule_links_to_a_guessed_repository() -> None:
    """mcp-errors has no published home yet: a link is written only where the user says it is."""
    log = to_sarif(CheckReport(server={"target": "x"}, findings=[], tools_checked=[]))

    assert_valid_sarif(log)
    driver = log["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    assert all("helpUri" not in rule for rule in driver["rules"])
    assert "http" not in json.dumps(driver["rules"])


def test_with_rules_uri_every_rule_links_to_its_section_there() -> None:
    base = "https://docs.example.org/mcp-errors/rules.md"
    driver = to_sarif(CheckReport(server={"target": "x"}, findings=[], tools_checked=[]), rules_uri=base)["runs"][0][
        "tool"
    ]["driver"]

    assert driver["informationUri"] == base
    for described in driver["rules"]:
        assert described["helpUri"] == f"{base}#{described['id'].lower()}"
        assert f"]({base}#{described['id'].lower()})" in described["help"]["markdown"]


def test_every_rules_link_lands_on_an_anchor_docs_rules_md_sets() -> None:
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', RULES_DOC_FILE.read_text(encoding="utf-8")))

    assert {urlsplit(rule_help_uri(rule_id, "https://x/rules.md")).fragment for rule_id in RULES} <= anchors


def test_a_result_per_finding_with_its_level_message_tool_and_the_call_that_showed_it() -> None:
    report = check(plain_defects_server.build_server(), CheckOptions(call_valid=True, contract=False))

    results = to_sarif(report)["runs"][0]["results"]

    assert len(results) == len(report.findings)
    for finding, result in zip(report.findings, results, strict=True):
        assert result["ruleId"] == finding.rule
        assert list(RULES)[result["ruleIndex"]] == finding.rule
        assert result["level"] == finding.severity.value
        assert result["message"]["text"] == finding.message
        logical = result["locations"][0]["logicalLocations"][0]
        assert logical["fullyQualifiedName"] == f"{report.server['name']}/{finding.tool}"
        assert result["properties"]["call"] == finding.call


def test_one_cause_on_several_tools_is_one_result_listing_them() -> None:
    report = check(framework_dumps_server.build_server(), CheckOptions(call_valid=True, contract=False))

    results = [result for result in to_sarif(report)["runs"][0]["results"] if "tools" in result["properties"]]

    assert len(results) == 1
    assert results[0]["properties"]["tools"] == sorted(framework_dumps_server.SHARED)
    assert results[0]["properties"]["toolCount"] == len(framework_dumps_server.SHARED)
    assert all(tool in results[0]["message"]["text"] for tool in framework_dumps_server.SHARED)
    assert results[0]["locations"][0]["logicalLocations"][0]["kind"] == "module"


def test_fingerprints_carry_the_identity_a_baseline_uses(tmp_path: Path) -> None:
    report = check(plain_defects_server.build_server(), CheckOptions(call_valid=True))
    path = tmp_path / "known.sarif"
    path.write_text(json.dumps(to_sarif(report)), encoding="utf-8")

    known = load_baseline(path)

    assert known == {(finding.rule, finding.tool) for finding in report.findings}
    assert report.filtered(baseline=known).findings == []
    fingerprints = [
        result["partialFingerprints"][BASELINE_FINGERPRINT] for result in to_sarif(report)["runs"][0]["results"]
    ]
    assert len(set(fingerprints)) == len(fingerprints)


def test_results_are_attached_to_the_args_file_at_the_tools_entry(tmp_path: Path) -> None:
    calls = tmp_path / "calls.toml"
    calls.write_text(
        '# real calls\n\n[tools.search_notes]\nempty = { query = "no note says this" }\n', encoding="utf-8"
    )
    arguments = parse_call_arguments(roles_server.arguments())
    report = check(roles_server.build_server(tmp_path), CheckOptions(contract=False, arguments=arguments))
    anchor = choose_anchor(arguments=calls, root=tmp_path)

    log = to_sarif(report, anchor=anchor, root=tmp_path)

    assert_valid_sarif(log)
    assert anchor == Path("calls.toml")
    for result in log["runs"][0]["results"]:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "calls.toml", "uriBaseId": "%SRCROOT%"}
        if result["properties"]["tool"] == "search_notes":
            assert physical["region"] == {"startLine": 3}
        else:
            assert "region" not in physical  # the tool has no entry: the file, not an invented line
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"


def test_only_a_real_file_inside_the_checkout_is_an_anchor(tmp_path: Path) -> None:
    server = tmp_path / "server.py"
    server.write_text("print()\n", encoding="utf-8")
    outside = tmp_path.parent / "elsewhere.toml"

    assert choose_anchor(command=["python", "server.py"], root=tmp_path) == Path("server.py")
    assert choose_anchor(command=["uv", "run", "my-server"], root=tmp_path) is None
    assert choose_anchor(explicit=outside, command=["python", "server.py"], root=tmp_path) == Path("server.py")
    assert choose_anchor(arguments=Path("missing.toml"), root=tmp_path) is None


runner = CliRunner()


def test_the_cli_writes_sarif_anchored_to_the_args_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps(roles_server.arguments(), indent=2), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    server = [sys.executable, str(CHECK_SERVERS_DIR / "roles_server.py"), str(tmp_path)]

    result = runner.invoke(
        app,
        [
            "check",
            "--format",
            "sarif",
            "--connect-timeout",
            "60",
            "--contract",
            "off",
            "--args",
            "calls.json",
            "--",
            *server,
        ],
    )

    assert result.exit_code == 1, result.output  # ME010, ME022 are errors
    log = json.loads(result.stdout)
    assert_valid_sarif(log)
    results = log["runs"][0]["results"]
    assert {(r["ruleId"], r["properties"].get("tool")) for r in results} == {
        (rule, tool) for tool, rules in roles_server.EXPECTED.items() for rule in rules
    }
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "calls.json" for r in results)
    assert "no file location" not in result.stderr


def test_the_cli_warns_when_no_file_can_carry_the_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    server = [sys.executable, str(CHECK_SERVERS_DIR / "plain_defects_server.py")]  # outside the checkout

    result = runner.invoke(app, ["check", "--format", "sarif", "--connect-timeout", "60", "--", *server])

    log = json.loads(result.stdout)
    assert_valid_sarif(log)
    assert all("physicalLocation" not in r["locations"][0] for r in log["runs"][0]["results"])
    assert "--sarif-location" in result.stderr


def test_the_cli_refuses_an_anchor_outside_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "outside.toml"
    outside.write_text("", encoding="utf-8")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)

    result = runner.invoke(app, ["check", "--format", "sarif", "--sarif-location", str(outside), "--", "true"])

    assert result.exit_code == 2
    assert "inside the working directory" in " ".join(result.output.replace("│", " ").split())


def test_a_finding_made_by_hand_becomes_one_result() -> None:
    report = CheckReport(
        server={"name": "orders"}, findings=[Finding("ME002", "refund", "no envelope")], tools_checked=["refund"]
    )

    log = to_sarif(report, rules_uri="https://docs.example.org/rules.md")

    assert_valid_sarif(log)
    (result,) = log["runs"][0]["results"]
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "orders/refund"
    assert log["runs"][0]["tool"]["driver"]["rules"][1]["helpUri"] == "https://docs.example.org/rules.md#me002"


def test_tool_names_of_100_kb_are_capped_in_the_log_and_kept_apart() -> None:
    server = [sys.executable, str(CHECK_SERVERS_DIR / "hostile_names_server.py"), "long"]
    report = check(server, CheckOptions(call_valid=True))

    log = to_sarif(report)

    assert_valid_sarif(log)
    named = {result["properties"]["tool"] for result in log["runs"][0]["results"] if "tool" in result["properties"]}
    assert len(named) == 10  # nine long names and `plain`, still told apart
    assert max(len(name) for name in named) <= MAX_NAME_CHARS + 20
    assert len(json.dumps(log)) < 200_000  # nine names of 100 KB each, each in several results, made it 7 MB
    assert set(report.tools_checked) == named  # the report names them as the log does
    assert capped_name("reticulate_" + "s" * 99_989 + "a") in named  # the same name, the same text: baselines match
