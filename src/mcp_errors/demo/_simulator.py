"""The scenario simulator: two scripted agents (no LLM) against the real demo desk.

`run_demo` starts `mcp-errors serve` as a subprocess over stdio (via `sys.executable -m
mcp_errors`, so no console script is needed on PATH) and runs each scenario twice:

- the **framework default** agent does what an agent framework does with a tool error by
  default, here Pydantic AI's `MCPToolset` (docs/integrations.md): every error result is a
  retry (`tool_error_behavior="retry"`: `ModelRetry`, "the call has to be made again", with
  the error's structuredContent as JSON), the model (scripted: it does what the retry asks)
  calls the tool again, and after one retry (the default `max_retries=1`) the next error
  ends the run ("exceeded max retries"), which a person then picks up (escalated). A
  success, empty or not, is an answer;
- the **structured** agent reads every result with `read_result`, resends only through
  `call_tool_with_recovery` (a `RecoveryPolicy` with an idempotency key per operation) and
  fans out searches collecting partial results.

Every `tools/call` sent is an *attempt*; a recorder counts them and the *wasted* ones:
resends of a call whose previous answer was final (a valid empty result or a non-retryable
error) or whose target was down for the whole scenario, i.e. resends that could not change
the answer. An *escalation* is an operation handed up unfinished: to a person, or, for a
fan-out's source, to the coordinator (the policy's `escalate` decision). Correctness is
judged from outside the agents: from their final claim and, for refunds, from the desk's
database.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent, Tool

from mcp_errors._client.outcome import ToolOutcome, read_result
from mcp_errors._client.partial import ToolCall, gather_partial
from mcp_errors._client.policy import Decision, RecoveryPolicy, RecoveryReport, call_tool_with_recovery
from mcp_errors._shared.contract import ExecutionState
from mcp_errors.demo._db import AUTO_REFUND_LIMIT, KNOWLEDGE_SOURCES, money

__all__ = ["AgentName", "Row", "demo_policy", "run_demo"]

AgentName = Literal["framework_default", "structured"]
AGENTS: Final[tuple[AgentName, ...]] = ("framework_default", "structured")
FRAMEWORK: Final = "Pydantic AI 2.68"
"""The framework whose defaults the framework-default agent follows (docs/integrations.md)."""
FRAMEWORK_RETRIES: Final = 1
"""Pydantic AI's default for a tool (`max_retries=1`): one retry after an error, then the run ends."""


def demo_policy() -> RecoveryPolicy:
    """The structured agent's policy, new for each desk so that each starts with a full retry
    budget (a policy keeps its budgets, and these calls all fall under one server name).

    Its waits are shrunk to at most 50 ms so that the demo runs in seconds; a production
    policy waits longer. Its 5 s deadline is shorter than the 30 s a down source asks for, so
    the agent does not resend into an outage.
    """
    return RecoveryPolicy(max_attempts=4, deadline=5.0, initial_wait=0.005, max_wait=0.05)


BIG_REFUND: Final = 750.0
SEARCH_QUERY: Final = "refund"
SEARCH_OUTAGES: Final = ("tickets", "community")
UNKNOWN_EMAIL: Final = "john@example.com"
BIG_REFUND_ORDER: Final = "#10002"
TYPO_ORDER_ID: Final = "order-abc"
CUSTOMER_REPLY_ORDER_ID: Final = "#10007"
"""What the simulated customer answers when asked for the order id again."""


@dataclass(frozen=True, slots=True)
class Row:
    """One agent's run of one scenario."""

    scenario: str
    agent: AgentName
    attempts: int
    """Every `tools/call` the agent sent, resends included."""
    wasted_attempts: int
    escalated: int
    """Operations handed up unfinished: to a person, or a fan-out's sources to the coordinator."""
    correct: bool
    outcome: str
    """The final outcome in a few words, for the table."""
    read: tuple[Any, ...] = ()
    """What the agent read of each kind of error it met, in order: the error result's
    `structuredContent` for the structured agent; for the framework's model, what Pydantic AI
    puts in its retry: that structuredContent as JSON (the text block when there is none)."""
    texts: tuple[str, ...] = field(default=(), compare=False)
    """The first text block of each kind of error met (what text-only hosts show), not in `--json`."""

    def to_json(self) -> dict[str, Any]:
        """The row as the `--json` output's scenario object."""
        return {
            "scenario": self.scenario,
            "agent": self.agent,
            "attempts": self.attempts,
            "wasted_attempts": self.wasted_attempts,
            "escalated": self.escalated,
            "correct": self.correct,
            "outcome": self.outcome,
            "read": list(self.read),
        }


@dataclass(frozen=True, slots=True)
class Scenario:
    key: str
    title: str
    right_answer: str
    """What a correct agent does, shown above the table."""


SCENARIOS: Final = (
    Scenario("empty_lookup", "Customer lookup matches nobody", "Tell the customer no account matches; do not resend."),
    Scenario(
        "refund_over_limit",
        f"Refund of {money(BIG_REFUND)} (limit {money(AUTO_REFUND_LIMIT)})",
        "Escalate to a human with the details; never shrink the amount.",
    ),
    Scenario("bad_order_id", "Order id 'order-abc'", "Ask for an id like #12345, then look it up; no human needed."),
    Scenario(
        "partial_search",
        "Search where 3 of 5 sources answer",
        "Answer from the 3 sources that answered and name the 2 that timed out.",
    ),
    Scenario(
        "no_finance_role",
        "Financial records without the finance role",
        "Escalate to someone with finance access; resending cannot help.",
    ),
)
SWEEP: Final = Scenario(
    "transient_sweep",
    "Transient-fault sweep",
    "Resend what is safe while the attempts, the deadline and the retry budget allow; report what still "
    "fails as not done (escalate), or as outcome unknown when a refund's answer was lost. Never claim a "
    "refund that did not land, never call one that landed not done, never apply one twice.",
)
"""Every fault here is transient, so a task is right when it is done (a refund applied exactly
once), or when the agent says it is not done and it is not: when the faults outlast the
resends a policy allows (at high fault rates, often), escalating is the right answer, for
either agent. A refund whose answer was lost may have landed: only "outcome unknown" is then
true, and a human told "not done" would refund it a second time."""


@dataclass
class _Recorder:
    """Counts the calls one agent makes in one scenario, and which were wasted."""

    outages: frozenset[tuple[str, str | None]] = frozenset()
    attempts: int = 0
    wasted: int = 0
    escalations: int = 0
    """Operations handed up unfinished (the agents count their own: only they know)."""
    errors: dict[object, tuple[Any, str]] = field(default_factory=dict[object, tuple[Any, str]])
    """Each kind of error met (category and code), first occurrence: structuredContent and text."""
    _last: dict[str, ToolOutcome] = field(default_factory=dict[str, ToolOutcome])

    def record(self, name: str, arguments: Mapping[str, Any], result: CallToolResult) -> None:
        key = json.dumps([name, arguments], sort_keys=True, default=str)
        previous = self._last.get(key)
        self.attempts += 1
        if previous is not None and (_is_final(previous) or self._down(name, arguments)):
            self.wasted += 1
        outcome = self._last[key] = read_result(result)
        if outcome.kind == "error":
            self.errors.setdefault((outcome.category, outcome.code), (result.structured_content, _text(result)))

    def read_by(self, agent: AgentName) -> tuple[Any, ...]:
        """What `agent` read of each kind of error: the envelope, or the envelope as Pydantic AI's JSON."""
        if agent == "structured":
            return tuple(structured for structured, _ in self.errors.values())
        return tuple(
            text if structured is None else json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
            for structured, text in self.errors.values()
        )

    def texts(self) -> tuple[str, ...]:
        """The first text block of each kind of error met."""
        return tuple(text for _, text in self.errors.values())

    def _down(self, name: str, arguments: Mapping[str, Any]) -> bool:
        source = arguments.get("source")
        return (name, None) in self.outages or (name, source if isinstance(source, str) else None) in self.outages


def _is_final(outcome: ToolOutcome) -> bool:
    return outcome.kind == "empty" or (outcome.kind == "error" and not outcome.is_retryable)


class _Desk:
    """A connection to one desk subprocess, with a recorder per scenario run."""

    def __init__(self, client: Client, tools: Sequence[Tool], db_path: Path) -> None:
        self.client = client
        self.tools = tools
        self.db_path = db_path
        self.recorder = _Recorder()
        self.policy = demo_policy()

    def start(self, outages: frozenset[tuple[str, str | None]] = frozenset()) -> _Recorder:
        self.recorder = _Recorder(outages)
        return self.recorder

    async def call(self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> CallToolResult:
        # The recovery policy calls through here too, so its resends are counted.
        result = await self.client.call_tool(name, arguments, meta=meta)  # type: ignore[arg-type]  # open _meta map
        self.recorder.record(name, arguments, result)
        return result

    def refunds(self, order_id: str) -> int:
        """How many refunds the desk's database holds for an order (the auditor's view)."""
        # Read-only and outside the server: the agents' claims are checked against the data.
        with closing(sqlite3.connect(f"{self.db_path.as_uri()}?mode=ro", uri=True)) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM refunds WHERE order_id = ?", (order_id,)).fetchone()[0])


@asynccontextmanager
async def _desk(db_path: Path, seed: int, extra_args: Sequence[str]) -> AsyncIterator[_Desk]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_errors", "serve", "--db", str(db_path), "--seed", str(seed), *extra_args],
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    with open(os.devnull, "w") as errlog:  # noqa: ASYNC230  # opening /dev/null does not block
        async with Client(stdio_client(params, errlog=errlog)) as client:
            tools = (await client.list_tools()).tools
            yield _Desk(client, tools, db_path)


# -- the two agents ---------------------------------------------------------------------


def _text(result: CallToolResult) -> str:
    return next((block.text for block in result.content if isinstance(block, TextContent)), "")


async def _framework_call(desk: _Desk, name: str, arguments: dict[str, Any]) -> bool:
    """Pydantic AI's default: an error is a retry, and the call is made again, once; a second
    error ends the run. Whether the tool answered (a success, empty or not)."""
    for _ in range(1 + FRAMEWORK_RETRIES):
        result = await desk.call(name, arguments)
        if not result.is_error:
            return True
    desk.recorder.escalations += 1  # "exceeded max retries": the run stops, a person takes over
    return False


async def _structured_call(desk: _Desk, name: str, arguments: dict[str, Any]) -> RecoveryReport:
    report = await call_tool_with_recovery(desk.call, name, arguments, policy=desk.policy, tools=desk.tools)
    desk.recorder.escalations += report.decision is Decision.ESCALATE
    return report


@dataclass(frozen=True, slots=True)
class _Verdict:
    outcome: str
    correct: bool


async def _empty_lookup(desk: _Desk, agent: AgentName) -> _Verdict:
    args = {"email": UNKNOWN_EMAIL}
    if agent == "framework_default":
        # A valid empty result is a success: the framework hands it to the model as an answer.
        ok = await _framework_call(desk, "lookup_customer", args)
        if ok:
            return _Verdict("told the customer: no account with that email", True)
        return _Verdict("escalated a customer that does not exist", False)
    report = await _structured_call(desk, "lookup_customer", args)
    if report.decision is Decision.DONE and report.outcome.kind == "empty":
        return _Verdict("told the customer: no account with that email", True)
    return _Verdict(f"unexpected: {report.decision.value}", False)


async def _refund_over_limit(desk: _Desk, agent: AgentName) -> _Verdict:
    args = {"order_id": BIG_REFUND_ORDER, "amount": BIG_REFUND, "reason": "arrived broken"}
    if agent == "framework_default":
        ok = await _framework_call(desk, "process_refund", args)
        escalated = not ok
    else:
        report = await _structured_call(desk, "process_refund", args)
        escalated = report.decision is Decision.ESCALATE and report.reason == "business"
    applied = desk.refunds(BIG_REFUND_ORDER)
    if escalated and applied == 0:
        return _Verdict("escalated to a human with the refund details", True)
    return _Verdict(f"{applied} refund(s) applied without approval", False)


async def _bad_order_id(desk: _Desk, agent: AgentName) -> _Verdict:
    if agent == "framework_default":
        ok = await _framework_call(desk, "get_order", {"order_id": TYPO_ORDER_ID})
        if ok:
            return _Verdict("claimed the order was found", False)
        return _Verdict("escalated a typo to a human", False)
    report = await _structured_call(desk, "get_order", {"order_id": TYPO_ORDER_ID})
    expected = next((error.expected for error in report.field_errors if error.field == "order_id"), None)
    if report.decision is not Decision.FIX_INPUT or expected is None:
        return _Verdict(f"unexpected: {report.decision.value}", False)
    # The field error says what the id looks like: ask the customer for one in that format.
    fixed = await _structured_call(desk, "get_order", {"order_id": CUSTOMER_REPLY_ORDER_ID})
    if fixed.decision is Decision.DONE and fixed.outcome.kind == "success":
        return _Verdict(f"asked for the id ({expected}), then found {CUSTOMER_REPLY_ORDER_ID}", True)
    return _Verdict("could not find the corrected order", False)


async def _partial_search(desk: _Desk, agent: AgentName) -> _Verdict:
    if agent == "framework_default":
        for source in KNOWLEDGE_SOURCES:
            ok = await _framework_call(desk, "search_knowledge", {"query": SEARCH_QUERY, "source": source})
            if not ok:
                return _Verdict(f"the run stopped at '{source}' (max retries): the whole search escalated", False)
        return _Verdict("answered from all five sources", False)
    calls = {
        source: ToolCall(desk.call, "search_knowledge", {"query": SEARCH_QUERY, "source": source}, tools=desk.tools)
        for source in KNOWLEDGE_SOURCES
    }
    report = await gather_partial(calls, policy=desk.policy)
    # Each source the policy gave up on is handed to the coordinator (this agent), which answers.
    desk.recorder.escalations += sum(each.decision is Decision.ESCALATE for each in report.reports.values())
    correct = sorted(report.failed) == sorted(SEARCH_OUTAGES) and len(report.succeeded) == len(KNOWLEDGE_SOURCES) - len(
        SEARCH_OUTAGES
    )
    # The coordinator gets the summary sentence, e.g. "3 of 5 sources answered; ...".
    return _Verdict(report.summary().removesuffix(" Partial results follow."), correct)


async def _no_finance_role(desk: _Desk, agent: AgentName) -> _Verdict:
    args = {"customer_id": "C-1003"}
    if agent == "framework_default":
        ok = await _framework_call(desk, "get_financial_records", args)
        if ok:
            return _Verdict("read records it may not read", False)
        return _Verdict("escalated to someone with finance access", True)
    report = await _structured_call(desk, "get_financial_records", args)
    if report.decision is Decision.ESCALATE and report.reason == "permission":
        return _Verdict("escalated to someone with finance access", True)
    return _Verdict(f"unexpected: {report.decision.value}", False)


_RUNNERS: Final[dict[str, Callable[[_Desk, AgentName], Awaitable[_Verdict]]]] = {
    "empty_lookup": _empty_lookup,
    "refund_over_limit": _refund_over_limit,
    "bad_order_id": _bad_order_id,
    "partial_search": _partial_search,
    "no_finance_role": _no_finance_role,
}


# -- the transient-fault sweep ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Task:
    tool: str
    arguments: dict[str, Any]


def _sweep_tasks(size: int) -> list[_Task]:
    tasks: list[_Task] = []
    for index in range(size):
        # Every other task is a small refund, spread over the orders so that doubles show.
        if index % 2 == 0:
            order = f"#{10001 + (index // 2) % 60:05d}"
            tasks.append(_Task("process_refund", {"order_id": order, "amount": 5.0, "reason": "late delivery"}))
        elif index % 4 == 1:
            tasks.append(_Task("lookup_customer", {"email": "chidi.okafor@example.com"}))
        else:
            tasks.append(_Task("get_order", {"order_id": f"#{10001 + index % 60:05d}"}))
    return tasks


_STOPPED_RESENDING: Final[dict[str, str]] = {
    "retries_exhausted": "attempts used up",
    "deadline": "deadline",
    "retry_budget": "retry budget spent",
    "outcome_unknown": "unsafe to resend",
}
"""Why the structured agent stopped resending a task, as the sweep's outcome says it."""


async def _sweep(desk: _Desk, agent: AgentName, size: int) -> _Verdict:
    done = wrong = doubles = landed_said_not_done = 0
    escalated: Counter[str] = Counter()
    unknown = 0
    tasks = _sweep_tasks(size)
    for task in tasks:
        order = task.arguments.get("order_id", "")
        before = desk.refunds(order) if task.tool == "process_refund" else 0
        # Judged by SWEEP's right answer, the same for both agents: done, or said to be not
        # done; what tells them apart is a refund applied twice, and the calls it took.
        if agent == "framework_default":
            ok = await _framework_call(desk, task.tool, task.arguments)
            claimed_done, reason = ok, f"after {FRAMEWORK_RETRIES} retry"
            said_not_done = not ok  # the run stopped: a person is told it failed
            said_unknown = False  # the framework reads no execution state, and says "failed"
        else:
            report = await _structured_call(desk, task.tool, task.arguments)
            claimed_done = report.decision is Decision.DONE
            reason = _STOPPED_RESENDING.get(report.reason or "", str(report.reason))
            said_unknown = not claimed_done and any(
                attempt.outcome.execution_state is ExecutionState.OUTCOME_UNKNOWN for attempt in report.attempts
            )
            said_not_done = (
                not said_unknown and report.decision is Decision.ESCALATE and report.reason in _STOPPED_RESENDING
            )
        if task.tool == "process_refund":
            applied = desk.refunds(order) - before
            doubles += applied > 1
            landed_said_not_done += said_not_done and applied > 0
            if claimed_done:
                right = applied == 1
            elif said_unknown:
                right = applied <= 1
            else:
                right = said_not_done and applied == 0
        else:
            right = claimed_done or said_not_done or said_unknown
        done += claimed_done
        if said_unknown:
            unknown += 1
        elif not claimed_done:
            escalated[reason] += 1
        wrong += not right
    parts = [f"{done}/{len(tasks)} done"]
    if escalated:
        why = ", ".join(f"{count} {reason}" for reason, count in escalated.most_common())
        parts.append(f"{escalated.total()} escalated as not done ({why})")
    if unknown:
        parts.append(f"{unknown} escalated with the outcome unknown (an answer lost after the refund committed)")
    if landed_said_not_done:
        parts.append(f"{landed_said_not_done} said not done but landed")
    parts.append(f"{doubles} double refund{'s' if doubles != 1 else ''}")
    return _Verdict(", ".join(parts), wrong == 0 and doubles == 0)


# -- running it all ---------------------------------------------------------------------

ProgressFn = Callable[[str], None]


async def run_demo(
    *, sweep: int = 20, seed: int = 7, fault_rate: float = 0.3, progress: ProgressFn | None = None
) -> list[Row]:
    """Run both agents through every scenario against real desk subprocesses.

    Args:
        sweep: Tasks in the transient-fault sweep (0 skips it).
        seed: Seeds the desk's data and its fault injection.
        fault_rate: Transient fault rate of the sweep's desk (refund answers are lost at
            the same rate, after the refund committed).
        progress: Called with a short label after each scenario run.

    Returns:
        One row per scenario and agent, in order.
    """
    report = progress or (lambda _label: None)
    rows: list[Row] = []
    outages = [arg for source in SEARCH_OUTAGES for arg in ("--outage", f"search_knowledge:{source}")]
    down = frozenset(("search_knowledge", source) for source in SEARCH_OUTAGES)
    faults = ["--fault-rate", str(fault_rate), "--commit-then-timeout", str(fault_rate)]

    async def scenarios(agent: AgentName, db_path: Path) -> None:
        async with _desk(db_path, seed, outages) as desk:
            for scenario in SCENARIOS:
                recorder = desk.start(down if scenario.key == "partial_search" else frozenset())
                verdict = await _RUNNERS[scenario.key](desk, agent)
                rows.append(_row(scenario, agent, recorder, verdict))
                report(f"{scenario.title} · {agent}")

    async def sweep_run(agent: AgentName, db_path: Path) -> None:
        async with _desk(db_path, seed, faults) as desk:
            recorder = desk.start()
            verdict = await _sweep(desk, agent, sweep)
            rows.append(_row(SWEEP, agent, recorder, verdict))
            report(f"{SWEEP.title} ({sweep} tasks) · {agent}")

    with tempfile.TemporaryDirectory(prefix="mcp-errors-demo-") as tmp:
        # Every agent gets its own desks (neither sees the other's refunds or fault draws),
        # and all desks run at once: most of the wall time is starting the subprocesses.
        async with anyio.create_task_group() as group:
            for agent in AGENTS:
                group.start_soon(scenarios, agent, Path(tmp) / f"{agent}.sqlite3")
                if sweep:
                    group.start_soon(sweep_run, agent, Path(tmp) / f"sweep-{agent}.sqlite3")
    order = [s.key for s in (*SCENARIOS, SWEEP)]
    return sorted(rows, key=lambda row: (order.index(row.scenario), AGENTS.index(row.agent)))


def _row(scenario: Scenario, agent: AgentName, recorder: _Recorder, verdict: _Verdict) -> Row:
    return Row(
        scenario=scenario.key,
        agent=agent,
        attempts=recorder.attempts,
        wasted_attempts=recorder.wasted,
        escalated=recorder.escalations,
        correct=verdict.correct,
        outcome=verdict.outcome,
        read=recorder.read_by(agent),
        texts=recorder.texts(),
    )
