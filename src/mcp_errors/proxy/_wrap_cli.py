"""`mcp-errors wrap`: the command-line face of `_wrap` (imports only typer at its top)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["wrap"]


def wrap(
    file: Annotated[
        Path,
        typer.Argument(
            help="A host's MCP configuration: claude_desktop_config.json, Cursor's or VS Code's mcp.json, .mcp.json.",
            dir_okay=False,
            exists=True,
            show_default=False,
        ),
    ],
    undo: Annotated[
        bool,
        typer.Option("--undo", help="Give back the file as it was before wrap, byte for byte.", show_default="off"),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the change as a diff; write nothing.", show_default="off")
    ] = False,
    http_too: Annotated[
        bool,
        typer.Option(
            "--http-too", help="Also wrap HTTP servers, by URL (the host then starts a proxy).", show_default="off"
        ),
    ] = False,
    no_packs: Annotated[
        bool,
        typer.Option(
            "--no-packs",
            help="Do not give a recognised server (mcp-server-git, -sqlite, -fetch, server-filesystem) its rule pack.",
            show_default="packs on",
        ),
    ] = False,
) -> None:
    """Run every server of a host's configuration through `mcp-errors proxy` (docs/gateway.md).

    Keeps every other key, comment and byte; writes FILE.mcp-errors-backup beside it; wrapping twice equals
    wrapping once.

    Examples: `mcp-errors wrap ~/.cursor/mcp.json`, `mcp-errors wrap --dry-run ~/project/.mcp.json`,
    `mcp-errors wrap --undo ~/project/.vscode/mcp.json`.
    """
    import difflib

    from mcp_errors.proxy._hosts import HostConfigError, proxy_launcher
    from mcp_errors.proxy._wrap import backup_path, wrap_file

    try:
        result = wrap_file(
            file, launcher=proxy_launcher(), undo=undo, dry_run=dry_run, http_too=http_too, packs=not no_packs
        )
    except HostConfigError as exc:
        typer.echo(f"mcp-errors wrap: {file} is not a host's MCP configuration: {exc}", err=True)
        raise typer.Exit(2) from None
    except (OSError, UnicodeDecodeError) as exc:
        typer.echo(f"mcp-errors wrap: cannot {'restore' if undo else 'wrap'} {file}: {exc}", err=True)
        raise typer.Exit(1) from None
    for report in result.reports:
        detail = f" ({report.detail})" if report.detail else ""
        typer.echo(f"  {report.name}: {report.action}{detail}", err=True)
    if dry_run:
        diff = difflib.unified_diff(
            result.before.splitlines(keepends=True),
            result.after.splitlines(keepends=True),
            fromfile=str(file),
            tofile=f"{file} ({'undone' if undo else 'wrapped'})",
        )
        typer.echo("".join(diff), nl=False)
        return
    if not result.changed:
        typer.echo(f"{file}: nothing to {'undo' if undo else 'wrap'}.", err=True)
    elif undo:
        how = "restored from its backup" if result.restored_from_backup else "unwrapped in place (edited since wrap)"
        typer.echo(f"{file}: {how}.", err=True)
    else:
        typer.echo(f"{file}: wrapped; the file as it was is in {backup_path(file)} (mcp-errors wrap --undo).", err=True)
