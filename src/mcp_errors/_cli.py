"""The `mcp-errors` command line. Each subcommand lives with the part it drives.

`mcp-errors --help` and `mcp-errors <command> --help` must not load the MCP SDK: this module
and the subcommands' `_cli` modules import only typer at their top, and each command imports
what it drives inside its body.

No `from __future__ import annotations` in the command's modules: typer reads each command's
annotations, which as strings would be compiled at every start (see `proxy/_cli.py`).
"""

import functools
import importlib
import itertools
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Annotated, Any, Final

import typer

# typer's own copy of click: the exception its parser raises for an unknown option.
from typer._click.exceptions import NoSuchOption
from typer.core import TyperCommand, TyperGroup

__all__ = ["app", "main"]

if TYPE_CHECKING:
    app: typer.Typer
    """The whole command, every subcommand registered: built when first read (`__getattr__` below)."""

# Words a reader may put after a switch meaning "on" or "off". After a switch they would be
# taken as the first word of the server's command (`--idempotency-keys true -- cmd` ran `true`).
_SWITCH_VALUES = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0", "y", "n", "t", "f"})


def _show_switches_bare(command: Any, ctx: typer.Context) -> None:
    """Switches take no value: show `--call-valid`, not `--call-valid <bool>`."""
    for param in [*command.params, command.get_help_option(ctx)]:
        if getattr(param, "is_flag", False) and not getattr(param, "count", False):
            param.metavar = ""


class _Command(TyperCommand):
    """A subcommand whose switches are shown bare and refuse a value given after them."""

    # The overrides below take `typer.Context`, the public subclass of the private
    # `typer._click.Context` the base methods are typed with: hence their `ignore[override]`.

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:  # type: ignore[override]  # see the class
        switches = {
            name
            for param in self.params
            if getattr(param, "is_flag", False)
            for name in (*param.opts, *param.secondary_opts)
        }
        options_end = args.index("--") if "--" in args else len(args)
        for switch, following in itertools.pairwise(args[:options_end]):
            if switch in switches and following.lower() in _SWITCH_VALUES:
                raise typer.BadParameter(
                    f"{switch} is a switch and takes no value, not {following!r} (which would be read as the next "
                    f"argument). Write {switch} alone to turn it on, leave it out to keep it off.",
                    ctx=ctx,
                )
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as exc:
            # `mcp-errors proxy npx -y pkg`: the server's own option was read as ours.
            if "--" not in args and any(param.name == "target" for param in self.params):
                exc.message += (
                    f". If {exc.option_name} belongs to the server's command, put -- before that command:"
                    f" mcp-errors {ctx.info_name} [OPTIONS] -- <command> [ARGS]"
                )
            raise

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:  # type: ignore[override]  # see the class
        _show_switches_bare(self, ctx)
        super().format_help(ctx, formatter)


class _Group(TyperGroup):
    """The top command, its own switches (`--version`, `--help`) shown bare too (see `_Command`)."""

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:  # type: ignore[override]  # see the class
        _show_switches_bare(self, ctx)
        super().format_help(ctx, formatter)


def _new_app() -> typer.Typer:
    return typer.Typer(
        name="mcp-errors",
        cls=_Group,
        help="Structured, actionable MCP tool errors: demo, serve, check, proxy and wrap.",
        no_args_is_help=True,
        add_completion=False,
        # Inherited by every subcommand's context.
        context_settings={"help_option_names": ["-h", "--help"]},
    )


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"mcp-errors {version('mcp-errors')}")
        raise typer.Exit


def _root(
    _version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit."),
    ] = False,
) -> None:
    pass


# Subcommands register here, one line each: where the command's function lives, imported
# when the command is built (`main` builds the command named first alone).
_COMMANDS: Final[dict[str, str]] = {
    "demo": "mcp_errors.demo._cli:demo_command",
    "serve": "mcp_errors.demo._cli:serve_command",
    "check": "mcp_errors.check._cli:check",
    "proxy": "mcp_errors.proxy._cli:proxy",
    "wrap": "mcp_errors.proxy._wrap_cli:wrap",
}


def _command_function(name: str) -> Callable[..., None]:
    module, _, function = _COMMANDS[name].partition(":")
    found: Callable[..., None] = getattr(importlib.import_module(module), function)
    return found


def _app_of(names: Iterable[str]) -> typer.Typer:
    built = _new_app()
    built.callback()(_root)
    for name in names:
        built.command(name, cls=_Command)(_command_function(name))
    return built


@functools.cache
def _whole_app() -> typer.Typer:
    return _app_of(_COMMANDS)


def __getattr__(name: str) -> typer.Typer:
    """`app`, the whole command (every subcommand's module imported), built when first read (PEP 562)."""
    if name == "app":
        return _whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Entry point of the console script."""
    # Typer turns every registered command into a click command, each annotation evaluated,
    # before it parses anything: a command named first is built alone (its module the only
    # one imported), which a proxy's start-up feels (docs/performance.md#proxy-start-up-and-memory).
    # Anything else (the top help, a mistyped command, `--version`) gets the whole command.
    named = sys.argv[1] if len(sys.argv) > 1 else None
    (_app_of([named]) if named in _COMMANDS else _whole_app())()
