"""`mcp-errors proxy`: recovery at the proxy, opt-in.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract; the shared
proxy (`shared_proxy`, `shared_client`) is in `tests/proxy/conftest.py`. The proxies of a
setting are shared by the tests of it, in both modes: one upstream each.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastmcp import FastMCP
from mcp import Client

from mcp_errors import ErrorCategory, ExecutionState, read_result
from mcp_errors.proxy import ProxySettings, load_rules
from proxying import served_upstream, wire
from servers.checks import assert_nothing_leaks, check_error, memory_kept_per_batch
from servers.proxy_upstream import LEAKED_PATH, LEAKED_SECRET

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one proxy (`client`, `tests/proxy/conftest.py`)."""
    return "asyncio"


# --- recovery at the proxy, opt-in -------------------------------------------------------

# The upstream counts calls per key: on a proxy shared by several tests, each test and mode
# has keys of its own.


@pytest.fixture(scope="module")
async def retrying_proxy(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FastMCP[Any]]:
    """A proxy that resends transient failures up to 3 times, with a rule that says when a write did not run."""
    rules = tmp_path_factory.mktemp("rules") / "rules.toml"
    rules.write_text(
        '[[rule]]\nmatch = { text = "database is locked, nothing was written" }\n'
        'category = "transient"\ncode = "LEDGER_LOCKED"\nexecution_state = "not_executed"\n'
    )
    settings = ProxySettings(retry=3, rules=load_rules(rules))
    async with served_upstream(settings) as server:
        yield server


@pytest.mark.anyio
@pytest.mark.usefixtures("zero_wait")
async def test_retry_resends_transient_failures_of_read_only_tools(mode: str, retrying_proxy: FastMCP[Any]) -> None:
    key = f"r-{mode}"
    async with Client(retrying_proxy._mcp_server, mode=mode) as client:
        result = await client.call_tool("flaky_read", {"key": key, "failures": 2})
        ran = await client.call_tool("attempts", {"key": key})
    assert (result.is_error, result.structured_content) == (False, {"result": "read after 3 attempts"})
    assert ran.structured_content == {"result": 3}


@pytest.mark.anyio
@pytest.mark.usefixtures("zero_wait")
async def test_retry_never_resends_a_write_whose_outcome_is_unknown(mode: str, retrying_proxy: FastMCP[Any]) -> None:
    key = f"w-{mode}"
    async with Client(retrying_proxy._mcp_server, mode=mode) as client:
        result = await client.call_tool("flaky_write", {"key": key})
        ran = await client.call_tool("attempts", {"key": key})
    outcome = read_result(result)
    assert (outcome.category, outcome.execution_state) == (ErrorCategory.TRANSIENT, ExecutionState.OUTCOME_UNKNOWN)
    assert ran.structured_content == {"result": 1}


@pytest.mark.anyio
@pytest.mark.usefixtures("zero_wait")
async def test_retry_resends_a_write_the_upstream_says_did_not_run(mode: str, retrying_proxy: FastMCP[Any]) -> None:
    key = f"b-{mode}"  # the rule of `retrying_proxy` says its failure ran nothing
    async with Client(retrying_proxy._mcp_server, mode=mode) as client:
        result = await client.call_tool("busy_write", {"key": key, "failures": 1})
        ran = await client.call_tool("attempts", {"key": key})
    assert (result.is_error, result.structured_content) == (False, {"result": "written after 2 attempts"})
    assert ran.structured_content == {"result": 2}


@pytest.fixture(scope="module")
async def keyed_proxy() -> AsyncIterator[FastMCP[Any]]:
    """A proxy that replays a repeated idempotency key (`--idempotency-keys`), for the tests of keys."""
    async with served_upstream(ProxySettings(idempotency_keys=True)) as server:
        yield server


@pytest.mark.anyio
async def test_idempotency_keys_replay_the_first_answer_of_a_write(mode: str, keyed_proxy: FastMCP[Any]) -> None:
    key = {"mcp-errors/idempotencyKey": f"op-1-{mode}"}
    counted, other = f"c-{mode}", f"other-{mode}"
    async with Client(keyed_proxy._mcp_server, mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        first = await client.call_tool("count_write", {"key": counted}, meta=key)  # type: ignore[arg-type]
        again = await client.call_tool("count_write", {"key": counted}, meta=key)  # type: ignore[arg-type]
        reused = await client.call_tool("count_write", {"key": other}, meta=key)  # type: ignore[arg-type]
        ran = await client.call_tool("attempts", {"key": counted})
    assert (tools["count_write"].meta or {}).get("mcp-errors/honoursIdempotencyKey") is True
    assert "mcp-errors/honoursIdempotencyKey" not in (tools["echo"].meta or {})
    assert first.structured_content == again.structured_content == {"result": "ran 1 time(s)"}
    assert (again.meta or {}).get("mcp-errors/replayed") is True
    assert read_result(reused).code == "IDEMPOTENCY_KEY_REUSED"
    assert ran.structured_content == {"result": 1}


@pytest.mark.anyio
async def test_keyed_calls_to_invented_tool_names_do_not_grow_the_proxy(keyed_proxy: FastMCP[Any]) -> None:
    async with Client(keyed_proxy._mcp_server, mode="auto") as client:

        async def invent(batch: int) -> None:
            for number in range(100):
                name = "x" * 10_000 + f"{batch}-{number}"  # the agent sees only its head
                result = await client.call_tool(name, {}, meta={"mcp-errors/idempotencyKey": f"op-{batch}-{number}"})  # type: ignore[arg-type]
                assert read_result(result).code == "UNKNOWN_TOOL"

        kept = await memory_kept_per_batch(invent)
    assert kept < 100_000  # an entry per name would keep 100 x 10 KB a batch, ten times as much


@pytest.mark.anyio
async def test_no_tool_failure_meta_is_written_unless_asked(shared_client: Client) -> None:
    result = await shared_client.call_tool("fail", {"message": "upstream timed out"})
    assert "io.modelcontextprotocol/toolFailure" not in (result.meta or {})


@pytest.fixture(scope="module")
async def meta_writing_proxy() -> AsyncIterator[FastMCP[Any]]:
    """A proxy that writes SEP-3313's tool-failure `_meta` (`--tool-failure-meta`), for the tests that read it."""
    async with served_upstream(ProxySettings(tool_failure_meta=True)) as server:
        yield server


@pytest.mark.anyio
async def test_tool_failure_meta_is_written_when_asked_and_an_upstreams_own_is_kept(
    mode: str, meta_writing_proxy: FastMCP[Any]
) -> None:
    own = {"class": "reliability", "code": "retryable_transient_error", "retryable": True, "correlationId": "c-9"}
    async with Client(meta_writing_proxy._mcp_server, mode=mode) as client:
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
async def test_an_upstreams_own_tool_failure_keeps_its_terms_but_not_the_secrets_in_its_guidance(
    written: bool, shared_proxy: FastMCP[Any], meta_writing_proxy: FastMCP[Any]
) -> None:
    guidance = f"Rotate the key {LEAKED_SECRET} in {LEAKED_PATH}, then call again."
    own = {"class": "governance", "code": "auth_required", "correlationId": "c-7", "agentGuidance": guidance}
    # Each setting's proxy is the one its other tests share (`shared_proxy` writes no tool-failure _meta).
    server = meta_writing_proxy if written else shared_proxy
    async with Client(server._mcp_server, mode="legacy") as client:
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


@pytest.fixture(scope="module")
async def users_rules_proxy(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FastMCP[Any]]:
    """A proxy with a user's rules file (a rule by text for one tool, a rule by field), for both modes."""
    rules = tmp_path_factory.mktemp("rules") / "rules.toml"
    rules.write_text(
        '[[rule]]\nname = "ledger"\ntool = "fail"\nmatch = { text = "ledger (?P<what>\\\\w+) timed out" }\n'
        'category = "business"\ncode = "LEDGER_DOWN"\ndescription = "The {what} ledger is down: use the other one."\n'
        '\n[[rule]]\nmatch = { field = "status", equals = 418 }\ncategory = "permission"\ncode = "TEAPOT"\n'
    )
    async with served_upstream(ProxySettings(rules=load_rules(rules))) as server:
        yield server


@pytest.mark.anyio
async def test_the_users_rules_come_after_what_the_upstream_declares_and_before_the_built_in_rules(
    mode: str, users_rules_proxy: FastMCP[Any]
) -> None:
    async with Client(users_rules_proxy._mcp_server, mode=mode) as client:
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
