"""A Pydantic AI MCP toolset whose error handling follows the error category.

On its own, Pydantic AI's `MCPToolset` turns every `isError` result into `ModelRetry`
(`tool_error_behavior="retry"`): the model reads the `structuredContent` as JSON (the text
block, with the headline, is dropped) under a "fix the errors and try again" prompt, and
each such error spends the tool's retry budget (1 by default). A business or permission
error, which no resend can fix, therefore ends the run with `UnexpectedModelBehavior`
("exceeded max retries") as soon as the model tries again, and a transient failure is left
to the model to resend.

`RecoveringMCPToolset` is an `MCPToolset` whose calls go through `call_tool_with_recovery`:

- a transient failure is resent by the `RecoveryPolicy` when that is safe, not by the
  model; if it still fails, or for a business or permission error, the model gets
  `ToolFailed`: it sees the failure, gets no retry prompt and the run goes on;
- a validation error is `ModelRetry`, the one case where the model should correct its
  call, with one line per bad argument;
- every error text starts with `[<category> error, retryable|not retryable]`, then the
  description.

Needs the `pydantic-ai` extra (or `pip install 'pydantic-ai-slim[mcp]>=2.68,<3'`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_types import TextContent

from mcp_errors._client.adapter import adapt_client
from mcp_errors._client.outcome import ToolOutcome
from mcp_errors._client.policy import Decision, RecoveryPolicy, RecoveryReport, call_tool_with_recovery
from mcp_errors._client.render import outcome_text

try:
    from pydantic_ai.exceptions import ModelRetry, ToolFailed
    from pydantic_ai.mcp import MCPToolset
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "mcp_errors.integrations.pydantic_ai needs: pip install 'pydantic-ai-slim[mcp]>=2.68,<3'"
    ) from exc

__all__ = ["RecoveringMCPToolset", "raise_for_model"]


class RecoveringMCPToolset(MCPToolset[Any]):
    """An `MCPToolset` that resends per `RecoveryPolicy` and reports errors by category.

    Takes every argument of `MCPToolset`, plus `policy`. `tool_error_behavior` is not used
    for `isError` results: their category decides (see `raise_for_model`).

    Args:
        *args: As for `MCPToolset`, e.g. a server script path, a URL or a fastmcp server.
        policy: How transient failures are resent; `RecoveryPolicy()` when omitted.
        **kwargs: As for `MCPToolset`.

    Example:
        ```python
        import anyio
        from fastmcp import FastMCP
        from pydantic_ai import Agent
        from pydantic_ai.models.test import TestModel
        from mcp_errors import AccessDeniedError, install
        from mcp_errors.integrations.pydantic_ai import RecoveringMCPToolset

        server = install(FastMCP("accounts"))

        @server.tool()
        def delete_account(account_id: str) -> str:
            raise AccessDeniedError("Not allowed", description="Ask an administrator.")

        agent = Agent(TestModel(), toolsets=[RecoveringMCPToolset(server)])
        result = anyio.run(agent.run, "Delete account a-1")
        # The run goes on: the model saw "[permission error, not retryable] ..." once.
        assert "permission error, not retryable" in result.output
        ```
    """

    def __init__(self, *args: Any, policy: RecoveryPolicy | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.policy = policy or RecoveryPolicy()
        """The policy every tool call follows."""
        self.last_report: RecoveryReport | None = None
        """What the most recent tool call did, for code around the agent."""

    async def direct_call_tool(
        self,
        name: str,
        args: dict[str, Any],
        *,
        metadata: dict[str, Any] | None = None,
        use_task: bool = False,
    ) -> Any:
        """Call a tool with recovery; return what the model should see, or raise per category.

        Args:
            name: The tool to call.
            args: Its arguments.
            metadata: Request `_meta`; the policy's idempotency key is added to it.
            use_task: Task-augmented calls are left to `MCPToolset` unchanged.

        Returns:
            The tool's value for a success or an empty result, as `MCPToolset` maps it.

        Raises:
            ModelRetry: For a validation error (the model should fix its arguments).
            ToolFailed: For any other error, after the policy's resends.
        """
        if use_task:
            return await super().direct_call_tool(name, args, metadata=metadata, use_task=use_task)
        async with self:
            send = adapt_client(self.client, meta=metadata).call
            tools = await self.list_tools()
            # One retry budget per server: its id, else the name it gave when connecting.
            server = self.id or getattr(getattr(self, "server_info", None), "name", None) or self.label
            report = await call_tool_with_recovery(send, name, args, policy=self.policy, server=server, tools=tools)
        self.last_report = report
        raise_for_model(report)
        if report.outcome.kind == "empty":
            # `{"resultCount": 0}` alone reads like a failure to a model; the text says the
            # query ran and matched nothing.
            return outcome_text(report)
        return _model_value(report.outcome)


def raise_for_model(report: RecoveryReport) -> None:
    """Raise the Pydantic AI exception that matches a finished recovery, if it failed.

    Args:
        report: What `call_tool_with_recovery` returned.

    Raises:
        ModelRetry: When the decision is `fix_input` (validation): Pydantic AI asks the
            model to correct its call, within the tool's retry budget.
        ToolFailed: When the decision is `escalate`: the model sees the failure without a
            retry prompt and the run goes on.
    """
    if report.decision is Decision.DONE:
        return
    text = outcome_text(report)
    if report.decision is Decision.FIX_INPUT:
        raise ModelRetry(text)
    raise ToolFailed(text)


def _model_value(outcome: ToolOutcome) -> Any:
    # The same rule as `MCPToolset`: structured content when every block is text (those
    # blocks repeat it), unwrapping the SDK's `{"result": ...}` for non-object returns.
    result = outcome.result
    if result is None:
        return outcome.message
    structured = result.structured_content
    if structured is not None and all(isinstance(block, TextContent) for block in result.content):
        if isinstance(structured, Mapping) and set(structured) == {"result"}:
            return structured["result"]
        return structured
    texts = [
        block.text if isinstance(block, TextContent) else block.model_dump(mode="json") for block in result.content
    ]
    return texts[0] if len(texts) == 1 else texts
