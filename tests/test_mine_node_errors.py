"""The Node half of the mined vocabulary (tools/_walk_node_errors.py, tools/mine_exceptions.py; issue 32)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from mcp_errors._shared.failure_vocabulary import MINED
from mcp_errors._shared.failure_words import judge_failure

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def _tool(name: str) -> ModuleType:
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WALKER = _tool("_walk_node_errors")
MINER = _tool("mine_exceptions")

PACKAGE = r"""
'use strict';
const util = require('util');
class ClientError extends Error {
  constructor(message) { super(message); this.name = 'ClientError'; }
}
class RequestTimeoutError extends ClientError {
  constructor(ms) { super(`Request timed out after ${ms}ms`); this.code = 'ETIMEDOUT'; }
}
class QuotaError extends errors_1.ClientError {
  status = 429;
  constructor() { super("Too many requests, slow down"); }
}
function LegacyAuthError(message) { Error.call(this, message); }
util.inherits(LegacyAuthError, Error);
class Widget extends EventEmitter { }
function connect(url) {
  if (!url) throw new ClientError('a url is required to connect');
  if (url.startsWith('x')) return Promise.reject(new RequestTimeoutError(5));
  const e = new Error('plain errors are not attributed'); e.code = 'ERR_NO_SUCH_WIDGET';
}
"""


@pytest.fixture
def node_modules(tmp_path: Path) -> Path:
    package = tmp_path / "node_modules" / "@acme" / "client"
    (package / "lib").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@acme/client", "version": "1.2.3"}))
    (package / "lib" / "errors.js").write_text(PACKAGE)
    (package / "lib" / "errors.d.ts").write_text("declare class IgnoredError extends Error {}")
    tests = package / "test"
    tests.mkdir()
    (tests / "x.js").write_text("class FixtureError extends Error {}")
    return tmp_path / "node_modules"


def test_the_node_reader_finds_classes_bases_codes_statuses_and_messages(node_modules: Path) -> None:
    [library] = WALKER.walk(node_modules, ("@acme/client", "not-installed"))
    assert (library["library"], library["version"]) == ("npm:@acme/client", "1.2.3")
    classes = {found["class"]: found for found in library["classes"]}
    assert set(classes) == {"ClientError", "RequestTimeoutError", "QuotaError", "LegacyAuthError", "Widget"}
    assert classes["QuotaError"]["bases"] == ["errors_1.ClientError"]
    assert classes["QuotaError"]["statuses"] == {"status": "int:429"}
    assert classes["RequestTimeoutError"]["statuses"] == {"code": "attr:ETIMEDOUT"}
    assert "Request timed out after {}ms" in classes["RequestTimeoutError"]["messages"]
    assert "a url is required to connect" in classes["ClientError"]["messages"]
    assert classes["LegacyAuthError"]["bases"] == ["Error"]
    assert {row["key"] for row in library["tables"]} >= {"ETIMEDOUT", "ERR_NO_SUCH_WIDGET"}


def test_node_classes_are_labelled_by_their_name_status_and_bases_with_npm_provenance(node_modules: Path) -> None:
    walked = {"python": "3.11", "libraries": WALKER.walk(node_modules, ("@acme/client",))}
    _shipped, labelled = MINER.mine(walked)
    kinds = {entry["class"].rsplit(".", 1)[-1]: entry for entry in labelled if entry["library"] == "npm:@acme/client"}
    assert kinds["RequestTimeoutError"]["category"] == "transient"
    assert kinds["QuotaError"]["kind"] == "UPSTREAM_RATE_LIMITED"  # its status 429
    assert kinds["LegacyAuthError"]["category"] == "permission"
    assert "Widget" not in kinds  # an EventEmitter is no error
    assert "ClientError" not in kinds  # its name and base say nothing


def test_a_name_whose_not_allowed_names_no_principal_is_a_rule_on_the_input() -> None:
    assert MINER._kind_of_words("NullValueNotAllowedError")[0] == "INVALID_ARGUMENTS"
    assert MINER._kind_of_words("UserNotAllowedError")[0] == "ACCESS_DENIED"


def test_the_shipped_vocabulary_has_node_libraries_with_their_provenance() -> None:
    node = [provenance for _words, _kind, provenance in MINED if provenance.startswith("npm:")]
    assert len({provenance.split(" ")[0] for provenance in node}) >= 20


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("KafkaJSConnectionError: Connection error: connect ECONNREFUSED", "transient"),
        ("MongoNetworkTimeoutError", "transient"),
        ("TokenExpiredError: jwt expired", "permission"),
        ("YAMLParseError: Nested mappings are not allowed in compact mappings", "validation"),
        ("MongoMissingDependencyError: Optional module `kerberos` not found", "business"),
        ("EX_UNAVAILABLE", "business"),  # sysexits' catch-all: no wait helps
    ],
)
def test_mined_node_names_and_reviewed_labels_are_read_as_their_kind(text: str, category: str) -> None:
    judged = judge_failure(text)
    assert judged is not None
    assert judged.category.value == category
