"""The gateway's stdio front: the host answered and every server listed before the heavy imports.

`mcp-errors proxy --config FILE` over stdio starts its servers first (`_spawn.EarlyStart`).
Importing fastmcp then costs a Python process more CPU than these servers take to start, and
on a small machine the two compete. So, with the standard library only, this front:

- does each stdio server's MCP handshake (`initialize` as the SDK's client sends it,
  `notifications/initialized`) and lists its tools (every page), keeping the answers and
  every byte read after them for the SDK's client, which adopts the process later
  (`UpstreamHandshake`, read by `_child.py`);
- answers the host's `initialize` at once as the gateway would (the same protocol version
  negotiation, serverInfo and capabilities), its `ping`, and its `tools/list` once every
  server is listed, failed or out of start-up time, with each tool as the gateway lists it
  (`<server>_<tool>`, the title, `_meta` and widened outputSchema fastmcp and the contract
  give it);
- keeps everything else the host sends, in order, for the real gateway.

Then the gateway is imported and built, and this front becomes its stdio pump for the life
of the process (`hand_over`): what was kept is replayed, and every later line goes through.
A host that does not start with `initialize` (a 2026-07-28 client) is left to the gateway
from its first line. Lines are read from the raw descriptors into an own buffer, bounded
(`MAX_LINE_BYTES`), in linear time.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcp_errors._shared.widening import admit_error_envelope
from mcp_errors.proxy._spawn import EarlyStart, UpstreamHandshake

__all__ = [
    "CLIENT_PROTOCOL_VERSION",
    "GATEWAY_NAME",
    "MAX_LINE_BYTES",
    "TRACE_VARIABLE",
    "Front",
    "UnlistableError",
    "gateway_tool",
    "inline_refs",
    "message_line",
]

GATEWAY_NAME: Final = "mcp-errors gateway"
"""The gateway's serverInfo name (`Gateway` names its fastmcp server with it)."""

CLIENT_PROTOCOL_VERSION: Final = "2025-11-25"
"""What the SDK's client offers in `initialize` (`mcp_types.LATEST_HANDSHAKE_VERSION`; a test holds them equal)."""

HANDSHAKE_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The versions the SDK's server accepts in `initialize` (`mcp_types.HANDSHAKE_PROTOCOL_VERSIONS`)."""

CLIENT_CAPABILITIES: Final[Mapping[str, Any]] = {
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
    "roots": {"listChanged": True},
}
"""What the proxy's client (fastmcp's, with sampling, elicitation and roots forwarded) says it can do."""

SERVER_CAPABILITIES: Final[Mapping[str, Any]] = {
    "logging": {},
    "prompts": {"listChanged": True},
    "resources": {"subscribe": False, "listChanged": True},
    "tools": {"listChanged": True},
}
"""What the gateway's fastmcp server answers `initialize` with (a test holds them equal)."""

MAX_LINE_BYTES: Final = 32 * 1024 * 1024
"""The longest message line the front reads. A server that writes a longer one is left as it is to
the gateway's own client; a host's is answered by the gateway as a message it cannot read."""

_MAX_PAGES: Final = 1000
_INITIALIZE_ID: Final = "mcp-errors-front-initialize"
_LIST_ID: Final = "mcp-errors-front-tools-list"
_TOOL_FIELDS: Final = (
    *("name", "title", "description", "inputSchema", "outputSchema"),
    *("icons", "annotations", "execution"),
)
"""What fastmcp's proxy keeps of an upstream's tool (and `_meta`, merged)."""


class LineTooLongError(Exception):
    """A line longer than `MAX_LINE_BYTES`."""


class _Lines:
    """Lines read from a raw descriptor into an own buffer: nothing read is lost to a reader's buffering."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = bytearray()
        self._scanned = 0  # no newline before this offset: each byte is looked at once

    def next(self, deadline: float | None = None) -> bytes | None:
        """The next line with its newline; `None` at the end of the stream.

        Raises:
            TimeoutError: When `deadline` (monotonic) passes first.
            LineTooLongError: When a line grows past `MAX_LINE_BYTES`.
        """
        while True:
            end = self.buffer.find(b"\n", self._scanned)
            if end >= 0:
                line = bytes(self.buffer[: end + 1])
                del self.buffer[: end + 1]
                self._scanned = 0
                return line
            self._scanned = len(self.buffer)
            if self._scanned > MAX_LINE_BYTES:
                raise LineTooLongError
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                    raise TimeoutError
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                return None
            self.buffer += chunk


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def message_line(message: Mapping[str, Any]) -> bytes:
    """A JSON-RPC message as one line of MCP's stdio transport."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


@functools.cache
def _fastmcp_version() -> str:
    # `fastmcp.__version__`, read as fastmcp reads it, without importing it: the gateway's
    # serverInfo version, and its client's.
    from importlib.metadata import PackageNotFoundError, version

    for package in ("fastmcp-slim", "fastmcp"):
        with contextlib.suppress(PackageNotFoundError):
            return version(package)
    return "0"


def _client_info() -> dict[str, str]:
    # The SDK's client in the gateway is fastmcp's, which names itself so.
    return {"name": "fastmcp", "version": _fastmcp_version()}


def shake_hands(early: EarlyStart, *, deadline: float, client_info: Mapping[str, str]) -> None:
    """Do `early`'s handshake and listing; leave the outcome on it (`handshake`, `timed_out`).

    A server that exits, answers `initialize` with an error or writes a line past the bound
    gets no handshake: the SDK's client adopts it as it is and says why it did not start. One
    that does not answer by `deadline` is marked `timed_out`, and the gateway stops it.
    """
    process = early.process
    if process is None or process.stdin is None or process.stdout is None:
        return
    send_fd, lines = process.stdin.fileno(), _Lines(process.stdout.fileno())
    kept: list[bytes] = []

    def ask(ident: str, method: str, params: Mapping[str, Any] | None) -> dict[str, Any] | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        _write_all(send_fd, message_line(message))
        while True:
            line = lines.next(deadline)
            if line is None:
                return None
            try:
                answer = json.loads(line)
            except ValueError:
                answer = None
            if isinstance(answer, dict) and answer.get("id") == ident and "method" not in answer:
                return answer
            kept.append(line)  # the server's own messages: the SDK's client reads them later

    try:
        answer = ask(
            _INITIALIZE_ID,
            "initialize",
            {
                "protocolVersion": CLIENT_PROTOCOL_VERSION,
                "capabilities": CLIENT_CAPABILITIES,
                "clientInfo": client_info,
            },
        )
        if answer is None or not isinstance(answer.get("result"), dict):
            return
        handshake = UpstreamHandshake(answer["result"])
        _write_all(send_fd, message_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        tools: list[dict[str, Any]] = []
        cursor: object = None
        for page in range(_MAX_PAGES):
            listed = ask(f"{_LIST_ID}-{page}", "tools/list", None if cursor is None else {"cursor": cursor})
            result = listed.get("result") if listed is not None else None
            if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
                break
            tools.extend(
                tool for tool in result["tools"] if isinstance(tool, dict) and isinstance(tool.get("name"), str)
            )
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                handshake.tools = tools
                break
        handshake.leftover = b"".join(kept) + bytes(lines.buffer)
        early.handshake = handshake
    except TimeoutError:
        early.timed_out = True
    except (LineTooLongError, OSError):
        return


class UnlistableError(Exception):
    """A tool the front cannot list exactly as the gateway would: the gateway answers `tools/list`."""


_DEFS_REF: Final = "#/$defs/"
_MAX_SCHEMA_NODES: Final = 10_000
_MAX_SCHEMA_DEPTH: Final = 64


def _has_ref(node: object) -> bool:
    if isinstance(node, dict):
        return "$ref" in node or any(_has_ref(value) for value in node.values())
    return isinstance(node, list) and any(_has_ref(item) for item in node)


def inline_refs(schema: Any) -> Any:
    """`schema` with its `#/$defs/...` references inlined and `$defs` dropped, as fastmcp's listing does.

    Only the plain case is done here (references alone in their object, acyclic, small, no
    `discriminator`); anything else raises `UnlistableError`, and the gateway lists it.
    """
    if not isinstance(schema, dict) or ("$defs" not in schema and not _has_ref(schema)):
        return schema
    defs = schema.get("$defs", {})
    if not isinstance(defs, dict) or "$ref" in schema or "definitions" in schema:
        raise UnlistableError
    left = [_MAX_SCHEMA_NODES]

    def walk(node: Any, resolving: tuple[str, ...], depth: int) -> Any:
        left[0] -= 1
        if left[0] < 0 or depth > _MAX_SCHEMA_DEPTH:
            raise UnlistableError
        if isinstance(node, list):
            return [walk(item, resolving, depth + 1) for item in node]
        if not isinstance(node, dict):
            return node
        if "discriminator" in node:
            raise UnlistableError
        if "$ref" not in node:
            return {key: walk(value, resolving, depth + 1) for key, value in node.items()}
        ref = node["$ref"]
        name = ref.removeprefix(_DEFS_REF) if isinstance(ref, str) and ref.startswith(_DEFS_REF) else ""
        if len(node) != 1 or not name or "/" in name or "~" in name or name not in defs or name in resolving:
            raise UnlistableError
        return walk(defs[name], (*resolving, name), depth + 1)

    return walk({key: value for key, value in schema.items() if key != "$defs"}, (), 0)


def _default_title(name: str) -> str:
    # fastmcp's own rule for a tool without a title (`fastmcp.tools.base._default_title`).
    return name.replace("_", " ").replace("-", " ").title()


def gateway_tool(server: str, tool: Mapping[str, Any]) -> dict[str, Any]:
    """`tool`, as `server` listed it, as the gateway lists it.

    fastmcp's proxy keeps a tool's MCP fields, gives one without a title a title made of its
    name, and adds its tags under `_meta.fastmcp`; the mount prefixes its name; the contract
    widens its outputSchema to admit the error envelope; fastmcp inlines the schemas' `$ref`s.

    Raises:
        UnlistableError: For a schema whose references the front does not inline as fastmcp would.
    """
    name = f"{server}_{tool['name']}"
    listed: dict[str, Any] = {key: tool[key] for key in _TOOL_FIELDS if tool.get(key) is not None}
    listed["name"] = name
    annotations = tool.get("annotations")
    annotated = annotations.get("title") if isinstance(annotations, dict) else None
    listed["title"] = tool.get("title") or annotated or _default_title(name)
    if "outputSchema" in listed:
        listed["outputSchema"] = inline_refs(admit_error_envelope(listed["outputSchema"]))
    if "inputSchema" in listed:
        listed["inputSchema"] = inline_refs(listed["inputSchema"])
    meta = dict(tool["_meta"]) if isinstance(tool.get("_meta"), dict) else {}
    found = meta.get("fastmcp")
    theirs: dict[str, Any] = found if isinstance(found, dict) else {}
    tags: list[Any] = theirs["tags"] if isinstance(theirs.get("tags"), list) else []
    public = {key: value for key, value in theirs.items() if not key.startswith("_")}
    meta["fastmcp"] = {**public, "tags": sorted({str(tag) for tag in tags})}
    listed["_meta"] = meta
    return listed


def initialize_answer(params: Mapping[str, Any]) -> dict[str, Any]:
    """What the gateway answers an `initialize` with these params (the SDK server's negotiation)."""
    requested = params.get("protocolVersion")
    negotiated = requested if requested in HANDSHAKE_VERSIONS else CLIENT_PROTOCOL_VERSION
    return {
        "protocolVersion": negotiated,
        "capabilities": SERVER_CAPABILITIES,
        "serverInfo": {"name": GATEWAY_NAME, "version": _fastmcp_version()},
    }


def _answerable_initialize(message: Mapping[str, Any]) -> bool:
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("protocolVersion"), str):
        return False
    info = params.get("clientInfo")
    return (
        isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


@dataclass
class _Answered:
    """What the front answered the host, for the gateway to check when it takes over."""

    initialize_id: Any = None
    initialize_line: bytes = b""
    initialize_result: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None


@dataclass
class Front:
    """The host's side and every server's handshake, before the gateway exists; its stdio pump after.

    Args:
        early: The stdio servers started early, by name (the order of the file).
        startup_seconds: How long each server may take to answer its handshake and listing.
        require_all: Do not answer `tools/list` when a server did not start (the gateway exits).
        list_tools: Answer `tools/list` here (off when an option changes what the gateway lists).
    """

    early: Mapping[str, EarlyStart]
    startup_seconds: float
    require_all: bool = False
    list_tools: bool = True
    answered: _Answered = field(default_factory=_Answered)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _needed: threading.Event = field(default_factory=threading.Event)
    settled: threading.Event = field(default_factory=threading.Event)
    """Set once every server's handshake is over: only then may the SDK's clients adopt them."""
    _queue: list[bytes] = field(default_factory=list)
    _waiting_lists: list[Any] = field(default_factory=list)
    _listing: list[dict[str, Any]] | None = None
    _host_gone: bool = False
    _sink: Callable[[bytes | None], object] | None = None
    _in_fd: int = -1
    _out_fd: int = -1

    def start(self) -> None:
        """Take the host's stdin and stdout, and start reading both sides (daemon threads)."""
        # As the SDK's stdio server does: the wire moves to private descriptors, and 0 and 1
        # become the null device and stderr, so that a stray read or print misses it.
        self._in_fd = os.dup(0)
        self._out_fd = os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
        deadline = time.monotonic() + self.startup_seconds
        info = _client_info()
        shaking = [
            threading.Thread(
                target=shake_hands, args=(each,), kwargs={"deadline": deadline, "client_info": info}, daemon=True
            )
            for each in self.early.values()
        ]
        for thread in shaking:
            thread.start()
        threading.Thread(target=self._settle, args=(shaking,), name="mcp-errors-front-list", daemon=True).start()
        threading.Thread(target=self._read_host, name="mcp-errors-front-host", daemon=True).start()

    def wait_for_gateway(self) -> bool:
        """Block until the gateway is needed: `False` when the host left before it was."""
        self._needed.wait()
        with self._lock:
            return not (self._host_gone and not self._queue)

    def write(self, data: bytes) -> None:
        """Send `data` (whole lines) to the host, never interleaved with another writer's."""
        with self._lock:
            _write_all(self._out_fd, data)

    def hand_over(self, sink: Callable[[bytes | None], object]) -> list[bytes]:
        """From now on every line from the host goes to `sink` (`None`: the host closed stdin).

        Returns:
            What the host sent that the front kept, in order, to be given to the gateway first
            (its `initialize` first, when the front answered it).
        """
        with self._lock:
            self._sink = sink
            kept = ([self.answered.initialize_line] if self.answered.initialize_line else []) + self._queue
            self._queue = []
            gone = self._host_gone
        if gone:
            sink(None)
        return kept

    # --- the host's side ---------------------------------------------------------------------

    def _read_host(self) -> None:
        lines = _Lines(self._in_fd)
        while True:
            try:
                line = lines.next()
            except LineTooLongError:
                line = b"{}\n"  # not a message: the gateway answers it as one it cannot parse
                lines.buffer.clear()
            with self._lock:
                if self._sink is not None:
                    self._sink(line)
                    if line is None:
                        return
                    continue
                if line is None:
                    self._host_gone = True
                    self._needed.set()
                    return
                self._take(line)

    def _take(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            self._keep(line, needed=True)
            return
        method, ident = message.get("method"), message.get("id")
        if self.answered.initialize_result is None:
            if method == "initialize" and ident is not None and not self._queue and _answerable_initialize(message):
                result = initialize_answer(message["params"])
                self.answered.initialize_id, self.answered.initialize_line = ident, line
                self.answered.initialize_result = result
                _write_all(self._out_fd, message_line({"jsonrpc": "2.0", "id": ident, "result": result}))
                return
            self._keep(line, needed=True)  # another era, or an initialize the gateway must judge
            return
        if method == "ping" and ident is not None:
            _write_all(self._out_fd, message_line({"jsonrpc": "2.0", "id": ident, "result": {}}))
            return
        params = message.get("params")
        if (
            method == "tools/list"
            and ident is not None
            and self.list_tools
            # The SDK's server shapes results per protocol version: the front's tools are the
            # latest handshake version's, and an older host gets its list from the gateway.
            and self.answered.initialize_result["protocolVersion"] == CLIENT_PROTOCOL_VERSION
            and not (isinstance(params, dict) and params.get("cursor") is not None)
        ):
            if self._listing is not None:
                self._answer_list(ident)
            else:
                self._waiting_lists.append(ident)
            return
        self._keep(line, needed=ident is not None)

    def _keep(self, line: bytes, *, needed: bool) -> None:
        self._queue.append(line)
        if needed:
            self._needed.set()

    # --- the servers' side -------------------------------------------------------------------

    def _settle(self, shaking: list[threading.Thread]) -> None:
        for thread in shaking:
            thread.join()
        try:
            self._list()
        finally:
            self.settled.set()

    def _list(self) -> None:
        try:
            tools = [
                gateway_tool(name, tool)
                for name, each in self.early.items()
                if each.handshake is not None and each.handshake.tools is not None
                for tool in each.handshake.tools
            ]
        except UnlistableError:
            tools = None
        with self._lock:
            down = [each for each in self.early.values() if each.handshake is None or each.handshake.tools is None]
            if tools is None or not self.list_tools or (self.require_all and down):
                # The gateway lists (and, with require_all, says which server did not start and exits).
                self.list_tools = False
                self._queue.extend(
                    message_line({"jsonrpc": "2.0", "id": i, "method": "tools/list"}) for i in self._waiting_lists
                )
                self._waiting_lists = []
                self._needed.set()
                return
            self._listing = tools
            for ident in self._waiting_lists:
                self._answer_list(ident)
            self._waiting_lists = []
        # The gateway is wanted soon (late servers, calls), but not before the host has its list.
        timer = threading.Timer(_GATEWAY_AFTER_LISTING_SECONDS, self._needed.set)
        timer.daemon = True
        timer.start()

    def _answer_list(self, ident: Any) -> None:
        assert self._listing is not None
        self.answered.tools = self._listing
        if os.environ.get(TRACE_VARIABLE):
            # For the tests: proof that the list goes out before the gateway's imports (said
            # first, so that it is in the log when the host has the list).
            loaded = "yes" if "fastmcp" in sys.modules else "no"
            print(f"mcp-errors gateway front: tools/list answered; fastmcp imported: {loaded}", file=sys.stderr)
        answer = {"jsonrpc": "2.0", "id": ident, "result": {"tools": self.answered.tools}}
        _write_all(self._out_fd, message_line(answer))
        self._needed.set()


_GATEWAY_AFTER_LISTING_SECONDS: Final = 1.0

TRACE_VARIABLE: Final = "MCP_ERRORS_GATEWAY_FRONT_TRACE"
"""Set, the front says on stderr whether fastmcp was imported when it answered `tools/list`."""
