"""`mcp-errors proxy`: the command-line face of the proxy.

No `from __future__ import annotations` here: typer reads `proxy`'s annotations twice (its
signature and its type hints), and as strings each would be compiled at every start; as
objects they come with the module's cached bytecode (docs/performance.md). Names imported
for typing only are quoted.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Final

import typer

from mcp_errors._cli_params import HTTP_METAVAR, open_store_or_exit, parse_http_address

if TYPE_CHECKING:
    from mcp_errors.proxy._front import Front
    from mcp_errors.proxy._gateway_config import ServerEntry
    from mcp_errors.proxy._spawn import EarlyStart

__all__ = ["proxy"]


def proxy(
    target: Annotated[
        list[str] | None,
        typer.Argument(
            help="`--` followed by the command that starts a stdio server, or a streamable HTTP URL.",
            show_default=False,
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="A host's configuration (mcpServers or servers): front every server in it from this one process, "
            "tools named <server>_<tool> (docs/gateway.md).",
            dir_okay=False,
            exists=True,
            show_default="one server",
        ),
    ] = None,
    require_all: Annotated[
        bool,
        typer.Option(
            "--require-all",
            help="With --config: exit when any server does not start, instead of serving the others without it.",
            show_default="off",
        ),
    ] = False,
    no_packs: Annotated[
        bool,
        typer.Option(
            "--no-packs",
            help="With --config: do not give a recognised server its shipped rule pack.",
            show_default="packs on",
        ),
    ] = False,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar=HTTP_METAVAR,
            help="Serve streamable HTTP (stateless, JSON responses) on PORT (of 127.0.0.1) or HOST:PORT instead of "
            "stdio.",
            show_default="stdio",
        ),
    ] = None,
    rules: Annotated[
        Path | None,
        typer.Option(
            "--rules",
            help="A TOML file of your own rules for the upstream's failures.",
            dir_okay=False,
            show_default="the built-in rules only",
        ),
    ] = None,
    retry: Annotated[
        int,
        typer.Option(
            "--retry",
            min=0,
            max=10,
            help="Resend a transient failure up to N times, only for read-only tools and calls that did not run.",
        ),
    ] = 0,
    retry_deadline: Annotated[
        float, typer.Option("--retry-deadline", min=0.1, help="Seconds after the first answer for all resends.")
    ] = 30.0,
    idempotency_keys: Annotated[
        bool,
        typer.Option(
            "--idempotency-keys", help="Answer a repeated idempotency key with the first answer.", show_default="off"
        ),
    ] = False,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            metavar="URL",
            help="Where --idempotency-keys keeps its keys: sqlite:///path, postgresql://..., redis://... or memory://.",
            show_default="the proxy's memory",
        ),
    ] = None,
    store_namespace: Annotated[
        str | None,
        typer.Option(
            "--store-namespace",
            metavar="NAME",
            help="Keeps this proxy's keys apart from other upstreams' in a shared store.",
            show_default="proxy/<the upstream's name>",
        ),
    ] = None,
    breaker_failures: Annotated[
        int,
        typer.Option(
            "--breaker-failures",
            min=0,
            help="Transient failures in a row that open the circuit breaker (0 turns it off).",
        ),
    ] = 5,
    breaker_window: Annotated[
        float, typer.Option("--breaker-window", min=0.1, help="Seconds within which those failures must fall.")
    ] = 30.0,
    breaker_cooldown: Annotated[
        float,
        typer.Option("--breaker-cooldown", min=0.1, help="Seconds an open circuit answers at once before a probe."),
    ] = 30.0,
    breaker_probe_timeout: Annotated[
        float | None,
        typer.Option(
            "--breaker-probe-timeout",
            min=0.1,
            metavar="SECONDS",
            help="Seconds the probe after a cool-down may take before it counts as failed.",
            show_default="the cool-down",
        ),
    ] = None,
    repeat_guard: Annotated[
        float,
        typer.Option(
            "--repeat-guard",
            metavar="SECONDS",
            min=0,
            help="Answer the identical resend (the same tool, arguments and _meta keys) of a call that failed "
            "for good within SECONDS, without the upstream; forgotten after a successful write.",
            show_default="off",
        ),
    ] = 0.0,
    tenant_header: Annotated[
        str | None,
        typer.Option(
            "--tenant-header",
            metavar="NAME",
            help="With --http: the header that names the caller (a tenant). Callers are told apart by it alone "
            "(sessions, keys, the repeat guard), and it is the only header of theirs an HTTP upstream gets.",
            show_default="the credentials and forwarded headers",
        ),
    ] = None,
    tool_failure_meta: Annotated[
        bool,
        typer.Option(
            "--tool-failure-meta",
            help='Also write SEP-3313 _meta["io.modelcontextprotocol/toolFailure"] (draft).',
            show_default="off",
        ),
    ] = False,
    disguised_failures: Annotated[
        bool,
        typer.Option(
            "--disguised-failures",
            help="Also rewrite a success that plainly reads as a failure (it leads with an error label or a top-level "
            "'error'), marked inferred. Never the text of a file, page or resource a read-only tool returns; never "
            "counted by the circuit breaker.",
            show_default="off",
        ),
    ] = False,
    failure_log: Annotated[
        bool,
        typer.Option(
            "--failure-log/--no-failure-log",
            help="Log each rewritten failure on stderr at WARNING, with the upstream's own words (unsanitised) under "
            "its errorId.",
        ),
    ] = True,
    startup_timeout: Annotated[
        float, typer.Option("--startup-timeout", min=0.1, help="Seconds for the upstream to start and list its tools.")
    ] = 30.0,
) -> None:
    """Put the error contract in front of any MCP server (docs/proxy.md).

    Every tool failure of the upstream becomes a structured, classified error; everything else passes unchanged.

    Examples: `mcp-errors proxy -- uvx mcp-server-git` and `mcp-errors proxy --http 127.0.0.1:8080 https://x.dev/mcp`.
    """
    import functools
    import logging
    import sys

    import anyio

    # A mistake in the options is told before the proxy's own (slow) imports.
    if store is not None and not idempotency_keys:
        _fail("--store is where --idempotency-keys keeps its keys: add --idempotency-keys.", status=2)
    if tenant_header is not None and http is None:
        _fail("--tenant-header names the callers of the --http front: add --http.", status=2)
    if (config is None) == (not target):
        _fail("give the server to front (`-- <command>` or a URL), or --config FILE for many, not both.", status=2)
    if config is not None and rules is not None:
        _fail('--rules is per server with --config: give an entry a "rules" key.', status=2)
    # A wrong store (scheme, driver, host, file) is told before any server starts.
    opened_store = open_store_or_exit(store, command="proxy") if store is not None else None
    import importlib.util

    if importlib.util.find_spec("fastmcp") is None:  # told before any server starts; found, not imported
        _fail(_NEEDS_FASTMCP, status=2)
    gateway_front = None
    if config is not None:
        entries, early = _start_gateway_servers(config, packs=not no_packs)
        if http is None:
            gateway_front = _start_front(
                entries,
                early,
                startup_seconds=startup_timeout,
                require_all=require_all,
                list_tools=not idempotency_keys,
            )
    target = target or []
    single_early = None
    if config is None and not _is_url(target):
        from mcp_errors._exit_status import find_command

        if find_command(target[0]) is None and "/" not in target[0]:
            _fail(f"The upstream server's command {target[0]!r} is not on PATH.", status=2)
        single_early = _start_early(target)
    try:
        import fastmcp  # noqa: F401  (found above, but an install can be broken: said as clearly)
    except ImportError:
        _fail(_NEEDS_FASTMCP, status=2)
    from mcp_errors.proxy._child import ChildProcess
    from mcp_errors.proxy._server import ProxySettings, StartupError, Upstream, serve

    loaded = None
    if rules is not None:
        from mcp_errors.proxy._rules import RulesError, load_rules  # only with a rules file

        try:
            loaded = load_rules(rules)
        except RulesError as exc:
            _fail(str(exc), status=2)
    front = parse_http_address(http) if http is not None else None
    upstream: Upstream | None = None
    if config is None:
        upstream = target[0] if _is_url(target) else ChildProcess(target[0], target[1:], early=single_early)
    _quiet_fastmcp()
    if not failure_log:
        # Only the per-failure lines: restarts, an open circuit and a lost upstream session still say so.
        logging.getLogger("mcp_errors.proxy.failures").setLevel(logging.ERROR)
    settings = ProxySettings(
        rules=loaded,
        retry=retry,
        retry_deadline=retry_deadline,
        idempotency_keys=idempotency_keys,
        store=opened_store,
        store_namespace=store_namespace,
        tool_failure_meta=tool_failure_meta,
        disguised_failures=disguised_failures,
        breaker_failures=breaker_failures,
        breaker_window=breaker_window,
        breaker_cooldown=breaker_cooldown,
        breaker_probe_timeout=breaker_probe_timeout,
        repeat_guard=repeat_guard,
        tenant_header=tenant_header,
    )
    if config is not None:
        from mcp_errors.proxy._gateway import run_gateway

        run_gateway(
            config,
            settings,
            entries=entries,
            early=early,
            http=front,
            startup_seconds=startup_timeout,
            require_all=require_all,
            front=gateway_front,
        )
        return
    assert upstream is not None
    try:
        anyio.run(functools.partial(serve, upstream, settings, http=front, startup_seconds=startup_timeout))
    except StartupError as exc:
        print(f"mcp-errors proxy: {exc}", file=sys.stderr)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


_NEEDS_FASTMCP: Final = 'the proxy needs fastmcp 4: pip install "fastmcp>=4,<5" (the proxy extra of mcp-errors)'


def _is_url(target: list[str]) -> bool:
    return len(target) == 1 and target[0].startswith(("http://", "https://"))


def _start_early(command: list[str]) -> "EarlyStart":
    """Start the stdio server now, as the gateway starts its servers: it starts while the proxy imports.

    Importing fastmcp takes about as long as many servers take to start; started after it, a
    server's start-up adds to the proxy's. The child's transport adopts the running process at
    its first connection; one that is not adopted is stopped when this process exits.
    """
    import atexit
    import os

    from mcp_errors.proxy._spawn import EarlyStart

    early = EarlyStart(command[0], command[1:], env=dict(os.environ))
    atexit.register(early.discard)
    return early


def _start_gateway_servers(config: Path, *, packs: bool) -> "tuple[list[ServerEntry], dict[str, EarlyStart]]":
    """Read the gateway's file and start its stdio servers now: the proxy's slow imports run while they start.

    Each is adopted by its transport when the gateway connects to it; one that is not (the
    command exits before) is stopped when this process exits.
    """
    import atexit

    from mcp_errors.proxy._gateway_config import read_server_entries
    from mcp_errors.proxy._hosts import HostConfigError
    from mcp_errors.proxy._spawn import EarlyStart

    try:
        entries = read_server_entries(config, packs=packs)
    except (HostConfigError, OSError, UnicodeDecodeError) as exc:
        _fail(f"{config}: {exc}", status=2)
    early = {
        entry.name: EarlyStart(entry.command[0], entry.command[1:], env=entry.env or {}, cwd=entry.cwd)
        for entry in entries
        if entry.command is not None
    }
    for each in early.values():
        atexit.register(each.discard)
    return entries, early


def _start_front(
    entries: "list[ServerEntry]",
    early: "dict[str, EarlyStart]",
    *,
    startup_seconds: float,
    require_all: bool,
    list_tools: bool,
) -> "Front | None":
    """Answer the host and shake hands with every stdio server before the gateway's imports (`_front.py`).

    Returns once the gateway is needed (the host has its tool list, or asked for more than
    the front answers); exits when the host left before. `None` where servers are not
    started early (not POSIX). The front lists the tools itself unless an HTTP server is in
    the file (the gateway lists those) or `list_tools` is off (`--idempotency-keys` changes
    what is listed).
    """
    import os

    from mcp_errors.proxy._front import Front

    if os.name != "posix" or not early:
        return None
    front = Front(
        early,
        startup_seconds=startup_seconds,
        require_all=require_all,
        list_tools=list_tools and all(entry.command is not None for entry in entries),
    )
    front.start()
    if not front.wait_for_gateway():
        raise typer.Exit(0)  # the host closed stdin: the servers are stopped at exit
    return front


def _quiet_fastmcp() -> None:
    """Keep the host's log (our stderr) for the upstream's words and real problems.

    fastmcp logs each call at INFO, and each upstream JSON-RPC error as "Error calling tool"
    with a traceback: the proxy classifies those and answers them, they are no fault of it.
    """
    import logging

    def not_an_upstream_error(record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Error calling tool")

    fastmcp_logger = logging.getLogger("fastmcp")
    fastmcp_logger.setLevel(logging.WARNING)
    logging.getLogger("fastmcp.server.server").addFilter(not_an_upstream_error)


def _fail(message: str, *, status: int) -> None:
    typer.echo(f"mcp-errors proxy: {message}", err=True)
    raise typer.Exit(status)
