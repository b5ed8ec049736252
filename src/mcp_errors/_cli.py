"""The `mcp-errors` command line. Each subcommand lives with the part it drives."""

from __future__ import annotations

import typer

from mcp_errors.check import _cli as _check_cli
from mcp_errors.demo import _cli as _demo_cli
from mcp_errors.proxy import _cli as _proxy_cli

app = typer.Typer(
    name="mcp-errors",
    help="Structured, actionable MCP tool errors: demo, serve, check and proxy.",
    no_args_is_help=True,
    add_completion=False,
)

# Subcommands register here, one line each, importing lazily inside the command so that
# `mcp-errors --help` stays fast.
app.command("demo")(_demo_cli.demo_command)
app.command("serve")(_demo_cli.serve_command)
app.command("check")(_check_cli.check)
app.command("proxy")(_proxy_cli.proxy)


def main() -> None:
    """Entry point of the console script."""
    app()
