"""The official conformance suite finds our error results valid on the wire, in both eras.

Each scenario runs against the contract server over streamable HTTP (see
`servers/interop_server.py http`) at both spec revisions the suite knows: 2025-11-25
(stateful, initialize handshake) and 2026-07-28 (stateless). Besides the scenario's own
checks, the suite validates every message the server sent against the spec's JSON schema
(`wire-schema-valid`).

Only the scenarios that carry error results, the widened outputSchemas or the empty result
run: `tools-call-error` (once per failing call of `CASES`), `tools-list` and
`tools-call-simple-text`. The others (resources, prompts, logging, progress, sampling,
elicitation, image/audio content, ...) test fixture tools this server does not have and
no error result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from interop.peers import CONFORMANCE, EMPTY_CALL, NodeRun
from servers.contract_server import CASES, Case

pytestmark = [pytest.mark.interop, pytest.mark.slow]

SPEC_VERSIONS = ("2025-11-25", "2026-07-28")


def _run_scenario(run_node: Any, port: int, path: str, scenario: str, spec: str, out: Path) -> dict[str, Any]:
    done: NodeRun = run_node(
        CONFORMANCE,
        "server",
        "--url",
        f"http://127.0.0.1:{port}/{path}/mcp",
        "--scenario",
        scenario,
        "--spec-version",
        spec,
        "--output-dir",
        str(out),
    )
    (checks_file,) = out.glob("*/checks.json")
    checks = json.loads(checks_file.read_text())
    failed = [check for check in checks if check["status"] == "FAILURE"]
    assert not failed, json.dumps(failed, indent=1)[:4000]
    assert done.returncode == 0, done.stderr
    by_id = {check["id"]: check for check in checks}
    wire = by_id["wire-schema-valid"]
    assert wire["status"] == "SUCCESS"
    assert wire["details"]["messagesValidated"] > 0
    return by_id


@pytest.mark.parametrize("spec", SPEC_VERSIONS)
@pytest.mark.parametrize("case", CASES, ids=[case.tool for case in CASES])
def test_error_results_pass_the_wire_schema_check(
    run_node: Any, http_server_port: int, tmp_path: Path, case: Case, spec: str
) -> None:
    checks = _run_scenario(run_node, http_server_port, case.tool, "tools-call-error", spec, tmp_path)
    assert checks["tools-call-error"]["status"] == "SUCCESS"
    envelope = checks["tools-call-error"]["details"]["result"]["structuredContent"]
    assert (envelope["errorCategory"], envelope.get("code")) == (case.category, case.code)


@pytest.mark.parametrize("spec", SPEC_VERSIONS)
def test_widened_output_schemas_pass_the_wire_schema_check(
    run_node: Any, http_server_port: int, tmp_path: Path, spec: str
) -> None:
    checks = _run_scenario(run_node, http_server_port, EMPTY_CALL[0], "tools-list", spec, tmp_path)
    assert checks["tools-list"]["status"] == "SUCCESS"


@pytest.mark.parametrize("spec", SPEC_VERSIONS)
def test_empty_result_passes_the_wire_schema_check(
    run_node: Any, http_server_port: int, tmp_path: Path, spec: str
) -> None:
    checks = _run_scenario(run_node, http_server_port, EMPTY_CALL[0], "tools-call-simple-text", spec, tmp_path)
    result = checks["tools-call-simple-text"]["details"]["result"]
    assert result["structuredContent"]["resultCount"] == 0
    assert not result.get("isError")
