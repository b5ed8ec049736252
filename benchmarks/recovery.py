"""Fault sweep: this recovery policy vs a naive agent vs a tenacity retry loop, side by side.

Each run sends the same logical requests, with the same random faults, to an in-process
fake server (the policy drives any `async (name, arguments, meta) -> CallToolResult`):

- 80% are reads of a read-only tool whose every call fails transiently with probability p
  (`executionState: not_executed`); p = 0.1, 0.3, 0.5 and 1.0 (a full outage);
- 20% get an answer that no resend can change: validation, business, permission errors
  and valid empty results (5% each).

Strategies:
- policy: `call_tool_with_recovery`, `max_attempts=3`, one `RetryBudget` for the server;
- naive: resend any error or empty result up to 3 times, then escalate (what "try again"
  prompts do);
- tenacity: `stop_after_attempt(3)` + `wait_exponential()` on any `isError` result, no budget.

Waits are virtual (the policy's testing mode; a fake sleep for tenacity), so the run is
fast and the wait column is what the strategy would have slept.

Run: `uv run python benchmarks/recovery.py [--requests 4000] [--seed 7]`
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp_types import CallToolResult, TextContent, Tool, ToolAnnotations
from tenacity import AsyncRetrying, retry_if_result, stop_after_attempt, wait_exponential

from mcp_errors import ErrorCategory, ExecutionState, RecoveryPolicy, RetryBudget, call_tool_with_recovery, empty_result
from mcp_errors._shared.contract import FieldError
from mcp_errors._shared.envelope import FailureDetails, error_result
from mcp_errors.testing import set_testing

K = 3
PERMANENT = ("validation", "business", "permission", "empty")
TOOLS = [
    Tool(name=name, input_schema={"type": "object"}, annotations=ToolAnnotations(read_only_hint=True))
    for name in ("read", *PERMANENT)
]


@dataclass
class Tally:
    requests: int = 0
    fault_exposed: int = 0
    fault_exposed_ok: int = 0
    calls: int = 0
    wasted: int = 0
    wait: float = 0.0
    outcomes: dict[str, int] = field(default_factory=dict)


def permanent_result(kind: str) -> CallToolResult:
    if kind == "empty":
        return empty_result("No match; the lookup ran and found nothing.")
    category = ErrorCategory(kind)
    return error_result(
        FailureDetails(
            message=f"{kind} failure",
            category=category,
            description="Resending the same call cannot change this answer.",
            field_errors=(FieldError("q", "bad"),) if category is ErrorCategory.VALIDATION else (),
            execution_state=ExecutionState.NOT_EXECUTED,
        )
    )


TRANSIENT = error_result(
    FailureDetails(
        message="Upstream busy",
        category=ErrorCategory.TRANSIENT,
        description="Resend after a short wait.",
        execution_state=ExecutionState.NOT_EXECUTED,
    )
)
OK = CallToolResult(content=[TextContent(type="text", text="3 rows")])


def make_server(
    p: float, rng: random.Random, tally: Tally
) -> Callable[[str, dict[str, Any], Any], Awaitable[CallToolResult]]:
    async def call(name: str, arguments: dict[str, Any], meta: Any) -> CallToolResult:
        tally.calls += 1
        if name in PERMANENT:
            if arguments["sent"]:
                tally.wasted += 1
            arguments["sent"] = True
            return permanent_result(name)
        return TRANSIENT if rng.random() < p else OK

    return call


def workload(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [rng.choice(PERMANENT) if rng.random() < 0.2 else "read" for _ in range(n)]


async def run_policy(tools: list[str], p: float, seed: int) -> Tally:
    tally = Tally()
    call = make_server(p, random.Random(seed * 7919 + 1), tally)
    policy = RecoveryPolicy(max_attempts=K, deadline=60)
    budget = RetryBudget()
    with set_testing():
        for name in tools:
            report = await call_tool_with_recovery(
                call, name, {"sent": False}, policy=policy, budget=budget, tools=TOOLS
            )
            record(tally, name, report.outcome.ok and report.outcome.kind == "success", report.total_wait)
    return tally


async def run_naive(tools: list[str], p: float, seed: int) -> Tally:
    tally = Tally()
    call = make_server(p, random.Random(seed * 7919 + 1), tally)
    for name in tools:
        arguments = {"sent": False}
        result = await call(name, arguments, None)
        for _ in range(3):
            if not (result.is_error or result.structured_content == {"resultCount": 0}):
                break
            result = await call(name, arguments, None)
        record(tally, name, not result.is_error and result.structured_content is None, 0.0)
    return tally


async def run_tenacity(tools: list[str], p: float, seed: int) -> Tally:
    tally = Tally()
    call = make_server(p, random.Random(seed * 7919 + 1), tally)
    waited = [0.0]

    async def fake_sleep(seconds: float) -> None:
        waited[0] += seconds

    for name in tools:
        waited[0] = 0.0
        arguments = {"sent": False}
        retrying = AsyncRetrying(
            stop=stop_after_attempt(K),
            wait=wait_exponential(),
            retry=retry_if_result(lambda r: r.is_error),
            sleep=fake_sleep,
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else None,
        )
        result = await retrying(call, name, arguments, None)
        record(tally, name, not result.is_error and result.structured_content is None, waited[0])
    return tally


def record(tally: Tally, name: str, succeeded: bool, wait: float) -> None:
    tally.requests += 1
    tally.wait += wait
    if name == "read":
        tally.fault_exposed += 1
        tally.fault_exposed_ok += succeeded


async def main(requests: int, seed: int) -> None:
    tools = workload(requests, seed)
    reads = tools.count("read")
    print(f"{requests} logical requests ({reads} fault-exposed reads, {requests - reads} unchangeable answers), k={K}")
    header = f"{'p':>5} {'strategy':<9} {'success':>8} {'1-p^k':>7} {'calls/req':>9} {'wasted':>7} {'wait s/req':>10}"
    print(header)
    print("-" * len(header))
    for p in (0.1, 0.3, 0.5, 1.0):
        for label, runner in (("policy", run_policy), ("naive", run_naive), ("tenacity", run_tenacity)):
            tally = await runner(tools, p, seed)
            success = tally.fault_exposed_ok / tally.fault_exposed
            print(
                f"{p:>5.1f} {label:<9} {success:>8.1%} {1 - p**K:>7.1%} {tally.calls / tally.requests:>9.3f} "
                f"{tally.wasted:>7d} {tally.wait / tally.requests:>10.2f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    anyio.run(main, options.requests, options.seed)
