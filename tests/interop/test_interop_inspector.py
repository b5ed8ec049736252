"""The MCP Inspector CLI reports our error results as tool errors, not as validation failures.

`inspector --cli ... --method tools/call` prints the result and exits 5 with the envelope
`{"error": {"code": "tool_is_error"}}` when a tool returns `isError: true`; it exits 1 with
code `error` when it rejects the result itself (structuredContent outside outputSchema).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from interop.peers import CONTRACT_SERVER, EMPTY_CALL, INSPECTOR, PLAIN_SERVER, NodeRun
from servers.checks import assert_nothing_leaks, check_error, check_success
from servers.contract_server import CASES, LEAKED_PATH, LEAKED_SECRET, Case

pytestmark = [pytest.mark.interop, pytest.mark.slow]

TOOL_ERROR_EXIT = 5
SERVER_CASES = [case for case in CASES if case.code != "UNKNOWN_TOOL"]
"""The Inspector checks the name against tools/list itself (exit 5, `tool_not_found`), so an
unknown tool never reaches the server."""


def _call(run_node: Any, server: tuple[str, ...], tool: str, arguments: dict[str, Any]) -> NodeRun:
    done: NodeRun = run_node(
        INSPECTOR,
        "--cli",
        "--format",
        "json",
        "--quiet",
        *server,
        "--method",
        "tools/call",
        "--tool-name",
        tool,
        "--tool-args-json",
        json.dumps(arguments),
    )
    return done


def _cli_error(done: NodeRun) -> dict[str, Any]:
    error: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])["error"]
    return error


@pytest.mark.parametrize("case", SERVER_CASES, ids=[case.tool for case in SERVER_CASES])
def test_error_calls_end_with_the_tool_error_status(run_node: Any, case: Case) -> None:
    done = _call(run_node, CONTRACT_SERVER, case.tool, case.arguments)
    assert (done.returncode, _cli_error(done)["code"]) == (TOOL_ERROR_EXIT, "tool_is_error"), done.stderr
    result = done.json()["result"]
    envelope = check_error(result, None)
    assert (envelope["errorCategory"], envelope.get("code")) == (case.category, case.code)
    assert_nothing_leaks(result, LEAKED_SECRET, LEAKED_PATH)


def test_empty_result_is_a_plain_success(run_node: Any) -> None:
    done = _call(run_node, CONTRACT_SERVER, *EMPTY_CALL)
    assert done.returncode == 0, done.stderr
    assert check_success(done.json()["result"], None)["resultCount"] == 0


def test_without_widening_the_inspector_rejects_the_error_result_itself(run_node: Any) -> None:
    done = _call(run_node, PLAIN_SERVER, "refund", {"order_id": "#12345", "amount": 750.0})
    assert (done.returncode, _cli_error(done)["code"]) == (1, "error")
    assert "tool_is_error" not in done.stderr
