"""A low-level server whose tools each break exactly one rule of `mcp-errors check`.

`DEFECTS` maps each tool to the one rule it breaks; `well_behaved` breaks none. Every tool
takes one argument, `customer_email`, validates it with jsonschema and answers a bad one with
a contract error; each defect tool then spoils that answer (or its valid-call answer) in one
way. Run as a stdio server: `python tests/servers/check/defects_server.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import jsonschema
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from mcp_errors import ENVELOPE_SCHEMA

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"customer_email": {"type": "string", "minLength": 3, "maxLength": 50}},
    "required": ["customer_email"],
}
TOTAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"total": {"type": "number"}},
    "required": ["total"],
}
WIDENED_TOTAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "anyOf": [TOTAL_SCHEMA, {k: v for k, v in ENVELOPE_SCHEMA.items() if k not in ("$schema", "$id")}],
}

DESCRIPTION = "The argument customer_email must be an email address of 3 to 50 characters; correct it and call again."


def envelope(category: str = "validation", retryable: bool = False, description: str = DESCRIPTION) -> dict[str, Any]:
    return {"errorCategory": category, "isRetryable": retryable, "description": description, "code": "BAD_EMAIL"}


def text_for(data: dict[str, Any], message: str = "Invalid customer email") -> str:
    verdict = "retryable" if data["isRetryable"] else "not retryable"
    return f"[{data['errorCategory']} error, {verdict}] {message}. {data['description']}"


def error(data: dict[str, Any], text: str | None = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text if text is not None else text_for(data))],
        structured_content=data,
        is_error=True,
    )


def success(total: float = 3.0) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=f"The customer has {total:g} orders in total.")],
        structured_content={"total": total},
    )


Handler = Callable[[bool], CallToolResult]
"""Called with whether the arguments are valid; returns the tool's answer."""


def _well_behaved(valid: bool) -> CallToolResult:
    return success() if valid else error(envelope())


def _validation_as_protocol_error(valid: bool) -> CallToolResult:
    if not valid:
        raise MCPError(code=INVALID_PARAMS, message="Invalid params: customer_email")
    return success()


def _no_envelope(valid: bool) -> CallToolResult:
    if valid:
        return success()
    return CallToolResult(content=[TextContent(type="text", text=text_for(envelope()))], is_error=True)


def _retryable_validation(valid: bool) -> CallToolResult:
    return success() if valid else error(envelope(retryable=True))


def _wrong_category(valid: bool) -> CallToolResult:
    return success() if valid else error(envelope(category="business"))


def _accepts_anything(valid: bool) -> CallToolResult:
    return success()


def _generic_description(valid: bool) -> CallToolResult:
    return success() if valid else error(envelope(description="Operation failed."))


def _repeats_message(valid: bool) -> CallToolResult:
    data = envelope()
    return success() if valid else error(data, text_for(data, message=DESCRIPTION.rstrip(".")))


def _unnamed_field(valid: bool) -> CallToolResult:
    vague = "One of the arguments does not match the input schema; correct it and call again."
    return success() if valid else error(envelope(description=vague))


def _text_not_self_sufficient(valid: bool) -> CallToolResult:
    return success() if valid else error(envelope(), "Invalid customer email")


def _leaks_path(valid: bool) -> CallToolResult:
    leaky = DESCRIPTION + " Checked by /srv/app/handlers/customers.py."
    return success() if valid else error(envelope(description=leaky))


def _leaks_secret(valid: bool) -> CallToolResult:
    # A credential-looking value after a secret-named label; not a known token shape.
    leaky = DESCRIPTION + " The lookup ran with db_password: hunter2x9."
    return success() if valid else error(envelope(description=leaky))


def _empty_as_error(valid: bool) -> CallToolResult:
    if valid:
        data = envelope(
            category="business", description="No orders match this customer_email; the search found nothing."
        )
        return error(data, text_for(data, message="Search failed"))
    return error(envelope())


def _silent_empty(valid: bool) -> CallToolResult:
    return CallToolResult(content=[]) if valid else error(envelope())


def _failure_as_protocol_error(valid: bool) -> CallToolResult:
    if valid:
        raise MCPError(code=INTERNAL_ERROR, message="database unavailable")
    return error(envelope())


def _success_breaks_output_schema(valid: bool) -> CallToolResult:
    if valid:
        return CallToolResult(
            content=[TextContent(type="text", text="The customer has many orders.")],
            structured_content={"total": "many"},
        )
    return error(envelope())


# tool name -> (rule it breaks, handler, outputSchema)
DEFECTS: dict[str, tuple[str | None, Handler, dict[str, Any] | None]] = {
    "well_behaved": (None, _well_behaved, WIDENED_TOTAL_SCHEMA),
    "validation_as_protocol_error": ("ME001", _validation_as_protocol_error, None),
    "no_envelope": ("ME002", _no_envelope, None),
    "retryable_validation": ("ME003", _retryable_validation, None),
    "wrong_category": ("ME004", _wrong_category, None),
    "accepts_anything": ("ME005", _accepts_anything, None),
    "generic_description": ("ME006", _generic_description, None),
    "repeats_message": ("ME007", _repeats_message, None),
    "unnamed_field": ("ME008", _unnamed_field, None),
    "text_not_self_sufficient": ("ME009", _text_not_self_sufficient, None),
    "leaks_path": ("ME010", _leaks_path, None),
    "leaks_secret": ("ME010", _leaks_secret, None),
    "strict_output_schema": ("ME011", _well_behaved, TOTAL_SCHEMA),
    "empty_as_error": ("ME012", _empty_as_error, None),
    "silent_empty": ("ME013", _silent_empty, None),
    "failure_as_protocol_error": ("ME018", _failure_as_protocol_error, None),
    "success_breaks_output_schema": ("ME019", _success_breaks_output_schema, WIDENED_TOTAL_SCHEMA),
}


def build_server() -> Server[Any]:
    tools = [
        Tool(name=name, description=f"Defect fixture for {rule}.", input_schema=INPUT_SCHEMA, output_schema=schema)
        for name, (rule, _, schema) in DEFECTS.items()
    ]

    async def on_list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        _, handler, _ = DEFECTS[params.name]
        valid = jsonschema.Draft202012Validator(INPUT_SCHEMA).is_valid(params.arguments or {})
        return handler(valid)

    return Server("defects", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    server = build_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
