"""Refund idempotency on the demo desk: lost answers plus resends never refund twice."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import anyio
import pytest
from mcp import Client

from mcp_errors import Decision, ExecutionState, RecoveryPolicy, call_tool_with_recovery
from mcp_errors.demo import Database, DeskConfig, FaultConfig, build_server
from mcp_errors.testing import set_testing

# 300 refunds, about 90 of them with a lost answer and a resume under the same key: every
# one is checked. A scheduled run can ask for the 1,000 this proof used to make.
REFUNDS = int(os.environ.get("MCP_ERRORS_DEMO_REFUNDS", "300"))
ORDERS = 60


def order_for(index: int) -> str:
    return f"#{10001 + index % ORDERS}"


@pytest.mark.anyio
async def test_many_refunds_under_commit_then_timeout_are_each_applied_once_or_reported_not_applied() -> None:
    db = Database()
    faults = FaultConfig.build(fault_rate=0.2, commit_then_timeout=0.3, seed=11)
    server = build_server(DeskConfig(faults=faults), database=db)
    policy = RecoveryPolicy(max_attempts=3, deadline=60.0)
    claimed: Counter[str] = Counter()
    lost_answers = not_applied = 0
    with set_testing(), anyio.fail_after(120):
        async with Client(server) as client:
            for index in range(REFUNDS):
                args: dict[str, Any] = {"order_id": order_for(index), "amount": 1.0, "reason": f"refund {index}"}
                report = await call_tool_with_recovery(client, "process_refund", args, policy=policy)
                states = {attempt.outcome.execution_state for attempt in report.attempts}
                lost_answers += ExecutionState.OUTCOME_UNKNOWN in states
                resumes = 0
                while report.decision is not Decision.DONE and ExecutionState.OUTCOME_UNKNOWN in states:
                    # Told "unknown": resume the same operation under the same key.
                    resumes += 1
                    assert resumes < 20
                    report = await call_tool_with_recovery(
                        client, "process_refund", args, policy=policy, idempotency_key=report.idempotency_key
                    )
                key = report.idempotency_key
                assert key is not None
                applied = [row for row in db.refunds_for(args["order_id"]) if row["idempotency_key"] == key]
                if report.decision is Decision.DONE:
                    assert len(applied) == 1
                    claimed[args["order_id"]] += 1
                else:
                    assert report.outcome.category == "transient"
                    assert applied == []
                    not_applied += 1
    per_order = Counter(row["order_id"] for index in range(ORDERS) for row in db.refunds_for(order_for(index)))
    assert per_order == claimed
    assert sum(claimed.values()) + not_applied == REFUNDS
    assert lost_answers > REFUNDS // 10  # the faults really happened


@pytest.mark.anyio
async def test_resending_a_refund_without_a_key_after_a_lost_answer_refunds_twice() -> None:
    # The control for the test above: the desk does not hide a keyless double refund.
    db = Database()
    server = build_server(DeskConfig(faults=FaultConfig.build(commit_then_timeout=1.0)), database=db)
    args = {"order_id": "#10009", "amount": 1.0, "reason": "late"}
    async with Client(server) as client:
        first = await client.call_tool("process_refund", args)
        second = await client.call_tool("process_refund", args)
    assert first.is_error
    assert second.is_error
    assert len(db.refunds_for("#10009")) == 2


@pytest.mark.anyio
async def test_the_policy_does_not_resend_a_lost_refund_answer_without_a_key() -> None:
    db = Database()
    server = build_server(DeskConfig(faults=FaultConfig.build(commit_then_timeout=1.0)), database=db)
    policy = RecoveryPolicy(max_attempts=3, send_idempotency_key=False)
    with set_testing():
        async with Client(server) as client:
            args = {"order_id": "#10010", "amount": 1.0, "reason": "late"}
            report = await call_tool_with_recovery(client, "process_refund", args, policy=policy)
    assert (report.decision, report.reason, len(report.attempts)) == (Decision.ESCALATE, "outcome_unknown", 1)
    assert len(db.refunds_for("#10010")) == 1
