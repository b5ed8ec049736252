# /// script
# requires-python = "==3.11.*"
# dependencies = [
#     "langchain-mcp-adapters==0.3.2",
#     "langchain-core==1.8.3",
#     "mcp==1.30.0",
# ]
# ///
"""LangChain's own MCP client (`langchain-mcp-adapters`) calls a stdio server; prints what the model gets.

This runs in its own environment, never the project's: langchain-mcp-adapters 0.3.2 pins
`mcp<2` (the project runs mcp 2.x). The dependencies above are locked in
`langchain_adapters_client.py.lock`; run it with

    uv run --locked --script tests/interop/langchain_adapters_client.py CALLS_JSON SERVER_COMMAND...

CALLS_JSON is a list of `{"name": ..., "arguments": {...}}`. The script opens one stdio
session with the adapter's `create_session`, loads the tools with `load_mcp_tools`, then
invokes each call through LangChain's tool-call path (`tool.ainvoke(<tool call>)`, which is
what LangGraph's `ToolNode` does) twice: with the adapter's default `handle_tool_errors=True`
and with `handle_tool_errors=False`. A call to a tool that `tools/list` did not return goes
through a tool converted from a bare definition, as a stale tool list would send it. It
prints one JSON document on stdout.
"""

from __future__ import annotations

import importlib.metadata
import json
import sys
from typing import Any

import anyio
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langchain_mcp_adapters.sessions import StdioConnection, create_session
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool, load_mcp_tools
from mcp.types import Tool

_TIMEOUT_S = 45
_PACKAGES = ("langchain-mcp-adapters", "langchain-core", "mcp")


def _message(message: ToolMessage) -> dict[str, Any]:
    return {
        "content": message.content,
        "text": message.text,
        "status": message.status,
        "artifact": message.artifact,
    }


async def _invoke(tool: BaseTool, call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"type": "tool_call", "id": call_id, "name": tool.name, "args": arguments}
    try:
        output = await tool.ainvoke(call)
    except Exception as error:  # what escapes the adapter is the finding
        raised = {"type": type(error).__name__, "message": str(error)}
        return {"raised": {**raised, "is_tool_exception": isinstance(error, ToolException)}}
    if not isinstance(output, ToolMessage):
        return {"returned": repr(output)}
    return {"message": _message(output)}


async def main(calls: list[dict[str, Any]], command: str, args: list[str]) -> dict[str, Any]:
    connection: StdioConnection = {"transport": "stdio", "command": command, "args": args}
    report: dict[str, Any] = {"versions": {name: importlib.metadata.version(name) for name in _PACKAGES}}
    with anyio.fail_after(_TIMEOUT_S):
        async with create_session(connection) as session:
            initialized = await session.initialize()
            report["protocolVersion"] = initialized.protocolVersion
            handled = {tool.name: tool for tool in await load_mcp_tools(session)}
            raising = {tool.name: tool for tool in await load_mcp_tools(session, handle_tool_errors=False)}
            report["tools"] = sorted(handled)
            report["calls"] = []
            for index, call in enumerate(calls):
                name, arguments = call["name"], call["arguments"]
                loaded = name in handled
                if not loaded:
                    stale = Tool(name=name, inputSchema={"type": "object"})  # type: ignore[call-arg]
                    handled[name] = convert_mcp_tool_to_langchain_tool(session, stale)
                    raising[name] = convert_mcp_tool_to_langchain_tool(session, stale, handle_tool_errors=False)
                report["calls"].append(
                    {
                        "name": name,
                        "loaded": loaded,
                        "default": await _invoke(handled[name], f"call-{index}", arguments),
                        "handle_tool_errors_false": await _invoke(raising[name], f"call-{index}-raw", arguments),
                    }
                )
    return report


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: langchain_adapters_client.py CALLS_JSON SERVER_COMMAND [ARGS...]")
    result = anyio.run(main, json.loads(sys.argv[1]), sys.argv[2], sys.argv[3:])
    print(json.dumps(result, default=repr))
