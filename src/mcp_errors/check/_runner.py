"""Connect to a server, call each tool with probes, and collect findings; never hang.

Every await on the server is bounded: the handshake and `tools/list` by the per-call timeout,
each `tools/call` by the per-call timeout, and the whole run by a deadline. The work between
awaits is bounded too: building probes and judging answers match the server's patterns
through `_patterns`, within the per-call timeout and what is left of the run. A server that
hangs, crashes, sends hostile schemas or speaks no contract at all ends as findings.

Before the tools are probed, a tool that lists the server's allowed places
(`list_allowed_directories`) is asked for them: path arguments then reach real places, and
errors that name them are not taken for leaks.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import IO, Any, Final, Literal

import anyio
from jsonschema import SchemaError
from jsonschema.validators import validator_for
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, CallToolResult, InputRequiredResult, TextContent, Tool
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_errors._client.task_polling import TaskPolling
from mcp_errors._exit_status import describe_exit, last_lines, not_on_path, read_exit_status, with_exit_status
from mcp_errors._shared.sanitize import ROOTS_TOOL, roots_announced
from mcp_errors._shared.text import one_line
from mcp_errors.check._args import CallArguments, ToolArguments
from mcp_errors.check._judge import RAW_DUMP_ADVICE, Verdict, judge_call, raw_dump, reads_as_failure
from mcp_errors.check._patterns import CutShortError, OutOfTimeError, time_limit
from mcp_errors.check._probes import Probe, invalid_probes
from mcp_errors.check._report import CallRecord, CheckReport, capped_names, shown_arguments
from mcp_errors.check._rules import Family, Finding, RuleId
from mcp_errors.check._stdout import StdoutNoise, catch_stdout_noise
from mcp_errors.check._values import ArgumentHints, valid_arguments, waits_seconds
from mcp_errors.check._wire import Listing, call_tool, list_tools_leniently

__all__ = ["CONNECT_SECONDS", "CheckOptions", "Target", "check_server"]

Target = str | Sequence[str] | StdioServerParameters | Server[Any] | MCPServer
"""A streamable HTTP URL, a command line, stdio parameters, or an in-process server."""

CONNECT_SECONDS: Final = 30.0
"""The default deadline for start-up, handshake and listing, longer than a call's: a server
behind `uv run` and `mcp-errors proxy` on a loaded machine takes longer than the call timeout
to list its tools (`benchmarks/check.py --startup`; figures in docs/rules.md, "Deadlines")."""
_TEARDOWN_GRACE: Final = 5.0
_STDERR_TAIL: Final = 300
# jsonschema quotes the whole schema in some errors; the start says what is wrong.
_SCHEMA_ERROR_CHARS: Final = 160


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How far `check_server` goes and how long it may take."""

    call_valid: bool = False
    """Also make one schema-valid call per tool, to check success and empty results."""
    allow_destructive: bool = False
    """Call tools annotated `destructiveHint: true` too (they are skipped otherwise)."""
    timeout: float = 10.0
    """Seconds for each `tools/call`."""
    connect_timeout: float | None = None
    """Seconds to start the server, complete the handshake and list tools (when `None`:
    `CONNECT_SECONDS`, or `timeout` when that is longer)."""
    total_timeout: float = 120.0
    """Seconds for the whole run; what is left unchecked then becomes a finding."""
    mode: Literal["auto", "legacy"] = "auto"
    """Protocol negotiation: `auto` tries the 2026 revision first, `legacy` speaks 2025-11-25."""
    probes_per_tool: int = 12
    """The most invalid-argument probes sent to one tool."""
    arguments: CallArguments = field(default_factory=CallArguments)
    """What `--args` says: per tool, arguments for a valid and an empty-result call; roots."""
    contract: bool = True
    """Also apply the rules of this project's contract (`False`: only what any server owes)."""


@dataclass(frozen=True, slots=True)
class _Tally:
    """How often one rule failed for one tool: the first message and call that showed it, and the count."""

    message: str
    call: str | None
    count: int = 0

    def plus(self, count: int = 1) -> _Tally:
        return replace(self, count=self.count + count)


@dataclass(slots=True)
class _Run:
    options: CheckOptions
    deadline: float
    tallies: dict[tuple[str, str | None], _Tally] = field(default_factory=dict)
    dumps: dict[tuple[str, str], dict[str, _Tally]] = field(default_factory=dict)
    """ME024 by (kind of dump, shape of its first line), then by tool: one cause may cover many tools."""
    # What the run collected under the report's own names goes into the report as it is (`report`).
    tools_checked: list[str] = field(default_factory=list)
    tools_skipped: dict[str, str] = field(default_factory=dict)
    calls: int = 0
    tools_unchecked: list[str] = field(default_factory=list)
    tools_without_valid_call: list[str] = field(default_factory=list)
    stopped: bool = False
    server_info: dict[str, str | None] = field(default_factory=dict)
    roots: list[str] = field(default_factory=list)
    valid_calls: dict[str, CallRecord] = field(default_factory=dict)
    empty_calls: dict[str, CallRecord] = field(default_factory=dict)
    changes: list[dict[str, Any]] = field(default_factory=list)
    unused_arguments: list[str] = field(default_factory=list)
    listing_pages: int = 0
    listing_cut: bool = False

    def add(self, rule: str, tool: str | None, message: str, call: str | None = None) -> None:
        key = (rule, tool)
        self.tallies[key] = self.tallies.get(key, _Tally(message, call)).plus()

    def add_dump(self, dump: tuple[str, str], tool: str, message: str, call: str) -> None:
        """Record an ME024 verdict under the shape of its text, to group tools that share it."""
        by_tool = self.dumps.setdefault(dump, {})
        by_tool[tool] = by_tool.get(tool, _Tally(message, call)).plus()

    def collect_findings(self) -> list[Finding]:
        """The findings, each reported once per tool and rule (with how many more calls hit
        it), and a raw dump that several tools share reported once, for all of them."""
        found = dict(self.tallies)
        shared: list[Finding] = []
        for (kind, _), by_tool in self.dumps.items():
            if len(by_tool) < _SHARED_CAUSE_TOOLS:
                for tool, tally in by_tool.items():
                    key = (RuleId.RAW_ERROR_TEXT, tool)
                    found[key] = found.get(key, replace(tally, count=0)).plus(tally.count)
                continue
            shared.append(_shared_dump(kind, by_tool))
        findings = [
            Finding(str(rule), tool, _counted(tally.message, tally.count), call=tally.call)
            for (rule, tool), tally in found.items()
        ]
        return findings + shared

    def report(self, **settled: Any) -> CheckReport:
        """The report: `settled` fields, and every field of this run that the report has by its name."""
        collected = {name: getattr(self, name) for name in _REPORT_FIELDS & _RUN_FIELDS}
        return CheckReport(**collected, **settled)

    def mark_unreached(self, tools: Sequence[Tool]) -> None:
        """Record as unchecked every tool the run stopped before judging."""
        reached = {*self.tools_checked, *self.tools_skipped}
        self.tools_unchecked = [tool.name for tool in tools if tool.name not in reached]

    def remaining(self) -> float:
        return self.deadline - anyio.current_time()


_REPORT_FIELDS: Final = frozenset(field.name for field in fields(CheckReport))
_RUN_FIELDS: Final = frozenset(field.name for field in fields(_Run))


async def check_server(target: Target, options: CheckOptions | None = None) -> CheckReport:
    """Check every tool of a server against the rules and return the report.

    Args:
        target: A streamable HTTP URL (`http://host:port/mcp`), a command line that starts a
            stdio server (`["python", "server.py"]`), `StdioServerParameters`, or an
            in-process `MCPServer` / low-level `Server`.
        options: Probes, timeouts and safety switches; defaults to `CheckOptions()`.

    Returns:
        The report, unfiltered: apply `--select`, `--ignore` and a baseline with
        `CheckReport.filtered`.

    Example:
        ```python
        import anyio
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import install
        from mcp_errors.check import check_server

        server = install(MCPServer("demo"))

        @server.tool()
        def double(n: int) -> int:
            return 2 * n

        report = anyio.run(check_server, server)
        assert not report.failed
        ```
    """
    options = options or CheckOptions()
    started = anyio.current_time()
    run = _Run(options=options, deadline=started + options.total_timeout, roots=list(options.arguments.roots))
    label = _label(target)
    with anyio.move_on_after(options.total_timeout + _TEARDOWN_GRACE) as hard_stop:
        await _check(target, run)
    if hard_stop.cancelled_caught or run.stopped:
        run.add(RuleId.CHECK_INCOMPLETE, None, f"the run stopped at the total timeout of {options.total_timeout:g}s")
    findings = run.collect_findings()
    if not options.contract:
        findings = [finding for finding in findings if finding.family is Family.ANY_SERVER]
    findings.sort(key=lambda f: (f.tool or "", f.rule))
    report = run.report(
        server={"target": label, **run.server_info},
        findings=findings,
        duration_seconds=round(anyio.current_time() - started, 3),
        contract=options.contract,
        listing_complete=not run.listing_cut,
    )
    return capped_names(report)


async def _check(target: Target, run: _Run) -> None:
    options = run.options
    async with AsyncExitStack() as stack:
        errlog: IO[str] | None = None
        stdout_noise: StdoutNoise | None = None
        server: Any = target
        if isinstance(target, str) and not target.startswith(("http://", "https://")):
            target = shlex.split(target)
        if not isinstance(target, str | StdioServerParameters | Server | MCPServer):
            command = list(target)
            target = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ), cwd=os.getcwd())
        status_file: Path | None = None
        if isinstance(target, StdioServerParameters):
            if not_on_path(target.command, target.env):
                run.add(RuleId.SERVER_UNAVAILABLE, None, f"the server's command {target.command!r} is not on PATH")
                return
            # The server runs under `sh`, which leaves its exit status in a file, as the proxy's child does.
            status_file = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcp-errors-check-"))) / "status"
            shell, shell_args = with_exit_status(target.command, target.args, status_file)
            target = target.model_copy(update={"command": shell, "args": shell_args})
            # The server's stderr is kept aside (not shown), to quote its last lines in a finding.
            errlog = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))  # noqa: SIM115
            stdout_noise = stack.enter_context(catch_stdout_noise())
            stack.callback(_report_stdout_noise, run, stdout_noise)
            server = stdio_client(target, errlog=errlog)
        else:
            server = target
        # Declaring the tasks extension lets a server run a call as a task (a task-only tool
        # needs it); `call_tool` polls such a call to its end.
        client = Client(server, mode=options.mode, cache=None, extensions=[TaskPolling()])
        # The scope wraps the whole `async with client` so that the client's task groups
        # nest inside it; its deadline is the handshake's until tools are listed.
        connect_timeout = (
            options.connect_timeout if options.connect_timeout is not None else max(CONNECT_SECONDS, options.timeout)
        )
        connect_budget = min(connect_timeout, max(run.remaining(), 0.01))
        scope = anyio.CancelScope(deadline=anyio.current_time() + connect_budget)
        if stdout_noise is not None:
            # An answer to the handshake or the listing that the client dropped is never
            # coming again: stop waiting for it at once.
            stdout_noise.on_lost_answer = scope.cancel
        connected = False
        finished = False
        tools: list[Tool] = []
        try:
            with scope:
                async with client:
                    listing = await list_tools_leniently(client)
                    tools, malformed = listing.tools, listing.malformed
                    connected = True
                    if stdout_noise is not None:
                        stdout_noise.on_lost_answer = None
                    scope.deadline = run.deadline + _TEARDOWN_GRACE
                    if client.server_info is not None:
                        run.server_info = {"name": client.server_info.name, "version": client.server_info.version}
                    for name, problem in malformed.items():
                        run.tools_checked.append(name)
                        run.add(
                            RuleId.SCHEMA_UNUSABLE,
                            name,
                            f"the listing's entry for this tool is not a valid Tool: {problem}",
                        )
                    _note_listing(run, listing)
                    listed = {tool.name for tool in tools} | set(malformed)
                    run.unused_arguments = [name for name in options.arguments.tools if name not in listed]
                    await _learn_roots(client, tools, run)
                    for tool in tools:
                        if not await _check_tool(client, tool, run, errlog):
                            run.mark_unreached(tools)
                            break
                    finished = True
        except Exception as exc:
            if not connected and isinstance(target, StdioServerParameters) and _closed(exc):
                run.add(RuleId.SERVER_UNAVAILABLE, None, _exited_before_answering(status_file, errlog))
            elif not connected:
                run.add(RuleId.SERVER_UNAVAILABLE, None, f"could not connect: {_describe(exc)}{_tail(errlog)}")
            elif not finished:
                # Connected is not complete: whatever stopped the loop leaves tools unjudged.
                run.mark_unreached(tools)
                run.add(RuleId.CHECK_INCOMPLETE, None, f"the run stopped early: {_describe(exc)}{_tail(errlog)}")
            # After the last tool the findings are complete; an error while closing is not one.
        if scope.cancelled_caught and not connected and stdout_noise is not None and stdout_noise.lost_answer:
            run.add(
                RuleId.SERVER_UNAVAILABLE,
                None,
                f"{stdout_noise.lost_answer}, so the handshake or tools/list never completed",
            )
        elif scope.cancelled_caught:
            if connected or connect_budget < connect_timeout:
                run.stopped = True
            else:
                run.add(
                    RuleId.SERVER_UNAVAILABLE,
                    None,
                    f"no handshake and tools/list within {connect_timeout:g}s: if the server only starts slowly,"
                    f" raise --connect-timeout{_tail(errlog)}",
                )


async def _check_tool(client: Client, tool: Tool, run: _Run, errlog: IO[str] | None) -> bool:
    """Probe one tool; `False` when the run must stop (crash or deadline)."""
    options = run.options
    annotations = tool.annotations
    if annotations is not None and annotations.destructive_hint is True and not options.allow_destructive:
        run.tools_skipped[tool.name] = "annotated destructiveHint: pass --allow-destructive to call it"
        return True
    if (
        client.protocol_version not in MODERN_PROTOCOL_VERSIONS
        and tool.execution is not None
        and tool.execution.task_support == "required"
    ):
        # Tasks (SEP-2663) exist only on 2026-07-28 connections; the 2025-11-25 form of them
        # (the `task` request field) is not what servers serve now.
        run.tools_skipped[tool.name] = (
            "it runs only as a task (execution.taskSupport: required), and tasks need a 2026-07-28 connection:"
            + (
                " check without --mode legacy"
                if options.mode == "legacy"
                else f" this server speaks {client.protocol_version}"
            )
        )
        return True
    schema: dict[str, Any] = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    run.tools_checked.append(tool.name)
    unusable = _schema_problem(tool)
    if unusable is not None:
        run.add(RuleId.SCHEMA_UNUSABLE, tool.name, unusable)
        return True
    try:
        with time_limit(min(options.timeout, run.remaining())):
            probes = _plan(tool, schema, run)
    except OutOfTimeError:
        if run.remaining() <= 0:
            return _cut_off(run, tool)
        run.add(
            RuleId.SCHEMA_UNUSABLE,
            tool.name,
            f"building probes from the inputSchema took over {options.timeout:g}s; not called",
        )
        return True
    except CutShortError as exc:
        run.add(RuleId.SCHEMA_UNUSABLE, tool.name, f"could not build probes from the inputSchema: {exc}; not called")
        return True
    except Exception as exc:
        # A schema jsonschema cannot use (a dangling $ref) breaks clients too.
        run.add(
            RuleId.SCHEMA_UNUSABLE,
            tool.name,
            f"could not build probes from the inputSchema: {_describe(exc, _SCHEMA_ERROR_CHARS)}",
        )
        return True
    going_on = await _call_probes(client, tool, schema, probes, run, errlog)
    _note_unanswered_valid_call(run, tool, probes)
    return going_on


async def _call_probes(
    client: Client, tool: Tool, schema: dict[str, Any], probes: Sequence[Probe], run: _Run, errlog: IO[str] | None
) -> bool:
    """Make the tool's calls and judge the answers; `False` when the run must stop."""
    options = run.options
    for probe in probes:
        remaining = run.remaining()
        if remaining <= 0:
            return _cut_off(run, tool)
        budget = min(options.timeout, remaining)
        judge: Callable[[], list[Verdict]]
        answered: CallToolResult | None = None
        run.calls += 1  # every call sent counts, answered or not
        try:
            with anyio.fail_after(budget):
                outcome = await call_tool(client, tool.name, probe.arguments)
        except TimeoutError:
            if budget < options.timeout:
                return _cut_off(run, tool)
            waited = waits_seconds(schema, probe.arguments)
            if waited >= options.timeout / 2:
                # The checker's own arguments asked for the wait: that is not a slow tool.
                _record(run, tool, probe, "timed out", f"its arguments ask it to wait {waited:g}s")
                return True
            _record(run, tool, probe, "timed out")
            _note_change(run, tool, probe)
            # A call that blocks the server's event loop (a sync sleep in an async tool, a
            # deadlock) leaves every later call unanswered: that is one finding, not one per tool.
            if not await _still_answers(client, min(options.timeout, max(run.remaining(), 0.01))):
                if run.remaining() > 0:
                    run.add(
                        RuleId.SERVER_CRASHED,
                        tool.name,
                        f"{probe.label}: no answer within {options.timeout:g}s, and since then the server answers"
                        f" nothing, not even tools/list: this call hung the server{_tail(errlog)}",
                        probe.label,
                    )
                    return False
                run.stopped = True  # the run's time ran out while asking
            run.add(
                RuleId.CALL_TIMEOUT, tool.name, f"{probe.label}: no answer within {options.timeout:g}s", probe.label
            )
            # One hung call says enough about this tool; keep the budget for the others.
            return not run.stopped
        except MCPError as exc:
            # -32000 is also a common code for a server's own errors: only a server that no
            # longer answers at all has really gone.
            if exc.code == CONNECTION_CLOSED and not await _still_answers(client, options.timeout):
                run.add(
                    RuleId.SERVER_CRASHED,
                    tool.name,
                    f"connection closed during {probe.label}{_tail(errlog)}",
                    probe.label,
                )
                return False
            _record(run, tool, probe, "JSON-RPC error")
            judge = functools.partial(judge_call, tool, probe, exc, domain=run.roots)
        except Exception as exc:
            run.add(RuleId.SERVER_CRASHED, tool.name, f"{probe.label}: {_describe(exc)}{_tail(errlog)}", probe.label)
            return False
        else:
            if isinstance(outcome, InputRequiredResult):
                _record(run, tool, probe, "asked for client input", "the checker answers no elicitation or sampling")
                continue
            if outcome.is_error:
                _record(run, tool, probe, "error result")
            else:
                # A success that reports a failure ({"error": "connection refused"}) did not succeed.
                failure = reads_as_failure(outcome, probe.arguments)
                _record(run, tool, probe, "succeeded" if failure is None else "failure marked as success", failure)
            if not outcome.is_error:
                _note_change(run, tool, probe)
            answered = outcome
            judge = functools.partial(judge_call, tool, probe, outcome, domain=run.roots)
        verdicts = _judge(run, tool, judge)
        if verdicts is None:
            return True
        for rule, message in verdicts:
            dump = raw_dump(tool.name, answered) if rule == RuleId.RAW_ERROR_TEXT and answered is not None else None
            if dump is not None:
                run.add_dump(dump, tool.name, message, probe.label)
            else:
                run.add(rule, tool.name, message, probe.label)
    return True


def _plan(tool: Tool, schema: dict[str, Any], run: _Run) -> list[Probe]:
    """The calls to make: invalid probes, then the valid and empty-result calls."""
    options = run.options
    given = options.arguments.tools.get(tool.name, ToolArguments())
    read_only = tool.annotations is not None and tool.annotations.read_only_hint is True
    hints = ArgumentHints(roots=tuple(run.roots), read_only=read_only)
    probes = invalid_probes(schema, limit=options.probes_per_tool, base=given.valid, hints=hints)
    if given.valid is not None:
        probes.append(Probe("valid", given.valid, detail="valid call", source="--args"))
    elif options.call_valid:
        declared_write = tool.annotations is not None and tool.annotations.read_only_hint is False
        arguments = None if declared_write and not options.allow_destructive else valid_arguments(schema, hints)
        if arguments is not None:
            probes.append(Probe("valid", arguments, detail="valid call"))
        else:
            run.tools_without_valid_call.append(tool.name)
            reason = (
                "the tool declares it changes data (readOnlyHint: false): give its arguments in --args,"
                " or pass --allow-destructive"
                if declared_write and not options.allow_destructive
                else "no arguments found that satisfy its inputSchema: give them in --args"
            )
            run.valid_calls[tool.name] = CallRecord("not made", note=reason)
    if given.empty is not None:
        probes.append(Probe("empty", given.empty, detail="empty-result call", source="--args"))
    return probes


def _note_unanswered_valid_call(run: _Run, tool: Tool, probes: Sequence[Probe]) -> None:
    """List a checked tool whose valid call got no answer among the tools without a valid call."""
    valid = next((probe for probe in probes if probe.kind == "valid"), None)
    if valid is None or tool.name not in run.tools_checked:
        return  # no valid call was planned, or the tool is listed as unchecked
    record = run.valid_calls.get(tool.name)
    if record is None:
        record = CallRecord(
            "not made", _source(valid), "not reached: an earlier call to the tool got no answer", _shown(valid)
        )
        run.valid_calls[tool.name] = record
    if record.outcome in {"not made", "timed out"} and tool.name not in run.tools_without_valid_call:
        run.tools_without_valid_call.append(tool.name)


def _record(run: _Run, tool: Tool, probe: Probe, outcome: str, note: str | None = None) -> None:
    if probe.is_invalid:
        return
    calls = run.valid_calls if probe.kind == "valid" else run.empty_calls
    calls[tool.name] = CallRecord(outcome, _source(probe), note, _shown(probe))


def _source(probe: Probe) -> str:
    return "--args" if probe.source == "--args" else "generated from the inputSchema"


def _shown(probe: Probe) -> dict[str, Any]:
    return shown_arguments(probe.arguments)


def _note_change(run: _Run, tool: Tool, probe: Probe) -> None:
    """Remember a call that may have changed data: its tool does not say it only reads."""
    if tool.annotations is not None and tool.annotations.read_only_hint is True:
        return
    call = probe.label if probe.is_invalid else probe.label.split(" (")[0]
    run.changes.append({"tool": tool.name, "call": call, "arguments": shown_arguments(probe.arguments, limit=None)})


def _schema_problem(tool: Tool) -> str | None:
    """Why the tool's inputSchema or outputSchema is not usable JSON Schema, or `None`.

    The metaschema check also compiles every `pattern` (its `regex` format), optional
    properties and outputSchemas included.
    """
    for where, schema in (("inputSchema", tool.input_schema), ("outputSchema", tool.output_schema)):
        if schema is None:
            continue
        if not isinstance(schema, Mapping):
            return f"the {where} is not a JSON object"
        try:
            text = json.dumps(schema, sort_keys=True)
        except (TypeError, ValueError):
            return f"the {where} is not JSON"
        problem = _metaschema_problem(text)
        if problem is not None:
            return f"the {where} is not valid JSON Schema at {problem}"
    return None


@functools.lru_cache(maxsize=256)
def _metaschema_problem(schema_text: str) -> str | None:
    # Tools of one server share schemas (every outputSchema `install` widens looks alike), and
    # a metaschema check costs milliseconds: each distinct schema is checked once.
    schema = json.loads(schema_text)
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as exc:
        location = "/".join(str(part) for part in exc.absolute_path) or "(root)"
        return f"{location}: {one_line(exc.message, _SCHEMA_ERROR_CHARS)}"
    return None


async def _learn_roots(client: Client, tools: Sequence[Tool], run: _Run) -> None:
    """Ask a tool that lists the server's allowed places (`list_allowed_directories`) for them."""
    for tool in tools:
        if not ROOTS_TOOL.fullmatch(tool.name.lower().replace("-", "_")):
            continue
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        annotations = tool.annotations
        if schema.get("required") or (annotations is not None and annotations.read_only_hint is False):
            continue
        run.calls += 1
        try:
            with anyio.fail_after(min(run.options.timeout, max(run.remaining(), 0.01))):
                result = await call_tool(client, tool.name, {})
        except Exception:
            return  # the tool is probed (and judged) with the others
        if isinstance(result, CallToolResult) and not result.is_error:
            texts = [block.text for block in result.content if isinstance(block, TextContent)]
            run.roots += [path for path in roots_announced(tool.name, "\n".join(texts)) if path not in run.roots]
        return


def _closed(exc: BaseException) -> bool:
    if isinstance(exc, BaseExceptionGroup):
        return any(_closed(inner) for inner in exc.exceptions)
    return isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED


def _report_stdout_noise(run: _Run, noise: StdoutNoise) -> None:
    said = noise.describe(_STDERR_TAIL)
    if said is not None:
        run.add(RuleId.STDOUT_NOT_PROTOCOL, None, said)


def _cut_off(run: _Run, tool: Tool) -> bool:
    """Stop at the total timeout; the tool being probed was not judged in full."""
    run.stopped = True
    run.tools_checked.remove(tool.name)
    return False


async def _still_answers(client: Client, seconds: float) -> bool:
    # tools/list, not ping: ping is gone from the 2026-07-28 protocol.
    with anyio.move_on_after(min(seconds, _LIVENESS_SECONDS)):
        try:
            await client.list_tools()
        except Exception:
            return False
        return True
    return False


_LIVENESS_SECONDS: Final = 5.0


def _judge(run: _Run, tool: Tool, judge: Callable[[], list[Verdict]]) -> list[Verdict] | None:
    """The verdicts, or `None` (and an ME020 finding) when the tool's schemas defeat judging."""
    try:
        with time_limit(min(run.options.timeout, max(run.remaining(), 0.0))):
            return judge()
    except CutShortError as exc:
        run.add(RuleId.SCHEMA_UNUSABLE, tool.name, f"could not judge an answer against the tool's schemas: {exc}")
        return None
    except Exception as exc:
        run.add(
            RuleId.SCHEMA_UNUSABLE,
            tool.name,
            f"could not judge an answer against the tool's schemas: {_describe(exc, _SCHEMA_ERROR_CHARS)}",
        )
        return None


def _label(target: Target) -> str:
    if isinstance(target, str):
        return target
    if isinstance(target, StdioServerParameters):
        return shlex.join([target.command, *target.args])
    if isinstance(target, MCPServer | Server):
        return f"in-process server {target.name!r}"
    return shlex.join(list(target))


def _describe(exc: BaseException, limit: int | None = None) -> str:
    if isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        return _describe(exc.exceptions[0], limit)
    text = one_line(str(exc), limit)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _tail(errlog: IO[str] | None) -> str:
    lines = _stderr_lines(errlog, 1)
    return f" (last server stderr line: {lines[-1][-_STDERR_TAIL:]})" if lines else ""


def _exited_before_answering(status_file: Path | None, errlog: IO[str] | None) -> str:
    """ME015 for a server that exited at start-up: how it ended, and its last stderr lines."""
    status = read_exit_status(status_file) if status_file is not None else None
    said = f"the server {'exited' if status is None else describe_exit(status)} before answering"
    if status in (None, 0):
        said += ": did it start serving? (a script that builds a server must also run it, e.g. `server.run()`)"
    lines = _stderr_lines(errlog, _EXIT_LINES)
    if lines:
        said += "; its last lines on stderr: " + " | ".join(line[-_STDERR_TAIL:] for line in lines)
    return said


_EXIT_LINES: Final = 5
"""How many of a server's last stderr lines a finding about its exit quotes."""


def _stderr_lines(errlog: IO[str] | None, count: int) -> list[str]:
    if errlog is None:
        return []
    try:
        errlog.flush()
        errlog.seek(0)
        text = errlog.read()
    except (OSError, ValueError):
        return []
    return [line.strip() for line in last_lines(text, count)]


def _note_listing(run: _Run, listing: Listing) -> None:
    run.listing_pages = listing.pages
    run.listing_cut = listing.cut
    if listing.cut:
        run.add(
            RuleId.CHECK_INCOMPLETE,
            None,
            f"the tool listing was cut after {listing.pages} pages ({len(listing.tools)} tools): the server still"
            " offered a next page, so the tools on later pages were neither listed nor checked",
        )


_SHARED_CAUSE_TOOLS: Final = 2
"""A raw dump of one shape on this many tools or more is one cause, reported once."""
_SHOWN_TOOLS: Final = 10


def _shared_dump(kind: str, by_tool: Mapping[str, _Tally]) -> Finding:
    tools = sorted(by_tool)
    calls = sum(tally.count for tally in by_tool.values())
    first_tool = next(iter(by_tool))
    call = by_tool[first_tool].call
    shown = ", ".join(tools[:_SHOWN_TOOLS]) + (
        f" and {len(tools) - _SHOWN_TOOLS} more" if len(tools) > _SHOWN_TOOLS else ""
    )
    message = (
        f"{len(tools)} tools answer with {kind} of one shape ({calls} calls; first: {call} of {first_tool}):"
        f" one cause, in the server's or its framework's error handling: {RAW_DUMP_ADVICE}. Tools: {shown}"
    )
    return Finding(str(RuleId.RAW_ERROR_TEXT), None, message, tools=tuple(tools), call=call)


def _counted(message: str, count: int) -> str:
    return message if count == 1 else f"{message} (and {count - 1} more)"
