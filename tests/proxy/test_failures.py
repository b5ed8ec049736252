"""`mcp-errors proxy`: an upstream's failures become the contract (returned, raised, JSON-RPC errors).

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract; the shared
proxy (`shared_proxy`, `shared_client`) is in `tests/proxy/conftest.py`: one upstream for the
module's tests in memory, in both connection modes.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc
import fastmcp
import pytest
from fastmcp import FastMCP
from mcp import Client
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
    InputRequiredResult,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_errors import ErrorCategory, read_result
from mcp_errors._shared.causes import causes
from mcp_errors.proxy import ChildProcess, build_proxy
from mcp_errors.proxy._server import check_upstream
from proxying import (
    STARTUP_SECONDS,
    UPSTREAM,
    command_params,
    schemas,
    wire,
)
from servers.checks import assert_nothing_leaks, check_error, check_success
from servers.proxy_upstream import LEAKED_PATH, LEAKED_SECRET

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one proxy (`client`, `tests/proxy/conftest.py`)."""
    return "asyncio"


# --- failures become the contract ---------------------------------------------------

# (tool, arguments, category, code, inferred, words of the upstream that must survive)
RETURNED_FAILURES: list[tuple[str, dict[str, Any], str, str | None, bool, str | None]] = [
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
async def test_returned_failures_are_classified_in_precedence_with_the_upstreams_words_kept(
    shared_client: Client,
) -> None:
    listed = await schemas(shared_client)
    results = [(case, await shared_client.call_tool(case[0], case[1])) for case in RETURNED_FAILURES]
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
    shared_client: Client, message: str, seconds: float
) -> None:
    said = await shared_client.call_tool("fail", {"message": message})
    assert said.structured_content is not None
    assert said.structured_content["retryAfterSeconds"] == seconds


@pytest.mark.anyio
async def test_an_upstream_pydantic_report_keeps_its_words_without_echoing_the_callers_value(
    shared_client: Client,
) -> None:
    result = await shared_client.call_tool("echo", {"text": 12345})
    envelope = check_error(wire(result), None)
    assert (envelope["errorCategory"], envelope["fieldErrors"][0]["field"]) == ("validation", "text")
    assert "valid string" in envelope["description"]  # pydantic's own words survive
    for said in (envelope["description"], result.content[0].text):  # type: ignore[union-attr]
        assert "input_value=" not in said
        assert "[type=" not in said


@pytest.mark.anyio
async def test_a_declared_retry_after_becomes_retry_after_seconds(shared_client: Client) -> None:
    declared = await shared_client.call_tool("fail_structured", {"structured": {"status": 429, "retryAfter": 7}})
    assert declared.structured_content is not None
    assert declared.structured_content["retryAfterSeconds"] == 7


@pytest.mark.anyio
async def test_a_result_already_in_the_contract_passes_through_unchanged(shared_client: Client) -> None:
    envelope = {
        "errorCategory": "business",
        "isRetryable": False,
        "description": "Refunds above 500 need a manager.",
        "code": "REFUND_LIMIT_EXCEEDED",
        "errorId": "abc123abc123",
    }
    result = await shared_client.call_tool("fail_structured", {"structured": envelope, "text": "as sent"})
    assert result.is_error
    assert result.structured_content == envelope
    assert result.content[0].text == "as sent"  # type: ignore[union-attr]


OWN_SAID = f"Login refused: password={LEAKED_SECRET} in {LEAKED_PATH}; ask an admin."
OWN_ENVELOPE = {
    "errorCategory": "permission",
    "isRetryable": False,
    "description": OWN_SAID,
    "code": "LOGIN_REFUSED",
    "fieldErrors": [{"field": "password", "problem": f"was {LEAKED_SECRET}", "received": "Hunter2Hunter2"}],
    "errorId": "abc123abc123",
}
OWN_CALL = ("fail_structured", {"structured": OWN_ENVELOPE, "text": f"[permission] {OWN_SAID}"})


def check_own_envelope_kept_without_secrets(result: CallToolResult) -> None:
    assert_nothing_leaks(wire(result), LEAKED_SECRET, LEAKED_PATH, "Hunter2Hunter2")
    outcome = read_result(result)
    assert (outcome.category, outcome.code, outcome.error_id) == (
        ErrorCategory.PERMISSION,
        "LOGIN_REFUSED",
        "abc123abc123",
    )
    assert "ask an admin" in outcome.description


@pytest.mark.anyio
async def test_an_upstreams_own_envelope_keeps_its_shape_but_not_its_secrets(shared_client: Client) -> None:
    check_own_envelope_kept_without_secrets(await shared_client.call_tool(*OWN_CALL))


@pytest.mark.anyio
async def test_an_upstreams_own_envelope_keeps_its_shape_but_not_its_secrets_over_stdio() -> None:
    # Over stdio, as a host runs it: `mcp-errors proxy -- <upstream>`. One connection mode
    # (the modern one) over the real transport: the test above has both, in memory.
    async with Client(command_params("--", sys.executable, UPSTREAM), mode="auto") as client:
        with anyio.fail_after(60):
            result = await client.call_tool(*OWN_CALL)
    check_own_envelope_kept_without_secrets(result)


@pytest.mark.anyio
async def test_json_rpc_errors_become_results_and_invalid_params_name_the_argument(shared_client: Client) -> None:
    listed = await schemas(shared_client)
    invalid = await shared_client.call_tool(
        "fail_jsonrpc", {"code": -32602, "message": "bad", "data": {"field": "day"}}
    )
    other = await shared_client.call_tool(
        "fail_jsonrpc", {"code": -32099, "message": "rate limit exceeded for this minute"}
    )
    missing = await shared_client.call_tool("echo", {})
    envelope = check_error(wire(invalid), listed["fail_jsonrpc"])
    assert (envelope["errorCategory"], envelope["executionState"]) == ("validation", "not_executed")
    assert [error["field"] for error in envelope["fieldErrors"]] == ["day"]
    assert check_error(wire(other), None)["errorCategory"] == "transient"  # words: "rate limit exceeded"
    argument = check_error(wire(missing), listed["echo"])
    assert (argument["errorCategory"], argument["code"]) == ("validation", "INVALID_ARGUMENTS")
    assert [error["field"] for error in argument["fieldErrors"]] == ["text"]


@pytest.mark.anyio
async def test_an_unknown_tool_is_validation_listing_the_real_names(shared_client: Client) -> None:
    await shared_client.list_tools()
    result = await shared_client.call_tool("ecko", {"text": "hi"})
    envelope = check_error(wire(result), None)
    assert (envelope["errorCategory"], envelope["code"]) == ("validation", "UNKNOWN_TOOL")
    assert "echo" in envelope["description"]


@pytest.mark.anyio
async def test_output_schemas_admit_the_envelope_so_error_results_validate(shared_client: Client) -> None:
    listed = await schemas(shared_client)
    ok = await shared_client.call_tool("forecast", {"city": "Oslo"})
    failed = await shared_client.call_tool("forecast", {"city": "Atlantis"})
    schema = listed["forecast"]
    assert schema is not None
    assert (schema["type"], len(schema["anyOf"])) == ("object", 2)
    assert check_success(wire(ok), schema) == {"city": "Oslo", "celsius": 21.5}
    check_error(wire(failed), schema)


@pytest.mark.anyio
async def test_protocol_signals_stay_json_rpc_errors(shared_client: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await shared_client.call_tool(
            "fail_jsonrpc", {"code": MISSING_REQUIRED_CLIENT_CAPABILITY, "message": "needs roots"}
        )
    assert raised.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY


@pytest.mark.anyio
async def test_a_url_elicitation_reaches_a_legacy_front_as_32042_and_a_2026_front_as_an_input_required_result(
    mode: str, shared_proxy: FastMCP[Any]
) -> None:
    opened: list[str] = []

    async def open_url(context: Any, params: ElicitRequestParams) -> ElicitResult:
        assert isinstance(params, ElicitRequestURLParams)
        opened.append(params.url)
        return ElicitResult(action="accept")

    # The upstream asks each key to sign in once: each mode has keys of its own on the shared proxy.
    first, second = f"{mode}-1", f"{mode}-2"
    async with Client(shared_proxy._mcp_server, mode=mode, elicitation_callback=open_url) as client:
        if mode == "legacy":  # 2025-11-25 defines -32042: it reaches the client as it came
            with pytest.raises(MCPError) as raised:
                await client.call_tool("sign_in_first", {"key": first})
            assert raised.value.code == URL_ELICITATION_REQUIRED
            return
        # 2026-07-28 retired -32042: the client gets the elicitation as that revision asks
        # for it, opens the URL, calls again, and the upstream runs the call.
        asked = await client.session.call_tool("sign_in_first", {"key": first}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        assert asked.input_requests is not None
        (ask,) = asked.input_requests.values()
        assert isinstance(ask, ElicitRequest)
        assert isinstance(ask.params, ElicitRequestURLParams)
        assert ask.params.url == f"https://auth.example.com/connect?state={first}"
        result = await client.call_tool("sign_in_first", {"key": second})
    assert opened == [f"https://auth.example.com/connect?state={second}"]
    assert read_result(result).ok
    assert read_result(result).message == "signed in, ran after 2 attempts"


@pytest.mark.anyio
async def test_a_missing_resource_reaches_each_front_with_the_code_its_revision_defines(shared_client: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await shared_client.read_resource("note://retired/minutes")
    modern = shared_client.protocol_version in MODERN_PROTOCOL_VERSIONS
    assert raised.value.code == (INVALID_PARAMS if modern else -32002)  # 2026-07-28 replaced -32002 by -32602
    assert raised.value.error.data == {"uri": "note://retired/minutes"}


@pytest.mark.anyio
async def test_a_fastmcp_client_of_2026_gets_no_retired_code(shared_proxy: FastMCP[Any]) -> None:
    async with fastmcp.Client(shared_proxy) as client:
        with pytest.raises(Exception) as raised:  # noqa: PT011  (fastmcp wraps the JSON-RPC error in its own)
            await client.read_resource("note://retired/minutes")
        rpc = next(cause for cause in causes(raised.value) if isinstance(cause, MCPError))
        assert rpc.code == INVALID_PARAMS
        asked = await client.session.call_tool("sign_in_first", {"key": "fastmcp-1"}, allow_input_required=True)
    assert isinstance(asked, InputRequiredResult)


@pytest.mark.anyio
async def test_an_upstream_resource_not_found_is_not_a_misconfigured_server(shared_client: Client) -> None:
    result = await shared_client.call_tool("open_note", {"note": "minutes"})
    envelope = check_error(wire(result), None)
    assert (envelope["errorCategory"], envelope["code"]) == ("validation", "NOT_FOUND")


@pytest.fixture(scope="module")
async def paged_proxy() -> AsyncIterator[FastMCP[Any]]:
    """A proxy in this process in front of an upstream that lists its tools a page at a time, for both modes."""
    child = ChildProcess(sys.executable, [UPSTREAM, "paged"])
    server = build_proxy(child)
    try:
        await check_upstream(server, child, seconds=STARTUP_SECONDS)
        yield server
    finally:
        await child.close()


@pytest.mark.anyio
async def test_every_page_of_an_upstreams_tools_is_listed(mode: str, paged_proxy: FastMCP[Any]) -> None:
    async with Client(paged_proxy._mcp_server, mode=mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        last = await client.call_tool("tool_9", {})
    assert sorted(names) == sorted(f"tool_{index}" for index in range(10))
    assert last.content[0].text == "tool_9 ran"  # type: ignore[union-attr]
