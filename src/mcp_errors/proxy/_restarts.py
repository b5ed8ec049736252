"""The restart notice: the first result a front session gets after its upstream lost its state says so.

A wrapped server that crashes is started again (`_child.py`), and an HTTP upstream that
drops a session gets a new one (`_sessions.py`). The calls go on working, but what the
server kept in memory for its caller (a thinking history, a knowledge graph, open files, a
login) is gone, and nothing in an ordinary result says so: the agent would go on as if it
were still there. So the first tools/call result of each front session after such a restart
carries a notice:

- `_meta["mcp-errors/upstreamRestarted"]`: `{"restarts": <how many since this session's last
  result>, "how": "exited with status 3 and was started again"}`;
- for hosts that show the model only text: the notice as a sentence, appended to the error
  text (before its errorId) of an error result, or as a last text block of a success.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from fastmcp.tools import ToolResult
from mcp_types import TextContent

from mcp_errors._shared.error_text import read_error_text, write_error_text
from mcp_errors._shared.telemetry import record_proxy_decision
from mcp_errors.proxy._sessions import FrontSession, new_slot

__all__ = ["RESTARTED_META", "RestartNotice", "Restarts", "restart_notice"]

RESTARTED_META: Final = "mcp-errors/upstreamRestarted"
"""`_meta` key of the notice on the first result of a front session after its upstream restarted."""


class Restarts(Protocol):
    """What restarts of the upstream a front session has lived through: a `ChildProcess`, `KeptSessions`."""

    def restarts_for(self, front: FrontSession) -> tuple[int, str]:
        """How often the upstream `front` reaches was started (or its session opened) again, and how, as a clause.

        The clause follows "the server behind this proxy": `exited with status 3 and was started again`.
        """
        ...


def restart_notice(how: str) -> str:
    """The notice's sentence, for the model: what happened (`how`, a clause) and what may be gone."""
    return (
        f"Note: since this session's previous call, the server behind this proxy {how}. Whatever it kept in "
        "memory for this session (earlier steps, a history, open items, a login) may be gone: check before "
        "relying on it, and rebuild it if needed."
    )


class RestartNotice:
    """Adds the restart notice to the first tools/call result of each front session after a restart.

    A step of the proxy's tools/call middleware (`_calls.py`), the outermost after the front's
    protocol era, so that whatever answers the call (the upstream, a replay, the circuit
    breaker, the repeat guard) carries the notice: `begin` before the call, `end` on its result.

    Args:
        upstream: Where restarts are counted.
    """

    def __init__(self, upstream: Restarts) -> None:
        self.upstream = upstream
        self._slot = new_slot()

    def begin(self, front: FrontSession) -> None:
        """Note where `front` starts from: a session that began after a restart has lost nothing."""
        state = front.state
        if self._slot not in state:
            state[self._slot] = self.upstream.restarts_for(front)[0]

    def end(self, front: FrontSession, tool: str, result: ToolResult) -> ToolResult:
        """`result`, with the notice if the upstream restarted since `front`'s previous result."""
        restarts, how = self.upstream.restarts_for(front)
        told: int = front.state[self._slot]
        if restarts <= told:
            return result
        front.state[self._slot] = restarts
        record_proxy_decision("restart_notified", tool=tool)
        return _with_notice(result, restarts - told, how)


def _with_notice(result: ToolResult, restarts: int, how: str) -> ToolResult:
    how = how or "was started again"
    notice = restart_notice(how)
    content = list(result.content)
    first = content[0] if content else None
    written = read_error_text(first.text) if result.is_error and isinstance(first, TextContent) else None
    if written is not None:
        body = f"{written.body} {notice}"
        content[0] = TextContent(type="text", text=write_error_text(written.head, body, error_id=written.error_id))
    else:
        content.append(TextContent(type="text", text=notice))
    meta: dict[str, Any] = {**(result.meta or {}), RESTARTED_META: {"restarts": restarts, "how": how}}
    return result.model_copy(update={"content": content, "meta": meta})
