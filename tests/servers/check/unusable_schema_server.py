"""A low-level server with tools whose hand-written schemas jsonschema cannot use, or that
keep a validator busy.

`bad_pattern` declares a `pattern` that is not a valid regex, `optional_bad_pattern` the same
on an optional property, `dangling_ref` a `$ref` to a definition that does not exist,
`bad_output_pattern` an outputSchema with a bad regex. `backtracking_probe` has a pattern that
backtracks catastrophically on the checker's own non-matching probe, `backtracking_output` an
outputSchema pattern that does so on its own success; `catastrophic_literal` is the pattern
from the report that made the checker overrun its deadline (`^([!a-z]+)+Z$` with a
`minLength`), which a bounded matcher must get through. `well_behaved` and
`catastrophic_literal` break no rule. The server never validates with these schemas itself: it
answers every call with a contract validation error (and `backtracking_output`'s valid call
with a success). Run as a stdio server: `python tests/servers/check/unusable_schema_server.py`.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp_types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent, Tool

DESCRIPTION = "The argument customer_email must be an email address and code must match its pattern; correct them."

GOOD_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"customer_email": {"type": "string", "minLength": 3}},
    "required": ["customer_email"],
}
SCHEMAS: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
    "bad_pattern": (
        {
            "type": "object",
            "properties": {"customer_email": {"type": "string", "pattern": "(unclosed"}},
            "required": ["customer_email"],
        },
        None,
    ),
    "dangling_ref": (
        {
            "type": "object",
            "properties": {"customer_email": {"$ref": "#/$defs/Missing"}},
            "required": ["customer_email"],
        },
        None,
    ),
    "optional_bad_pattern": (
        {
            "type": "object",
            "properties": {
                "customer_email": {"type": "string", "minLength": 3},
                "nickname": {"type": "string", "pattern": "(unclosed"},
            },
            "required": ["customer_email"],
        },
        None,
    ),
    "bad_output_pattern": (GOOD_INPUT, {"type": "object", "properties": {"code": {"type": "string", "pattern": "["}}}),
    "backtracking_probe": (
        {
            "type": "object",
            "properties": {
                "customer_email": {"type": "string", "minLength": 3},
                "code": {"type": "string", "pattern": "^!invalid(!|!)+Z$", "minLength": 40},
            },
            "required": ["customer_email"],
        },
        None,
    ),
    "backtracking_output": (
        {"type": "object", "properties": {}},
        {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(!|!)+Z$"}}},
    ),
    "catastrophic_literal": (
        {
            "type": "object",
            "properties": {
                "customer_email": {"type": "string", "minLength": 3},
                "code": {"type": "string", "pattern": "^([!a-z]+)+Z$", "minLength": 30},
            },
            "required": ["customer_email"],
        },
        None,
    ),
    "well_behaved": (GOOD_INPUT, None),
}
"""tool name -> (inputSchema, outputSchema)"""

BROKEN = frozenset(SCHEMAS) - {"well_behaved", "catastrophic_literal"}
BACKTRACKING_SUCCESS = {"code": "!" * 40}
"""`backtracking_output`'s answer: its outputSchema's pattern backtracks on it."""


def build_server() -> Server[Any]:
    tools = [
        Tool(name=name, description="Unusable-schema fixture.", input_schema=schema, output_schema=output)
        for name, (schema, output) in SCHEMAS.items()
    ]

    async def on_list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        if params.name == "backtracking_output" and not params.arguments:
            return CallToolResult(
                content=[TextContent(type="text", text="The code is all exclamation marks.")],
                structured_content=BACKTRACKING_SUCCESS,
            )
        data = {"errorCategory": "validation", "isRetryable": False, "description": DESCRIPTION, "code": "BAD_EMAIL"}
        text = f"[validation error, not retryable] Invalid customer email. {DESCRIPTION}"
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data, is_error=True)

    return Server("unusable-schemas", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    server = build_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
