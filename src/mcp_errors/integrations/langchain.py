"""LangChain / LangGraph tools for an MCP server, with categories and recovery.

`langchain-mcp-adapters` cannot run next to mcp 2.x: 0.3.2 requires `mcp<2`, and 0.3.1 and
older import `mcp.server.fastmcp`, which mcp 2.x removed. So this module builds LangChain
`StructuredTool`s itself, on a connected `mcp.Client`, with only `langchain-core`:

- every call goes through `call_tool_with_recovery`: transient failures are resent when the
  `RecoveryPolicy` says it is safe, nothing else is;
- an error reaches the model as a `ToolMessage` with `status="error"` whose text starts
  with `[<category> error, retryable|not retryable]`, then the description and, for
  validation, one line per bad argument (the adapter dropped `structuredContent`, where
  field errors live);
- a success keeps `structuredContent` as the message's artifact, as the adapter did.

Needs the `langchain` extra (or `pip install 'langchain-core>=1.8,<2'`).
"""

from __future__ import annotations

from typing import Any

from mcp import Client, ClientSession
from mcp_types import Tool

from mcp_errors._client.adapter import list_all_tools
from mcp_errors._client.outcome import ToolOutcome
from mcp_errors._client.policy import RecoveryPolicy, RecoveryReport, call_tool_with_recovery
from mcp_errors._client.render import outcome_text

try:
    from langchain_core.tools import StructuredTool, ToolException
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("mcp_errors.integrations.langchain needs: pip install 'langchain-core>=1.8,<2'") from exc

__all__ = ["MCPToolError", "load_mcp_tools", "mcp_tool"]


class MCPToolError(ToolException):
    """An MCP tool's failure, as LangChain's tool machinery expects it.

    The message is the model-facing text; LangChain turns it into a `ToolMessage` with
    `status="error"`.
    """

    def __init__(self, report: RecoveryReport) -> None:
        super().__init__(outcome_text(report))
        self.report = report
        """What the call and its resends produced, for code around the agent."""


async def load_mcp_tools(
    client: Client | ClientSession, *, policy: RecoveryPolicy | None = None
) -> list[StructuredTool]:
    """LangChain tools for every tool that a connected `mcp.Client` lists.

    Args:
        client: A connected `mcp.Client` (in memory, stdio or HTTP) or an initialised
            `mcp.ClientSession`; it must stay open while the tools are used.
        policy: How transient failures are resent; `RecoveryPolicy()` when omitted.

    Returns:
        One `StructuredTool` per MCP tool, for `bind_tools`, LangGraph's `ToolNode` or
        `create_agent`.

    Example:
        ```python
        import anyio
        from mcp import Client, ClientSession
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import BusinessRuleError, install
        from mcp_errors.integrations.langchain import load_mcp_tools

        server = install(MCPServer("refunds"))

        @server.tool()
        def refund(amount: float) -> str:
            raise BusinessRuleError("Over the limit", description="Ask a manager.")

        async def main() -> None:
            async with Client(server) as client:
                [tool] = await load_mcp_tools(client)
                call = {"type": "tool_call", "id": "1", "name": "refund", "args": {"amount": 900}}
                message = await tool.ainvoke(call)
            assert message.status == "error"
            assert message.content.startswith("[business error, not retryable]")

        anyio.run(main)
        ```
    """
    tools = await list_all_tools(client)
    return [mcp_tool(client, tool, policy=policy, tools=tools) for tool in tools]


def mcp_tool(
    client: Client | ClientSession, tool: Tool, *, policy: RecoveryPolicy | None = None, tools: list[Tool] | None = None
) -> StructuredTool:
    """One LangChain tool that calls `tool` through `client` with recovery.

    Args:
        client: A connected `mcp.Client` or an initialised `mcp.ClientSession`.
        tool: The tool, as `tools/list` describes it.
        policy: How transient failures are resent; `RecoveryPolicy()` when omitted.
        tools: The server's whole tool list, if known, so that annotations are not
            fetched again on a failure.

    Returns:
        A `StructuredTool` whose errors become `ToolMessage(status="error")` and whose
        successes carry `{"structured_content": ...}` as artifact.
    """
    known = tools if tools is not None else [tool]

    async def call(**arguments: Any) -> tuple[str, dict[str, Any] | None]:
        report = await call_tool_with_recovery(client, tool.name, arguments, policy=policy, tools=known)
        outcome = report.outcome
        if outcome.kind == "error":
            raise MCPToolError(report)
        return outcome_text(report), _artifact(outcome)

    return StructuredTool(
        name=tool.name,
        description=tool.description or tool.title or tool.name,
        args_schema=tool.input_schema,
        coroutine=call,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def _artifact(outcome: ToolOutcome) -> dict[str, Any] | None:
    structured = outcome.structured
    return {"structured_content": structured} if structured is not None else None
