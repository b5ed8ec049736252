"""The `serve` and `demo` commands. Heavy imports happen inside the commands."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from mcp_errors._cli_params import HTTP_METAVAR, LOOPBACK, open_store_or_exit, parse_http_address

__all__ = ["demo_command", "serve_command"]


def serve_command(
    db: Annotated[
        str | None,
        typer.Option(help="SQLite file of the desk, or ':memory:'.", show_default="demo-desk.sqlite3 in your data dir"),
    ] = None,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar=HTTP_METAVAR,
            help="Serve streamable HTTP on PORT (of --host) or HOST:PORT instead of stdio.",
            show_default="stdio",
        ),
    ] = None,
    host: Annotated[str, typer.Option(help="Interface for --http PORT. Keep 127.0.0.1 unless you mean it.")] = LOOPBACK,
    role: Annotated[
        Literal["support", "finance"], typer.Option(help="'finance' may call get_financial_records.")
    ] = "support",
    seed: Annotated[int, typer.Option(help="Seeds the data and the injected faults (reproducible runs).")] = 7,
    fault_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Probability of a transient fault (timeout, database busy).")
    ] = 0.0,
    outage: Annotated[
        list[str] | None,
        typer.Option(
            help="A tool that always times out; search_knowledge:SOURCE takes down one source. Repeatable.",
            show_default="none",
        ),
    ] = None,
    latency: Annotated[float, typer.Option(min=0.0, metavar="MS", help="Latency added to every call.")] = 0.0,
    commit_then_timeout: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Probability that a refund commits and then its answer is lost.")
    ] = 0.0,
    workers: Annotated[
        int,
        typer.Option(min=1, help="With --http: replicas (uvicorn worker processes) serving one desk file, stateless."),
    ] = 1,
    store: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="Idempotency store shared by the replicas for write tools that keep no keys of their own: "
            "sqlite:///path, postgresql://..., redis://... (refunds keep theirs in the desk file).",
            show_default="no replay",
        ),
    ] = None,
    no_contract: Annotated[
        bool, typer.Option("--no-contract", hidden=True, help="Serve without mcp_errors.install (benchmarks).")
    ] = False,
) -> None:
    """Run the demo support desk as an MCP server (stdio by default)."""
    address = parse_http_address(http, default_host=host) if http is not None else None
    if address is not None and address[0] != host and host != LOOPBACK:
        raise typer.BadParameter(
            "give the interface once: --http HOST:PORT, or --host with --http PORT", param_hint="--host"
        )
    from mcp_errors.demo._db import MEMORY, default_db_path
    from mcp_errors.demo._faults import FaultConfig
    from mcp_errors.demo._server import OUTAGE_TARGETS, DeskConfig, build_server

    unknown = sorted(set(outage or ()) - OUTAGE_TARGETS)
    if unknown:
        raise typer.BadParameter(
            f"unknown outage {', '.join(unknown)}; choose from {', '.join(sorted(OUTAGE_TARGETS))}",
            param_hint="--outage",
        )
    faults = FaultConfig.build(
        fault_rate=fault_rate,
        outages=outage or (),
        latency_ms=latency,
        commit_then_timeout=commit_then_timeout,
        seed=seed,
    )
    if workers > 1 and http is None:
        raise typer.BadParameter("replicas serve HTTP: add --http PORT", param_hint="--workers")
    if store is not None and no_contract:
        raise typer.BadParameter("replay needs the error contract", param_hint="--store")
    if store is not None:
        open_store_or_exit(store, command="serve")
    config = DeskConfig(db=db or default_db_path(), role=role, faults=faults, contract=not no_contract, store=store)
    if workers > 1 and str(config.db) == MEMORY:
        raise typer.BadParameter("replicas cannot share an in-memory desk: give a file", param_hint="--db")
    import sqlite3

    try:
        # Built here first in every case: it checks the file and the store URL, and seeds a
        # new desk once, before any replica starts.
        server = build_server(config)
    except sqlite3.DatabaseError as exc:
        raise typer.BadParameter(f"{config.db} is not a usable SQLite database ({exc})", param_hint="--db") from exc
    except (ValueError, ImportError) as exc:
        raise typer.BadParameter(str(exc), param_hint="--store") from exc
    if address is None:
        server.run("stdio")
        return
    import os

    import uvicorn

    from mcp_errors.demo._app import CONFIG_ENV, config_to_env

    server.desk_database.close()  # type: ignore[attr-defined]  # the replicas open their own
    host, port = address
    os.environ[CONFIG_ENV] = config_to_env(config, host=host)
    uvicorn.run("mcp_errors.demo._app:make_app", factory=True, host=host, port=port, workers=workers)


def demo_command(
    sweep: Annotated[int, typer.Option(min=0, help="Tasks in the transient-fault sweep.")] = 20,
    seed: Annotated[int, typer.Option(help="Seeds the desk and its injected faults.")] = 7,
    fault_rate: Annotated[float, typer.Option(min=0.0, max=0.95, help="Transient fault rate during the sweep.")] = 0.3,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print one JSON object instead of tables (with what each agent read).", show_default="off"
        ),
    ] = False,
    show_payload: Annotated[
        bool,
        typer.Option(
            "--show-payload",
            help="Under each table, show what each agent read of the errors it met (the error result's "
            "structuredContent; the framework's model gets it as JSON in its retry).",
            show_default="off",
        ),
    ] = False,
) -> None:
    """Run an agent framework's default and a structured agent through the support scenarios, side by side."""
    from mcp_errors.demo._report import run_and_report

    ok = run_and_report(sweep=sweep, seed=seed, fault_rate=fault_rate, as_json=as_json, show_payload=show_payload)
    raise typer.Exit(0 if ok else 1)
