"""Multi-agent propagation: recover locally, escalate selectively, report partial results.

A subagent that fans out to several sources runs each call under the recovery policy
(`gather_partial`), so transient failures are absorbed where they happen. What it cannot
fix travels up as one `PartialReport`: what answered, what failed, how and after how many
attempts. The two anti-patterns are made impossible by construction:

- swallowing a failure: a failed source is never dropped from the report, and a report in
  which every source failed is an `isError` result, never an empty success;
- killing the whole workflow for one failure: one source's error never cancels the others.

The coordinator reads the subagent's result with `read_result` (which recognises a partial
report) and asks `plan_next_step` whether to proceed, re-run only the failed sources, or
escalate. The JSON shape is documented in `docs/multi-agent.md`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio
from mcp_types import CallToolResult, TextContent, Tool

from mcp_errors._client.outcome import OutcomeKind, ToolOutcome, read_result, read_retry_after
from mcp_errors._client.policy import Decision, RecoveryPolicy, RecoveryReport, call_tool_with_recovery
from mcp_errors._shared.advice import ADVICE, format_seconds
from mcp_errors._shared.contract import CATEGORY_VALUES, ErrorCategory
from mcp_errors._shared.envelope import FailureDetails, error_result
from mcp_errors._shared.telemetry import partial_span, record_partial
from mcp_errors._shared.text import one_line

__all__ = [
    "FailedCall",
    "NextStep",
    "PartialReport",
    "ToolCall",
    "gather_partial",
    "plan_next_step",
    "read_partial",
]

logger = logging.getLogger("mcp_errors.partial")

_MAX_RESULT_CHARS: Final = 500


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One named sub-call of `gather_partial`: a tool on a connected client.

    Args:
        client: A connected `mcp.Client`, an initialised `mcp.ClientSession`, a fastmcp
            `Client`, or an `async (name, arguments, meta) -> CallToolResult` function.
        tool: The tool's name.
        arguments: Its arguments.
        tools: The server's tool list, when `client` is a call function: its annotations
            tell the policy which resends are safe (a client's list is fetched itself).
        server: The name that selects the policy's retry budget (see
            `call_tool_with_recovery`); give one per server when `client` is a call function.
    """

    client: object
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict[str, Any])
    tools: Sequence[Tool] | None = None
    server: str | None = None


SubCall = ToolCall | Callable[[], Awaitable[object]]
"""A `ToolCall`, or any zero-argument async factory returning a `CallToolResult` (or a
JSON-able value, read as a success; `None`, `[]`, `{}` and `""` are an empty answer)."""


@dataclass(frozen=True, slots=True)
class FailedCall:
    """A sub-call that still failed after local recovery."""

    category: ErrorCategory | None
    """The last error's category (`None` when the source did not say and it was not inferred)."""
    is_retryable: bool
    """Whether resending the same call later could succeed."""
    attempts: int
    """How many calls were made before giving up."""
    description: str
    """The last error's description."""
    code: str | None = None
    reason: str | None = None
    """Why local recovery stopped (`RecoveryReport.reason`), e.g. `"retries_exhausted"`, or
    `"outcome_unknown"` for a write that may have been applied and so was not resent."""
    retry_after_seconds: float | None = None
    """The wait the server asked for (`retryAfterSeconds`) when it reached past the deadline,
    so that the deadline stopped local recovery (`reason` `"deadline"`); `None` otherwise."""
    task_id: str | None = None
    """The task the sub-call ran as (SEP-2663), when the server ran it as one: still running
    at the deadline and cancelled (`code` `TASK_DEADLINE`), or ended without a result."""

    @property
    def worth_rerunning(self) -> bool:
        """Whether running it again later could succeed and is safe: a transient failure that
        local recovery was already resending (never one whose outcome is unknown)."""
        return self.is_retryable and self.reason not in ("outcome_unknown", "not_retryable")

    def to_json(self) -> dict[str, Any]:
        """The entry of this failure under `failed` in the report's `structuredContent`."""
        data: dict[str, Any] = {
            "errorCategory": self.category.value if self.category is not None else None,
            "isRetryable": self.is_retryable,
            "attempts": self.attempts,
            "description": self.description,
        }
        if self.code is not None:
            data["code"] = self.code
        if self.reason is not None:
            data["reason"] = self.reason
        if self.retry_after_seconds is not None:
            data["retryAfterSeconds"] = self.retry_after_seconds
        if self.task_id is not None:
            data["taskId"] = self.task_id
        return data


@dataclass(frozen=True, slots=True)
class PartialReport:
    """What a fan-out got and what it tried: the unit a subagent hands its coordinator.

    Build it with `gather_partial`; read one from a tool result with `read_partial`.
    """

    succeeded: Mapping[str, ToolOutcome]
    """Name -> outcome for every sub-call that answered (empty results included)."""
    failed: Mapping[str, FailedCall]
    """Name -> the failure of every sub-call that did not."""
    order: tuple[str, ...] = ()
    """The sub-calls' names in the order they were given."""
    reports: Mapping[str, RecoveryReport] = field(default_factory=dict[str, RecoveryReport], repr=False)
    """Name -> the full recovery report, for sub-calls run here (empty when read from a result)."""

    @property
    def complete(self) -> bool:
        """Whether every sub-call answered."""
        return not self.failed

    @property
    def total(self) -> int:
        """How many sub-calls were made, answered or not."""
        return len(self.succeeded) + len(self.failed)

    def aggregated_category(self) -> ErrorCategory | None:
        """The category of the whole when nothing answered, `None` otherwise.

        The whole is retryable only when resending it is worth it and safe for every
        failure (`FailedCall.worth_rerunning`): then `transient`. Otherwise the category
        whose recovery must happen first wins: `permission` (needs another principal), then
        `business` (needs another path), then `validation` (needs other input). Failures of
        unknown category, and transient ones that must not be resent blindly (a write that
        may have been applied), count as `business`: nothing says a resend would help.
        """
        if self.succeeded or not self.failed:
            return None
        categories = {failure.category or ErrorCategory.BUSINESS for failure in self.failed.values()}
        for category in (ErrorCategory.PERMISSION, ErrorCategory.BUSINESS, ErrorCategory.VALIDATION):
            if category in categories:
                return category
        if all(failure.worth_rerunning for failure in self.failed.values()):
            return ErrorCategory.TRANSIENT
        return ErrorCategory.BUSINESS

    def summary(self) -> str:
        """One sentence for the model, e.g. `"3 of 5 sources answered; 4 and 5 timed out ..."`."""
        if self.complete:
            return f"All {self.total} sources answered."
        head = f"{len(self.succeeded)} of {self.total} sources answered; " + _describe_failures(self.failed)
        if not self.succeeded:
            return head + " No partial results."
        return head + " Partial results follow."

    def to_tool_result(self) -> CallToolResult:
        """Write the report as one tool result for the coordinator.

        Returns:
            When some sub-calls succeeded: `isError` false, with `structuredContent`
            `{"partial": bool, "answered", "total", "resultCount", "results", "failed"}`.
            When all failed: `isError` true with the error envelope, its category from
            `aggregated_category`, and the same `answered`/`total`/`failed` fields. Never an
            empty success.
        """
        ordered = self.names
        results = {name: _result_json(self.succeeded[name]) for name in ordered if name in self.succeeded}
        failed = {name: self.failed[name].to_json() for name in ordered if name in self.failed}
        body: dict[str, Any] = {
            "partial": not self.complete,
            "answered": len(self.succeeded),
            "total": self.total,
            "order": ordered,
            "failed": failed,
        }
        lines = [self.summary()]
        for name in ordered:
            if name in self.succeeded:
                lines.append(f"- {name}: {_clip(_outcome_text(self.succeeded[name]))}")
        category = self.aggregated_category()
        if category is None:
            # A source that answered "nothing found" is an answer but not a result: a fan-out
            # where every source found nothing is itself a valid empty result.
            found = sum(1 for outcome in self.succeeded.values() if outcome.kind != "empty")
            body |= {"resultCount": found, "results": results}
            return CallToolResult(content=[TextContent(type="text", text="\n".join(lines))], structured_content=body)
        description = f"{self.summary()} {ADVICE[category]}"
        details = FailureDetails(
            message="No source answered",
            category=category,
            description=description,
            code="ALL_SOURCES_FAILED",
            extra=body,
        )
        return error_result(details)

    def merged_with(self, rerun: PartialReport) -> PartialReport:
        """This report updated by a re-run of some of its sub-calls; the re-run wins."""
        succeeded = {name: o for name, o in self.succeeded.items() if name not in rerun.failed}
        succeeded |= dict(rerun.succeeded)
        failed = {name: f for name, f in self.failed.items() if name not in rerun.succeeded}
        failed |= dict(rerun.failed)
        reports = dict(self.reports) | dict(rerun.reports)
        order = self.order + tuple(name for name in rerun.order if name not in self.order)
        return PartialReport(succeeded=succeeded, failed=failed, order=order, reports=reports)

    @property
    def names(self) -> list[str]:
        """Every sub-call's name, in the given order."""
        names = list(self.order)
        names += sorted(n for n in (*self.succeeded, *self.failed) if n not in self.order)
        return names


async def gather_partial(
    calls: Mapping[str, SubCall],
    *,
    policy: RecoveryPolicy,
    only: Iterable[str] | None = None,
) -> PartialReport:
    """Run named sub-calls concurrently, each with local recovery, and report what came back.

    One failure never cancels the others; cancelling the caller cancels every sub-call
    (they run in one anyio task group, so none is orphaned).

    Args:
        calls: Name -> `ToolCall` or async factory.
        policy: The recovery policy every sub-call runs under.
        only: Run just these names (for a re-run of the failed ones); default all.

    Returns:
        A `PartialReport`.

    Raises:
        KeyError: If `only` names a call that is not in `calls`.

    Example:
        ```python
        import anyio
        from mcp import Client
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import RecoveryPolicy, ToolCall, TransientError, gather_partial, install

        sources = install(MCPServer("sources"))

        @sources.tool()
        def search(source: int) -> str:
            if source > 3:
                raise TransientError("Source timed out", description="Resend after a short wait.")
            return f"hits from {source}"

        async def main() -> None:
            async with Client(sources) as client:
                calls = {f"source_{n}": ToolCall(client, "search", {"source": n}) for n in range(1, 6)}
                report = await gather_partial(calls, policy=RecoveryPolicy(initial_wait=0.001))
            print(report.summary())

        anyio.run(main)
        ```
    """
    names = list(calls) if only is None else list(only)
    missing = [name for name in names if name not in calls]
    if missing:
        raise KeyError(f"unknown sub-calls: {', '.join(missing)}")
    reports: dict[str, RecoveryReport] = {}
    crashed: dict[str, FailedCall] = {}

    async def run_one(name: str) -> None:
        try:
            reports[name] = await _run_sub_call(name, calls[name], policy)
        except Exception:
            # A bug in one sub-call must not cancel its siblings: it becomes a failure of
            # that source, with the traceback in the log and no exception text in the report.
            logger.exception("sub-call %r raised", name)
            crashed[name] = FailedCall(
                category=None,
                is_retryable=False,
                attempts=1,
                description="The sub-call failed with an unexpected error; it was not resent.",
                code="INTERNAL_ERROR",
                reason="unclassified",
            )

    with partial_span(len(names)) as span:
        async with anyio.create_task_group() as group:
            for name in names:
                group.start_soon(run_one, name)
        answered = sum(1 for name in names if name in reports and reports[name].decision is Decision.DONE)
        record_partial(span, answered=answered)

    succeeded: dict[str, ToolOutcome] = {}
    failed: dict[str, FailedCall] = {}
    for name in names:
        if name in crashed:
            failed[name] = crashed[name]
            continue
        report = reports[name]
        if report.decision is Decision.DONE:
            succeeded[name] = report.outcome
        else:
            outcome = report.outcome
            failed[name] = FailedCall(
                category=outcome.category,
                is_retryable=outcome.is_retryable,
                attempts=len(report.attempts),
                description=outcome.description,
                code=outcome.code,
                reason=report.reason,
                retry_after_seconds=_wait_past_deadline(report, policy),
                task_id=outcome.task_id,
            )
    return PartialReport(succeeded=succeeded, failed=failed, order=tuple(names), reports=reports)


def _wait_past_deadline(report: RecoveryReport, policy: RecoveryPolicy) -> float | None:
    """The server's asked wait, when it alone reached past the deadline that stopped recovery."""
    asked = report.outcome.retry_after_seconds
    if report.reason != "deadline" or asked is None or not report.attempts:
        return None
    last = report.attempts[-1]
    return asked if last.elapsed + last.duration + asked >= policy.deadline else None


async def _run_sub_call(name: str, call: SubCall, policy: RecoveryPolicy) -> RecoveryReport:
    if isinstance(call, ToolCall):
        return await call_tool_with_recovery(
            call.client, call.tool, call.arguments, policy=policy, tools=call.tools, server=call.server
        )
    factory = call

    async def call_factory(_tool: str, _arguments: dict[str, Any], _meta: dict[str, Any] | None) -> CallToolResult:
        value = await factory()
        if isinstance(value, CallToolResult):
            return value
        return _value_result(value)

    # A factory declares no annotations: it is resent only when its failure says that
    # nothing was applied.
    return await call_tool_with_recovery(call_factory, name, {}, policy=policy, tools=[], server=f"factory:{name}")


@dataclass(frozen=True, slots=True)
class NextStep:
    """What a coordinator should do with a subagent's (possibly partial) answer."""

    action: Literal["proceed", "rerun_failed", "escalate"]
    rerun: tuple[str, ...] = ()
    """For `rerun_failed`: the names to run again (never ones that succeeded)."""
    reason: str = ""


def plan_next_step(outcome: ToolOutcome | PartialReport, *, min_answered: int | None = None) -> NextStep:
    """Decide between proceeding with a partial answer, re-running failed sources, and escalating.

    Args:
        outcome: The subagent's result read with `read_result`, or a `PartialReport`.
        min_answered: How many sources are enough to proceed; default all of them.

    Returns:
        `proceed` when enough answered; else `rerun_failed` with the failed sources that a
        resend could fix (transient ones); else `escalate`.

    Example:
        ```python
        from mcp_errors import FailedCall, PartialReport, plan_next_step, read_result
        from mcp_types import CallToolResult, TextContent, Tool

        ok = read_result(CallToolResult(content=[TextContent(type="text", text="hits")]))
        report = PartialReport(
            succeeded={"a": ok},
            failed={"b": FailedCall(category=None, is_retryable=False, attempts=1, description="?")},
        )
        assert plan_next_step(report, min_answered=1).action == "proceed"
        ```
    """
    report = outcome if isinstance(outcome, PartialReport) else read_partial(outcome)
    if report is None:
        if isinstance(outcome, ToolOutcome) and outcome.ok:
            return NextStep("proceed", reason="the call answered in full")
        return NextStep("escalate", reason="the call failed and is not a partial report")
    needed = report.total if min_answered is None else min_answered
    if len(report.succeeded) >= needed:
        return NextStep("proceed", reason=f"{len(report.succeeded)} of {report.total} answered, {needed} needed")
    fixable = tuple(name for name in report.names if name in report.failed and report.failed[name].worth_rerunning)
    if fixable:
        return NextStep("rerun_failed", rerun=fixable, reason="the missing sources failed temporarily")
    return NextStep("escalate", reason="the missing sources failed in ways a resend cannot fix")


def read_partial(outcome: ToolOutcome | CallToolResult) -> PartialReport | None:
    """Read a partial report back out of a subagent's tool result.

    Args:
        outcome: The subagent's result, raw or read with `read_result`.

    Returns:
        The report (its `reports` are empty: the attempts stayed with the subagent), or
        `None` when the result is not a partial report.

    Example:
        ```python
        from mcp_types import CallToolResult, TextContent
        from mcp_errors import read_partial

        plain = CallToolResult(content=[TextContent(type="text", text="42")])
        assert read_partial(plain) is None
        ```
    """
    if isinstance(outcome, CallToolResult):
        outcome = read_result(outcome)
    data = outcome.structured
    if not isinstance(data, Mapping) or not isinstance(data.get("failed"), Mapping) or "answered" not in data:
        return None
    # Another writer's report may say anything in any field: what cannot be read is left out
    # (an answer), unknown (a category) or not retryable.
    results = data.get("results")
    succeeded: dict[str, ToolOutcome] = {}
    if isinstance(results, Mapping):
        for name, value in results.items():
            kind: OutcomeKind = "empty" if _is_empty_answer(value) else "success"
            succeeded[str(name)] = ToolOutcome(kind=kind, structured=value, description=_clip(_json(value)))
    failed: dict[str, FailedCall] = {}
    for name, value in data["failed"].items():
        if not isinstance(value, Mapping):
            continue
        category = value.get("errorCategory")
        known = ErrorCategory(category) if isinstance(category, str) and category in CATEGORY_VALUES else None
        description = value.get("description")
        failed[str(name)] = FailedCall(
            category=known,
            # Both the category and the flag must agree before a rerun is considered.
            is_retryable=value.get("isRetryable") is True and known is ErrorCategory.TRANSIENT,
            attempts=_count(value.get("attempts")),
            description=description if isinstance(description, str) else "",
            code=value.get("code") if isinstance(value.get("code"), str) else None,
            reason=value.get("reason") if isinstance(value.get("reason"), str) else None,
            retry_after_seconds=read_retry_after(value.get("retryAfterSeconds")),
            task_id=value.get("taskId") if isinstance(value.get("taskId"), str) else None,
        )
    names = [*succeeded, *(name for name in failed if name not in succeeded)]
    listed = data.get("order")
    if isinstance(listed, list) and all(isinstance(name, str) for name in listed) and sorted(listed) == sorted(names):
        names = listed
    return PartialReport(succeeded=succeeded, failed=failed, order=tuple(names))


def _count(value: object) -> int:
    # Another writer's report may say anything here; a count it cannot give is unknown (0).
    return value if type(value) is int and value >= 0 else 0


def _is_empty_answer(value: object) -> bool:
    return isinstance(value, Mapping) and type(value.get("resultCount")) is int and value["resultCount"] == 0


def _describe_failures(failed: Mapping[str, FailedCall]) -> str:
    groups: dict[tuple[str, int, str], list[str]] = {}
    for name, failure in failed.items():
        groups.setdefault((_failure_phrase(failure), failure.attempts, _why_stopped(failure)), []).append(name)
    parts = []
    for (phrase, attempts, why), names in groups.items():
        each = " each" if len(names) > 1 else ""
        tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}{each}" if attempts else ""
        parts.append(f"{_join(names)} {phrase}{tries}{why}")
    return "; ".join(parts) + "."


def _why_stopped(failure: FailedCall) -> str:
    """Why local recovery stopped resending, when it is not obvious from the attempt count."""
    if failure.reason == "deadline" and failure.retry_after_seconds is not None:
        wait = format_seconds(failure.retry_after_seconds)
        return f" (the deadline ran out: the server asked for a wait of {wait} s, past it)"
    return _WHY_STOPPED.get(failure.reason or "", "")


_WHY_STOPPED: Final = {
    "deadline": " (the deadline ran out)",
    "retry_budget": " (retries paused: the server's retry budget is spent)",
    "outcome_unknown": " (not resent: it may have been applied)",
}


def _failure_phrase(failure: FailedCall) -> str:
    category = failure.category.value if failure.category is not None else "unclassified"
    if failure.code == "TASK_DEADLINE":
        return f"timed out as a running task ({category}, cancelled)"
    if failure.code is not None and "TIMEOUT" in failure.code:
        return f"timed out ({category})"
    if failure.task_id is not None:
        return f"failed as a task ({category})"
    return f"failed ({category})"


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _result_json(outcome: ToolOutcome) -> Any:
    if outcome.kind == "empty":
        # However the source said "nothing found", the report says it the contract's way,
        # so that a reader of the report (`read_partial`) sees the same thing.
        if isinstance(outcome.structured, Mapping):
            return {**outcome.structured, "resultCount": 0}
        return {"resultCount": 0} if outcome.structured is None else {"result": outcome.structured, "resultCount": 0}
    if outcome.structured is not None:
        return outcome.structured
    return {"text": outcome.message}


def _outcome_text(outcome: ToolOutcome) -> str:
    if outcome.message:
        return outcome.message
    if outcome.kind == "empty":
        return "(searched, found nothing)"
    return _json(outcome.structured)


def _value_result(value: object) -> CallToolResult:
    structured = value if isinstance(value, dict) else {"result": value}
    if value is None or (isinstance(value, list | dict | str) and not value):
        # Written as the SDKs write an empty return value (no content), so that it is an
        # empty answer, as the same answer from a tool is.
        return CallToolResult(content=[], structured_content=structured)
    return CallToolResult(content=[TextContent(type="text", text=_json(value))], structured_content=structured)


def _json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # nested too deep, or an integer past the digit limit
        return "(an answer too large to show)"


def _clip(text: str) -> str:
    return one_line(text, _MAX_RESULT_CHARS)
