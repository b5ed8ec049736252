"""A server that answers every call with whatever result the test hands it, as a hostile one would.

Built on the low-level `mcp.server.Server`, which validates and converts nothing: what the
test gives is what the client reads. Its one tool, `answer`, is annotated read-only, so a
recovery policy resends its transient failures; it declares the `output_schema` it is given,
which its answers need not follow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server import Server
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, Tool, ToolAnnotations


def build_scripted_server(
    answer: Callable[[], CallToolResult], *, output_schema: dict[str, Any] | None = None
) -> Server[Any]:
    """A server whose tool `answer` returns `answer()` on each call."""
    read_only = ToolAnnotations(read_only_hint=True)
    tool = Tool(name="answer", input_schema={"type": "object"}, output_schema=output_schema, annotations=read_only)

    async def on_list_tools(ctx: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=[tool])

    async def on_call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        return answer()

    return Server("scripted", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
