"""A host's server list: Claude Desktop, Cursor, VS Code and Claude Code configuration files.

All of them keep MCP servers as a JSON object of named entries: `mcpServers` (Claude
Desktop, Cursor, Claude Code's `.mcp.json`) or `servers` (VS Code's `mcp.json`, beside its
`inputs`). A stdio entry has `command` and `args` (and `env`, `cwd`, ...), an HTTP entry a
`url` (and `type`, `headers`). This module reads them for `mcp-errors wrap` and for the
gateway (`mcp-errors proxy --config`), and knows three things about an entry:

- whether it already runs through `mcp-errors proxy`, and what it runs then (the command
  after the proxy's `--`: a wrapped entry keeps its original command there, nowhere else);
- which shipped rule pack (`docs/proxy-rules/`) fits the server it starts, by its command;
- how this mcp-errors is started from a host: from a clone (`uv run --project <clone>`) or
  from an installed `mcp-errors`.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from mcp_errors.proxy._jsonc import JsoncError, Node, parse_jsonc

__all__ = [
    "HostConfig",
    "HostConfigError",
    "HostEntry",
    "Wrapped",
    "clone_root",
    "pack_path",
    "proxy_launcher",
    "read_host_config",
    "recognised_pack",
    "wrapped_target",
]

SERVERS_KEYS: Final = ("mcpServers", "servers")
"""Where each host keeps its servers: the first of these keys a file has."""

PACKS: Final = {
    "mcp-server-git": "mcp-server-git",
    "mcp_server_git": "mcp-server-git",
    "mcp-server-sqlite": "mcp-server-sqlite",
    "mcp_server_sqlite": "mcp-server-sqlite",
    "mcp-server-fetch": "mcp-server-fetch",
    "mcp_server_fetch": "mcp-server-fetch",
    "@modelcontextprotocol/server-filesystem": "server-filesystem",
    "mcp-server-filesystem": "server-filesystem",
}
"""A word of a server's command (a package, a module or an executable) -> the rule pack for it."""

_PACKS_FOLDER: Final = "proxy-rules"
URL_PREFIXES: Final = ("http://", "https://")


class HostConfigError(ValueError):
    """The file is not a host's MCP configuration; the message says why, for a person."""


@dataclass(frozen=True)
class HostEntry:
    """One named server of a host's configuration, as written (`node` is its span in the text)."""

    name: str
    node: Node

    @property
    def is_object(self) -> bool:
        return self.node.is_object

    def text(self, key: str) -> str | None:
        """A string member of the entry, or `None`."""
        member = self.node.member(key) if self.node.is_object else None
        return member.value.value if member is not None and isinstance(member.value.value, str) else None

    @property
    def command_line(self) -> list[str] | None:
        """`[command, *args]` of a stdio entry; `None` when the entry has no command or odd args."""
        command = self.text("command")
        if command is None:
            return None
        member = self.node.member("args")
        args = [] if member is None else member.value.value
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            return None
        return [command, *args]


@dataclass(frozen=True)
class HostConfig:
    """A parsed configuration: its text, where the servers are, and each entry in order."""

    text: str
    root: Node
    servers_key: str
    servers: Node
    entries: list[HostEntry]


def read_host_config(text: str) -> HostConfig:
    """Read a host's configuration (JSON, or JSONC as VS Code allows).

    Raises:
        HostConfigError: If it does not parse, or holds no `mcpServers` / `servers` object.
    """
    try:
        root = parse_jsonc(text)
    except JsoncError as exc:
        raise HostConfigError(f"it is not JSON: {exc}") from None
    if not root.is_object:
        raise HostConfigError("it is not a JSON object")
    for key in SERVERS_KEYS:
        member = root.member(key)
        if member is not None:
            if not member.value.is_object:
                raise HostConfigError(f'its "{key}" is not an object of named servers')
            entries = [HostEntry(each.key, each.value) for each in member.value.members]
            return HostConfig(text, root, key, member.value, entries)
    raise HostConfigError('it has no "mcpServers" (Claude Desktop, Cursor, Claude Code) or "servers" (VS Code) object')


@dataclass(frozen=True)
class Wrapped:
    """An entry that runs through `mcp-errors proxy`: the proxy's options and what it fronts."""

    options: list[str]
    target: list[str]
    """`[command, *args]` of the server, or `[url]` of an HTTP server."""

    @property
    def url(self) -> str | None:
        return self.target[0] if len(self.target) == 1 and self.target[0].startswith(URL_PREFIXES) else None

    @property
    def rules(self) -> str | None:
        """The `--rules` file the proxy was given, if any."""
        for option, value in zip(self.options, self.options[1:], strict=False):
            if option == "--rules":
                return value
        return next((option.removeprefix("--rules=") for option in self.options if option.startswith("--rules=")), None)


def wrapped_target(command_line: list[str]) -> Wrapped | None:
    """What `command_line` fronts, when it runs `mcp-errors proxy` (any launcher); else `None`."""
    for at, word in enumerate(command_line[:-1]):
        name = PurePosixPath(word.replace("\\", "/")).name.removesuffix(".exe")
        if name != "mcp-errors" or command_line[at + 1] != "proxy":
            continue
        rest = command_line[at + 2 :]
        if "--" in rest:
            split = rest.index("--")
            return Wrapped(rest[:split], rest[split + 1 :])
        if rest and rest[-1].startswith(URL_PREFIXES):
            return Wrapped(rest[:-1], rest[-1:])
        return Wrapped(rest, [])
    return None


def recognised_pack(command_line: list[str]) -> str | None:
    """The shipped rule pack for the server `command_line` starts (`mcp-server-git`), if one fits."""
    for word in command_line:
        name = word.replace("\\", "/")
        # A package's script run from its folder: .../node_modules/@scope/pkg/dist/index.js.
        inside = next((pack for key, pack in PACKS.items() if key.startswith("@") and f"/{key}/" in name), None)
        if inside is not None:
            return inside
        if not name.startswith("@"):
            name = PurePosixPath(name).name
        # Drop a version: mcp-server-git==1.2, mcp-server-git@latest, @scope/pkg@1.2.
        name = name.split("==")[0]
        at = name.find("@", 1)
        name = name[:at] if at > 0 else name
        if name.startswith("@modelcontextprotocol/"):
            name = name.lower()
        pack = PACKS.get(name)
        if pack is not None:
            return pack
    return None


def pack_path(pack: str) -> Path | None:
    """The file of a shipped rule pack: beside the package when installed, in docs/ in a clone."""
    for folder in (Path(__file__).parent / "rule_packs", _clone_docs()):
        if folder is not None and (folder / f"{pack}.toml").is_file():
            return (folder / f"{pack}.toml").resolve()
    return None


def clone_root() -> Path | None:
    """The root of the git clone this mcp-errors runs from (an editable install), or `None` when installed."""
    root = Path(__file__).resolve().parents[3]
    pyproject = root / "pyproject.toml"
    try:
        named = 'name = "mcp-errors"' in pyproject.read_text(encoding="utf-8")
    except OSError:
        return None
    return root if named and (root / ".git").exists() else None


def _clone_docs() -> Path | None:
    root = clone_root()
    return None if root is None else root / "docs" / _PACKS_FOLDER


def proxy_launcher() -> list[str]:
    """The command line that starts this mcp-errors' proxy from a host, without the proxy's options.

    From a clone: `uv run --project <clone> --extra proxy mcp-errors proxy` (uv brings fastmcp).
    Installed: the `mcp-errors` script beside this Python, by its absolute path (hosts start
    servers with a short PATH), else the one on PATH, else this Python running the package
    (`python -m mcp_errors proxy`): a form that is true today, where `uvx --from mcp-errors`
    would fetch a package that is not published.
    """
    root = clone_root()
    if root is not None:
        uv = shutil.which("uv") or "uv"
        return [uv, "run", "--project", str(root), "--extra", "proxy", "mcp-errors", "proxy"]
    script = Path(sys.executable).parent / "mcp-errors"
    if script.is_file():
        return [str(script), "proxy"]
    found = shutil.which("mcp-errors")
    if found is not None:
        return [found, "proxy"]
    return [sys.executable, "-m", "mcp_errors", "proxy"]
