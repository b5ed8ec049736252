"""The simulator end to end: real desk subprocesses, both agents, every scenario, and `--json`."""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from mcp_errors._cli import app
from mcp_errors.demo._metrics import CategoryFigures, metrics_of_run
from mcp_errors.demo._report import build_json
from mcp_errors.demo._simulator import SCENARIOS, SWEEP, Row, run_demo

SWEEP_TASKS = 12


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
    expected = {(s.key, agent) for s in (*SCENARIOS, SWEEP) for agent in ("naive", "structured")}
    assert set(rows) == expected


def test_structured_agent_is_right_everywhere_without_wasting_a_call(rows: dict[tuple[str, str], Row]) -> None:
    structured = [row for row in rows.values() if row.agent == "structured"]
    assert all(row.correct for row in structured)
    assert sum(row.wasted_calls for row in structured) == 0


def test_empty_lookup_naive_resends_and_escalates_structured_answers_in_one_call(
    rows: dict[tuple[str, str], Row],
) -> None:
    naive, structured = rows["empty_lookup", "naive"], rows["empty_lookup", "structured"]
    assert (naive.calls, naive.wasted_calls, naive.escalated, naive.correct) == (4, 3, True, False)
    assert (structured.calls, structured.escalated, structured.correct) == (1, False, True)


def test_refund_over_limit_both_escalate_but_naive_wastes_three_resends(rows: dict[tuple[str, str], Row]) -> None:
    naive, structured = rows["refund_over_limit", "naive"], rows["refund_over_limit", "structured"]
    assert (naive.calls, naive.wasted_calls, naive.escalated, naive.correct) == (4, 3, True, True)
    assert (structured.calls, structured.escalated, structured.correct) == (1, True, True)


def test_bad_order_id_structured_fixes_the_input_naive_escalates_a_typo(rows: dict[tuple[str, str], Row]) -> None:
    naive, structured = rows["bad_order_id", "naive"], rows["bad_order_id", "structured"]
    assert (naive.wasted_calls, naive.escalated, naive.correct) == (3, True, False)
    # One rejected call, one corrected call: nothing resent unchanged.
    assert (structured.calls, structured.escalated, structured.correct) == (2, False, True)


def test_partial_search_structured_answers_from_three_sources(rows: dict[tuple[str, str], Row]) -> None:
    naive, structured = rows["partial_search", "naive"], rows["partial_search", "structured"]
    assert (naive.escalated, naive.correct) == (True, False)
    assert naive.wasted_calls >= 3
    # Five sources, one call each: a down source asks for 30 s, past the agent's deadline.
    assert (structured.calls, structured.escalated, structured.correct) == (5, False, True)
    assert "3 of 5" in structured.outcome


def test_no_finance_role_both_escalate_but_naive_wastes_three_resends(rows: dict[tuple[str, str], Row]) -> None:
    naive, structured = rows["no_finance_role", "naive"], rows["no_finance_role", "structured"]
    assert (naive.calls, naive.wasted_calls, naive.correct) == (4, 3, True)
    assert (structured.calls, structured.escalated, structured.correct) == (1, True, True)


def test_sweep_naive_refunds_twice_structured_never_does(rows: dict[tuple[str, str], Row]) -> None:
    naive, structured = rows["transient_sweep", "naive"], rows["transient_sweep", "structured"]
    assert structured.correct
    assert "0 double refunds" in structured.outcome
    assert structured.calls > SWEEP_TASKS  # the faults were real and were resent through
    assert not naive.correct
    assert "0 double refunds" not in naive.outcome


def test_json_output_has_exactly_the_documented_shape(rows: dict[tuple[str, str], Row]) -> None:
    data = build_json(list(rows.values()), seed=7, sweep=SWEEP_TASKS, fault_rate=0.4)
    assert set(data) == {"scenarios", "summary"}
    for entry in data["scenarios"]:
        assert set(entry) == {"scenario", "agent", "calls", "wasted_calls", "escalated", "correct", "outcome", "read"}
    assert data["summary"]["structured_all_correct"] is True
    assert all(entry["outcome"] for entry in data["scenarios"]), "each row says how it ended"
    naive = data["summary"]["agents"]["naive"]
    assert naive["wasted_calls"] == sum(row.wasted_calls for row in rows.values() if row.agent == "naive")


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
    assert [row.agent for row in sweep_rows] == ["naive", "structured"]
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
        return [(row.scenario, row.agent, row.calls, row.outcome, row.correct) for row in rows]

    assert summary(run_rows(sweep=8, seed=1, fault_rate=0.95)) == summary(heavy_fault_rows)


def test_each_agent_shows_what_it_read_of_the_errors_it_met(rows: dict[tuple[str, str], Row]) -> None:
    structured = rows["refund_over_limit", "structured"].read
    naive = rows["refund_over_limit", "naive"].read
    assert [envelope["code"] for envelope in structured] == ["REFUND_NEEDS_APPROVAL"]
    assert structured[0]["errorCategory"] == "business"
    assert structured[0]["isRetryable"] is False
    assert "500.00 EUR" in structured[0]["description"]
    assert len(naive) == 1
    assert naive[0].startswith("[business error, not retryable]")
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
    assert re.search(r"naive read +\[permission error, not retryable\]", result.stdout)


def test_the_per_category_table_is_the_structured_agents_own_metrics(
    measured_run: tuple[dict[tuple[str, str], Row], list[CategoryFigures]],
) -> None:
    rows, measured = measured_run
    figures = {row.category: row for row in measured}
    structured_calls = sum(row.calls for row in rows.values() if row.agent == "structured")
    # Every call the structured agent made is an attempt the policy recorded; nothing else is.
    assert sum(row.attempts for row in figures.values()) == structured_calls
    assert {"answered", "validation", "business", "permission"} <= set(figures)
    assert figures["validation"].decisions == {"fix_input": 1}
    assert figures["answered"].resends > 0  # the sweep's transient faults, absorbed by resends
