"""The `mcp-errors` command line. Each subcommand lives with the part it drives."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="mcp-errors",
    help="Structured, actionable MCP tool errors: demo, serve and check.",
    no_args_is_help=True,
    add_completion=False,
)

# Subcommands register here, one line each, importing lazily inside the command so that
# `mcp-errors --help` stays fast.


def main() -> None:
    """Entry point of the console script."""
    app()
