"""A low-level server without this project's contract whose tools each hurt agents in one way.

These are the defects real servers have that `mcp-errors check` once missed, each written from
its description: failures disguised as successes (`isError: false` with a text that is plainly
an error), generic or raw failure texts, silent empty results, an error that tells the agent
nothing it can act on. `PLAIN_DEFECTS` maps each tool to the one rule (of the rules any server
must pass) it breaks; `well_behaved` breaks none. Invalid arguments always get a plain error
text that names the argument; each tool spoils its valid-call answer. Run as a stdio server:
`python tests/servers/check/plain_defects_server.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import jsonschema
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"customer_email": {"type": "string", "minLength": 3, "maxLength": 50}},
    "required": ["customer_email"],
}
BAD_ARGUMENTS = "customer_email must be an email address of 3 to 50 characters; correct it and call again."


def text(value: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=value)], is_error=is_error)


def failure(value: str) -> CallToolResult:
    return text(value, is_error=True)


PYDANTIC_REPORT = (
    "Error executing tool pydantic_dump: 1 validation error for pydantic_dumpArguments\n"
    "customer_email\n  Field required [type=missing, input_value={}, input_type=dict]\n"
    "    For further information visit https://errors.pydantic.dev/2.14/v/missing"
)
GIT_FAILURE = (
    "Cmd('git') failed due to: exit code(128)\n  cmdline: git checkout nowhere\n"
    "  stderr: 'error: pathspec 'nowhere' did not match any file(s) known to git'"
)

# tool name -> (rule it breaks, answer to a valid call, answer to invalid arguments or None)
Answer = Callable[[], CallToolResult]
PLAIN_DEFECTS: dict[str, tuple[str | None, Answer, Answer | None]] = {
    "well_behaved": (None, lambda: text("Customer ada@example.com has 3 orders."), None),
    "disguised_query_error": ("ME022", lambda: text("Error: Only SELECT queries are allowed"), None),
    "disguised_database_error": (
        "ME022",
        lambda: text('Database error: near "SELEC": syntax error'),
        None,
    ),
    "disguised_git_failure": ("ME022", lambda: text(GIT_FAILURE), None),
    "fetch_failed": ("ME023", lambda: failure("fetch failed"), None),
    "masked_exception": ("ME023", lambda: failure("Error executing tool masked_exception"), None),
    "pydantic_dump": (
        "ME024",
        lambda: text("Customer ada@example.com has 3 orders."),
        lambda: failure(PYDANTIC_REPORT),
    ),
    "subprocess_dump": (
        "ME024",
        lambda: failure(
            "git log failed: Command '['git', 'log', '--max-count=10']' returned non-zero exit status 128:"
            " fatal: not a git repository"
        ),
        None,
    ),
    "silent_empty_text": ("ME013", lambda: text(""), None),
    "silent_empty_list": ("ME013", lambda: text("[]"), None),
    "no_recovery_hint": ("ME025", lambda: failure("The lookup went sideways at stage 3 of 5."), None),
}


def build_server() -> Server[Any]:
    read_only = ToolAnnotations(read_only_hint=True)
    tools = [
        Tool(
            name=name, description=f"Plain defect fixture for {rule}.", input_schema=INPUT_SCHEMA, annotations=read_only
        )
        for name, (rule, _, _) in PLAIN_DEFECTS.items()
    ]

    async def on_list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        _, valid_answer, invalid_answer = PLAIN_DEFECTS[params.name]
        if jsonschema.Draft202012Validator(INPUT_SCHEMA).is_valid(params.arguments or {}):
            return valid_answer()
        return invalid_answer() if invalid_answer is not None else failure(BAD_ARGUMENTS)

    return Server("plain-defects", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    server = build_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
