"""The simulator end to end: real desk subprocesses, both agents, every scenario, and `--json`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from mcp_errors._cli import app
from mcp_errors.demo._metrics import CategoryFigures, metrics_of_run
from mcp_errors.demo._report import build_json, explain_fields
from mcp_errors.demo._simulator import (
    AGENTS,
    FRAMEWORK_RETRIES,
    SCENARIOS,
    SEARCH_OUTAGES,
    SWEEP,
    Row,
    run_demo,
)

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

SWEEP_TASKS = 12
ROOT = Path(__file__).resolve().parents[2]
README_TEXT = (ROOT / "README.md").read_text(encoding="utf-8")


def run_rows(*, sweep: int, seed: int, fault_rate: float) -> list[Row]:
    """One whole demo run (four desk subprocesses): the module's runs are shared by its tests."""

    async def run() -> list[Row]:
        with anyio.fail_after(120):
            return await run_demo(sweep=sweep, seed=seed, fault_rate=fault_rate)

    return anyio.run(run)


@pytest.fixture(scope="module")
def measured_run() -> tuple[dict[tuple[str, str], Row], list[CategoryFigures]]:
    """The demo's own run, with the OpenTelemetry metrics it recorded."""
    with metrics_of_run() as metrics:
        rows = run_rows(sweep=SWEEP_TASKS, seed=7, fault_rate=0.4)
        figures = metrics.by_category()
    assert figures, "the tests have the OpenTelemetry SDK"
    return {(row.scenario, row.agent): row for row in rows}, figures


@pytest.fixture(scope="module")
def rows(measured_run: tuple[dict[tuple[str, str], Row], list[CategoryFigures]]) -> dict[tuple[str, str], Row]:
    return measured_run[0]


@pytest.fixture(scope="module")
def heavy_fault_rows() -> list[Row]:
    """A run whose faults are so frequent that both agents give up somewhere."""
    return run_rows(sweep=8, seed=1, fault_rate=0.95)


def test_every_scenario_runs_once_per_agent(rows: dict[tuple[str, str], Row]) -> None:
    expected = {(s.key, agent) for s in (*SCENARIOS, SWEEP) for agent in AGENTS}
    assert set(rows) == expected


def test_structured_agent_is_right_everywhere_without_wasting_an_attempt(rows: dict[tuple[str, str], Row]) -> None:
    structured = [row for row in rows.values() if row.agent == "structured"]
    assert all(row.correct for row in structured)
    assert sum(row.wasted_attempts for row in structured) == 0


def test_the_framework_default_is_pydantic_ais_own_default() -> None:
    """The baseline is a cited default, not an invented one: Pydantic AI's own behaviour and count."""
    import inspect

    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.tool_manager import ToolManager

    assert inspect.signature(MCPToolset).parameters["tool_error_behavior"].default == "retry"
    assert ToolManager.default_max_retries == FRAMEWORK_RETRIES
    assert 'tool_error_behavior="retry"' in (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")


def test_the_framework_default_resends_each_error_once_and_never_a_success(rows: dict[tuple[str, str], Row]) -> None:
    for key in ("refund_over_limit", "bad_order_id", "no_finance_role"):
        row = rows[key, "framework_default"]
        # The error, its one retry (which could not help), then the run stops for a person.
        assert (row.attempts, row.wasted_attempts, row.escalated) == (1 + FRAMEWORK_RETRIES, FRAMEWORK_RETRIES, 1)
    empty = rows["empty_lookup", "framework_default"]
    assert (empty.attempts, empty.wasted_attempts, empty.escalated, empty.correct) == (1, 0, 0, True)


def test_empty_lookup_is_one_attempt_and_an_answer_for_both(rows: dict[tuple[str, str], Row]) -> None:
    structured = rows["empty_lookup", "structured"]
    assert (structured.attempts, structured.escalated, structured.correct) == (1, 0, True)


def test_refund_over_limit_both_escalate_but_the_framework_resends_first(rows: dict[tuple[str, str], Row]) -> None:
    framework, structured = rows["refund_over_limit", "framework_default"], rows["refund_over_limit", "structured"]
    assert framework.correct
    assert (structured.attempts, structured.escalated, structured.correct) == (1, 1, True)


def test_bad_order_id_structured_fixes_the_input_the_framework_escalates_a_typo(
    rows: dict[tuple[str, str], Row],
) -> None:
    framework, structured = rows["bad_order_id", "framework_default"], rows["bad_order_id", "structured"]
    assert not framework.correct
    # One rejected call, one corrected call: nothing resent unchanged.
    assert (structured.attempts, structured.escalated, structured.correct) == (2, 0, True)


def test_partial_search_structured_answers_from_three_sources_and_hands_two_to_the_coordinator(
    rows: dict[tuple[str, str], Row],
) -> None:
    framework, structured = rows["partial_search", "framework_default"], rows["partial_search", "structured"]
    assert (framework.escalated, framework.correct) == (1, False)
    assert framework.wasted_attempts >= 1
    # Five sources, one attempt each: a down source asks for 30 s, past the agent's deadline;
    # the policy escalates each of the two, and the coordinator answers from the other three.
    assert (structured.attempts, structured.escalated, structured.correct) == (5, len(SEARCH_OUTAGES), True)
    assert "3 of 5" in structured.outcome


def test_the_readmes_partial_result_is_what_the_demo_says(rows: dict[tuple[str, str], Row]) -> None:
    quoted = re.search(r'\("(3 of 5 sources answered;[^"]*)", as `mcp-errors demo` shows it\)', README_TEXT, re.DOTALL)
    assert quoted is not None, "README.md quotes the demo's partial result"
    assert " ".join(quoted.group(1).split()) in rows["partial_search", "structured"].outcome


def test_no_finance_role_both_escalate(rows: dict[tuple[str, str], Row]) -> None:
    framework, structured = rows["no_finance_role", "framework_default"], rows["no_finance_role", "structured"]
    assert framework.correct
    assert (structured.attempts, structured.escalated, structured.correct) == (1, 1, True)


def test_sweep_the_framework_loses_track_of_refunds_structured_never_does(rows: dict[tuple[str, str], Row]) -> None:
    framework, structured = rows["transient_sweep", "framework_default"], rows["transient_sweep", "structured"]
    assert structured.correct
    assert "0 double refunds" in structured.outcome
    assert structured.attempts > SWEEP_TASKS  # the faults were real and were resent through
    assert not framework.correct
    # Its resend of a refund whose answer was lost carries no key: it lands twice, or the
    # framework says "not done" of a refund that landed.
    assert "0 double refunds" not in framework.outcome or "said not done but landed" in framework.outcome


def test_json_output_has_exactly_the_documented_shape(rows: dict[tuple[str, str], Row]) -> None:
    data = build_json(list(rows.values()), seed=7, sweep=SWEEP_TASKS, fault_rate=0.4)
    assert set(data) == {"scenarios", "summary"}
    for entry in data["scenarios"]:
        assert set(entry) == {
            "scenario",
            "agent",
            "attempts",
            "wasted_attempts",
            "escalated",
            "correct",
            "outcome",
            "read",
        }
    assert data["summary"]["structured_all_correct"] is True
    assert all(entry["outcome"] for entry in data["scenarios"]), "each row says how it ended"
    framework = data["summary"]["agents"]["framework_default"]
    assert framework["wasted_attempts"] == sum(
        row.wasted_attempts for row in rows.values() if row.agent == "framework_default"
    )


def test_demo_command_prints_json_and_exits_zero_when_the_structured_agent_is_right() -> None:
    result = CliRunner().invoke(app, ["demo", "--json", "--sweep", "0"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert {entry["scenario"] for entry in data["scenarios"]} == {s.key for s in SCENARIOS}
    assert data["summary"]["structured_all_correct"] is True


def test_in_the_sweep_giving_up_honestly_is_right_for_either_agent_and_only_double_refunds_are_wrong(
    heavy_fault_rows: list[Row],
) -> None:
    sweep_rows = [row for row in heavy_fault_rows if row.scenario == "transient_sweep"]
    assert [row.agent for row in sweep_rows] == list(AGENTS)
    for row in sweep_rows:
        assert "escalated" in row.outcome  # faults this heavy make both agents give up somewhere
        assert row.correct == ("0 double refunds" in row.outcome and "said not done but landed" not in row.outcome)
    # The verdict and the right answer say the same: stopping when the resends a policy
    # allows are used up, and saying so, is right; the outcome says what stopped them.
    assert "retry budget" in SWEEP.right_answer
    assert "not done" in SWEEP.right_answer
    structured = sweep_rows[1]
    assert re.search(
        r"\((\d+ (retry budget spent|attempts used up|deadline|unsafe to resend)(, )?)+\)", structured.outcome
    )


def test_one_seed_gives_the_same_run_twice_in_one_process(heavy_fault_rows: list[Row]) -> None:
    # Each desk's policy starts with a full retry budget: neither the other desks of the run
    # (they run at once) nor an earlier run (this module made several) can spend it.
    def summary(rows: list[Row]) -> list[tuple[str, str, int, str, bool]]:
        return [(row.scenario, row.agent, row.attempts, row.outcome, row.correct) for row in rows]

    assert summary(run_rows(sweep=8, seed=1, fault_rate=0.95)) == summary(heavy_fault_rows)


def test_each_agent_shows_what_it_read_of_the_errors_it_met(rows: dict[tuple[str, str], Row]) -> None:
    structured = rows["refund_over_limit", "structured"].read
    framework = rows["refund_over_limit", "framework_default"].read
    assert [envelope["code"] for envelope in structured] == ["REFUND_NEEDS_APPROVAL"]
    assert structured[0]["errorCategory"] == "business"
    assert structured[0]["isRetryable"] is False
    assert "500.00 EUR" in structured[0]["description"]
    assert len(framework) == 1
    # Pydantic AI puts the structuredContent, as JSON, in its retry; text-only hosts show the text.
    # (Each desk is its own server, so only the error ids differ.)
    assert {**json.loads(framework[0]), "errorId": None} == {**structured[0], "errorId": None}
    assert rows["refund_over_limit", "structured"].texts[0].startswith("[business error, not retryable]")
    # A scenario without errors read nothing; one with several kinds shows each once.
    assert rows["empty_lookup", "structured"].read == ()
    assert [envelope["errorCategory"] for envelope in rows["bad_order_id", "structured"].read] == ["validation"]


def test_show_payload_prints_the_structured_content_under_each_table() -> None:
    result = CliRunner().invoke(
        app, ["demo", "--sweep", "0", "--show-payload"], env={"COLUMNS": "400", "NO_COLOR": "1"}
    )
    assert result.exit_code == 0, result.output
    assert '"code": "REFUND_NEEDS_APPROVAL"' in result.stdout
    assert '"code": "FINANCE_ROLE_REQUIRED"' in result.stdout
    assert re.search(r'framework default read +\{"errorCategory":"permission"', result.stdout)


def test_the_per_category_table_is_the_structured_agents_own_metrics(
    measured_run: tuple[dict[tuple[str, str], Row], list[CategoryFigures]],
) -> None:
    rows, measured = measured_run
    figures = {row.category: row for row in measured}
    structured_attempts = sum(row.attempts for row in rows.values() if row.agent == "structured")
    # Every call the structured agent made is an attempt the policy recorded; nothing else is.
    assert sum(row.attempts for row in figures.values()) == structured_attempts
    # And every operation it escalated is an `escalate` decision the policy recorded.
    escalated = sum(row.escalated for row in rows.values() if row.agent == "structured")
    assert sum(row.decisions.get("escalate", 0) for row in figures.values()) == escalated
    assert {"answered", "validation", "business", "permission"} <= set(figures)
    assert figures["validation"].decisions == {"fix_input": 1}
    assert figures["answered"].resends > 0  # the sweep's transient faults, absorbed by resends


@pytest.fixture(scope="module")
def rendered() -> str:
    """What `mcp-errors demo` prints, as a wide terminal without colours shows it."""
    result = CliRunner().invoke(app, ["demo", "--sweep", "6"], env={"COLUMNS": "160", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result.stdout


def tables(text: str) -> dict[str, list[list[str]]]:
    """Each rich table of the output by its title: its rows' cells (first lines of rows only)."""
    found: dict[str, list[list[str]]] = {}
    title = ""
    current: list[list[str]] | None = None
    for line in text.splitlines():
        if line.startswith("╭"):
            current = found.setdefault(title, [])
        elif line.startswith("╰"):
            current = None
        elif current is not None and line.startswith("│"):
            cells = [cell.strip() for cell in line.strip("│").split("│")]
            if cells[0] and cells[0] not in ("agent", "final outcome"):
                current.append(cells)
        elif current is None and line.strip():
            title = line.strip()
    return found


def test_the_first_screen_shows_one_error_payload_and_what_each_field_tells_the_agent(rendered: str) -> None:
    first_screen = rendered[: rendered.index("1. Customer lookup matches nobody")]
    assert len(first_screen.splitlines()) <= 40, "the contract fits on the first screen, before the tables"
    envelope_fields = ("errorCategory", "isRetryable", "description", "code", "executionState", "errorId")
    for field in envelope_fields:
        line = next((line for line in first_screen.splitlines() if f"│  {field} " in line), None)
        assert line is not None, f"{field} is shown"
        meaning = {name: meaning for name, _, meaning in explain_fields({field: None})}[field]
        assert meaning.split(":")[0][:30] in line, f"{field} is explained"
    assert '"business"' in first_screen
    assert "[business error, not retryable]" in first_screen  # the text block, for text-only hosts
    assert "framework default" in first_screen
    assert "exceeded max retries" in first_screen


def test_the_tables_count_attempts_and_escalations_the_same_way(rendered: str) -> None:
    found = tables(rendered)
    scenario_rows = [row for title, rows in found.items() if re.match(r"\d+\. ", title) for row in rows]
    totals = {row[0]: row for row in found["Totals"]}
    per_category = found["The structured agent's operations, per final category"]
    for label in ("framework default", "structured"):
        mine = [row for row in scenario_rows if row[0] == label]
        assert len(mine) == len(SCENARIOS) + 1
        # Totals' attempts and escalations are the scenario tables' own, added up.
        assert int(totals[label][2]) == sum(int(row[1]) for row in mine)
        assert int(totals[label][4]) == sum(int(row[3]) for row in mine)
    # The per-category table's attempts and `escalate` decisions are the structured agent's totals.
    assert sum(int(row[2]) for row in per_category) == int(totals["structured"][2])
    escalations = sum(int(n) for row in per_category for n in re.findall(r"escalate (\d+)", row[6]))
    assert escalations == int(totals["structured"][4])
    # Scenario 4: the structured agent's two escalated sources are the per-category table's
    # transient escalations outside the sweep.
    (search,) = [row for row in found["4. Search where 3 of 5 sources answer"] if row[0] == "structured"]
    assert int(search[3]) == len(SEARCH_OUTAGES)


def test_the_readme_and_docs_name_show_payload() -> None:
    assert "--show-payload" in README_TEXT
    assert "--show-payload" in (ROOT / "docs" / "demo.md").read_text(encoding="utf-8")
