"""The two requests the checker makes beside `mcp.Client`'s typed API, and why.

- `tools/list`: `Client.list_tools` validates the whole listing against the negotiated
  revision, so one tool whose schema is malformed (`"properties": 5`) fails it for every
  tool. When that happens the listing is read again as plain JSON and each tool is parsed on
  its own: the malformed one is judged, the others are checked.
- `tools/call`: `Client.call_tool` validates a success against the tool's outputSchema with
  jsonschema, that is with `re`, which a backtracking pattern keeps busy for minutes that no
  deadline can interrupt. The checker sends the request with `session.send_request` and
  validates the result itself, bounded in time (`_patterns`). A call the server runs as a
  task (SEP-2663: the checker's client declares the tasks extension, so that task-only
  tools can be called) is polled to its end, and its result judged as the tool's answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from mcp import Client
from mcp_types import CallToolRequest, CallToolRequestParams, CallToolResult, InputRequiredResult, Tool
from pydantic import TypeAdapter, ValidationError

from mcp_errors._client.task_polling import CreatedTask, TaskWatch

__all__ = ["MAX_PAGES", "Listing", "call_tool", "list_tools_leniently"]

MAX_PAGES: Final = 100
"""The most pages of `tools/list` read: a server that keeps returning cursors cannot hold the check."""
_PROBLEM_CHARS: Final = 160
_CALL_RESULT: Final = TypeAdapter[CallToolResult | InputRequiredResult | CreatedTask](
    CallToolResult | InputRequiredResult | CreatedTask
)


@dataclass(frozen=True, slots=True)
class Listing:
    """What `tools/list` gave, page after page."""

    tools: list[Tool]
    malformed: dict[str, str] = field(default_factory=dict[str, str])
    """Entries that are not valid tools: name (or `tools[i]`) -> the problem."""
    pages: int = 1
    cut: bool = False
    """The server still offered a next page after `MAX_PAGES`: its later tools were not read."""


async def list_tools_leniently(client: Client) -> Listing:
    """Every tool the server lists (up to `MAX_PAGES` pages), and the entries that are not valid tools.

    Raises:
        ValidationError: The listing is malformed and could not be read again as plain JSON.
    """
    try:
        return await _typed_listing(client)
    except ValidationError as whole:
        try:
            pages, cut = await _raw_listing(client)
        except (AttributeError, TypeError):
            raise whole from None  # the SDK's internals moved: say what the typed listing said
    tools: list[Tool] = []
    malformed: dict[str, str] = {}
    for index, entry in enumerate(tool for page in pages for tool in page):
        name = entry.get("name") if isinstance(entry, dict) else None
        try:
            tools.append(Tool.model_validate(entry, by_name=False))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "tool"
            label = name if isinstance(name, str) and name else f"tools[{index}]"
            malformed[label] = f"{where}: {first['msg']}"[:_PROBLEM_CHARS]
    return Listing(tools, malformed, len(pages), cut)


async def _typed_listing(client: Client) -> Listing:
    tools: list[Tool] = []
    cursor: str | None = None
    for page in range(1, MAX_PAGES + 1):
        result = await client.list_tools(cursor=cursor)
        tools.extend(result.tools)
        cursor = result.next_cursor
        if not cursor:
            return Listing(tools, pages=page)
    return Listing(tools, pages=MAX_PAGES, cut=True)


async def _raw_listing(client: Client) -> tuple[list[list[Any]], bool]:
    # The same request `send_request` makes, without validating the result: `_stamp` adds
    # what the negotiated revision needs (headers, `_meta`), the dispatcher sends it.
    session: Any = client.session
    pages: list[list[Any]] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        data: dict[str, Any] = {"method": "tools/list", "params": {"cursor": cursor} if cursor else None}
        opts: dict[str, Any] = {}
        session._stamp(data, opts)
        raw = await session._dispatcher.send_raw_request("tools/list", data.get("params"), opts)
        tools = raw.get("tools") if isinstance(raw, dict) else None
        pages.append(tools if isinstance(tools, list) else [])
        cursor = raw.get("nextCursor") if isinstance(raw, dict) else None
        if not isinstance(cursor, str) or not cursor:
            return pages, False
    return pages, True


async def call_tool(client: Client, name: str, arguments: dict[str, Any]) -> CallToolResult | InputRequiredResult:
    """Send one `tools/call` and return its result unvalidated against the outputSchema.

    Raises:
        MCPError: The server answered with a JSON-RPC error (for a task: the task failed with
            it), or the connection closed.
        ValidationError: The result is not a `CallToolResult` of the negotiated revision.
    """
    request = CallToolRequest(params=CallToolRequestParams(name=name, arguments=arguments))
    answer = await client.session.send_request(request, _CALL_RESULT)
    if isinstance(answer, CreatedTask):
        # The caller's time limit bounds the polling; a task still running then is cancelled.
        return await TaskWatch().answer(client.session, answer)
    return answer
