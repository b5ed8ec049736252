"""The TypeScript SDK clients (v1: strict output validation; v2) get every error result intact.

Each client lists the tools of the `install`-ed contract server over stdio, then makes
every failing call of `CASES` and the empty-result call in one session. What it returns
must equal, errorId aside, what the Python SDK's own client receives from the same server.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from mcp import Client

from interop.peers import CONTRACT_SERVER, EMPTY_CALL, PLAIN_SERVER
from servers.checks import assert_nothing_leaks, check_error, check_success
from servers.contract_server import CASES, LEAKED_PATH, LEAKED_SECRET, Case, build_server

pytestmark = [pytest.mark.interop, pytest.mark.slow]

CALLS = [(case.tool, case.arguments) for case in CASES] + [EMPTY_CALL]
CLIENTS = [("v1", "legacy"), ("v2", "legacy"), ("v2", "auto")]
"""(SDK major, version negotiation); v1 knows only the legacy handshake."""


@pytest.fixture(scope="module", params=CLIENTS, ids=lambda client: f"{client[0]}-{client[1]}")
def ts_session(request: pytest.FixtureRequest, call_tools: Any) -> dict[str, Any]:
    sdk, mode = request.param
    return call_tools(sdk, mode, CALLS, CONTRACT_SERVER)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def reference() -> list[dict[str, Any]]:
    """The same calls through the Python SDK's client, in memory."""

    async def collect() -> list[dict[str, Any]]:
        async with Client(build_server(), mode="legacy") as client:
            return [
                (await client.call_tool(name, arguments)).model_dump(mode="json", by_alias=True, exclude_none=True)
                for name, arguments in CALLS
            ]

    return anyio.run(collect)


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    # errorId is fresh per failure; `_meta` and `resultType` depend on the negotiated era.
    text = re.sub(r"errorId: [0-9a-f]+", "errorId: …", str(result["content"]))
    structured = {k: v for k, v in (result.get("structuredContent") or {}).items() if k != "errorId"}
    return {"content": text, "structuredContent": structured, "isError": bool(result.get("isError"))}


def _output_schema(session: dict[str, Any], tool: str) -> dict[str, Any] | None:
    return next((t.get("outputSchema") for t in session["tools"] if t["name"] == tool), None)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.tool for case in CASES])
def test_error_results_reach_the_client_intact(
    ts_session: dict[str, Any], reference: list[dict[str, Any]], index: int
) -> None:
    case: Case = CASES[index]
    call = ts_session["calls"][index]
    assert "thrown" not in call, call.get("thrown")
    result = call["result"]
    envelope = check_error(result, _output_schema(ts_session, case.tool))
    assert (envelope["errorCategory"], envelope.get("code"), envelope["isRetryable"]) == (
        case.category,
        case.code,
        case.retryable,
    )
    assert_nothing_leaks(result, LEAKED_SECRET, LEAKED_PATH)
    assert _comparable(result) == _comparable(reference[index])


def test_argument_validation_names_each_bad_argument(ts_session: dict[str, Any]) -> None:
    index = next(i for i, case in enumerate(CASES) if case.code == "INVALID_ARGUMENTS")
    envelope = ts_session["calls"][index]["result"]["structuredContent"]
    assert {error["field"] for error in envelope["fieldErrors"]} == set(CASES[index].arguments)


def test_empty_result_reaches_the_client_as_a_success(
    ts_session: dict[str, Any], reference: list[dict[str, Any]]
) -> None:
    call = ts_session["calls"][-1]
    assert "thrown" not in call, call.get("thrown")
    structured = check_success(call["result"], _output_schema(ts_session, EMPTY_CALL[0]))
    assert structured["resultCount"] == 0
    assert call["result"]["content"][0]["text"]
    assert _comparable(call["result"]) == _comparable(reference[-1])


def test_strict_v1_client_throws_away_error_results_that_the_outputschema_does_not_admit(call_tools: Any) -> None:
    # Why `install` widens outputSchema: the same envelope, from a server that does not.
    refund = [("refund", {"order_id": "#12345", "amount": 750.0})]
    v1 = call_tools("v1", "legacy", refund, PLAIN_SERVER)["calls"][0]
    assert v1["thrown"]["code"] == -32602
    v2 = call_tools("v2", "legacy", refund, PLAIN_SERVER)["calls"][0]
    assert v2["result"]["structuredContent"]["errorCategory"] == "business"
