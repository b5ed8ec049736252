"""Pydantic AI: what the model gets from an error result, alone and with `RecoveringMCPToolset`.

Pydantic AI's own MCP client (`MCPToolset`, on fastmcp's client) spawns the test server over
stdio. A `FunctionModel` stands in for the LLM: it calls the tool named in the prompt and,
like a model told to "try again", calls it again after an error, up to three times.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from mcp_errors._client.policy import RecoveryPolicy
from mcp_errors.integrations.pydantic_ai import RecoveringMCPToolset
from servers.integrations_server import FAILING_CALLS, SERVER_SCRIPT

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MODEL_TRIES = 3


@dataclass
class PersistentModel:
    """Calls one tool, and calls it again after each error, up to `MODEL_TRIES` times."""

    tool: str
    args: dict[str, Any]
    seen: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """(outcome, text the model read) for every tool return."""

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)] if isinstance(last, ModelRequest) else []
        for part in returns:
            self.seen.append((part.outcome, part.model_response_str()))
        if returns and (returns[-1].outcome == "success" or len(self.seen) >= MODEL_TRIES):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart(self.tool, self.args)])


async def _run(toolset: MCPToolset, tool: str, args: dict[str, Any]) -> tuple[PersistentModel, str | None]:
    model = PersistentModel(tool, args)
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    try:
        await agent.run(f"call {tool}")
    except UnexpectedModelBehavior as exc:
        return model, f"run failed: {exc.message}"
    return model, None


async def _calls(toolset: MCPToolset, tool: str) -> int:
    return int(await toolset.direct_call_tool("call_count", {"tool": tool}))


@pytest.fixture
async def plain() -> AsyncIterator[MCPToolset]:
    with anyio.fail_after(60):
        async with MCPToolset(Path(SERVER_SCRIPT)) as toolset:
            yield toolset


@pytest.fixture
async def recovering() -> AsyncIterator[RecoveringMCPToolset]:
    policy = RecoveryPolicy(max_attempts=3, initial_wait=0.0, max_wait=0.0)
    with anyio.fail_after(60):
        async with RecoveringMCPToolset(Path(SERVER_SCRIPT), policy=policy) as toolset:
            yield toolset


async def test_alone_a_permission_error_is_retried_by_the_model_until_the_run_fails(plain: MCPToolset) -> None:
    model, failure = await _run(plain, "delete_account", {"account_id": "a-1"})
    print(f"pydantic-ai default, delete_account: {model.seen[0][1]}")
    # The model reads structuredContent as JSON (category and description, not the headline) ...
    assert '"errorCategory":"permission"' in model.seen[0][1].replace("\\", "")
    assert model.seen[0][0] == "retried"
    # ... is prompted to try again, and the second failure exceeds the retry budget.
    assert failure is not None
    assert "exceeded max retries" in failure
    assert await _calls(plain, "delete_account") == 2


async def test_alone_every_error_spends_the_tool_retry_budget(plain: MCPToolset) -> None:
    for name, args, _category in FAILING_CALLS:
        model, failure = await _run(plain, name, args)
        print(f"pydantic-ai default, {name}: {model.seen[0][1]}")
        assert model.seen[0][0] == "retried", name
        assert failure is not None, name


async def test_with_recovery_business_and_permission_errors_are_shown_once_and_the_run_goes_on(
    recovering: RecoveringMCPToolset,
) -> None:
    for name, args, category in FAILING_CALLS:
        if category not in ("business", "permission"):
            continue
        model, failure = await _run(recovering, name, args)
        assert failure is None
        outcome, text = model.seen[0]
        assert outcome == "failed"
        assert text.startswith('{"error":"[' + category + " error, not retryable]"), text
    assert await _calls(recovering, "delete_account") == MODEL_TRIES  # the model's own choice, once each


async def test_with_recovery_a_validation_error_asks_the_model_to_fix_each_argument(
    recovering: RecoveringMCPToolset,
) -> None:
    model, _ = await _run(recovering, "cancel_order", {"order_id": "abc"})
    outcome, text = model.seen[0]
    assert outcome == "retried"
    assert "[validation error, not retryable]" in text
    assert "order_id:" in text
    assert "#NNNNN" in text


async def test_with_recovery_a_read_only_transient_failure_is_resent_by_the_policy_not_the_model(
    recovering: RecoveringMCPToolset,
) -> None:
    model, failure = await _run(recovering, "flaky_quote", {"symbol": "ACME"})
    assert failure is None
    assert model.seen == [("success", "ACME: 42.0")]
    assert await _calls(recovering, "flaky_quote") == 2


async def test_with_recovery_an_outage_ends_as_a_failed_call_after_the_policy_attempts(
    recovering: RecoveringMCPToolset,
) -> None:
    recovering.policy = RecoveryPolicy(max_attempts=2, initial_wait=0.0, max_wait=0.0)
    model, failure = await _run(recovering, "quote_down", {"symbol": "ACME"})
    assert failure is None
    outcome, text = model.seen[0]
    assert outcome == "failed"
    assert "[transient error, retryable" in text
    assert recovering.last_report is not None
    assert len(recovering.last_report.attempts) == 2


async def test_with_recovery_an_empty_result_reaches_the_model_as_its_text(recovering: RecoveringMCPToolset) -> None:
    model, _ = await _run(recovering, "find_customer", {"email": "a@b.c"})
    outcome, text = model.seen[0]
    assert outcome == "success"
    assert "found nothing" in text
