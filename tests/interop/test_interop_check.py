"""`mcp-errors check` against real servers nobody here wrote, each with `--call-valid` and an
`--args` file of real data: mcp-server-time and mcp-server-git (PyPI), server-filesystem and
server-everything (npm, pinned in package-lock.json).

Each test pins the exact findings. Every one of them is read and judged true in
`docs/check-real-servers.md`; a finding that appears or disappears fails here first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from interop.peers import INTEROP_DIR, NODE_MODULES
from mcp_errors._cli import app

pytestmark = [pytest.mark.interop, pytest.mark.slow]

ARGS_DIR = INTEROP_DIR / "check_args"
FILESYSTEM = NODE_MODULES / "@modelcontextprotocol/server-filesystem/dist/index.js"
EVERYTHING = NODE_MODULES / "@modelcontextprotocol/server-everything/dist/index.js"

runner = CliRunner()


def check(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["check", "--format", "json", "--connect-timeout", "60", "--call-valid", *args])
    assert result.exit_code in (0, 1), result.output
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def found(report: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(finding["rule"], finding["tool"]) for finding in report["findings"]}


def each(rule: str, tools: list[str]) -> set[tuple[str, str | None]]:
    return {(rule, tool) for tool in tools}


def made_and_succeeded(report: dict[str, Any]) -> dict[str, str]:
    return {tool: call["outcome"] for tool, call in report["summary"]["validCalls"].items()}


def shared_cause(report: dict[str, Any], rule: str) -> list[str]:
    """The tools one finding for the whole server covers (one cause, e.g. the framework's text)."""
    (finding,) = [finding for finding in report["findings"] if finding["rule"] == rule and finding["tool"] is None]
    tools: list[str] = finding["tools"]
    return tools


def test_mcp_server_time() -> None:
    report = check("--args", str(ARGS_DIR / "time.toml"), "--", sys.executable, "-m", "mcp_server_time")

    tools = ["convert_time", "get_current_time"]
    # MCPServer's pydantic report on a missing argument: one cause, one finding for both tools.
    assert found(report) == each("ME002", tools) | {("ME024", None)}
    assert shared_cause(report, "ME024") == tools
    assert made_and_succeeded(report) == dict.fromkeys(tools, "succeeded")


def test_mcp_server_time_as_sarif_for_code_scanning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = tmp_path / "time.toml"
    calls.write_text((ARGS_DIR / "time.toml").read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    result = runner.invoke(
        app,
        [
            "check",
            "--format",
            "sarif",
            "--connect-timeout",
            "60",
            "--args",
            "time.toml",
            "--",
            sys.executable,
            "-m",
            "mcp_server_time",
        ],
    )

    log = json.loads(result.stdout)
    schema = json.loads((INTEROP_DIR.parent / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    assert list(Draft202012Validator(schema).iter_errors(log)) == []
    results = log["runs"][0]["results"]
    assert {(r["ruleId"], r["properties"].get("tool")) for r in results} == {
        ("ME002", "convert_time"),
        ("ME002", "get_current_time"),
        ("ME024", None),
    }
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "time.toml" for r in results)


def git(repository: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repository), *args], capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A repository with one commit, one staged file and one untracked file."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "--quiet", "--initial-branch", "main")
    git(path, "config", "user.email", "checker@example.com")
    git(path, "config", "user.name", "mcp-errors check")
    (path / "README.md").write_text("# A repository for mcp-errors check\n", encoding="utf-8")
    git(path, "add", "README.md")
    git(path, "commit", "--quiet", "--message", "First commit")
    (path / "staged.txt").write_text("staged\n", encoding="utf-8")
    git(path, "add", "staged.txt")
    (path / "new.txt").write_text("new\n", encoding="utf-8")
    return path


def test_mcp_server_git(repository: Path, tmp_path: Path) -> None:
    repo = str(repository)
    calls = {
        "roots": [repo],
        "tools": {
            "git_status": {"valid": {"repo_path": repo}},
            "git_diff": {"valid": {"repo_path": repo, "target": "HEAD"}},
            "git_show": {"valid": {"repo_path": repo, "revision": "HEAD"}},
            "git_log": {"valid": {"repo_path": repo}, "empty": {"repo_path": repo, "end_timestamp": "1990-01-01"}},
            "git_branch": {
                "valid": {"repo_path": repo, "branch_type": "local"},
                "empty": {"repo_path": repo, "branch_type": "remote"},
            },
            "git_commit": {"valid": {"repo_path": repo, "message": "Commit staged.txt (mcp-errors check)"}},
            "git_add": {"valid": {"repo_path": repo, "files": ["new.txt"]}},
            "git_create_branch": {"valid": {"repo_path": repo, "branch_name": "mcp-errors-check"}},
            "git_checkout": {"valid": {"repo_path": repo, "branch_name": "main"}},
        },
    }
    args = tmp_path / "git.json"
    args.write_text(json.dumps(calls), encoding="utf-8")

    report = check("--args", str(args), "--", sys.executable, "-m", "mcp_server_git", "--repository", repo)

    checked = report["summary"]["validCalls"]
    assert found(report) == each("ME002", list(checked)) | {("ME024", None)} | each("ME013", ["git_branch"])
    assert shared_cause(report, "ME024") == sorted(checked)
    assert made_and_succeeded(report) == dict.fromkeys(checked, "succeeded")
    assert report["summary"]["toolsSkipped"] == {
        "git_reset": "annotated destructiveHint: pass --allow-destructive to call it"
    }
    # What the run changed is what the report says it may have changed.
    changes = {change["tool"] for change in report["summary"]["possibleChanges"]}
    assert changes == {"git_commit", "git_add", "git_create_branch", "git_checkout"}
    assert git(repository, "log", "--format=%s") == "Commit staged.txt (mcp-errors check)\nFirst commit\n"
    assert git(repository, "diff", "--cached", "--name-only") == "new.txt\n"
    assert git(repository, "branch", "--format=%(refname:short)").split() == ["main", "mcp-errors-check"]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "root"
    (path / "empty").mkdir(parents=True)
    (path / "notes.txt").write_text("Buy milk.\nCall Ada.\n", encoding="utf-8")
    return path


def test_server_filesystem_with_destructive_calls_says_what_it_changed(node: Path, root: Path, tmp_path: Path) -> None:
    r = str(root)
    notes = str(root / "notes.txt")
    calls = {
        "tools": {
            "read_file": {"valid": {"path": notes}},
            "read_text_file": {"valid": {"path": notes, "head": 1}},
            "read_media_file": {"valid": {"path": notes}},
            "read_multiple_files": {"valid": {"paths": [notes]}},
            "write_file": {"valid": {"path": f"{r}/written.txt", "content": "written by mcp-errors check\n"}},
            "edit_file": {
                "valid": {"path": f"{r}/written.txt", "edits": [{"oldText": "written", "newText": "edited"}]}
            },
            "create_directory": {"valid": {"path": f"{r}/made-by-check"}},
            "list_directory": {"valid": {"path": r}, "empty": {"path": f"{r}/empty"}},
            "list_directory_with_sizes": {"valid": {"path": r}, "empty": {"path": f"{r}/empty"}},
            "directory_tree": {"valid": {"path": r}, "empty": {"path": f"{r}/empty"}},
            "move_file": {"valid": {"source": f"{r}/written.txt", "destination": f"{r}/moved.txt"}},
            "search_files": {"valid": {"path": r, "pattern": "*.txt"}, "empty": {"path": r, "pattern": "*.nothing"}},
            "get_file_info": {"valid": {"path": notes}},
        }
    }
    args = tmp_path / "filesystem.json"
    args.write_text(json.dumps(calls), encoding="utf-8")
    before = {path.relative_to(root) for path in root.rglob("*")}

    report = check("--allow-destructive", "--args", str(args), "--", str(node), str(FILESYSTEM), r)

    with_arguments = list(calls["tools"])
    assert found(report) == each("ME002", with_arguments) | each("ME013", ["directory_tree", "list_directory"])
    assert made_and_succeeded(report) == dict.fromkeys([*with_arguments, "list_allowed_directories"], "succeeded")
    assert report["summary"]["roots"] == [r]  # asked from list_allowed_directories
    # Nothing is left behind that the report does not name.
    after = {path.relative_to(root) for path in root.rglob("*")}
    named = json.dumps(report["summary"]["possibleChanges"])
    assert after - before == {Path("made-by-check"), Path("moved.txt")}
    assert all(str(root / path) in named for path in after - before)
    assert {change["tool"] for change in report["summary"]["possibleChanges"]} == {
        "write_file",
        "edit_file",
        "create_directory",
        "move_file",
    }


def test_server_everything(node: Path) -> None:
    report = check("--args", str(ARGS_DIR / "everything.toml"), "--", str(node), str(EVERYTHING), "stdio")

    with_invalid_probes = [
        "echo",
        "get-annotated-message",
        "get-resource-links",
        "get-resource-reference",
        "get-structured-content",
        "get-sum",
        "gzip-file-as-resource",
        "trigger-long-running-operation",
    ]
    assert found(report) == each("ME002", with_invalid_probes)
    outcomes = made_and_succeeded(report)
    assert set(outcomes.values()) == {"succeeded"}
    assert len(outcomes) == 12
    assert list(report["summary"]["toolsSkipped"]) == ["simulate-research-query"]  # it must run as a task
