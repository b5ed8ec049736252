"""A low-level server whose answers the checker must judge by their role, not their words.

Written from the false alarms and misses `mcp-errors check` had on real servers (a notes app,
a fetch tool, astro-airflow-mcp), each tool the one case:

- information, no finding: the allowed root named in prose as the place to look, a URL route,
  a missing note or page the caller named (an error, not an empty result);
- true findings: a home folder or a source file named as a place (ME010), a search that matched
  nothing answered as an error (ME012), a success whose JSON reports a failure (ME022; and its
  valid call is not counted as succeeded).

`EXPECTED` maps every tool to the rules it breaks among those any server must pass, with the
`--args` calls `ARGUMENTS` writes. Run as a stdio server: `python roles_server.py ROOT`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
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

EXPECTED: dict[str, set[str]] = {
    # Information: no finding.
    "read_note": set(),  # "Note 'x' does not exist under <root>. Call list_folder ..."
    "list_folder": set(),  # "Folder 'x' not found under <root>": a missing place the caller named
    "fetch_page": set(),  # "404 Not Found ... check the URL"
    "dag_runs": set(),  # "GET /api/v2/dags/<id>/dagRuns failed: ..."
    "order_status": set(),  # "/v1/orders/ord-123/shipment is still being packed ..."
    # True findings.
    "read_note_from_home": {"ME010"},  # the same prose, but a home folder no caller could know
    "load_settings": {"ME010"},  # "Lookup failed in /srv/app/handlers.py ..."
    "search_notes": {"ME012"},  # a query that matched nothing, answered as an error
    "list_dags": {"ME022"},  # {"error": "connection refused"} marked a success
}


def arguments() -> dict[str, Any]:
    """The `--args` document (JSON) that makes each tool's valid and empty calls. It names no
    `roots`: the root is known only from the errors that name it."""
    return {
        "tools": {
            "read_note": {"valid": {"name": "ideas"}},
            "read_note_from_home": {"valid": {"name": "ideas"}},
            "list_folder": {"valid": {"folder": "archive"}},
            "fetch_page": {"valid": {"url": "https://example.com/missing-page"}},
            "dag_runs": {"valid": {"dag_id": "daily_sales"}},
            "order_status": {"valid": {"order_id": "ord-123"}},
            "load_settings": {"valid": {"profile": "default"}},
            "search_notes": {"valid": {"query": "milk"}, "empty": {"query": "no note says this"}},
            "list_dags": {"valid": {}},
        },
    }


def _text(value: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=value)], is_error=is_error)


def _failure(value: str) -> CallToolResult:
    return _text(value, is_error=True)


def _schema(*names: str) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {"type": "string"} for name in names}, "required": list(names)}


def build_server(root: Path) -> Server[Any]:
    """The server; its notes live under `root` (which it names in its errors)."""
    notes = root.resolve()
    answers: dict[str, tuple[dict[str, Any], Callable[[dict[str, Any]], CallToolResult]]] = {
        "read_note": (
            _schema("name"),
            lambda a: _failure(f"Note '{a['name']}' does not exist under {notes}. Call list_folder to see the notes."),
        ),
        "read_note_from_home": (
            _schema("name"),
            lambda a: _failure(f"Note '{a['name']}' does not exist under /home/alice/notes. Call list_folder first."),
        ),
        "list_folder": (
            _schema("folder"),
            lambda a: _failure(f"Folder '{a['folder']}' not found under {notes}; list the root to see its folders."),
        ),
        "fetch_page": (
            _schema("url"),
            lambda a: _failure("404 Not Found: nothing is published at that address; check the URL and call again."),
        ),
        "dag_runs": (
            _schema("dag_id"),
            lambda a: _failure(
                f"GET /api/v2/dags/{a['dag_id']}/dagRuns failed: the scheduler refused the connection;"
                " try again in a minute."
            ),
        ),
        "order_status": (
            _schema("order_id"),
            lambda a: _failure(f"/v1/orders/{a['order_id']}/shipment is still being packed; try again later."),
        ),
        "load_settings": (
            _schema("profile"),
            lambda a: _failure("Lookup failed in /srv/app/handlers.py; try again later."),
        ),
        "search_notes": (
            _schema("query"),
            lambda a: (
                _text("1 note matches 'milk': today.txt (Buy milk.)")
                if a["query"] == "milk"
                else _failure(f"No notes match '{a['query']}'.")
            ),
        ),
        "list_dags": (
            {"type": "object", "properties": {}},
            lambda a: _text(
                json.dumps({"error": "Connection refused: the Airflow API at http://localhost:8080 is not answering."})
            ),
        ),
    }
    read_only = ToolAnnotations(read_only_hint=True)
    tools = [
        Tool(name=name, description="Roles fixture.", input_schema=schema, annotations=read_only)
        for name, (schema, _) in answers.items()
    ]

    async def on_list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        schema, answer = answers[params.name]
        given = params.arguments or {}
        error = next(iter(jsonschema.Draft202012Validator(schema).iter_errors(given)), None)
        if error is not None:
            field = ".".join(str(part) for part in error.absolute_path) or ", ".join(schema.get("required", []))
            return _failure(f"Invalid argument {field}: {error.message}; correct it and call again.")
        return answer(given)

    return Server("roles", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    server = build_server(Path(sys.argv[1]))
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
