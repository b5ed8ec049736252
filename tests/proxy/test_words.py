"""`mcp-errors proxy`: read-only tools, disguised failures, the log, resends.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract; the shared
proxy (`shared_proxy`, `shared_client`) is in `tests/proxy/conftest.py`. The proxies of a
setting are shared by the tests of it, in both modes: one upstream each.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from fastmcp import FastMCP
from mcp import Client
from mcp_types import (
    EmbeddedResource,
    TextResourceContents,
)

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors._shared.error_text import read_error_text
from mcp_errors.proxy import ProxySettings, load_rules
from mcp_errors.proxy._middleware import returns_resource_text
from proxying import STARTUP_SECONDS, proxied, served_upstream, wire
from servers.checks import assert_nothing_leaks, check_error
from servers.proxy_upstream import LEAKED_SECRET

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one proxy (`client`, `tests/proxy/conftest.py`)."""
    return "asyncio"


# --- words: read-only tools, disguised failures, the log, resends --------------------------


@pytest.mark.anyio
async def test_a_read_only_tools_transient_failure_says_nothing_ran_and_gives_no_write_advice(
    shared_client: Client,
) -> None:
    # `fail` is annotated readOnlyHint: whatever the words, nothing was applied.
    result = await shared_client.call_tool("fail", {"message": "upstream timed out after 5s"})
    outcome = read_result(result)
    assert (outcome.category, outcome.execution_state, outcome.code) == (
        ErrorCategory.TRANSIENT,
        ExecutionState.NOT_EXECUTED,
        "UPSTREAM_TIMEOUT",
    )
    assert "changes data" not in outcome.description


@pytest.fixture(scope="module")
async def judging_proxy() -> AsyncIterator[FastMCP[Any]]:
    """A proxy that judges successes (`--disguised-failures`), its breaker opened by 2 failures.

    One upstream for the module's tests of it, in both modes; they only read.
    """
    settings = ProxySettings(disguised_failures=True, breaker_failures=2)
    async with served_upstream(settings) as server:
        yield server


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_disguised_failures_are_rewritten_only_when_asked_and_real_successes_stay(
    mode: str, shared_proxy: FastMCP[Any], judging_proxy: FastMCP[Any]
) -> None:
    disguised = ["Database error: no such table: users", '{"error": "connect ECONNREFUSED 127.0.0.1:8080"}']
    successes = ["No errors found", "Standard error: 0.051", "2024-05-01 ERROR worker 3 restarted (log line)"]
    async with Client(shared_proxy._mcp_server, mode=mode) as plain:  # the default: successes are not judged
        untouched = [await plain.call_tool("echo", {"text": text}) for text in disguised]
    async with Client(judging_proxy._mcp_server, mode=mode) as judging:
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
async def test_disguised_failures_never_judge_a_file_a_read_only_tool_returns(
    tmp_path: Path, judging_proxy: FastMCP[Any]
) -> None:
    log = tmp_path / "build.log"
    log.write_text(BUILD_LOG)
    async with Client(judging_proxy._mcp_server, mode="legacy") as client:
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
    shared_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcp_errors.proxy.failures")
    result = await shared_client.call_tool("fail", {"message": f"the ledger broke, key {LEAKED_SECRET}\x1b[2J"})
    envelope = check_error(wire(result), None)
    [line] = [record for record in caplog.records if record.name == "mcp_errors.proxy.failures"]
    assert line.levelno == logging.WARNING  # shown by default: a host keeps the proxy's stderr
    assert line.error_id == envelope["errorId"]  # type: ignore[attr-defined]
    message = line.getMessage()
    assert LEAKED_SECRET in message  # the server's own log has the words the agent must not see
    assert "\x1b" not in message  # terminal escapes shown escaped, never sent to the terminal
    assert_nothing_leaks(wire(result), LEAKED_SECRET)


@pytest.fixture(scope="module")
async def retrying_proxy() -> AsyncIterator[FastMCP[Any]]:
    """A proxy that resends a transient failure twice (`--retry 2`), for both modes (each its own keys)."""
    async with served_upstream(ProxySettings(retry=2)) as server:
        yield server


@pytest.mark.anyio
@pytest.mark.usefixtures("zero_wait")
async def test_retry_says_in_the_final_answer_how_often_the_proxy_resent(
    mode: str, retrying_proxy: FastMCP[Any]
) -> None:
    key = f"gave-up-{mode}"  # the upstream counts calls per key
    async with Client(retrying_proxy._mcp_server, mode=mode) as client:
        result = await client.call_tool("flaky_read", {"key": key, "failures": 9})
        ran = await client.call_tool("attempts", {"key": key})
    envelope = check_error(wire(result), None)
    assert (envelope["errorCategory"], envelope["resentByProxy"]) == ("transient", 2)
    assert ran.structured_content == {"result": 3}
    written = read_error_text(result.content[0].text)  # type: ignore[union-attr]
    assert written is not None
    assert written.error_id == envelope["errorId"]
