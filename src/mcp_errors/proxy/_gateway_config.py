"""The gateway's configuration file read into the servers to start, before any heavy import.

`mcp-errors proxy --config FILE` reads a host's configuration (`mcpServers` or `servers`)
with the standard library only, so that its stdio servers can be started (`_spawn.py`)
while fastmcp is imported. An entry gives a stdio server (`command`, `args`, `env`, `cwd`)
or a streamable HTTP one (`url`, `headers`), and may name a rules file (`rules`, relative to
the file); a recognised server gets its shipped rule pack. `disabled: true` entries are left
out; an entry already wrapped by `mcp-errors wrap` is the server it wraps.

An HTTP entry's `headers` are sent to that server on every request, as the host would send
them. Their values may name the environment as hosts write it: `${env:NAME}` (VS Code,
Cursor), `${NAME}` and `${NAME:-default}` (Claude Code). A value that names a variable that
is not set, or a prompt only the host can make (`${input:id}`, VS Code), is refused at
start-up with one line naming the server, the header and the reference, never the value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from mcp_errors.proxy._hosts import (
    HostConfigError,
    HostEntry,
    pack_path,
    read_host_config,
    recognised_pack,
    wrapped_target,
)

__all__ = ["ServerEntry", "read_server_entries", "resolve_references"]

_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_REFERENCE: Final = re.compile(r"\$\{([^{}]{0,256})\}")
"""`${...}` in a value (linear: no nesting, a bounded name)."""
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class ServerEntry:
    """One server of the gateway's file, as read: a stdio command line, or a URL with its headers."""

    name: str
    command: list[str] | None = None
    """`[command, *args]` of a stdio server; `None` for an HTTP one."""
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    """What an HTTP server gets on every request, references resolved."""
    env: dict[str, str] | None = None
    """A stdio server's whole environment (ours, with the entry's `env` over it)."""
    cwd: str | None = None
    rules: Path | None = None


def read_server_entries(
    path: Path, *, packs: bool = True, environ: Mapping[str, str] | None = None
) -> list[ServerEntry]:
    """The servers of a host's configuration file, ready to start (disabled ones left out).

    Args:
        path: The file.
        packs: Give a server without a `rules` key the shipped rule pack it is recognised by.
        environ: Where `${env:NAME}` is looked up; ours when omitted.

    Raises:
        HostConfigError: If the file is not a host's configuration, or an entry cannot be run.
    """
    config = read_host_config(path.read_text(encoding="utf-8"))
    environ = os.environ if environ is None else environ
    servers = []
    for entry in config.entries:
        if entry.is_object and entry.node.value.get("disabled") is True:
            continue
        servers.append(_entry_of(entry, path.parent, packs=packs, environ=environ))
    if not servers:
        raise HostConfigError("it names no server to start")
    return servers


def _entry_of(entry: HostEntry, base: Path, *, packs: bool, environ: Mapping[str, str]) -> ServerEntry:
    where = f'server "{entry.name}"'
    if not _NAME.fullmatch(entry.name):
        raise HostConfigError(f"{where}: a name of letters, digits, '-' and '_' is needed (it prefixes its tools)")
    if not entry.is_object:
        raise HostConfigError(f"{where} is not an object")
    value: dict[str, Any] = entry.node.value
    line = entry.command_line
    url = entry.text("url")
    rules_file: str | None = value.get("rules") if isinstance(value.get("rules"), str) else None
    wrapped = wrapped_target(line) if line is not None else None
    if wrapped is not None:
        if not wrapped.target:
            raise HostConfigError(f"{where} runs mcp-errors proxy without a server after `--`")
        line, url = (None, wrapped.url) if wrapped.url is not None else (wrapped.target, None)
        rules_file = rules_file or wrapped.rules
    if line is None and url is None:
        raise HostConfigError(f"{where} has neither a command (with a list of string args) nor a url")
    if rules_file is None and packs:
        pack = recognised_pack(line if line is not None else [])
        found = pack_path(pack) if pack is not None else None
        rules_file = str(found) if found is not None else None
    rules = (base / os.path.expanduser(rules_file)).resolve() if rules_file is not None else None
    if line is None:
        assert url is not None
        return ServerEntry(entry.name, url=url, headers=_headers(value.get("headers"), where, environ), rules=rules)
    env = value.get("env")
    child_env = dict(os.environ)
    if isinstance(env, dict):
        child_env.update({str(key): str(each) for key, each in env.items() if isinstance(each, str | int | float)})
    cwd = value.get("cwd")
    return ServerEntry(
        entry.name, command=line, env=child_env, cwd=str(base / cwd) if isinstance(cwd, str) else None, rules=rules
    )


def _headers(headers: object, where: str, environ: Mapping[str, str]) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, dict) or not all(isinstance(each, str) for each in headers.values()):
        raise HostConfigError(f'{where}: "headers" must be an object of strings')
    return {
        name: resolve_references(each, environ, where=f"{where}, header {name!r}") for name, each in headers.items()
    }


def resolve_references(text: str, environ: Mapping[str, str], *, where: str) -> str:
    """`text` with its `${env:NAME}`, `${NAME}` and `${NAME:-default}` replaced from `environ`.

    Raises:
        HostConfigError: For a variable that is not set (without a default), or a reference only
            a host can resolve (`${input:id}`, `${workspaceFolder}`); the message names the
            reference, never the value around it.
    """

    def value_of(match: re.Match[str]) -> str:
        reference = match.group(1)
        name, has_default, default = reference.partition(":-")
        name = name.removeprefix("env:")
        if reference.startswith("input:"):
            raise HostConfigError(
                f"{where} asks the host for ${{{reference}}}, which the gateway cannot prompt for: "
                "set it in an environment variable and write ${env:NAME}"
            )
        if not _ENV_NAME.fullmatch(name):
            raise HostConfigError(f"{where} uses ${{{reference}}}, which only the host can fill in")
        found = environ.get(name)
        if found is None and not has_default:
            raise HostConfigError(f"{where} uses ${{{reference}}}, but {name} is not set in the environment")
        return found if found is not None else default

    return _REFERENCE.sub(value_of, text)
