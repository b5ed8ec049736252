"""A low-level server whose errors name paths: some are information, some are leaks.

Written from the false alarms `mcp-errors check` once raised on real servers, beside the leaks
it must still catch. Information: the path the caller gave (also as the server resolved a
relative one), the allowed root an error names so the agent can fix its input, a root listed by
`list_allowed_directories`. Leaks: a source file, an installed package, a traceback (even one
inside an allowed root). `wait_for_job` has a default wait equal to the checker's call timeout
in the tests: the checker must not wait that long itself.

`LEAKS` names the tools whose errors leak; every other tool breaks no rule any server must
pass. Run as a stdio server: `python domain_paths_server.py ROOT REPOSITORY [DEFAULT_WAIT]`.
"""

from __future__ import annotations

import sys
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

LEAKS = frozenset({"leak_source_path", "leak_site_packages", "leak_traceback_in_root"})


def _schema(name: str, description: str = "", **extra: Any) -> dict[str, Any]:
    prop: dict[str, Any] = {"type": "string", **extra}
    if description:
        prop["description"] = description
    return {"type": "object", "properties": {name: prop}, "required": [name]}


def _text(value: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=value)], is_error=is_error)


def build_server(root: Path, repository: Path, default_wait: float = 10.0) -> Server[Any]:
    """The server, allowed to read under `root`, confined to the git `repository`."""
    root = root.resolve()
    read_only = ToolAnnotations(read_only_hint=True)
    schemas: dict[str, dict[str, Any]] = {
        "list_allowed_directories": {"type": "object", "properties": {}},
        "read_note": _schema("path", "Path of a note under an allowed directory."),
        "repo_status": _schema("repo_path"),
        "wait_for_job": {
            "type": "object",
            "properties": {
                "duration": {"type": "number", "default": default_wait, "description": "Seconds to wait for the job."}
            },
        },
        "leak_source_path": _schema("order_id"),
        "leak_site_packages": _schema("order_id"),
        "leak_traceback_in_root": _schema("order_id"),
    }
    tools = [
        Tool(name=name, description="Domain paths fixture.", input_schema=schema, annotations=read_only)
        for name, schema in schemas.items()
    ]

    def read_note(path: str) -> CallToolResult:
        resolved = Path(path) if Path(path).is_absolute() else root / path
        resolved = resolved.resolve()
        if resolved != root and root not in resolved.parents:
            return _text(f"Access denied - path outside allowed directories: {resolved} not in {root}", is_error=True)
        if not resolved.exists():
            return _text(f"ENOENT: no such file or directory, open '{resolved}'", is_error=True)
        if resolved.is_dir():
            return _text(f"EISDIR: illegal operation on a directory, read '{resolved}'", is_error=True)
        return _text(resolved.read_text(encoding="utf-8"))

    def repo_status(repo_path: str) -> CallToolResult:
        if Path(repo_path).resolve() == repository.resolve():
            return _text("On branch main: nothing to commit, working tree clean.")
        message = f"Repository path '{repo_path}' is outside the allowed repository '{repository}'"
        return _text(message, is_error=True)

    async def answer(name: str, arguments: dict[str, Any]) -> CallToolResult:
        if name == "list_allowed_directories":
            return _text(f"Allowed directories:\n{root}")
        if name == "read_note":
            return read_note(arguments["path"])
        if name == "repo_status":
            return repo_status(arguments["repo_path"])
        if name == "wait_for_job":
            duration = arguments.get("duration", default_wait)
            await anyio.sleep(duration)
            return _text(f"The job finished after {duration:g}s.")
        if name == "leak_source_path":
            return _text(
                "Order lookup failed in /home/alice/src/orders/handlers.py: the orders table is locked;"
                " try again later.",
                is_error=True,
            )
        if name == "leak_site_packages":
            return _text(
                "Order lookup failed: /usr/lib/python3.11/site-packages/orders/db.py raised KeyError 'total';"
                " try again later.",
                is_error=True,
            )
        return _text(
            f'Traceback (most recent call last):\n  File "{root}/app.py", line 12, in fetch\n'
            "OrderLookupError: the orders table is locked; try again later.",
            is_error=True,
        )

    async def on_list_tools(ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        arguments = params.arguments or {}
        schema = schemas[params.name]
        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(arguments))
        if errors:
            field = ".".join(str(part) for part in errors[0].absolute_path) or ", ".join(schema.get("required", []))
            return _text(f"Invalid argument {field}: {errors[0].message}; correct it and call again.", is_error=True)
        return await answer(params.name, arguments)

    return Server("domain-paths", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def main() -> None:
    wait = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    server = build_server(Path(sys.argv[1]), Path(sys.argv[2]), wait)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
