"""LangChain's real MCP client (`langchain-mcp-adapters`) hands the model the category, verdict and description.

The adapter cannot live in the project's environment (0.3.2 pins `mcp<2`), so
`langchain_adapters_client.py` runs in its own uv environment, pinned by its inline
metadata and `langchain_adapters_client.py.lock`, and talks over stdio (protocol
2025-11-25) to the `install`-ed contract server, which runs here on mcp 2.x. It invokes
every failing call of `CASES` and the empty-result call through LangChain's tool-call path
and reports the `ToolMessage` the model would read, or the exception that escaped.

Without uv, or when uv cannot build that environment (no registry), the module fails in
CI (`CI` set) and is skipped, with the reason, elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from typing import Any

import anyio
import pytest
from mcp import Client

from interop.peers import CONTRACT_SERVER, EMPTY_CALL, INTEROP_DIR, RUN_TIMEOUT_S, unavailable
from servers.checks import assert_nothing_leaks
from servers.contract_server import CASES, LEAKED_PATH, LEAKED_SECRET, Case, build_server

pytestmark = [pytest.mark.interop, pytest.mark.slow]

CLIENT_SCRIPT = INTEROP_DIR / "langchain_adapters_client.py"
CALLS = [(case.tool, case.arguments) for case in CASES] + [EMPTY_CALL]
PINNED = {"langchain-mcp-adapters": "0.3.2", "langchain-core": "1.8.3", "mcp": "1.30.0"}
"""The versions in the client script's inline metadata (and its lockfile)."""

_SYNC_TIMEOUT_S = 300
_HEAD = re.compile(r"^\[(?P<category>\w+) error, (?P<verdict>retryable|not retryable)[^\]]*\] ")


def _uv_env() -> dict[str, str]:
    # `uv run pytest` exports the project's venv; the script must get its own environment.
    return {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}


@pytest.fixture(scope="module")
def adapter_report() -> dict[str, Any]:
    """Run the adapter client once against the contract server; its JSON report."""
    uv = shutil.which("uv")
    if uv is None:
        unavailable("The langchain-mcp-adapters interop test needs `uv` on PATH to build the adapter's environment.")
    assert uv is not None
    # Building the environment is the only step that needs the registry: keep its failure apart from the run's.
    sync = [uv, "sync", "--locked", "--script", str(CLIENT_SCRIPT)]
    try:
        built = subprocess.run(
            sync, env=_uv_env(), capture_output=True, text=True, timeout=_SYNC_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        unavailable(f"`uv sync --script` took over {_SYNC_TIMEOUT_S}s: is pypi.org reachable?")
    if built.returncode != 0:
        said = " / ".join(line.strip() for line in built.stderr.strip().splitlines()[:3])
        unavailable(
            f"uv could not build the langchain-mcp-adapters environment from {CLIENT_SCRIPT.name}.lock "
            f"(exit {built.returncode}): it needs the PyPI registry on a cold cache; uv said: {said}"
        )
    payload = json.dumps([{"name": name, "arguments": arguments} for name, arguments in CALLS])
    command = [uv, "run", "--locked", "--script", str(CLIENT_SCRIPT), payload, *CONTRACT_SERVER]
    done = subprocess.run(command, env=_uv_env(), capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


@pytest.fixture(scope="module")
def reference() -> list[dict[str, Any]]:
    """The same calls through the Python SDK's own client, in memory."""

    async def collect() -> list[dict[str, Any]]:
        async with Client(build_server(), mode="legacy") as client:
            return [
                (await client.call_tool(name, arguments)).model_dump(mode="json", by_alias=True, exclude_none=True)
                for name, arguments in CALLS
            ]

    return anyio.run(collect)


def _without_error_id(text: str) -> str:
    return re.sub(r"errorId: [0-9a-f]+", "errorId: …", text)


def test_the_pinned_adapter_speaks_the_legacy_protocol_to_the_mcp_2_server(adapter_report: dict[str, Any]) -> None:
    assert adapter_report["versions"] == PINNED
    assert adapter_report["protocolVersion"] == "2025-11-25"
    assert set(adapter_report["tools"]) == {case.tool for case in CASES if case.code != "UNKNOWN_TOOL"} | {
        EMPTY_CALL[0]
    }


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.tool for case in CASES])
def test_the_model_reads_category_verdict_and_description_in_an_error_tool_message(
    adapter_report: dict[str, Any], reference: list[dict[str, Any]], index: int
) -> None:
    case: Case = CASES[index]
    call = adapter_report["calls"][index]
    assert call["loaded"] is (case.code != "UNKNOWN_TOOL")
    assert "raised" not in call["default"], call["default"]
    message = call["default"]["message"]
    assert message["status"] == "error"
    head = _HEAD.match(message["text"])
    assert head is not None, message["text"]
    assert head["category"] == case.category
    assert (head["verdict"] == "retryable") is case.retryable
    envelope = reference[index]["structuredContent"]
    assert envelope["description"] in message["text"]
    # Every text block of the result, and only those, in order: the adapter adds and drops nothing.
    sent = [block["text"] for block in reference[index]["content"] if block["type"] == "text"]
    assert [_without_error_id(block["text"]) for block in message["content"]] == [
        _without_error_id(text) for text in sent
    ]
    assert_nothing_leaks(call, LEAKED_SECRET, LEAKED_PATH)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.tool for case in CASES])
def test_without_error_handling_the_tool_exception_still_carries_category_verdict_and_description(
    adapter_report: dict[str, Any], reference: list[dict[str, Any]], index: int
) -> None:
    case = CASES[index]
    raised = adapter_report["calls"][index]["handle_tool_errors_false"]["raised"]
    assert raised["is_tool_exception"] is True
    head = _HEAD.match(raised["message"])
    assert head is not None, raised["message"]
    assert (head["category"], head["verdict"] == "retryable") == (case.category, case.retryable)
    assert reference[index]["structuredContent"]["description"] in raised["message"]


def test_the_adapter_drops_the_envelope_of_error_results(adapter_report: dict[str, Any]) -> None:
    # structuredContent becomes the artifact of successes only: fieldErrors never reach the model,
    # which is why the first text block must carry category, verdict and description.
    assert [call["default"]["message"]["artifact"] for call in adapter_report["calls"][: len(CASES)]] == [None] * len(
        CASES
    )


def test_argument_validation_names_each_bad_argument_in_the_text_the_model_reads(
    adapter_report: dict[str, Any],
) -> None:
    # LangChain does not check arguments against the tool's JSON Schema: the server does, and says which.
    index = next(i for i, case in enumerate(CASES) if case.code == "INVALID_ARGUMENTS")
    text = adapter_report["calls"][index]["default"]["message"]["text"]
    assert all(field in text for field in CASES[index].arguments), text


def test_the_empty_result_reaches_the_model_as_a_success_with_its_text(
    adapter_report: dict[str, Any], reference: list[dict[str, Any]]
) -> None:
    call = adapter_report["calls"][-1]
    for mode in ("default", "handle_tool_errors_false"):
        assert "raised" not in call[mode], call[mode]
        message = call[mode]["message"]
        assert message["status"] == "success"
        assert message["text"] == reference[-1]["content"][0]["text"]
        assert message["artifact"]["structured_content"]["resultCount"] == 0
