"""`mcp-errors wrap`: put every server of a host's configuration behind `mcp-errors proxy`, and back.

A wrapped stdio entry keeps every key but two: its `command` becomes the proxy's launcher
(`_hosts.proxy_launcher`) and its `args` the proxy's options, `--`, and the original command
and arguments. That is where the original is kept: no key of ours is added, since hosts
check their entries' keys (VS Code and Claude Code warn of unknown ones). The text is edited
in place (`_jsonc`), so comments, order, indentation and line endings stay as they were.

Undo gives back the exact bytes: wrap writes the file as it was beside it
(`<file>.mcp-errors-backup`), and `--undo` restores that copy when the file still says what
wrap made of it (apart from wrapping, the same JSON). If the file was edited since, `--undo`
unwraps each wrapped entry in place instead, keeping the edits.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from mcp_errors.proxy._hosts import (
    HostConfig,
    HostEntry,
    pack_path,
    read_host_config,
    recognised_pack,
    wrapped_target,
)
from mcp_errors.proxy._jsonc import Edit, Member, Node, apply_edits, parse_jsonc

__all__ = ["EntryReport", "WrapResult", "backup_path", "unwrap_text", "wrap_file", "wrap_text"]

BACKUP_SUFFIX: Final = ".mcp-errors-backup"
_HTTP_TYPES: Final = ("http", "streamable-http", "streamableHttp")

Action = Literal["wrapped", "unwrapped", "already wrapped", "skipped"]


@dataclass(frozen=True)
class EntryReport:
    """What wrap (or undo) did with one server, and why when it left it alone."""

    name: str
    action: Action
    detail: str = ""


@dataclass(frozen=True)
class WrapResult:
    """A file's text before and after, what happened to each server, and how undo restored it."""

    before: str
    after: str
    reports: list[EntryReport]
    restored_from_backup: bool = False

    @property
    def changed(self) -> bool:
        return self.before != self.after


def backup_path(path: Path) -> Path:
    """Where wrap keeps the file as it was: beside it."""
    return path.with_name(path.name + BACKUP_SUFFIX)


def wrap_text(
    text: str, *, launcher: Sequence[str], http_too: bool = False, packs: bool = True
) -> tuple[str, list[EntryReport]]:
    """`text` with each stdio server (and HTTP server, with `http_too`) run through the proxy.

    Args:
        text: A host's configuration (JSON or JSONC).
        launcher: The command line that starts `mcp-errors proxy` (`_hosts.proxy_launcher()`).
        http_too: Also wrap HTTP entries, by URL (the host then starts a stdio proxy).
        packs: Give a recognised server its shipped rule pack (`--rules`).

    Raises:
        HostConfigError: If `text` is not a host's configuration.
    """
    config = read_host_config(text)
    edits: list[Edit] = []
    reports = [
        _wrap_entry(config, entry, edits, launcher=list(launcher), http_too=http_too, packs=packs)
        for entry in config.entries
    ]
    return apply_edits(text, edits), reports


def unwrap_text(text: str) -> tuple[str, list[EntryReport]]:
    """`text` with each entry that runs through `mcp-errors proxy` running its server directly again."""
    config = read_host_config(text)
    edits: list[Edit] = []
    reports = []
    for entry in config.entries:
        line = entry.command_line if entry.is_object else None
        wrapped = wrapped_target(line) if line is not None else None
        if wrapped is None or not wrapped.target:
            continue
        _unwrap_entry(config, entry, wrapped.target, wrapped.url, edits)
        reports.append(EntryReport(entry.name, "unwrapped"))
    return apply_edits(text, edits), reports


def wrap_file(
    path: Path,
    *,
    launcher: Sequence[str],
    undo: bool = False,
    dry_run: bool = False,
    http_too: bool = False,
    packs: bool = True,
) -> WrapResult:
    """Wrap (or, with `undo`, restore) the configuration file at `path`.

    Wrapping writes the file as it was to `backup_path(path)` first; undo restores that copy
    byte for byte when the file still means what wrap made of it, and removes it. With
    `dry_run`, nothing is written.

    Raises:
        HostConfigError: If the file is not a host's configuration.
        OSError: If it cannot be read or written.
    """
    raw = path.read_bytes()
    before = raw.decode("utf-8")
    backup = backup_path(path)
    if undo:
        kept = backup.read_bytes() if backup.is_file() else None
        if kept is not None and _same_unwrapped(before, kept.decode("utf-8")):
            result = WrapResult(before, kept.decode("utf-8"), unwrap_text(before)[1], restored_from_backup=True)
        else:
            after, reports = unwrap_text(before)
            result = WrapResult(before, after, reports)
        if not dry_run:
            if result.changed:
                _write(path, result.after.encode("utf-8"))
            if kept is not None and (result.restored_from_backup or result.changed):
                backup.unlink()
        return result
    after, reports = wrap_text(before, launcher=launcher, http_too=http_too, packs=packs)
    result = WrapResult(before, after, reports)
    if result.changed and not dry_run:
        _write(backup, raw)
        _write(path, after.encode("utf-8"))
    return result


def _write(path: Path, data: bytes) -> None:
    """Replace `path` whole (never half-written), keeping its permissions."""
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _wrap_entry(
    config: HostConfig, entry: HostEntry, edits: list[Edit], *, launcher: list[str], http_too: bool, packs: bool
) -> EntryReport:
    if not entry.is_object:
        return EntryReport(entry.name, "skipped", "not an object")
    node = entry.node
    line = entry.command_line
    url = entry.text("url")
    if line is None and entry.text("command") is not None:
        return EntryReport(entry.name, "skipped", "its args are not a list of strings")
    if line is not None and wrapped_target(line) is not None:
        return EntryReport(entry.name, "already wrapped")
    if line is None and url is None:
        return EntryReport(entry.name, "skipped", "it has neither a command nor a url")
    if line is None:
        assert url is not None
        kind = entry.text("type")
        if not http_too:
            return EntryReport(entry.name, "skipped", "an HTTP server: add --http-too to wrap it by URL")
        if kind is not None and kind not in _HTTP_TYPES:
            return EntryReport(entry.name, "skipped", f'its type "{kind}" is not streamable HTTP')
        headers = node.member("headers")
        if headers is not None and headers.value.value:
            return EntryReport(entry.name, "skipped", "it sends headers, which the proxy cannot pass on")
        line = [url]
    options: list[str] = []
    pack = recognised_pack(line) if packs else None
    found = pack_path(pack) if pack is not None else None
    if found is not None:
        options = ["--rules", str(found)]
    wrapped = [*launcher, *options, "--", *line]
    if url is None:
        _set_command_line(config, node, wrapped, edits)
    else:
        url_member = node.member("url")
        assert url_member is not None
        separator = _separator(config.text, node, url_member)
        edits.append(
            Edit(
                url_member.key_start,
                url_member.value.end,
                f'"command": {_json(wrapped[0])},{separator}"args": {_json(wrapped[1:])}',
            )
        )
        kind_member = node.member("type")
        if kind_member is not None:
            edits.append(Edit(kind_member.value.start, kind_member.value.end, _json("stdio")))
    return EntryReport(entry.name, "wrapped", f"rule pack {pack}" if found is not None else "")


def _unwrap_entry(config: HostConfig, entry: HostEntry, target: list[str], url: str | None, edits: list[Edit]) -> None:
    node = entry.node
    if url is None:
        _set_command_line(config, node, target, edits)
        return
    command = node.member("command")
    assert command is not None
    edits.append(Edit(command.key_start, command.value.end, f'"url": {_json(url)}'))
    args = node.member("args")
    if args is not None:
        edits.append(_removal(config.text, node, args))
    kind = node.member("type")
    if kind is not None and kind.value.value == "stdio":
        edits.append(Edit(kind.value.start, kind.value.end, _json("http")))


def _set_command_line(config: HostConfig, node: Node, line: list[str], edits: list[Edit]) -> None:
    command = node.member("command")
    assert command is not None
    edits.append(Edit(command.value.start, command.value.end, _json(line[0])))
    args = node.member("args")
    if args is not None:
        edits.append(Edit(args.value.start, args.value.end, _json(line[1:])))
    elif line[1:]:
        separator = _separator(config.text, node, command)
        edits.append(Edit(command.value.end, command.value.end, f',{separator}"args": {_json(line[1:])}'))


def _separator(text: str, node: Node, member: Member) -> str:
    """What goes between two members of `node`: a new line at `member`'s indentation, or a space."""
    line_start = text.rfind("\n", node.start, member.key_start)
    if line_start < 0:
        return " "
    indent = text[line_start + 1 : member.key_start]
    if indent.strip():
        return " "  # the member does not start its line: keep to one line
    newline = "\r\n" if text[line_start - 1 : line_start] == "\r" else "\n"
    return newline + indent


def _removal(text: str, node: Node, member: Member) -> Edit:
    """The edit that removes `member` from `node` with one of its commas."""
    at = node.members.index(member)
    if at > 0:
        return Edit(node.members[at - 1].value.end, member.value.end, "")
    following = node.members[1].key_start if len(node.members) > 1 else node.end - 1
    return Edit(member.key_start, following, "")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _same_unwrapped(current: str, backup: str) -> bool:
    """Whether `current`, unwrapped, means the same JSON as `backup` unwrapped (nothing else changed)."""
    try:
        return bool(_meaning(unwrap_text(current)[0]) == _meaning(unwrap_text(backup)[0]))
    except ValueError:
        return False


def _meaning(text: str) -> Any:
    """The JSON value of a configuration, with the differences an unwrap may leave evened out."""
    value = parse_jsonc(text).value
    for key in ("mcpServers", "servers"):
        servers = value.get(key) if isinstance(value, dict) else None
        if isinstance(servers, dict):
            for entry in servers.values():
                if isinstance(entry, dict) and entry.get("args") == []:
                    del entry["args"]
    return value
