"""`mcp-errors proxy` end to end: a real upstream child over stdio, the proxy in front of it.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract. Most
tests build the proxy in this process (`build_proxy`) and talk to it with `mcp.Client` in
both connection modes; the command-line tests run `mcp-errors proxy` itself.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import fastmcp
import pytest
from anyio.streams.text import TextReceiveStream
from mcp import Client
from mcp.client.stdio import stdio_client as stdio_transport
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    URL_ELICITATION_REQUIRED,
    CallToolResult,
    ElicitRequest,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    InputRequiredResult,
    TextResourceContents,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors._shared.causes import causes
from mcp_errors._shared.error_text import read_error_text
from mcp_errors.proxy import ChildProcess, ProxySettings, StartupError, build_proxy, load_rules
from mcp_errors.proxy._child import RestartBackoff
from mcp_errors.proxy._middleware import returns_resource_text
from mcp_errors.proxy._server import check_upstream
from proxying import PROXY, STARTUP_SECONDS, UPSTREAM, command_params, front, http_upstream, proxied, served, wire
from servers.checks import assert_nothing_leaks, check_error, check_success, memory_kept_per_batch
from servers.proxy_upstream import LEAKED_PATH, LEAKED_SECRET


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one proxy (`client`)."""
    return "asyncio"


@pytest.fixture(scope="module", params=["legacy", "auto"])
async def client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    """A client of one proxy per connection mode, shared by the tests that only read.

    Its circuit breaker is off: these tests send one tool failure after another on purpose,
    which an open circuit would answer itself (the breaker's own tests are
    tests/proxy/test_breaker.py).
    """
    async with proxied(request.param, ProxySettings(breaker_failures=0)) as connected:
        yield connected


@pytest.fixture(scope="module", params=["legacy", "auto"])
async def stdio_client(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    """`mcp-errors proxy` itself over stdio, as a host runs it, per connection mode.

    Shared by the tests of progress, cancellation and a killed child, in that order: the
    last one kills the upstream, and the proxy starts another.
    """
    async with Client(command_params("--", sys.executable, UPSTREAM), mode=request.param) as client:
        yield client


async def schemas(client: Client) -> dict[str, dict[str, Any] | None]:
    return {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}


# --- what is not a tool failure passes unchanged ------------------------------------


@pytest.mark.anyio
async def test_results_resources_prompts_and_foreign_meta_pass_through_unchanged(client: Client) -> None:
    echoed = await client.call_tool("echo", {"text": "hi"})
    meta = await client.call_tool("with_meta", {}, meta={"trace": "t-1", "mcp-errors/idempotencyKey": "k-1"})
    resource = await client.read_resource("note://greeting")
    prompt = await client.get_prompt("summarize", {"topic": "rivers"})
    assert (echoed.is_error, echoed.structured_content, echoed.content[0].text) == (False, {"result": "hi"}, "hi")  # type: ignore[union-attr]
    assert meta.meta is not None
    assert meta.meta["echo"].items() >= {"trace": "t-1", "mcp-errors/idempotencyKey": "k-1"}.items()
    assert resource.contents[0].text == "hello from upstream"  # type: ignore[union-attr]
    assert prompt.messages[0].content.text == "Summarize rivers."  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_progress_notifications_reach_the_caller(stdio_client: Client) -> None:
    seen: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)

    # Over stdio, as a host runs it: the SDK's in-memory modern path does not carry progress.
    with anyio.fail_after(30):
        result = await stdio_client.call_tool("count_up", {"steps": 3}, progress_callback=on_progress)
    assert not result.is_error
    assert seen == [1, 2, 3]


@pytest.mark.anyio
async def test_a_success_with_its_data_only_in_structured_content_keeps_it_and_gains_its_text(client: Client) -> None:
    result = await client.call_tool("structured_only", {})
    assert not result.is_error
    assert result.structured_content == {"items": ["a", "b", "c"]}
    assert read_result(result).kind == "success"
    assert [json.loads(block.text) for block in result.content] == [{"items": ["a", "b", "c"]}]  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_success_with_no_content_becomes_a_valid_empty_result(client: Client) -> None:
    listed = await schemas(client)
    found_nothing = await client.call_tool("search", {"query": "q"})
    bare = await client.call_tool("nothing", {})
    for result, name in ((found_nothing, "search"), (bare, "nothing")):
        outcome = read_result(result)
        assert outcome.kind == "empty"
        assert result.content
        assert "returned nothing" in result.content[0].text  # type: ignore[union-attr]
        check_success(wire(result), listed[name])


# --- failures become the contract ---------------------------------------------------

# (tool, arguments, category, code, inferred, words of the upstream that must survive)
RETURNED_FAILURES: list[tuple[str, dict[str, Any], str, str, bool, str | None]] = [
    (
        "fail",
        {"message": "rate limit exceeded, retry after 30 seconds"},
        "transient",
        "UPSTREAM_RATE_LIMITED",
        True,
        "rate limit exceeded",
    ),
    ("fail", {"message": "upstream timed out after 5s"}, "transient", "UPSTREAM_TIMEOUT", True, "timed out"),
    (
        "fail",
        {"message": "connect ECONNREFUSED 10.0.0.7:5432"},
        "transient",
        "UPSTREAM_UNAVAILABLE",
        True,
        "ECONNREFUSED",
    ),
    (
        "fail",
        {"message": f"EACCES: permission denied, open '{LEAKED_PATH}'"},
        "permission",
        "ACCESS_DENIED",
        True,
        "EACCES",
    ),
    (
        "fail",
        {"message": f"ENOENT: no such file or directory, open '{LEAKED_PATH}'"},
        "validation",  # a path the call named: fix it (docs/failure-words.md)
        "NOT_FOUND",
        True,
        "ENOENT",
    ),
    ("fail", {"message": "HTTP 503 from the billing API"}, "transient", "UPSTREAM_UNAVAILABLE", True, "billing API"),
    ("fail", {"message": "Invalid timezone: 'Mars/Olympus'"}, "validation", "INVALID_ARGUMENTS", True, "Mars/Olympus"),
    (
        "fail",
        {"message": f"the ledger broke, key {LEAKED_SECRET}"},
        "business",
        "TOOL_ERROR",
        False,
        "the ledger broke",
    ),
    (
        "fail_structured",
        {"structured": {"status": 429, "retryAfter": 7}},
        "transient",
        "UPSTREAM_RATE_LIMITED",
        False,
        None,
    ),
    (
        "fail_structured",
        {"structured": {"error": {"code": "PERMISSION_DENIED", "message": "no"}}},
        "permission",
        "PERMISSION_DENIED",
        False,
        None,
    ),
    (
        "fail_structured",
        {"structured": {"category": "validation", "code": "bad-date"}},
        "validation",
        "BAD_DATE",
        False,
        None,
    ),
    ("fail_structured", {"structured": {"errorCategory": "transient"}}, "transient", None, False, None),
    (
        "fail_meta",
        {"failure": {"class": "governance", "code": "policy_blocked", "agentGuidance": "Ask a manager."}},
        "business",
        "POLICY_BLOCKED",
        False,
        "Ask a manager.",
    ),
    (
        "fail_meta",
        {"failure": {"class": "reliability", "retryable": True, "retryNotBefore": 2}},
        "transient",
        None,
        False,
        None,
    ),
]


@pytest.mark.anyio
async def test_returned_failures_are_classified_in_precedence_with_the_upstreams_words_kept(client: Client) -> None:
    listed = await schemas(client)
    results = [(case, await client.call_tool(case[0], case[1])) for case in RETURNED_FAILURES]
    for (tool, arguments, category, code, inferred, words), result in results:
        envelope = check_error(wire(result), listed[tool])
        where = f"{tool}({arguments})"
        assert (envelope["errorCategory"], envelope.get("code")) == (category, code), where
        assert envelope.get("categoryInferred", False) is inferred, where
        if words is not None:
            assert words in envelope["description"], where
        assert_nothing_leaks(wire(result), LEAKED_SECRET, LEAKED_PATH, "Hunter2Hunter2")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("message", "seconds"),
    [
        ("Too many requests. Try again in 2 minutes.", 120),
        ("API rate limit exceeded. Try again in 1 hour.", 3600),
        ("Rate limited: retry after 2 days.", 86_400),  # waits are capped at a day
        ("rate limit exceeded, retry after 500ms", 0.5),
    ],
)
async def test_the_wait_a_rate_limit_asks_for_becomes_retry_after_seconds(
    client: Client, message: str, seconds: float
) -> None:
    said = await client.call_tool("fail", {"message": message})
    assert said.structured_content is not None
    assert said.structured_content["retryAfterSeconds"] == seconds


@pytest.mark.anyio
async def test_an_upstream_pydantic_report_keeps_its_words_without_echoing_the_callers_value(client: Client) -> None:
    result = await client.call_tool("echo", {"text": 12345})
    envelope = check_error(wire(result), None)
    assert (envelope["errorCategory"], envelope["fieldErrors"][0]["field"]) == ("validation", "text")
    assert "valid string" in envelope["description"]  # pydantic's own words survive
    for said in (envelope["description"], result.content[0].text):  # type: ignore[union-attr]
        assert "input_value=" not in said
        assert "[type=" not in said


@pytest.mark.anyio
async def test_a_declared_retry_after_becomes_retry_after_seconds(client: Client) -> None:
    declared = await client.call_tool("fail_structured", {"structured": {"status": 429, "retryAfter": 7}})
    assert declared.structured_content is not None
    assert declared.structured_content["retryAfterSeconds"] == 7


@pytest.mark.anyio
async def test_a_result_already_in_the_contract_passes_through_unchanged(client: Client) -> None:
    envelope = {
        "errorCategory": "business",
        "isRetryable": False,
        "description": "Refunds above 500 need a manager.",
        "code": "REFUND_LIMIT_EXCEEDED",
        "errorId": "abc123abc123",
    }
    result = await client.call_tool("fail_structured", {"structured": envelope, "text": "as sent"})
    assert result.is_error
    assert result.structured_content == envelope
    assert result.content[0].text == "as sent"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_an_upstreams_own_envelope_keeps_its_shape_but_not_its_secrets(mode: str) -> None:
    said = f"Login refused: password={LEAKED_SECRET} in {LEAKED_PATH}; ask an admin."
    envelope = {
        "errorCategory": "permission",
        "isRetryable": False,
        "description": said,
        "code": "LOGIN_REFUSED",
        "fieldErrors": [{"field": "password", "problem": f"was {LEAKED_SECRET}", "received": "Hunter2Hunter2"}],
        "errorId": "abc123abc123",
    }
    # Over stdio, as a host runs it: `mcp-errors proxy -- <upstream>`.
    async with Client(command_params("--", sys.executable, UPSTREAM), mode=mode) as client:
        with anyio.fail_after(60):
            result = await client.call_tool("fail_structured", {"structured": envelope, "text": f"[permission] {said}"})
    assert_nothing_leaks(wire(result), LEAKED_SECRET, LEAKED_PATH, "Hunter2Hunter2")
    outcome = read_result(result)
    assert (outcome.category, outcome.code, outcome.error_id) == (
        ErrorCategory.PERMISSION,
        "LOGIN_REFUSED",
        "abc123abc123",
    )
    assert "ask an admin" in outcome.description


@pytest.mark.anyio
async def test_json_rpc_errors_become_results_and_invalid_params_name_the_argument(client: Client) -> None:
    listed = await schemas(client)
    invalid = await client.call_tool("fail_jsonrpc", {"code": -32602, "message": "bad", "data": {"field": "day"}})
    other = await client.call_tool("fail_jsonrpc", {"code": -32099, "message": "rate limit exceeded for this minute"})
    missing = await client.call_tool("echo", {})
    envelope = check_error(wire(invalid), listed["fail_jsonrpc"])
    assert (envelope["errorCategory"], envelope["executionState"]) == ("validation", "not_executed")
    assert [error["field"] for error in envelope["fieldErrors"]] == ["day"]
    assert check_error(wire(other), None)["errorCategory"] == "transient"  # words: "rate limit exceeded"
    argument = check_error(wire(missing), listed["echo"])
    assert (argument["errorCategory"], argument["code"]) == ("validation", "INVALID_ARGUMENTS")
    assert [error["field"] for error in argument["fieldErrors"]] == ["text"]


@pytest.mark.anyio
async def test_an_unknown_tool_is_validation_listing_the_real_names(client: Client) -> None:
    await client.list_tools()
    result = await client.call_tool("ecko", {"text": "hi"})
    envelope = check_error(wire(result), None)
    assert (envelope["errorCategory"], envelope["code"]) == ("validation", "UNKNOWN_TOOL")
    assert "echo" in envelope["description"]


@pytest.mark.anyio
async def test_output_schemas_admit_the_envelope_so_error_results_validate(client: Client) -> None:
    listed = await schemas(client)
    ok = await client.call_tool("forecast", {"city": "Oslo"})
    failed = await client.call_tool("forecast", {"city": "Atlantis"})
    schema = listed["forecast"]
    assert schema is not None
    assert (schema["type"], len(schema["anyOf"])) == ("object", 2)
    assert check_success(wire(ok), schema) == {"city": "Oslo", "celsius": 21.5}
    check_error(wire(failed), schema)


@pytest.mark.anyio
async def test_protocol_signals_stay_json_rpc_errors(client: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await client.call_tool("fail_jsonrpc", {"code": MISSING_REQUIRED_CLIENT_CAPABILITY, "message": "needs roots"})
    assert raised.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY


@pytest.mark.anyio
async def test_a_url_elicitation_reaches_a_legacy_front_as_32042_and_a_2026_front_as_an_input_required_result(
    mode: str,
) -> None:
    opened: list[str] = []

    async def open_url(context: Any, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams)
        opened.append(params.url)
        return ElicitResult(action="accept")

    child = ChildProcess(sys.executable, [UPSTREAM])
    async with (
        served(child, ProxySettings(breaker_failures=0)) as server,
        Client(server._mcp_server, mode=mode, elicitation_callback=open_url) as client,  # type: ignore[arg-type]
    ):
        if mode == "legacy":  # 2025-11-25 defines -32042: it reaches the client as it came
            with pytest.raises(MCPError) as raised:
                await client.call_tool("sign_in_first", {"key": "k1"})
            assert raised.value.code == URL_ELICITATION_REQUIRED
            return
        # 2026-07-28 retired -32042: the client gets the elicitation as that revision asks
        # for it, opens the URL, calls again, and the upstream runs the call.
        asked = await client.session.call_tool("sign_in_first", {"key": "k1"}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        assert asked.input_requests is not None
        (ask,) = asked.input_requests.values()
        assert isinstance(ask, ElicitRequest)
        assert isinstance(ask.params, ElicitRequestURLParams)
        assert ask.params.url == "https://auth.example.com/connect?state=k1"
        result = await client.call_tool("sign_in_first", {"key": "k2"})
    assert opened == ["https://auth.example.com/connect?state=k2"]
    assert read_result(result).ok
    assert read_result(result).message == "signed in, ran after 2 attempts"


@pytest.mark.anyio
async def test_a_missing_resource_reaches_each_front_with_the_code_its_revision_defines(client: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await client.read_resource("note://retired/minutes")
    modern = client.protocol_version in MODERN_PROTOCOL_VERSIONS
    assert raised.value.code == (INVALID_PARAMS if modern else -32002)  # 2026-07-28 replaced -32002 by -32602
    assert raised.value.error.data == {"uri": "note://retired/minutes"}


@pytest.mark.anyio
async def test_a_fastmcp_client_of_2026_gets_no_retired_code() -> None:
    child = ChildProcess(sys.executable, [UPSTREAM])
    async with served(child, ProxySettings(breaker_failures=0)) as server, fastmcp.Client(server) as client:
        with pytest.raises(Exception) as raised:  # noqa: PT011  (fastmcp wraps the JSON-RPC error in its own)
            await client.read_resource("note://retired/minutes")
        rpc = next(cause for cause in causes(raised.value) if isinstance(cause, MCPError))
        assert rpc.code == INVALID_PARAMS
        asked = await client.session.call_tool("sign_in_first", {"key": "k1"}, allow_input_required=True)
    assert isinstance(asked, InputRequiredResult)


@pytest.mark.anyio
async def test_an_upstream_resource_not_found_is_not_a_misconfigured_server(client: Client) -> None:
    result = await client.call_tool("open_note", {"note": "minutes"})
    envelope = check_error(wire(result), None)
    assert (envelope["errorCategory"], envelope["code"]) == ("validation", "NOT_FOUND")


@pytest.mark.anyio
async def test_a_caller_cancelling_a_call_cancels_it_upstream(stdio_client: Client, tmp_path: Path) -> None:
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    # Over stdio, as a host runs it: the SDK's in-memory modern path does not carry progress.
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(
                functools.partial(
                    stdio_client.call_tool, "hang", {"pid_file": str(tmp_path / "pid")}, progress_callback=on_progress
                )
            )
            await started.wait()
            group.cancel_scope.cancel()
        cancelled = await stdio_client.call_tool("was_cancelled", {})
    assert cancelled.structured_content == {"result": True}


@pytest.mark.anyio
async def test_every_page_of_an_upstreams_tools_is_listed(mode: str) -> None:
    child = ChildProcess(sys.executable, [UPSTREAM, "paged"])
    server = build_proxy(child)
    try:
        await check_upstream(server, child, seconds=STARTUP_SECONDS)
        async with Client(server._mcp_server, mode=mode) as client:  # type: ignore[arg-type]
            names = [tool.name for tool in (await client.list_tools()).tools]
            last = await client.call_tool("tool_9", {})
    finally:
        await child.close()
    assert sorted(names) == sorted(f"tool_{index}" for index in range(10))
    assert last.content[0].text == "tool_9 ran"  # type: ignore[union-attr]


# --- the child process ----------------------------------------------------------------


@pytest.mark.anyio
async def test_the_childs_stderr_reaches_ours() -> None:
    stderr = io.StringIO()
    async with proxied("legacy", stderr=stderr) as client:
        await client.call_tool("log_to_stderr", {"text": "upstream says hello"})
        with anyio.fail_after(10):
            while "upstream says hello" not in stderr.getvalue():
                await anyio.lowlevel.checkpoint()
    assert "upstream says hello" in stderr.getvalue()


@pytest.mark.anyio
async def test_a_child_killed_mid_call_answers_transient_outcome_unknown_and_the_next_call_works(
    stdio_client: Client, tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    started = anyio.Event()
    killed: list[CallToolResult] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    # Over stdio, as a host runs it: the SDK's in-memory modern path does not carry progress.
    async def hang() -> None:
        killed.append(await stdio_client.call_tool("hang", {"pid_file": str(pid_file)}, progress_callback=on_progress))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(hang)
            await started.wait()
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        after = await stdio_client.call_tool("echo", {"text": "still here"})
    outcome = read_result(killed[0])
    assert (outcome.category, outcome.is_retryable, outcome.execution_state, outcome.code) == (
        ErrorCategory.TRANSIENT,
        True,
        ExecutionState.OUTCOME_UNKNOWN,
        "UPSTREAM_EXITED",
    )
    assert (after.is_error, after.structured_content) == (False, {"result": "still here"})


@pytest.mark.anyio
async def test_a_child_that_keeps_exiting_waits_out_a_backoff_and_keeps_its_tools(mode: str) -> None:
    backoff = RestartBackoff(first_wait=60, max_wait=120, healthy_after=3600)
    async with proxied(mode, backoff=backoff) as client:
        first = await client.call_tool("crash", {})
        second = await client.call_tool("crash", {})  # started again at once: one crash is an accident
        waiting = await client.call_tool("echo", {"text": "too soon"})
        tools = await client.list_tools()
    assert read_result(first).code == read_result(second).code == "UPSTREAM_EXITED"
    outcome = read_result(waiting)
    assert (outcome.category, outcome.execution_state, outcome.code) == (
        ErrorCategory.TRANSIENT,
        ExecutionState.NOT_EXECUTED,
        "UPSTREAM_UNAVAILABLE",
    )
    assert outcome.retry_after_seconds is not None
    assert 50 < outcome.retry_after_seconds <= 60
    assert "echo" in {tool.name for tool in tools.tools}


# --- recovery at the proxy, opt-in -------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.usefixtures("zero_wait")
async def test_retry_resends_transient_failures_of_read_only_tools(mode: str) -> None:
    async with proxied(mode, ProxySettings(retry=3)) as client:
        result = await client.call_tool("flaky_read", {"key": "r", "failures": 2})
        ran = await client.call_tool("attempts", {"key": "r"})
    assert (result.is_error, result.structured_content) == (False, {"result": "read after 3 attempts"})
    assert ran.structured_content == {"result": 3}


@pytest.mark.anyio
@pytest.mark.usefixtures("zero_wait")
async def test_retry_never_resends_a_write_whose_outcome_is_unknown(mode: str) -> None:
    async with proxied(mode, ProxySettings(retry=3)) as client:
        result = await client.call_tool("flaky_write", {"key": "w"})
        ran = await client.call_tool("attempts", {"key": "w"})
    outcome = read_result(result)
    assert (outcome.category, outcome.execution_state) == (ErrorCategory.TRANSIENT, ExecutionState.OUTCOME_UNKNOWN)
    assert ran.structured_content == {"result": 1}


@pytest.mark.anyio
@pytest.mark.usefixtures("zero_wait")
async def test_retry_resends_a_write_the_upstream_says_did_not_run(mode: str, tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rule]]\nmatch = { text = "database is locked, nothing was written" }\n'
        'category = "transient"\ncode = "LEDGER_LOCKED"\nexecution_state = "not_executed"\n'
    )
    async with proxied(mode, ProxySettings(retry=2, rules=load_rules(rules))) as client:
        result = await client.call_tool("busy_write", {"key": "b", "failures": 1})
        ran = await client.call_tool("attempts", {"key": "b"})
    assert (result.is_error, result.structured_content) == (False, {"result": "written after 2 attempts"})
    assert ran.structured_content == {"result": 2}


@pytest.mark.anyio
async def test_idempotency_keys_replay_the_first_answer_of_a_write(mode: str) -> None:
    key = {"mcp-errors/idempotencyKey": "op-1"}
    async with proxied(mode, ProxySettings(idempotency_keys=True)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        first = await client.call_tool("count_write", {"key": "c"}, meta=key)
        again = await client.call_tool("count_write", {"key": "c"}, meta=key)
        reused = await client.call_tool("count_write", {"key": "other"}, meta=key)
        ran = await client.call_tool("attempts", {"key": "c"})
    assert (tools["count_write"].meta or {}).get("mcp-errors/honoursIdempotencyKey") is True
    assert "mcp-errors/honoursIdempotencyKey" not in (tools["echo"].meta or {})
    assert first.structured_content == again.structured_content == {"result": "ran 1 time(s)"}
    assert (again.meta or {}).get("mcp-errors/replayed") is True
    assert read_result(reused).code == "IDEMPOTENCY_KEY_REUSED"
    assert ran.structured_content == {"result": 1}


@pytest.mark.anyio
async def test_keyed_calls_to_invented_tool_names_do_not_grow_the_proxy() -> None:
    async with proxied("auto", ProxySettings(idempotency_keys=True)) as client:

        async def invent(batch: int) -> None:
            for number in range(100):
                name = "x" * 10_000 + f"{batch}-{number}"  # the agent sees only its head
                result = await client.call_tool(name, {}, meta={"mcp-errors/idempotencyKey": f"op-{batch}-{number}"})
                assert read_result(result).code == "UNKNOWN_TOOL"

        kept = await memory_kept_per_batch(invent)
    assert kept < 100_000  # an entry per name would keep 100 x 10 KB a batch, ten times as much


@pytest.mark.anyio
async def test_no_tool_failure_meta_is_written_unless_asked(client: Client) -> None:
    result = await client.call_tool("fail", {"message": "upstream timed out"})
    assert "io.modelcontextprotocol/toolFailure" not in (result.meta or {})


@pytest.mark.anyio
async def test_tool_failure_meta_is_written_when_asked_and_an_upstreams_own_is_kept(mode: str) -> None:
    own = {"class": "reliability", "code": "retryable_transient_error", "retryable": True, "correlationId": "c-9"}
    async with proxied(mode, ProxySettings(tool_failure_meta=True)) as client:
        written = await client.call_tool("fail", {"message": "upstream timed out"})
        kept = await client.call_tool("fail_meta", {"failure": own})
    failure = (written.meta or {})["io.modelcontextprotocol/toolFailure"]
    envelope = written.structured_content or {}
    assert (failure["class"], failure["code"]) == ("reliability", "retryable_transient_error")
    assert failure["retryable"] is True
    assert (failure["correlationId"], failure["agentGuidance"]) == (envelope["errorId"], envelope["description"])
    assert (kept.meta or {})["io.modelcontextprotocol/toolFailure"] == own
    assert (kept.meta or {})["trace"] == "kept"


@pytest.mark.anyio
@pytest.mark.parametrize("written", [False, True], ids=["as it came", "with --tool-failure-meta"])
async def test_an_upstreams_own_tool_failure_keeps_its_terms_but_not_the_secrets_in_its_guidance(written: bool) -> None:
    guidance = f"Rotate the key {LEAKED_SECRET} in {LEAKED_PATH}, then call again."
    own = {"class": "governance", "code": "auth_required", "correlationId": "c-7", "agentGuidance": guidance}
    async with proxied("legacy", ProxySettings(tool_failure_meta=written)) as client:
        result = await client.call_tool("fail_meta", {"failure": own})
    kept = (result.meta or {})["io.modelcontextprotocol/toolFailure"]
    assert {key: kept[key] for key in ("class", "code", "correlationId")} == {
        "class": "governance",
        "code": "auth_required",
        "correlationId": "c-7",
    }
    assert kept["agentGuidance"].startswith("Rotate the key")
    assert_nothing_leaks(wire(result), LEAKED_SECRET, LEAKED_PATH)
    assert check_error(wire(result), None)["errorCategory"] == "permission"


@pytest.mark.anyio
async def test_the_users_rules_come_after_what_the_upstream_declares_and_before_the_built_in_rules(
    mode: str, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rule]]\nname = "ledger"\ntool = "fail"\nmatch = { text = "ledger (?P<what>\\\\w+) timed out" }\n'
        'category = "business"\ncode = "LEDGER_DOWN"\ndescription = "The {what} ledger is down: use the other one."\n'
        '\n[[rule]]\nmatch = { field = "status", equals = 418 }\ncategory = "permission"\ncode = "TEAPOT"\n'
    )
    async with proxied(mode, ProxySettings(rules=load_rules(rules))) as client:
        matched = await client.call_tool("fail", {"message": "ledger eu timed out"})
        built_in = await client.call_tool("fail", {"message": "billing timed out"})
        by_field = await client.call_tool("fail_structured", {"structured": {"status": 418}})
        declared = await client.call_tool("fail_structured", {"structured": {"status": 503}})
    envelope = check_error(wire(matched), None)
    assert (envelope["errorCategory"], envelope["code"]) == ("business", "LEDGER_DOWN")
    assert envelope["description"].startswith("The eu ledger is down: use the other one.")
    assert "ledger eu timed out" in envelope["description"]  # the upstream's words are kept too
    assert "categoryInferred" not in envelope
    assert check_error(wire(built_in), None)["code"] == "UPSTREAM_TIMEOUT"
    assert check_error(wire(by_field), None)["code"] == "TEAPOT"
    assert check_error(wire(declared), None)["errorCategory"] == "transient"  # declared beats the rules


# --- idempotency keys in a shared store ------------------------------------------------------

SHARED_STORES = ["sqlite", "postgres", "redis"]


def shared_store(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path}/keys.sqlite3"
    # Keys are random per test (and namespaced per upstream), so tests share the server's table.
    return str(request.getfixturevalue("postgres_url" if backend == "postgres" else "redis_url"))


@pytest.mark.anyio
@pytest.mark.parametrize("backend", SHARED_STORES)
async def test_three_proxy_replicas_sharing_a_store_run_a_keyed_write_once(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    store = shared_store(backend, request, tmp_path)
    key = {"mcp-errors/idempotencyKey": f"charge-{uuid.uuid4()}"}
    answers: list[CallToolResult] = []
    async with http_upstream() as (url, _), contextlib.AsyncExitStack() as stack:
        if backend == "sqlite":  # three `mcp-errors proxy --store` processes on one host and file
            replicas = [
                await stack.enter_async_context(Client(command_params("--idempotency-keys", "--store", store, url)))
                for _ in range(3)
            ]
        else:  # a database server sees three connections, whichever processes they come from
            settings = ProxySettings(idempotency_keys=True, store=store)
            servers = [await stack.enter_async_context(served(url, settings)) for _ in range(3)]
            replicas = [await stack.enter_async_context(front(server)) for server in servers]

        async def send(client: Client) -> None:
            answers.append(await client.call_tool("count_write", {"key": key["mcp-errors/idempotencyKey"]}, meta=key))

        with anyio.fail_after(STARTUP_SECONDS):
            async with anyio.create_task_group() as group:  # the same write, to every replica at once
                for client in replicas:
                    group.start_soon(send, client)
            ran = await replicas[0].call_tool("attempts", {"key": key["mcp-errors/idempotencyKey"]})
    assert ran.structured_content == {"result": 1}
    assert [answer.structured_content for answer in answers] == [{"result": "ran 1 time(s)"}] * 3
    assert sum(bool((answer.meta or {}).get("mcp-errors/replayed")) for answer in answers) == 2


@pytest.mark.anyio
async def test_a_restarted_proxy_replays_a_keyed_write_from_its_store(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/keys.sqlite3"
    key = {"mcp-errors/idempotencyKey": "refund-42"}
    async with http_upstream() as (url, _):
        async with Client(command_params("--idempotency-keys", "--store", store, url)) as before:
            first = await before.call_tool("count_write", {"key": "refund-42"}, meta=key)
        async with Client(command_params("--idempotency-keys", "--store", store, url)) as after:
            again = await after.call_tool("count_write", {"key": "refund-42"}, meta=key)
            ran = await after.call_tool("attempts", {"key": "refund-42"})
    assert again.structured_content == first.structured_content == {"result": "ran 1 time(s)"}
    assert (again.meta or {}).get("mcp-errors/replayed") is True
    assert ran.structured_content == {"result": 1}


@pytest.mark.anyio
async def test_proxies_of_different_upstreams_keep_their_keys_apart_in_one_store(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path}/keys.sqlite3"
    key = {"mcp-errors/idempotencyKey": "ticket-1"}
    answers = {}
    for name in ("zendesk", "jira", "jira"):
        settings = ProxySettings(idempotency_keys=True, store=store)
        async with proxied("legacy", settings, env={**os.environ, "PROXY_UPSTREAM_NAME": name}) as client:
            answers.setdefault(name, []).append(await client.call_tool("count_write", {"key": "t"}, meta=key))
    # Each upstream ran its own write once; the second jira proxy replayed jira's answer, never zendesk's.
    assert [(answer.meta or {}).get("mcp-errors/replayed") for answer in answers["zendesk"]] == [None]
    assert [(answer.meta or {}).get("mcp-errors/replayed") for answer in answers["jira"]] == [None, True]


def test_a_store_without_idempotency_keys_or_with_an_unknown_scheme_is_refused() -> None:
    alone = run_proxy("--store", "sqlite:///keys.sqlite3", "--", sys.executable, UPSTREAM)
    unknown = run_proxy("--idempotency-keys", "--store", "mongodb://db/keys", "--", sys.executable, UPSTREAM)
    assert (alone.returncode, unknown.returncode) == (2, 2)
    assert "--idempotency-keys" in alone.stderr
    assert "mongodb://" in unknown.stderr


# --- words: read-only tools, disguised failures, the log, resends --------------------------


@pytest.mark.anyio
async def test_a_read_only_tools_transient_failure_says_nothing_ran_and_gives_no_write_advice(client: Client) -> None:
    # `fail` is annotated readOnlyHint: whatever the words, nothing was applied.
    result = await client.call_tool("fail", {"message": "upstream timed out after 5s"})
    outcome = read_result(result)
    assert (outcome.category, outcome.execution_state, outcome.code) == (
        ErrorCategory.TRANSIENT,
        ExecutionState.NOT_EXECUTED,
        "UPSTREAM_TIMEOUT",
    )
    assert "changes data" not in outcome.description


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_disguised_failures_are_rewritten_only_when_asked_and_real_successes_stay(mode: str) -> None:
    disguised = ["Database error: no such table: users", '{"error": "connect ECONNREFUSED 127.0.0.1:8080"}']
    successes = ["No errors found", "Standard error: 0.051", "2024-05-01 ERROR worker 3 restarted (log line)"]
    async with proxied(mode) as plain:
        untouched = [await plain.call_tool("echo", {"text": text}) for text in disguised]
    async with proxied(mode, ProxySettings(disguised_failures=True)) as judging:
        caught = [await judging.call_tool("echo", {"text": text}) for text in disguised]
        kept = [await judging.call_tool("echo", {"text": text}) for text in successes]
    assert not any(result.is_error for result in untouched)
    envelopes = [check_error(wire(result), None) for result in caught]
    assert [(e["errorCategory"], e["code"], e["categoryInferred"]) for e in envelopes] == [
        ("validation", "INVALID_QUERY", True),
        ("transient", "UPSTREAM_UNAVAILABLE", True),
    ]
    assert "no such table" in envelopes[0]["description"]
    assert [result.is_error for result in kept] == [False, False, False]


BUILD_LOG = "Error: connection refused (postgres:5432)\nretrying in 5 s\nBuild failed: 3 errors\n"


@pytest.mark.anyio
async def test_disguised_failures_never_judge_a_file_a_read_only_tool_returns(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text(BUILD_LOG)
    settings = ProxySettings(disguised_failures=True, breaker_failures=2)
    async with proxied("legacy", settings) as client:
        with anyio.fail_after(STARTUP_SECONDS):
            reads = [await client.call_tool("read_note", {"path": str(log)}) for _ in range(4)]
            said = await client.call_tool("echo", {"text": "Error: connection refused"})  # no resource: judged
    assert [result.is_error for result in reads] == [False] * 4
    assert {result.content[0].text for result in reads} == {BUILD_LOG}  # type: ignore[union-attr]  # text blocks
    assert read_result(said).category is ErrorCategory.TRANSIENT


@pytest.mark.parametrize(
    ("read_only", "arguments", "content", "expected"),
    [
        (True, {"path": "/srv/build.log"}, [], True),
        (True, {"source_url": "https://example.com"}, [], True),
        (True, {"city": "Oslo"}, [], False),
        (True, {"path": ""}, [], False),
        (False, {"path": "/srv/build.log"}, [], False),
        (True, {}, [EmbeddedResource(type="resource", resource=TextResourceContents(uri="file:///a", text="x"))], True),
    ],
    ids=["path", "suffix", "not-a-resource", "empty-path", "writes", "embedded"],
)
def test_a_resource_read_is_a_read_only_tool_naming_or_returning_a_resource(
    read_only: bool, arguments: dict[str, Any], content: list[Any], expected: bool
) -> None:
    assert returns_resource_text(read_only, arguments, content) is expected


@pytest.mark.anyio
async def test_a_success_rule_turns_a_failure_answered_as_a_success_into_the_contract(tmp_path: Path) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rule]]\nname = "locked"\nmatch = { text = "^Database error: database is locked", success = true }\n'
        'category = "transient"\ncode = "DB_LOCKED"\nexecution_state = "not_executed"\n'
    )
    async with proxied("legacy", ProxySettings(rules=load_rules(rules))) as client:
        matched = await client.call_tool("echo", {"text": "Database error: database is locked"})
        other = await client.call_tool("echo", {"text": "Database error: no such table: users"})
    envelope = check_error(wire(matched), None)
    assert (envelope["errorCategory"], envelope["code"], envelope["executionState"]) == (
        "transient",
        "DB_LOCKED",
        "not_executed",
    )
    assert not other.is_error  # no rule for it, and --disguised-failures is off


@pytest.mark.anyio
async def test_each_rewritten_failure_is_logged_with_the_upstreams_words_under_its_error_id(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcp_errors.proxy.failures")
    result = await client.call_tool("fail", {"message": f"the ledger broke, key {LEAKED_SECRET}\x1b[2J"})
    envelope = check_error(wire(result), None)
    [line] = [record for record in caplog.records if record.name == "mcp_errors.proxy.failures"]
    assert line.levelno == logging.WARNING  # shown by default: a host keeps the proxy's stderr
    assert line.error_id == envelope["errorId"]  # type: ignore[attr-defined]
    message = line.getMessage()
    assert LEAKED_SECRET in message  # the server's own log has the words the agent must not see
    assert "\x1b" not in message  # terminal escapes shown escaped, never sent to the terminal
    assert_nothing_leaks(wire(result), LEAKED_SECRET)


@pytest.mark.anyio
@pytest.mark.usefixtures("zero_wait")
async def test_retry_says_in_the_final_answer_how_often_the_proxy_resent(mode: str) -> None:
    async with proxied(mode, ProxySettings(retry=2)) as client:
        result = await client.call_tool("flaky_read", {"key": "gave-up", "failures": 9})
        ran = await client.call_tool("attempts", {"key": "gave-up"})
    envelope = check_error(wire(result), None)
    assert (envelope["errorCategory"], envelope["resentByProxy"]) == ("transient", 2)
    assert ran.structured_content == {"result": 3}
    written = read_error_text(result.content[0].text)  # type: ignore[union-attr]
    assert written is not None
    assert written.error_id == envelope["errorId"]


# --- a streamable HTTP upstream --------------------------------------------------------------


@contextlib.asynccontextmanager
async def http_upstream_behind_a_proxy(mode: str) -> AsyncIterator[tuple[anyio.abc.Process, Client]]:
    """The test upstream served over streamable HTTP, a proxy in this process, and a client of it."""
    async with (
        http_upstream() as (url, upstream),
        served(url) as server,
        Client(server._mcp_server, mode=mode) as client,  # type: ignore[arg-type]
    ):
        yield upstream, client


@pytest.mark.anyio
async def test_a_streamable_http_upstream_is_proxied_and_its_loss_is_a_transient_not_executed_failure(
    mode: str,
) -> None:
    async with http_upstream_behind_a_proxy(mode) as (upstream, client):
        ok = await client.call_tool("echo", {"text": "over http"})
        failed = await client.call_tool("fail", {"message": "upstream timed out"})
        upstream.terminate()
        await upstream.wait()
        lost = await client.call_tool("echo", {"text": "anyone there?"})
    assert ok.structured_content == {"result": "over http"}
    assert check_error(wire(failed), None)["code"] == "UPSTREAM_TIMEOUT"
    outcome = read_result(lost)
    assert (outcome.category, outcome.execution_state, outcome.code) == (
        ErrorCategory.TRANSIENT,
        ExecutionState.NOT_EXECUTED,
        "UPSTREAM_UNAVAILABLE",
    )


@pytest.mark.anyio
async def test_an_http_upstream_that_dies_in_the_middle_of_a_write_is_transient_with_an_unknown_outcome(
    mode: str,
) -> None:
    async with http_upstream_behind_a_proxy(mode) as (upstream, client):
        with anyio.fail_after(30):
            died = await client.call_tool("crash", {})
        await upstream.wait()
    outcome = read_result(died)
    assert (outcome.category, outcome.execution_state, outcome.is_retryable) == (
        ErrorCategory.TRANSIENT,
        ExecutionState.OUTCOME_UNKNOWN,
        True,
    )


@pytest.mark.anyio
async def test_an_http_upstream_that_cannot_be_reached_is_a_startup_error() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with pytest.raises(StartupError, match="not reachable"):
        await check_upstream(build_proxy(url), url, seconds=STARTUP_SECONDS)


# --- the command ------------------------------------------------------------------------


def run_proxy(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PROXY, *args], capture_output=True, text=True, timeout=timeout, check=False)


def test_a_child_that_cannot_start_is_a_clear_error_with_its_exit_status_and_stderr() -> None:
    crash = "import sys; print('OPENWEATHER_API_KEY is not set', file=sys.stderr); sys.exit(3)"
    done = run_proxy("--", sys.executable, "-c", crash)
    assert done.returncode == 1
    assert "exited with status 3" in done.stderr
    assert "OPENWEATHER_API_KEY is not set" in done.stderr


def test_a_command_that_does_not_exist_is_a_clear_error() -> None:
    done = run_proxy("--", "no-such-mcp-server-command")
    assert done.returncode == 2
    assert "no-such-mcp-server-command" in done.stderr
    assert "PATH" in done.stderr


def test_a_child_that_never_answers_is_an_error_after_the_startup_timeout() -> None:
    started = time.monotonic()
    # It reads its stdin and never answers; it exits when the proxy closes it.
    done = run_proxy("--startup-timeout", "2", "--", sys.executable, "-c", "import sys; sys.stdin.read()")
    assert done.returncode == 1
    assert "within 2 seconds" in done.stderr
    assert time.monotonic() - started < 60


def test_a_tenant_header_without_the_http_front_or_that_is_no_header_name_is_refused() -> None:
    done = run_proxy("--tenant-header", "X-Tenant", "--", sys.executable, UPSTREAM)
    assert done.returncode == 2
    assert "--http" in done.stderr
    with pytest.raises(ValueError, match="header name"):
        ProxySettings(tenant_header="X Tenant: acme")


def test_a_bad_rules_file_names_the_file_the_rule_and_the_problem(tmp_path: Path) -> None:
    rules = tmp_path / "mine.toml"
    rules.write_text('[[rule]]\nname = "slow"\nmatch = { text = "timeout" }\ncategory = "temporary"\n')
    done = run_proxy("--rules", str(rules), "--", sys.executable, UPSTREAM)
    assert done.returncode == 2
    assert "mine.toml: rule 1 (slow): category" in done.stderr


@pytest.mark.anyio
async def test_the_command_gives_the_child_the_callers_environment_and_working_directory(tmp_path: Path) -> None:
    # The SDK's stdio client would pass the child only HOME, PATH and a few more.
    params = command_params("--", sys.executable, UPSTREAM, env={"WEATHER_TOKEN": "w-123"}, cwd=tmp_path)
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool("environment", {"name": "WEATHER_TOKEN"})
    assert result.structured_content == {"result": f"w-123|{tmp_path}"}


@pytest.mark.anyio
@pytest.mark.parametrize("logged", [True, False], ids=["by default", "--no-failure-log"])
async def test_the_command_logs_each_rewritten_failure_on_stderr_unless_told_not_to(logged: bool) -> None:
    options = [] if logged else ["--no-failure-log"]
    params = command_params(*options, "--", sys.executable, UPSTREAM)
    with tempfile.TemporaryFile("w+") as stderr:
        async with Client(stdio_transport(params, errlog=stderr), mode="legacy") as client:  # type: ignore[arg-type]
            result = await client.call_tool("fail", {"message": f"the ledger broke, key {LEAKED_SECRET}"})
        stderr.seek(0)
        log = stderr.read()
    envelope = check_error(wire(result), None)
    line = f"tool 'fail' failed: business TOOL_ERROR, errorId {envelope['errorId']}; the server said: Error executing"
    assert (line in log) is logged
    assert (f"errorId {envelope['errorId']}" in log) is logged
    if logged:
        assert LEAKED_SECRET in log.split(line, 1)[1]  # the host's log has the words the agent must not see
    assert_nothing_leaks(wire(result), LEAKED_SECRET)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.anyio
async def test_the_http_front_serves_the_proxy_statelessly(mode: str) -> None:
    port = free_port()
    # `--http` takes PORT (on 127.0.0.1) or HOST:PORT: one form per mode.
    address = str(port) if mode == "legacy" else f"127.0.0.1:{port}"
    command = [*PROXY, "--http", address, "--", sys.executable, UPSTREAM]
    async with await anyio.open_process(command, stdout=subprocess.DEVNULL) as process:
        try:
            assert process.stderr is not None
            seen = ""
            with anyio.fail_after(STARTUP_SECONDS):
                async for chunk in TextReceiveStream(process.stderr):
                    seen += chunk
                    if "Uvicorn running on" in seen:  # uvicorn says so once it listens
                        break
            async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode) as client:
                ok = await client.call_tool("echo", {"text": "over http"})
                failed = await client.call_tool("fail", {"message": "upstream timed out"})
        finally:
            process.terminate()
    assert ok.structured_content == {"result": "over http"}
    assert check_error(wire(failed), None)["code"] == "UPSTREAM_TIMEOUT"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "store", ["postgresql://app:hun%zzter2@127.0.0.1:1/keys", "//app:hun%zzter2@db/keys", "app:hun%zzter2@db/keys"]
)
async def test_a_store_url_the_proxy_cannot_use_is_refused_at_start_up_without_its_password(store: str) -> None:
    # A '%' that starts no escape: libpq's message quotes the password, and the pool logged it
    # on every reconnect. A URL without a scheme was echoed whole.
    command = [*PROXY, "--idempotency-keys", "--store", store, "--", sys.executable, UPSTREAM]
    with anyio.fail_after(STARTUP_SECONDS):
        done = await anyio.run_process(command, check=False, stdin=subprocess.DEVNULL)
    said = done.stderr.decode()
    assert done.returncode == 2
    assert "--store" in said
    assert "hun%zzter2" not in said
