"""An OpenAI Agents SDK MCP server whose tool calls follow the recovery policy.

On its own the Agents SDK hands the model the text blocks of an `isError` result and drops
`structuredContent` (so validation `fieldErrors` never reach it); it does not resend a
failed result, while its own `max_retry_attempts` resends *any* exception, writes whose
outcome is unknown included, and its default failure text is "An error occurred while
running the tool. Please try again." whatever the cause.

`RecoveringMCPServer` wraps any Agents SDK MCP server (`MCPServerStdio`,
`MCPServerStreamableHttp`, ...) and, for each tool call:

- runs `call_tool_with_recovery`: a transient failure is resent only when the
  `RecoveryPolicy` says it is safe (read-only/idempotent tool, not executed, or an honoured
  idempotency key), within its attempts, deadline and retry budget; nothing else is resent;
- hands the model one text that starts with `[<category> error, retryable|not retryable]`,
  then the description and, for validation, one line per bad argument; `structuredContent`
  and `isError` are kept for code that reads the raw result.

Leave the wrapped server's `max_retry_attempts` at its default 0, so that the policy is the
only one resending. Needs the `openai-agents` extra (or `pip install 'openai-agents>=0.24,<0.25'`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_types import CallToolResult, GetPromptResult, ListPromptsResult, TextContent, Tool

from mcp_errors._client.policy import RecoveryPolicy, RecoveryReport, call_tool_with_recovery
from mcp_errors._client.render import outcome_text

try:
    from agents.mcp import MCPServer
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("mcp_errors.integrations.openai_agents needs: pip install 'openai-agents>=0.24,<0.25'") from exc

if TYPE_CHECKING:
    from agents.agent import AgentBase
    from agents.run_context import RunContextWrapper

__all__ = ["RecoveringMCPServer", "model_result"]


class RecoveringMCPServer(MCPServer):
    """Wrap an Agents SDK MCP server so that its tool calls follow a `RecoveryPolicy`.

    Args:
        server: The server to wrap; connecting and cleaning up the wrapper does the same
            to it. Its approval policy, failure function, meta resolver and guardrails are
            kept.
        policy: How transient failures are resent; `RecoveryPolicy()` when omitted.

    Example:
        ```python no-run
        from agents import Agent, Runner
        from agents.mcp import MCPServerStdio
        from mcp_errors.integrations.openai_agents import RecoveringMCPServer

        async with RecoveringMCPServer(MCPServerStdio(params={"command": "my-server"})) as server:
            agent = Agent(name="support", mcp_servers=[server])
            result = await Runner.run(agent, "Refund order #12345")
        ```
    """

    def __init__(self, server: MCPServer, *, policy: RecoveryPolicy | None = None) -> None:
        super().__init__(
            use_structured_content=server.use_structured_content,
            tool_meta_resolver=server.tool_meta_resolver,
            custom_data_extractor=server.custom_data_extractor,
            tool_input_guardrails=server.tool_input_guardrails,
            tool_output_guardrails=server.tool_output_guardrails,
        )
        # The approval policy and failure function are only kept in private attributes,
        # already normalised; copying them keeps the wrapped server's behaviour exactly.
        self._needs_approval_policy = server._needs_approval_policy
        self._failure_error_function = server._failure_error_function
        self.server = server
        """The wrapped server."""
        self.policy = policy or RecoveryPolicy()
        """The policy every tool call follows."""
        self.last_report: RecoveryReport | None = None
        """What the most recent tool call did, for code around the agent."""

    @property
    def name(self) -> str:
        """The wrapped server's name."""
        return self.server.name

    @property
    def cached_tools(self) -> list[Tool] | None:
        """The wrapped server's cached tool list, if any."""
        return self.server.cached_tools

    async def connect(self) -> None:
        """Connect the wrapped server."""
        await self.server.connect()  # type: ignore[no-untyped-call]  # the SDK leaves it unannotated

    async def cleanup(self) -> None:
        """Clean up the wrapped server."""
        await self.server.cleanup()  # type: ignore[no-untyped-call]  # the SDK leaves it unannotated

    async def __aenter__(self) -> RecoveringMCPServer:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.cleanup()

    async def list_tools(
        self, run_context: RunContextWrapper[Any] | None = None, agent: AgentBase | None = None
    ) -> list[Tool]:
        """The wrapped server's tools (its tool filter applies)."""
        return await self.server.list_tools(run_context, agent)

    async def list_prompts(self) -> ListPromptsResult:
        """The wrapped server's prompts."""
        return await self.server.list_prompts()

    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None) -> GetPromptResult:
        """One of the wrapped server's prompts."""
        return await self.server.get_prompt(name, arguments)

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> CallToolResult:
        """Call a tool with recovery and return the result the model should see.

        Args:
            tool_name: The tool to call.
            arguments: Its arguments.
            meta: Request `_meta` from the Agents SDK (its meta resolver); the policy's
                idempotency key is added to it.

        Returns:
            The final result: a success or empty result as the server sent it, an error
            rewritten by `model_result`.
        """
        server = self.server

        async def send(name: str, args: dict[str, Any], key_meta: dict[str, Any] | None) -> CallToolResult:
            merged = {**(meta or {}), **(key_meta or {})}
            return await server.call_tool(name, args, meta=merged or None)

        tools = server.cached_tools
        if tools is None:
            tools = await server.list_tools()
        report = await call_tool_with_recovery(
            send, tool_name, arguments, policy=self.policy, server=self.name, tools=tools
        )
        self.last_report = report
        return model_result(report)


def model_result(report: RecoveryReport) -> CallToolResult:
    """The result to hand the Agents SDK for a finished recovery.

    The Agents SDK shows the model the text blocks of an error result, so the error's single
    text block becomes the model-facing text (category, retry verdict, description, field
    errors); `structuredContent` and `isError` stay as the server sent them.

    Args:
        report: What `call_tool_with_recovery` returned.

    Returns:
        The server's own result for a success or empty result, otherwise an `isError`
        result with one text block.
    """
    outcome = report.outcome
    if outcome.kind == "success" and outcome.result is not None:
        return outcome.result
    structured = outcome.structured if isinstance(outcome.structured, Mapping) else None
    return CallToolResult(
        content=[TextContent(type="text", text=outcome_text(report))],
        structured_content=dict(structured) if structured is not None else None,
        is_error=outcome.kind == "error",
    )
