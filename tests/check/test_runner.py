"""`check_server` end to end: compliant servers pass, each defect is flagged with its rule,
and hanging, crashing or silent servers end in findings within the timeouts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import pytest
from mcp import StdioServerParameters
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations
from pydantic import Field

from mcp_errors import BusinessRuleError, install
from mcp_errors.check import RULES, CallArguments, CheckOptions, CheckReport, Family, ToolArguments, check_server
from mcp_errors.check._args import parse_call_arguments
from mcp_errors.check._runner import CONNECT_SECONDS
from mcp_errors.check._wire import MAX_PAGES
from servers import CHECK_SERVERS_DIR
from servers.check import (
    defects_server,
    domain_paths_server,
    endless_listing_server,
    framework_dumps_server,
    good_server,
    misbehaving_server,
    plain_defects_server,
    roles_server,
    unusable_schema_server,
)

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)

FIXTURES = CHECK_SERVERS_DIR
PYTHON = sys.executable
# Starting a Python server on a loaded 2-core machine can take seconds; calls are fast.
SLOW_START = 60.0


def rules_by_tool(report: CheckReport) -> dict[str | None, set[str]]:
    found: dict[str | None, set[str]] = {}
    for finding in report.findings:
        found.setdefault(finding.tool, set()).add(finding.rule)
    return found


def assert_well_formed(report: CheckReport) -> None:
    document = report.to_json()
    assert set(document) == {"server", "findings", "summary"}
    for finding in document["findings"]:
        assert set(finding) == {"rule", "severity", "family", "tool", "tools", "call", "message"}
        assert finding["rule"] in RULES
        assert finding["severity"] == RULES[finding["rule"]].severity.value
        assert finding["tool"] is None or finding["tool"] in report.tools_checked
        assert set(finding["tools"]) <= set(report.tools_checked)
        assert not (finding["tool"] and finding["tools"])
        assert isinstance(finding["message"], str)
        assert finding["message"]
    assert document["summary"]["passed"] is not report.failed


@pytest.mark.anyio
async def test_a_foundation_built_server_passes_every_rule(mode: Literal["auto", "legacy"]) -> None:
    with anyio.fail_after(30):
        report = await check_server(good_server.build_server(), CheckOptions(call_valid=True, mode=mode))

    assert report.findings == []
    assert sorted(report.tools_checked) == ["find_orders", "refund", "set_quantity"]
    assert report.calls > len(report.tools_checked)


@pytest.mark.anyio
async def test_a_foundation_built_server_passes_every_rule_over_stdio() -> None:
    params = StdioServerParameters(command=PYTHON, args=[str(FIXTURES / "good_server.py")])
    with anyio.fail_after(SLOW_START + 30):
        report = await check_server(params, CheckOptions(call_valid=True, connect_timeout=SLOW_START))

    assert report.findings == []
    assert report.server["name"] == "good-orders"


@pytest.mark.anyio
async def test_each_defect_is_flagged_with_exactly_its_rule(mode: Literal["auto", "legacy"]) -> None:
    with anyio.fail_after(30):
        report = await check_server(defects_server.build_server(), CheckOptions(call_valid=True, mode=mode))

    found = rules_by_tool(report)
    expected = {name: ({rule} if rule else set()) for name, (rule, _, _) in defects_server.DEFECTS.items()}
    assert {name: found.get(name, set()) for name in expected} == expected
    assert None not in found
    assert_well_formed(report)


def test_every_rule_has_a_defect_fixture() -> None:
    covered = {rule for rule, _, _ in defects_server.DEFECTS.values() if rule}
    covered |= {rule for rule, _, _ in plain_defects_server.PLAIN_DEFECTS.values() if rule}
    process_level = {"ME014", "ME015", "ME016", "ME017", "ME021"}  # tested below with misbehaving servers
    schema_level = {"ME020"}  # tested below with unusable_schema_server

    assert covered | process_level | schema_level == set(RULES)


@pytest.mark.anyio
async def test_each_defect_any_server_can_have_is_flagged_with_exactly_its_rule_without_the_contract(
    mode: Literal["auto", "legacy"],
) -> None:
    options = CheckOptions(call_valid=True, mode=mode, contract=False)
    with anyio.fail_after(30):
        report = await check_server(plain_defects_server.build_server(), options)

    expected = {name: ({rule} if rule else set()) for name, (rule, _, _) in plain_defects_server.PLAIN_DEFECTS.items()}
    assert {name: rules_by_tool(report).get(name, set()) for name in expected} == expected
    assert all(RULES[finding.rule].family is Family.ANY_SERVER for finding in report.findings)
    assert all(record.made for record in report.valid_calls.values())
    assert_well_formed(report)


@pytest.mark.anyio
async def test_the_contract_adds_findings_and_never_hides_what_any_server_must_pass() -> None:
    with anyio.fail_after(30):
        plain = await check_server(plain_defects_server.build_server(), CheckOptions(call_valid=True, contract=False))
        full = await check_server(plain_defects_server.build_server(), CheckOptions(call_valid=True))

    assert {(f.rule, f.tool) for f in plain.findings} < {(f.rule, f.tool) for f in full.findings}
    added = {f.rule for f in full.findings} - {f.rule for f in plain.findings}
    assert added == {"ME002"}
    assert full.contract
    assert not plain.contract


@pytest.mark.anyio
async def test_a_finding_names_its_probe_first() -> None:
    with anyio.fail_after(30):
        report = await check_server(defects_server.build_server(), CheckOptions(call_valid=True))

    messages = {finding.rule: finding.message for finding in report.findings}
    assert messages["ME002"].startswith("probe 'required customer_email missing': ")
    assert messages["ME019"].startswith("valid call: ")


def paths_server(tmp_path: Path, default_wait: float = 10.0) -> tuple[Server[Any], Path, Path]:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "today.txt").write_text("Buy milk.", encoding="utf-8")
    repository = tmp_path / "repository"
    repository.mkdir()
    return domain_paths_server.build_server(root, repository, default_wait), root, repository


@pytest.mark.anyio
async def test_paths_in_the_servers_own_domain_are_information_and_real_leaks_are_still_flagged(
    tmp_path: Path, mode: Literal["auto", "legacy"]
) -> None:
    server, root, _ = paths_server(tmp_path)
    outside = tmp_path / "elsewhere.txt"
    arguments = CallArguments(
        tools={
            # The caller's own path, outside the root: the server's refusal quotes it back.
            "read_note": ToolArguments(valid={"path": str(outside)}),
        }
    )
    options = CheckOptions(call_valid=True, mode=mode, contract=False, arguments=arguments)

    with anyio.fail_after(30):
        report = await check_server(server, options)

    assert rules_by_tool(report) == {name: {"ME010"} for name in domain_paths_server.LEAKS}
    assert report.roots == [str(root.resolve())]  # asked from list_allowed_directories first
    leaks = {finding.tool: finding.message for finding in report.findings}
    assert "/home/alice/src/orders/handlers.py" in leaks["leak_source_path"]
    assert "stack trace" in leaks["leak_traceback_in_root"]


@pytest.mark.anyio
async def test_paths_numbers_and_empty_answers_are_judged_by_their_role_not_their_words(
    tmp_path: Path, mode: Literal["auto", "legacy"]
) -> None:
    """No false alarm (a root named in prose, URL routes, a missing note, page or folder the caller
    named), no miss (a home folder or source file, a search answered with an error, a failure
    marked a success)."""
    arguments = parse_call_arguments(roles_server.arguments())
    options = CheckOptions(mode=mode, contract=False, arguments=arguments)

    with anyio.fail_after(30):
        report = await check_server(roles_server.build_server(tmp_path), options)

    found = rules_by_tool(report)
    assert {tool: found.get(tool, set()) for tool in roles_server.EXPECTED} == roles_server.EXPECTED
    assert None not in found
    assert report.roots == []  # the root was known only from the errors that name it
    assert_well_formed(report)


@pytest.mark.anyio
async def test_a_success_that_reports_a_failure_is_not_counted_as_a_valid_call_that_succeeded(tmp_path: Path) -> None:
    arguments = parse_call_arguments(roles_server.arguments())

    with anyio.fail_after(30):
        report = await check_server(roles_server.build_server(tmp_path), CheckOptions(arguments=arguments))

    record = report.valid_calls["list_dags"]
    assert not record.succeeded
    assert record.outcome == "failure marked as success"
    assert "Connection refused" in (record.note or "")
    assert report.valid_calls["search_notes"].succeeded


@pytest.mark.anyio
async def test_the_frameworks_raw_text_on_every_tool_is_one_finding_and_a_tools_own_stays_its_own(
    mode: Literal["auto", "legacy"],
) -> None:
    options = CheckOptions(call_valid=True, mode=mode, contract=False)

    with anyio.fail_after(30):
        report = await check_server(framework_dumps_server.build_server(), options)

    dumps = [finding for finding in report.findings if finding.rule == "ME024"]
    shared = [finding for finding in dumps if finding.tool is None]
    assert len(shared) == 1
    assert shared[0].tools == tuple(sorted(framework_dumps_server.SHARED))
    assert all(tool in shared[0].message for tool in framework_dumps_server.SHARED)
    assert (shared[0].call or "").startswith("probe ")
    # The tool's own dump (on its valid call) is reported for that tool alone.
    assert [finding.tool for finding in dumps if finding.tool is not None] == [framework_dumps_server.OWN_DUMP]
    assert_well_formed(report)


@pytest.mark.anyio
async def test_a_listing_that_never_ends_is_cut_and_the_report_says_so() -> None:
    with anyio.fail_after(60):
        report = await check_server(endless_listing_server.build_server())

    assert rules_by_tool(report) == {None: {"ME017"}}
    assert f"cut after {MAX_PAGES} pages" in report.findings[0].message
    assert len(report.tools_checked) == MAX_PAGES
    assert not report.listing_complete
    assert report.to_json()["summary"]["listing"] == {"pages": MAX_PAGES, "complete": False}
    assert report.failed


@pytest.mark.anyio
async def test_a_listing_that_ends_is_complete() -> None:
    with anyio.fail_after(30):
        report = await check_server(good_server.build_server())

    assert report.to_json()["summary"]["listing"] == {"pages": 1, "complete": True}


@pytest.mark.anyio
async def test_a_server_that_starts_slower_than_the_call_timeout_is_checked_by_default() -> None:
    """The start-up deadline is not the call timeout: a real start-up (uv, a proxy, a loaded
    machine) takes longer than a call may."""
    options = CheckOptions(call_valid=True, timeout=1.0)
    assert options.timeout < misbehaving_server.SLOW_START_SECONDS

    with anyio.fail_after(CONNECT_SECONDS + 30):
        report = await check_server(misbehaving("slow-start"), options)

    assert report.findings == []
    assert report.tools_checked == ["lookup", "echo"]


@pytest.mark.anyio
async def test_a_path_argument_reaches_the_allowed_root_a_tool_lists(tmp_path: Path) -> None:
    server, root, _ = paths_server(tmp_path)
    arguments = CallArguments(tools={"read_note": ToolArguments(valid={"path": str(root / "today.txt")})})

    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(call_valid=True, contract=False, arguments=arguments))

    assert report.valid_calls["read_note"].succeeded
    assert report.valid_calls["read_note"].arguments == "--args"
    assert report.valid_calls["repo_status"].outcome == "error result"  # generated: the root is not the repository


@pytest.mark.anyio
async def test_a_long_default_wait_is_not_the_checkers_own_timeout(tmp_path: Path) -> None:
    timeout = 3.0
    server, _, _ = paths_server(tmp_path, default_wait=timeout)

    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(call_valid=True, contract=False, timeout=timeout))

    assert "ME014" not in {finding.rule for finding in report.findings}
    assert report.valid_calls["wait_for_job"].succeeded


@pytest.mark.anyio
async def test_a_slow_tool_is_slow_when_a_small_input_is_slow() -> None:
    server = install(MCPServer("slow"))

    @server.tool()
    async def lookup(customer_email: str) -> str:
        """Look a customer up, slowly whatever the input."""
        await anyio.sleep(5)
        return "found"

    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(call_valid=True, timeout=0.5))

    assert rules_by_tool(report) == {"lookup": {"ME014"}}


@pytest.mark.anyio
async def test_arguments_from_a_file_make_the_valid_and_empty_calls_and_say_so(mode: Literal["auto", "legacy"]) -> None:
    arguments = CallArguments(
        tools={
            "find_orders": ToolArguments(valid={"order_id": "#12345"}, empty={"order_id": "#99999"}),
            "no_such_tool": ToolArguments(valid={}),
        }
    )
    options = CheckOptions(mode=mode, arguments=arguments)  # no --call-valid: the file alone asks

    with anyio.fail_after(30):
        report = await check_server(good_server.build_server(), options)

    assert report.findings == []
    assert report.valid_calls == {"find_orders": report.valid_calls["find_orders"]}
    assert report.valid_calls["find_orders"].succeeded
    assert report.empty_calls["find_orders"].succeeded
    assert report.unused_arguments == ["no_such_tool"]


@pytest.mark.anyio
async def test_an_empty_result_call_answered_with_an_error_is_flagged() -> None:
    server = install(MCPServer("orders"))

    @server.tool()
    def find_orders(customer: str) -> str:
        """Find a customer's orders."""
        raise BusinessRuleError("Lookup failed", description="The customer has no orders; try another customer.")

    arguments = CallArguments(tools={"find_orders": ToolArguments(empty={"customer": "nobody@example.com"})})
    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(arguments=arguments))

    assert rules_by_tool(report) == {"find_orders": {"ME012"}}
    assert report.findings[0].message.startswith("empty-result call (from --args): ")


@pytest.mark.anyio
async def test_each_valid_call_is_reported_made_or_not_and_succeeded_or_not() -> None:
    with anyio.fail_after(30):
        report = await check_server(defects_server.build_server(), CheckOptions(call_valid=True))

    outcomes = {tool: record.outcome for tool, record in report.valid_calls.items()}
    assert outcomes["well_behaved"] == "succeeded"
    assert outcomes["empty_as_error"] == "error result"
    assert outcomes["failure_as_protocol_error"] == "JSON-RPC error"
    assert report.to_json()["summary"]["validCalls"]["well_behaved"]["outcome"] == "succeeded"
    assert report.to_json()["summary"]["validCalls"]["well_behaved"]["arguments"] == "generated from the inputSchema"


@pytest.mark.anyio
async def test_a_valid_call_says_with_which_values_clipped_and_never_a_secret_in_clear() -> None:
    server = install(MCPServer("login"))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def sign_in(user: str, note: str, password: str, attempts: int) -> str:
        return f"{user} signed in"

    secret_note = "ghp_" + "a1B2c3D4" * 5  # a GitHub token's shape, under a harmless name
    valid = {"user": "ada " * 100, "note": secret_note, "password": "hunter2-hunter2", "attempts": 3}
    arguments = CallArguments(tools={"sign_in": ToolArguments(valid=valid)})

    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(arguments=arguments))

    record = report.to_json()["summary"]["validCalls"]["sign_in"]
    assert record["arguments"] == "--args"
    sent = record["sent"]
    assert sent["attempts"] == 3
    assert sent["user"].startswith("ada ada")
    assert len(sent["user"]) < len(valid["user"])  # type: ignore[arg-type]
    assert sent["password"] == sent["note"] == "[REDACTED]"
    assert "hunter2" not in json.dumps(report.to_json())


@pytest.mark.anyio
async def test_a_tool_that_declares_it_writes_gets_a_generated_valid_call_only_when_allowed() -> None:
    server = install(MCPServer("stock"))
    writes: list[str] = []

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def restock(sku: str) -> str:
        """Add stock."""
        writes.append(sku)
        return f"Restocked {sku}."

    with anyio.fail_after(30):
        cautious = await check_server(server, CheckOptions(call_valid=True))
        assert writes == []
        allowed = await check_server(server, CheckOptions(call_valid=True, allow_destructive=True))

    assert not cautious.valid_calls["restock"].made
    assert cautious.tools_without_valid_call == ["restock"]
    assert allowed.valid_calls["restock"].succeeded
    assert writes == ["example"]
    assert allowed.changes == [{"tool": "restock", "call": "valid call", "arguments": {"sku": "example"}}]


@pytest.mark.anyio
async def test_a_tool_whose_schema_cannot_be_used_is_flagged_and_the_others_are_still_checked(
    mode: Literal["auto", "legacy"],
) -> None:
    options = CheckOptions(call_valid=True, mode=mode, total_timeout=20)
    with anyio.fail_after(30):
        report = await check_server(unusable_schema_server.build_server(), options)

    assert rules_by_tool(report) == {name: {"ME020"} for name in unusable_schema_server.BROKEN}
    assert sorted(report.tools_checked) == sorted(unusable_schema_server.SCHEMAS)
    assert report.tools_unchecked == []
    assert report.failed
    assert report.duration_seconds < 20
    assert_well_formed(report)


@pytest.mark.anyio
async def test_what_a_backtracking_pattern_cut_short_is_reported() -> None:
    with anyio.fail_after(30):
        report = await check_server(unusable_schema_server.build_server(), CheckOptions(call_valid=True))

    messages = {finding.tool: finding.message for finding in report.findings}
    assert "took over" in messages["backtracking_probe"]
    assert "not called" in messages["backtracking_probe"]
    assert "could not judge" in messages["backtracking_output"]
    assert "catastrophic_literal" not in messages  # a bounded matcher gets through it and checks the tool


@pytest.mark.anyio
async def test_a_malformed_tool_in_a_listing_is_judged_and_the_other_tools_are_checked() -> None:
    """`"properties": 5` fails the whole typed listing on a 2025-11-25 connection."""
    params = StdioServerParameters(command=PYTHON, args=[str(FIXTURES / "raw_listing_server.py")])
    for mode in ("auto", "legacy"):
        options = CheckOptions(call_valid=True, connect_timeout=SLOW_START, mode=mode)
        with anyio.fail_after(SLOW_START + 30):
            report = await check_server(params, options)

        assert rules_by_tool(report) == {"malformed_properties": {"ME020"}}, mode
        assert sorted(report.tools_checked) == ["malformed_properties", "well_behaved"]
        assert report.valid_calls["well_behaved"].succeeded


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_answer_the_client_cannot_read_is_a_finding_at_once_not_a_wait_for_the_handshake(mode: str) -> None:
    """A tool named by a lone surrogate: valid JSON the SDK's client drops, so tools/list never got an answer."""
    params = StdioServerParameters(command=PYTHON, args=[str(FIXTURES / "hostile_names_server.py"), "surrogate"])
    options = CheckOptions(call_valid=True, connect_timeout=120, mode=mode)  # type: ignore[arg-type]
    with anyio.fail_after(60):  # half the handshake's timeout: the lost answer is seen, not waited out
        report = await check_server(params, options)
    assert "ME015" in rules_by_tool(report)[None]
    assert report.failed


@pytest.mark.anyio
async def test_an_installed_server_with_secret_named_arguments_does_not_leak_by_naming_them(
    mode: Literal["auto", "legacy"],
) -> None:
    server = install(MCPServer("secrets"))

    @server.tool()
    def connect(host: str, api_key: str) -> str:
        """Connect with an API key."""
        return f"connected to {host}"

    @server.tool()
    def set_password(user: str, password: Annotated[str, Field(min_length=8)], auth_token: str) -> str:
        """Change a password."""
        return f"password changed for {user}"

    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(call_valid=True, mode=mode))

    assert report.findings == []
    assert sorted(report.tools_checked) == ["connect", "set_password"]
    assert report.calls > len(report.tools_checked)


@pytest.mark.anyio
async def test_defects_are_flagged_over_stdio_too() -> None:
    params = StdioServerParameters(command=PYTHON, args=[str(FIXTURES / "defects_server.py")])
    with anyio.fail_after(SLOW_START + 30):
        report = await check_server(params, CheckOptions(call_valid=True, connect_timeout=SLOW_START))

    found = rules_by_tool(report)
    assert found["no_envelope"] == {"ME002"}
    assert found["validation_as_protocol_error"] == {"ME001"}
    assert "well_behaved" not in found


@pytest.mark.anyio
async def test_empty_and_valid_call_rules_need_call_valid() -> None:
    with anyio.fail_after(30):
        report = await check_server(defects_server.build_server())

    rules = {finding.rule for finding in report.findings}
    assert rules.isdisjoint({"ME012", "ME013", "ME018", "ME019"})
    assert "ME002" in rules


@pytest.mark.anyio
async def test_destructive_tools_are_called_only_when_allowed() -> None:
    with anyio.fail_after(30):
        cautious = await check_server(good_server.build_server())
        allowed = await check_server(good_server.build_server(), CheckOptions(allow_destructive=True))

    assert "purge_orders" in cautious.tools_skipped
    assert "purge_orders" not in cautious.tools_checked
    assert "purge_orders" in allowed.tools_checked
    assert allowed.findings == []


def misbehaving(behaviour: str) -> StdioServerParameters:
    return StdioServerParameters(command=PYTHON, args=[str(FIXTURES / "misbehaving_server.py"), behaviour])


@pytest.mark.anyio
async def test_a_hanging_tool_ends_in_a_timeout_finding_and_the_other_tools_are_checked() -> None:
    options = CheckOptions(call_valid=True, timeout=1.0, connect_timeout=SLOW_START)

    with anyio.fail_after(SLOW_START + 20):
        report = await check_server(misbehaving("hang"), options)

    assert rules_by_tool(report) == {"lookup": {"ME014"}}
    assert report.tools_checked == ["lookup", "echo"]
    assert report.failed


@pytest.mark.anyio
async def test_a_call_that_hangs_the_whole_server_is_reported_once_and_the_rest_listed_unchecked() -> None:
    options = CheckOptions(call_valid=True, timeout=1.0, connect_timeout=SLOW_START)

    with anyio.fail_after(SLOW_START + 20):
        report = await check_server(misbehaving("block"), options)

    assert rules_by_tool(report) == {"lookup": {"ME016"}}
    assert report.findings[0].message.startswith("valid call: ")
    assert report.tools_unchecked == ["echo"]
    assert report.valid_calls["lookup"].outcome == "timed out"
    assert report.tools_without_valid_call == ["lookup"]


@pytest.mark.anyio
async def test_calls_that_time_out_are_counted_and_a_valid_call_they_cut_short_is_named() -> None:
    server = install(MCPServer("stalls"))

    @server.tool()
    async def stall() -> str:  # no arguments: its only call is the valid one
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool()
    async def stall_early(code: Annotated[str, Field(json_schema_extra={"pattern": "^x"})]) -> str:
        await anyio.sleep_forever()  # reached by the probe breaking the pattern, before the valid call
        return "unreachable"

    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(call_valid=True, timeout=0.5))

    assert rules_by_tool(report) == {"stall": {"ME014"}, "stall_early": {"ME014"}}
    # stall: its valid call; stall_early: missing, wrong type (rejected by the server), pattern.
    assert report.calls == 4
    assert report.tools_without_valid_call == ["stall", "stall_early"]
    assert report.valid_calls["stall"].outcome == "timed out"
    assert report.valid_calls["stall_early"].outcome == "not made"


@pytest.mark.anyio
async def test_a_crashing_server_ends_in_a_crash_finding_and_names_what_went_unchecked() -> None:
    with anyio.fail_after(SLOW_START + 20):
        report = await check_server(misbehaving("crash"), CheckOptions(call_valid=True, connect_timeout=SLOW_START))

    assert rules_by_tool(report) == {"lookup": {"ME016"}}
    assert report.tools_unchecked == ["echo"]
    assert "lookup backend gone" in report.findings[0].message  # the server's last stderr line


@pytest.mark.anyio
async def test_a_server_error_with_code_32000_is_judged_not_taken_for_a_crash() -> None:
    """-32000 is CONNECTION_CLOSED in the SDK, and also a common code for a server's own errors."""
    server = MCPServer("rpc")

    @server.tool()
    def lookup(order_id: str) -> str:
        raise MCPError(code=-32000, message="Order lookup failed")

    @server.tool()
    def echo(text: str) -> str:
        return text

    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(call_valid=True))

    assert "ME016" not in {finding.rule for finding in report.findings}
    assert "ME018" in rules_by_tool(report)["lookup"]
    assert report.tools_checked == ["lookup", "echo"]


@pytest.mark.anyio
async def test_not_found_is_an_empty_result_for_a_query_but_a_broken_rule_for_a_declared_write() -> None:
    server = install(MCPServer("orders"))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def find_order(order_id: str) -> str:
        raise BusinessRuleError("Order not found", description="No order has this id.", code="ORDER_NOT_FOUND")

    @server.tool(annotations=ToolAnnotations(read_only_hint=False))
    def cancel_order(order_id: str) -> str:
        raise BusinessRuleError(
            "Order not found", description="There is no such order to cancel.", code="ORDER_NOT_FOUND"
        )

    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(call_valid=True))

    assert rules_by_tool(report) == {"find_order": {"ME012"}}


@pytest.mark.anyio
async def test_a_stdio_server_that_prints_on_stdout_is_flagged_and_still_checked() -> None:
    params = StdioServerParameters(command=PYTHON, args=[str(FIXTURES / "noisy_server.py")])

    with anyio.fail_after(SLOW_START + 20):
        report = await check_server(params, CheckOptions(call_valid=True, connect_timeout=SLOW_START))

    assert rules_by_tool(report) == {None: {"ME021"}}
    assert "starting up, hello!" in report.findings[0].message
    assert report.tools_checked == ["echo"]


@pytest.mark.anyio
async def test_a_tool_the_checker_finds_no_valid_arguments_for_is_named_not_silently_passed() -> None:
    server = install(MCPServer("patterns"))

    @server.tool()
    def doubled(code: Annotated[str, Field(json_schema_extra={"pattern": r"^(ab)\1$"})]) -> str:
        return code

    @server.tool()
    def echo(text: str) -> str:
        return text

    with anyio.fail_after(30):
        report = await check_server(server, CheckOptions(call_valid=True))

    assert report.tools_without_valid_call == ["doubled"]
    assert report.to_json()["summary"]["toolsWithoutValidCall"] == ["doubled"]
    assert report.tools_checked == ["doubled", "echo"]


@pytest.mark.anyio
async def test_concurrent_checks_each_count_only_their_own_servers_stdout_noise() -> None:
    noisy = StdioServerParameters(command=PYTHON, args=[str(FIXTURES / "noisy_server.py")])
    good = StdioServerParameters(command=PYTHON, args=[str(FIXTURES / "good_server.py")])
    reports: dict[str, CheckReport] = {}

    async def run(name: str, params: StdioServerParameters) -> None:
        reports[name] = await check_server(params, CheckOptions(connect_timeout=SLOW_START))

    with anyio.fail_after(SLOW_START + 30):
        async with anyio.create_task_group() as group:
            group.start_soon(run, "good", good)
            group.start_soon(run, "noisy", noisy)

    assert "ME021" in rules_by_tool(reports["noisy"]).get(None, set())
    assert "ME021" not in rules_by_tool(reports["good"]).get(None, set())


@pytest.mark.anyio
async def test_a_server_that_never_answers_the_handshake_ends_in_a_finding() -> None:
    with anyio.fail_after(20):
        report = await check_server(misbehaving("silent"), CheckOptions(connect_timeout=3.0))

    assert rules_by_tool(report) == {None: {"ME015"}}
    assert report.tools_checked == []
    assert "raise --connect-timeout" in report.findings[0].message


@pytest.mark.anyio
async def test_a_server_script_that_exits_at_once_is_told_it_never_started_serving() -> None:
    params = StdioServerParameters(command=PYTHON, args=[str(FIXTURES / "never_served_server.py")])

    with anyio.fail_after(SLOW_START + 20):
        report = await check_server(params, CheckOptions(connect_timeout=SLOW_START))

    assert rules_by_tool(report) == {None: {"ME015"}}
    assert "the server exited with status 0 before answering: did it start serving?" in report.findings[0].message


@pytest.mark.anyio
async def test_a_command_that_cannot_start_ends_in_a_finding() -> None:
    with anyio.fail_after(20):
        report = await check_server([str(FIXTURES / "no-such-server")])

    assert rules_by_tool(report) == {None: {"ME015"}}


@pytest.mark.anyio
async def test_the_total_timeout_stops_the_run_with_a_finding() -> None:
    # The per-call timeout outlasts the run, so only the total timeout can end the hung call.
    options = CheckOptions(call_valid=True, timeout=30.0, total_timeout=1.0)

    with anyio.fail_after(15):
        report = await check_server(misbehaving_server.build_server("hang"), options)

    assert rules_by_tool(report) == {None: {"ME017"}}
    # The hung tool was cut off, not judged: it is not reported as passing.
    assert report.tools_checked == []
    assert report.tools_unchecked == ["lookup", "echo"]


@pytest.mark.anyio
async def test_the_demo_server_passes_every_rule(mode: Literal["auto", "legacy"]) -> None:
    from mcp_errors.demo import build_server

    options = CheckOptions(call_valid=True, allow_destructive=True, mode=mode)
    with anyio.fail_after(30):
        report = await check_server(build_server(), options)

    assert report.findings == []
    assert "process_refund" in report.tools_checked


@pytest.mark.anyio
async def test_a_server_that_exits_at_start_up_is_reported_with_its_exit_status_and_last_stderr_lines() -> None:
    crash = "import sys; print('starting orders', file=sys.stderr); print('DATABASE_URL is not set', file=sys.stderr);"
    crash += " sys.exit(3)"

    with anyio.fail_after(SLOW_START + 20):
        report = await check_server([PYTHON, "-c", crash], CheckOptions(connect_timeout=SLOW_START))

    assert rules_by_tool(report) == {None: {"ME015"}}
    message = report.findings[0].message
    assert "exited with status 3" in message
    assert "starting orders" in message
    assert "DATABASE_URL is not set" in message
    assert "did it start serving" not in message  # a failure status says why; only a clean exit asks


@pytest.mark.anyio
async def test_a_command_that_is_not_on_path_is_reported_as_such() -> None:
    with anyio.fail_after(20):
        report = await check_server(["no-such-mcp-server-command"])

    assert rules_by_tool(report) == {None: {"ME015"}}
    assert "'no-such-mcp-server-command' is not on PATH" in report.findings[0].message
    assert "FileNotFoundError" not in report.findings[0].message
