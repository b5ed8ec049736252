"""The rule catalogue: stable ids, and docs/rules.md documents every rule as the code defines it."""

from __future__ import annotations

import re
from pathlib import Path

from mcp_errors.check import RULES, Family, Severity
from mcp_errors.check._rules import RuleId

RULES_DOC = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
_HEADING = re.compile(r"^### (ME\d{3}) ([a-z0-9-]+) \((error|warning)[^)]*\)$", re.MULTILINE)


def test_rule_ids_are_stable_and_in_order() -> None:
    assert list(RULES) == [f"ME{n:03d}" for n in range(1, len(RULES) + 1)]
    assert all(rule.id == key for key, rule in RULES.items())
    assert len({rule.name for rule in RULES.values()}) == len(RULES)


def test_docs_document_every_rule_with_its_name_and_severity() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    documented = {match.group(1): (match.group(2), match.group(3)) for match in _HEADING.finditer(text)}

    assert documented == {rule.id: (rule.name, rule.severity.value) for rule in RULES.values()}


def test_every_documented_rule_says_what_it_checks_and_where_it_comes_from() -> None:
    sections = re.split(r"^(?=### ME\d{3} )", RULES_DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)[1:]

    assert len(sections) == len(RULES)
    for section in sections:
        assert "**Checks:**" in section, section[:20]
        assert "**Source:**" in section, section[:20]


def test_the_docs_keep_the_two_rule_families_apart_as_the_code_does() -> None:
    text = RULES_DOC.read_text(encoding="utf-8")
    any_server, _, contract = text.partition("## Rules the mcp-errors contract adds")
    any_server = any_server.partition("## Rules any MCP server must pass")[2]

    assert set(_HEADING.findall(any_server)) == {
        (rule.id, rule.name, rule.severity.value) for rule in RULES.values() if rule.family is Family.ANY_SERVER
    }
    assert set(_HEADING.findall(contract)) == {
        (rule.id, rule.name, rule.severity.value) for rule in RULES.values() if rule.family is Family.CONTRACT
    }


def test_only_rules_from_the_contract_cite_it_as_their_source() -> None:
    for rule in RULES.values():
        assert ("contract" in rule.source) is (rule.family is Family.CONTRACT), rule.id


def test_the_input_validation_rules_that_fail_ci_are_errors() -> None:
    assert RULES["ME001"].severity is Severity.ERROR
    assert "SEP-1303" in RULES["ME001"].source


def test_every_rule_has_its_id_under_its_name_and_no_name_names_another_rule() -> None:
    assert {rule_id.value: rule_id.name for rule_id in RuleId} == {
        rule.id: rule.name.upper().replace("-", "_") for rule in RULES.values()
    }
