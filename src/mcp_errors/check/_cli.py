"""`mcp-errors check`: the command-line face of the checker."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["check"]


class OutputFormat(enum.StrEnum):
    RICH = "rich"
    JSON = "json"
    SARIF = "sarif"


class Protocol(enum.StrEnum):
    AUTO = "auto"
    LEGACY = "legacy"


class Contract(enum.StrEnum):
    ON = "on"
    OFF = "off"


def check(
    target: Annotated[
        list[str],
        typer.Argument(
            help="A streamable HTTP URL (http://host:port/mcp), or `--` followed by the command that starts a "
            "stdio server.",
            show_default=False,
        ),
    ],
    call_valid: Annotated[
        bool,
        typer.Option(
            "--call-valid",
            help="Also make one schema-valid call per tool (success, empty results).",
            show_default="off",
        ),
    ] = False,
    arguments: Annotated[
        Path | None,
        typer.Option(
            "--args",
            help="A TOML or JSON file of real arguments: per tool a `valid` and an `empty` call, and `roots`.",
            dir_okay=False,
            show_default="generated from the schemas",
        ),
    ] = None,
    allow_destructive: Annotated[
        bool,
        typer.Option(
            "--allow-destructive",
            help="Also call tools annotated destructiveHint: true, and make generated valid calls to tools that "
            "declare readOnlyHint: false. The report lists every call that may have changed data.",
            show_default="off",
        ),
    ] = False,
    contract: Annotated[
        Contract,
        typer.Option(
            "--contract",
            help="off: only the rules any MCP server must pass (spec, SEP-1303, usability), not this project's.",
        ),
    ] = Contract.ON,
    output_format: Annotated[
        OutputFormat,
        typer.Option("--format", help="Report format: rich text, JSON, or SARIF 2.1.0 (GitHub code scanning)."),
    ] = OutputFormat.RICH,
    sarif_location: Annotated[
        Path | None,
        typer.Option(
            "--sarif-location",
            help="With --format sarif: the file (in this checkout) results are attached to, since code scanning"
            " drops results without a file.",
            dir_okay=False,
            exists=True,
            show_default="the --args file, else a file the server command runs",
        ),
    ] = None,
    rules_uri: Annotated[
        str | None,
        typer.Option(
            "--rules-uri",
            help="With --format sarif: the absolute URI of docs/rules.md that rules link to (<uri>#me010).",
            show_default="no link: each rule's help names its section of docs/rules.md",
        ),
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="A `--format json` or `--format sarif` report of known failures to leave out (never: the server"
            " did not start, crashed, or the run stopped).",
            dir_okay=False,
            show_default="none",
        ),
    ] = None,
    select: Annotated[
        list[str] | None,
        typer.Option("--select", help="Only these rules (ids or names, comma-separated).", show_default="all rules"),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option("--ignore", help="Leave out these rules (ids or names, comma-separated).", show_default="none"),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=0.1, help="Seconds for each tool call.")] = 10.0,
    connect_timeout: Annotated[
        float | None,
        typer.Option(
            "--connect-timeout",
            min=0.1,
            help="Seconds to start the server and list its tools.",
            show_default="30, or --timeout when longer",
        ),
    ] = None,
    total_timeout: Annotated[
        float, typer.Option("--total-timeout", min=0.1, help="Seconds for the whole check.")
    ] = 120.0,
    protocol: Annotated[
        Protocol, typer.Option("--protocol", help="auto: try the 2026 revision first; legacy: 2025-11-25.")
    ] = Protocol.AUTO,
) -> None:
    """Check that a server's tool errors are usable by an agent (rules: docs/rules.md).

    Exits 1 when an error-severity rule fails after --select, --ignore and --baseline.

    Examples: `mcp-errors check -- python -m my_server`, `mcp-errors check --call-valid --args calls.toml -- uv run
    my-server` and `mcp-errors check http://localhost:8000/mcp`.
    """
    import anyio
    from rich.console import Console

    from mcp_errors.check._args import CallArguments, load_call_arguments
    from mcp_errors.check._report import load_baseline, resolve_rules
    from mcp_errors.check._runner import CheckOptions, Target, check_server

    try:
        selected = resolve_rules(select) if select else None
        ignored = resolve_rules(ignore or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    known: set[tuple[str, str | None]] = set()
    if baseline is not None:
        try:
            known = load_baseline(baseline)
        except (OSError, ValueError) as exc:
            raise typer.BadParameter(f"cannot read baseline: {exc}", param_hint="--baseline") from None
    given = CallArguments()
    if arguments is not None:
        try:
            given = load_call_arguments(arguments)
        except (OSError, ValueError) as exc:
            raise typer.BadParameter(f"cannot read {arguments}: {exc}", param_hint="--args") from None

    is_url = len(target) == 1 and target[0].startswith(("http://", "https://"))
    server: Target = target[0] if is_url else list(target)
    anchor: Path | None = None
    if output_format is OutputFormat.SARIF:
        from mcp_errors.check._sarif import choose_anchor

        if sarif_location is not None and choose_anchor(explicit=sarif_location) is None:
            raise typer.BadParameter("must be a file inside the working directory", param_hint="--sarif-location")
        anchor = choose_anchor(explicit=sarif_location, arguments=arguments, command=[] if is_url else list(target))
    options = CheckOptions(
        call_valid=call_valid,
        allow_destructive=allow_destructive,
        timeout=timeout,
        connect_timeout=connect_timeout,
        total_timeout=total_timeout,
        mode="legacy" if protocol is Protocol.LEGACY else "auto",
        arguments=given,
        contract=contract is Contract.ON,
    )

    async def run() -> None:
        report = (await check_server(server, options)).filtered(select=selected, ignore=ignored, baseline=known)
        if output_format is OutputFormat.JSON:
            import json

            typer.echo(json.dumps(report.to_json(), indent=2))
        elif output_format is OutputFormat.SARIF:
            import json

            from mcp_errors.check._sarif import to_sarif

            if anchor is None:
                typer.echo(
                    "warning: the SARIF results have no file location, and GitHub code scanning drops such results:"
                    " pass --sarif-location FILE (a file in this checkout, e.g. your --args file)",
                    err=True,
                )
            typer.echo(json.dumps(to_sarif(report, rules_uri=rules_uri, anchor=anchor), indent=2))
        else:
            report.render(Console())
        if report.failed:
            raise typer.Exit(1)

    anyio.run(run)
