"""Show the simulator's rows: rich tables for people, one JSON object for machines."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import anyio
from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from mcp_errors._shared.advice import ADVICE
from mcp_errors._shared.contract import ErrorCategory
from mcp_errors.demo._metrics import CategoryFigures, metrics_of_run
from mcp_errors.demo._simulator import (
    AGENTS,
    FRAMEWORK,
    FRAMEWORK_RETRIES,
    SCENARIOS,
    SWEEP,
    Row,
    Scenario,
    run_demo,
)

__all__ = ["build_json", "contract_panel", "explain_fields", "render", "run_and_report", "summarize"]

_AGENT_STYLE = {"framework_default": "yellow", "structured": "cyan"}
_AGENT_LABEL = {"framework_default": "framework default", "structured": "structured"}


def summarize(rows: Sequence[Row]) -> dict[str, Any]:
    """Totals per agent, and whether the structured agent was right everywhere."""
    agents: dict[str, Any] = {}
    for agent in AGENTS:
        mine = [row for row in rows if row.agent == agent]
        agents[agent] = {
            "scenarios": len(mine),
            "correct": sum(row.correct for row in mine),
            "attempts": sum(row.attempts for row in mine),
            "wasted_attempts": sum(row.wasted_attempts for row in mine),
            "escalated": sum(row.escalated for row in mine),
        }
    structured = [row for row in rows if row.agent == "structured"]
    return {"agents": agents, "structured_all_correct": bool(structured) and all(row.correct for row in structured)}


def build_json(rows: Sequence[Row], *, seed: int, sweep: int, fault_rate: float) -> dict[str, Any]:
    """The `--json` object: `{"scenarios": [...], "summary": {...}}`."""
    summary = summarize(rows)
    summary.update({"seed": seed, "sweep_tasks": sweep, "fault_rate": fault_rate})
    return {"scenarios": [row.to_json() for row in rows], "summary": summary}


def _scenario_table(number: int, scenario: Scenario, rows: Sequence[Row]) -> Table:
    table = Table(
        title=f"[bold]{number}. {scenario.title}[/]",
        title_justify="left",
        caption=f"right answer: {scenario.right_answer}",
        caption_justify="left",
        box=box.ROUNDED,
        expand=True,
    )
    table.add_column("agent", no_wrap=True)
    table.add_column("attempts", justify="right", no_wrap=True)
    table.add_column("wasted", justify="right", no_wrap=True)
    table.add_column("escalated", justify="right", no_wrap=True)
    table.add_column("final outcome", ratio=1, min_width=20)
    table.add_column("correct", justify="center", no_wrap=True)
    for row in rows:
        style = _AGENT_STYLE[row.agent]
        table.add_row(
            Text(_AGENT_LABEL[row.agent], style=style),
            str(row.attempts),
            Text(str(row.wasted_attempts), style="red" if row.wasted_attempts else "green"),
            str(row.escalated),
            row.outcome,
            Text("✔", style="bold green") if row.correct else Text("✘", style="bold red"),
        )
    return table


def _summary_table(summary: dict[str, Any]) -> Table:
    table = Table(title="[bold]Totals[/]", title_justify="left", box=box.ROUNDED, expand=True)
    for column in ("agent", "correct", "attempts", "wasted", "escalated"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for agent in AGENTS:
        totals = summary["agents"][agent]
        table.add_row(
            Text(_AGENT_LABEL[agent], style=_AGENT_STYLE[agent]),
            f"{totals['correct']}/{totals['scenarios']}",
            str(totals["attempts"]),
            str(totals["wasted_attempts"]),
            str(totals["escalated"]),
        )
    return table


def _why(summary: dict[str, Any]) -> Text:
    framework, structured = summary["agents"]["framework_default"], summary["agents"]["structured"]
    text = Text()
    text.append("Why the structured agent wins: ", style="bold")
    text.append(
        "it reads errorCategory, isRetryable and executionState, so it resends only transient failures (with an "
        "idempotency key: no refund lands twice) and otherwise answers, fixes the input or escalates at once "
        f"(right {structured['correct']}/{structured['scenarios']}, {structured['wasted_attempts']} wasted). "
        "The framework default makes every error a retry: a policy limit and a typo get a resend that cannot "
        "help, a refund whose answer was lost is sent again without a key, and the run stops at the second "
        f"error (right {framework['correct']}/{framework['scenarios']}, "
        f"{framework['wasted_attempts']} wasted)."
    )
    return text


def _payloads(rows: Sequence[Row]) -> Table:
    """What each agent read of the errors it met: the framework's model the text, the other the envelope."""
    table = Table(box=None, show_header=False, expand=True, padding=(0, 1))
    table.add_column("agent", no_wrap=True)
    table.add_column("read", ratio=1, overflow="fold")
    for row in rows:
        for item in row.read:
            shown = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            table.add_row(Text(f"{_AGENT_LABEL[row.agent]} read", style=_AGENT_STYLE[row.agent]), Text(shown))
    if not table.rows:
        table.add_row(Text("no errors", style="dim"), Text(""))
    return table


def render(
    console: Console, rows: Sequence[Row], *, seed: int, sweep: int, fault_rate: float, show_payload: bool = False
) -> None:
    """Print the agents, one error explained, one table per scenario, the totals, and why the structured agent wins.

    With `show_payload`, each table is followed by what each agent read of every kind of
    error it met: the first text block (framework default) and the error result's structuredContent.
    """
    console.print(_intro())
    panel = contract_panel(rows)
    if panel is not None:
        console.print(panel)
    scenarios = [*SCENARIOS, SWEEP] if sweep else list(SCENARIOS)
    for number, scenario in enumerate(scenarios, start=1):
        mine = [row for row in rows if row.scenario == scenario.key]
        if scenario is SWEEP:
            scenario = Scenario(
                SWEEP.key,
                f"{SWEEP.title}: {sweep} tasks, {fault_rate:.0%} faults + lost refund answers",
                SWEEP.right_answer,
            )
        console.print(_scenario_table(number, scenario, mine))
        if show_payload:
            console.print(_payloads(mine))
    summary = summarize(rows)
    console.print(_summary_table(summary))
    console.print(Panel(_why(summary), border_style="green" if summary["structured_all_correct"] else "red"))
    console.print(
        Text(
            "attempts = every tools/call sent, resends included; wasted = a resend that could not change the answer "
            "(the previous one was final, or its source was down); escalated = operations handed up unfinished, "
            "to a person or, for a search's sources, to the coordinator (the policy's escalate decisions). "
            f"Seed {seed}. Recovery waits are shrunk to ≤ 50 ms so the demo runs in seconds. "
            "--show-payload shows what each agent read under each table.",
            style="dim",
        )
    )


def _intro() -> Panel:
    return Panel(
        Group(
            Text("mcp-errors demo: the same support scenarios, two scripted agents (no LLM)", style="bold"),
            Text(
                "Both talk to a real MCP server (`mcp-errors serve`, started over stdio) on a SQLite support desk.\n"
                f"framework default: what {FRAMEWORK}'s MCPToolset does with a tool error unless told otherwise: "
                "every error is a retry (the call 'has to be made again'), the model calls again, and after "
                f"{FRAMEWORK_RETRIES} retry the run stops ('exceeded max retries') for a person "
                "(docs/integrations.md).\n"
                "structured: read_result + RecoveryPolicy: resends only what is retryable and safe, else follows "
                "the category."
            ),
        ),
        border_style="blue",
    )


_FIELDS: Final[Mapping[str, str]] = {
    "errorCategory": "the kind of failure, and so the next step",
    "isRetryable": "whether sending the same call again can succeed",
    "code": "a stable name for this failure, for code and dashboards",
    "description": "what happened and what to do next, in words for the model",
    "retryAfterSeconds": "how long to wait before a resend",
    "fieldErrors": "each bad argument: what was expected, what was received",
    "executionState": "whether the call changed anything (not_executed: nothing did)",
    "errorId": "the server's log line for it (no traceback reaches the agent)",
}
"""What each envelope field tells the agent (docs/wire-format.md); other keys are the tool's own facts."""


def explain_fields(payload: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Each field of an error's structuredContent: its name, its value as JSON, what it tells the agent."""
    explained: list[tuple[str, str, str]] = []
    for name, value in payload.items():
        meaning = _FIELDS.get(name, "the tool's own facts, for the answer")
        if name == "errorCategory" and value in {category.value for category in ErrorCategory}:
            meaning = f"{meaning}: {ADVICE[ErrorCategory(value)].lower()}"
        explained.append((name, json.dumps(value, ensure_ascii=False), meaning))
    return explained


def contract_panel(rows: Sequence[Row]) -> Panel | None:
    """One error as the contract writes it (the refund over the limit), each field explained."""
    scenario = next((row for row in rows if row.scenario == "refund_over_limit" and row.agent == "structured"), None)
    if scenario is None or not scenario.read or not isinstance(scenario.read[0], Mapping):
        return None
    fields = Table(box=None, show_header=False, expand=True, padding=(0, 1))
    fields.add_column("field", style="bold", no_wrap=True)
    fields.add_column("value", max_width=32, no_wrap=True, overflow="ellipsis")
    fields.add_column("tells the agent", ratio=1)
    for name, value, meaning in explain_fields(scenario.read[0]):
        fields.add_row(name, value, meaning)
    parts: list[Any] = [
        Text(
            "The contract, in one error: scenario 2's refund over the limit, an `isError: true` result whose "
            "structuredContent is:"
        ),
        fields,
    ]
    if scenario.texts:
        parts.append(Text(f"Its first text block says the same, for hosts that show only text: {scenario.texts[0]}"))
    return Panel(Group(*parts), title="what an agent reads", title_align="left", border_style="magenta")


def run_and_report(*, sweep: int, seed: int, fault_rate: float, as_json: bool, show_payload: bool = False) -> bool:
    """Run the demo and print the result.

    Args:
        sweep: Tasks in the transient-fault sweep.
        seed: Seeds the desk and its faults.
        fault_rate: Fault rate of the sweep.
        as_json: Print one JSON object instead of tables (it always holds what was read).
        show_payload: Show what each agent read of the errors it met under each table.

    Returns:
        Whether the structured agent was right on every scenario (the exit status).
    """
    out = Console()
    err = Console(stderr=True)
    with (
        metrics_of_run() as metrics,
        Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=err,
            transient=True,
            disable=not err.is_terminal,
        ) as progress,
    ):
        total = (len(SCENARIOS) + (1 if sweep else 0)) * len(AGENTS)
        task = progress.add_task("starting the desks (one MCP server subprocess per agent and run)…", total=total)

        def step(label: str) -> None:
            # Neutral: a run finishing says nothing of its correctness, which the table's ✔/✘ judge.
            # Nothing stays on screen: the first screen is the contract and the first tables.
            progress.update(task, description=f"done: {label}", advance=1)

        rows = anyio.run(lambda: run_demo(sweep=sweep, seed=seed, fault_rate=fault_rate, progress=step))
        figures = metrics.by_category() if metrics.available else None
    if as_json:
        report = build_json(rows, seed=seed, sweep=sweep, fault_rate=fault_rate)
        report["structuredAgentMetrics"] = [row.to_json() for row in figures] if figures is not None else None
        print(json.dumps(report, indent=2))
    else:
        render(out, rows, seed=seed, sweep=sweep, fault_rate=fault_rate, show_payload=show_payload)
        out.print(_metrics_table(figures))
    return bool(summarize(rows)["structured_all_correct"])


def _metrics_table(figures: Sequence[CategoryFigures] | None) -> Table | Text:
    if figures is None:
        return Text("Install opentelemetry-sdk to see the structured agent's operations per category.", style="dim")
    table = Table(
        title="[bold]The structured agent's operations, per final category[/]",
        title_justify="left",
        caption="operations: logical calls, each with its resends (their attempts add up to the totals' attempts); "
        "escalate: the same escalations as the tables'; refused: resends the retry budget refused. From the "
        "OpenTelemetry metrics of this run (mcp_errors.client.call.attempts, .retry_delay, .retry_budget.refusals).",
        caption_justify="left",
        box=box.ROUNDED,
        expand=True,
    )
    for column in ("final outcome", "operations", "attempts", "resends", "waited", "refused"):
        table.add_column(column, justify="left" if column == "final outcome" else "right", no_wrap=True)
    table.add_column("decisions")
    for row in figures:
        decisions = ", ".join(f"{name} {count}" for name, count in sorted(row.decisions.items()))
        table.add_row(
            row.category,
            str(row.calls),
            str(row.attempts),
            str(row.resends),
            f"{row.waited_seconds:.2f} s",
            str(row.budget_refusals),
            decisions,
        )
    return table
