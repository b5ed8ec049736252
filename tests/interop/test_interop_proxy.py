"""`mcp-errors proxy` in front of servers nobody here wrote, and a strict client behind it.

The upstreams are `mcp-server-time` and `mcp-server-git` (PyPI) and
`@modelcontextprotocol/server-filesystem` and `server-everything` (npm, pinned in
package-lock.json), each run by `mcp-errors proxy` over stdio exactly as a host would. Real
failures are provoked (a bad time zone, a missing repository, a path outside the allowed
directories, a tool's own error, an unknown tool, bad arguments) and the category, the retry
verdict and the upstream's surviving words are asserted. Then: the TypeScript SDK v1 client,
which rejects error results its outputSchema does not admit, never throws through the proxy;
and `mcp-errors check` finds no error-severity defect through the proxy where the bare
server has some.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client, StdioServerParameters

from interop.peers import NODE_MODULES, SERVERS_DIR
from mcp_errors.check import CheckOptions, check_server
from servers.checks import assert_nothing_leaks, check_error, check_success
from services import fastmcp_before_4_2

pytestmark = [pytest.mark.interop, pytest.mark.slow]

PROXY = [sys.executable, "-m", "mcp_errors", "proxy"]
RULES = Path(__file__).parents[2] / "docs" / "proxy-rules"
UPSTREAM = [sys.executable, str(SERVERS_DIR / "proxy_upstream.py")]
TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]

Call = tuple[str, dict[str, Any]]
Answers = tuple[dict[str, dict[str, Any] | None], list[dict[str, Any]]]
"""What `session` returns: outputSchemas by tool, and the wire results of the calls."""


def session(
    command: Sequence[str], calls: Sequence[Call], *, env: dict[str, str] | None = None
) -> tuple[dict[str, dict[str, Any] | None], list[dict[str, Any]]]:
    """List the tools of a stdio server and make `calls`: (outputSchemas by tool, wire results)."""

    async def run() -> tuple[dict[str, dict[str, Any] | None], list[dict[str, Any]]]:
        params = StdioServerParameters(command=command[0], args=list(command[1:]), env=env)
        async with Client(params, mode="legacy") as client:
            schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
            results = [
                (await client.call_tool(name, arguments)).model_dump(mode="json", by_alias=True, exclude_none=True)
                for name, arguments in calls
            ]
        return schemas, results

    return anyio.run(run)


def proxied(*command: str, rules: str | None = None) -> list[str]:
    return [*PROXY, *(["--rules", str(RULES / rules)] if rules else []), "--", *command]


def error_of(schemas: dict[str, dict[str, Any] | None], call: Call, result: dict[str, Any]) -> dict[str, Any]:
    envelope = check_error(result, schemas.get(call[0]))
    assert_nothing_leaks(result, "Traceback")
    return envelope


@pytest.fixture(scope="module")
def node_servers(node: Path) -> dict[str, list[str]]:
    return {
        "filesystem": [str(node), str(NODE_MODULES / "@modelcontextprotocol/server-filesystem/dist/index.js")],
        "everything": [str(node), str(NODE_MODULES / "@modelcontextprotocol/server-everything/dist/index.js"), "stdio"],
    }


@pytest.fixture(scope="module")
def repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new git repository without commits."""
    path = tmp_path_factory.mktemp("repo")
    subprocess.run(["git", "init", "--quiet", str(path)], check=True)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one directory the filesystem server may use: a file and a subdirectory."""
    root = tmp_path_factory.mktemp("allowed").resolve()
    (root / "notes.txt").write_text("first line\n")
    (root / "sub").mkdir()
    return root


# --- mcp-server-time ----------------------------------------------------------------------

TIME_CALLS: list[Call] = [
    ("get_current_time", {"timezone": "Mars/Olympus"}),
    ("get_current_time", {}),
    ("get_current_tme", {"timezone": "UTC"}),
    ("get_current_time", {"timezone": "Europe/Paris"}),
]


def test_mcp_server_time_failures_come_out_in_the_contract() -> None:
    schemas, (bad_zone, missing, unknown, ok) = session(proxied(*TIME), TIME_CALLS)
    zone = error_of(schemas, TIME_CALLS[0], bad_zone)
    assert (zone["errorCategory"], zone["isRetryable"], zone["categoryInferred"]) == ("validation", False, True)
    assert "Mars/Olympus" in zone["description"]  # the server's own words survive
    argument = error_of(schemas, TIME_CALLS[1], missing)
    assert (argument["code"], [e["field"] for e in argument["fieldErrors"]]) == ("INVALID_ARGUMENTS", ["timezone"])
    tool = error_of(schemas, TIME_CALLS[2], unknown)
    assert tool["code"] == "UNKNOWN_TOOL"
    assert "get_current_time" in tool["description"]
    assert check_success(ok, schemas["get_current_time"])["timezone"] == "Europe/Paris"


# --- mcp-server-git -------------------------------------------------------------------------


def git_calls(repository: Path) -> list[Call]:
    return [
        ("git_status", {"repo_path": str(repository.parent / "no-such-repository")}),
        ("git_show", {"repo_path": str(repository), "revision": "deadbeef"}),
        ("git_log", {"repo_path": str(repository)}),
        ("git_status", {"repo_path": str(repository)}),
    ]


def test_mcp_server_git_failures_with_the_shipped_rules(repository: Path) -> None:
    calls = git_calls(repository)
    schemas, (missing, revision, empty, status) = session(
        proxied(sys.executable, "-m", "mcp_server_git", rules="mcp-server-git.toml"), calls
    )
    assert (error_of(schemas, calls[0], missing)["code"], error_of(schemas, calls[0], missing)["errorCategory"]) == (
        "NOT_A_GIT_REPOSITORY",
        "validation",
    )
    unknown = error_of(schemas, calls[1], revision)
    assert (unknown["code"], unknown["errorCategory"]) == ("UNKNOWN_REVISION", "validation")
    assert "deadbeef" in unknown["description"]
    assert error_of(schemas, calls[2], empty)["code"] == "NO_COMMITS"
    assert not status.get("isError")
    assert "branch" in status["content"][0]["text"].lower()


def branch_calls(repository: Path) -> list[Call]:
    """Check out a branch that does not exist, create it, check it out again."""
    arguments = {"repo_path": str(repository), "branch_name": "feature-x"}
    return [("git_checkout", arguments), ("git_create_branch", arguments), ("git_checkout", arguments)]


@pytest.fixture(scope="module")
def git_without_rules(repository: Path, tmp_path_factory: pytest.TempPathFactory) -> Answers:
    """mcp-server-git behind one proxy without rules but with `--repeat-guard 60`: its answers to `git_calls`, then
    `branch_calls` (in a repository with one commit).

    One session for the two tests that only read these answers, not one proxy each. The guard
    answers only a call that repeats one that failed, and no call of `git_calls` repeats
    another: to them the proxy is the one without rules.
    """
    branching = tmp_path_factory.mktemp("branching")
    subprocess.run(["git", "init", "--quiet", str(branching)], check=True)
    identity = ["-c", "user.name=Agent", "-c", "user.email=agent@example.com"]
    subprocess.run(["git", *identity, "-C", str(branching), "commit", "--quiet", "--allow-empty", "-m", "start"])
    command = [*PROXY, "--repeat-guard", "60", "--", sys.executable, "-m", "mcp_server_git"]
    return session(command, [*git_calls(repository), *branch_calls(branching)])


def test_mcp_server_git_without_rules_still_answers_in_the_contract_and_keeps_its_paths(
    git_without_rules: Answers, repository: Path
) -> None:
    calls = git_calls(repository)
    schemas, (missing, revision, *_) = git_without_rules
    # The server says nothing but the path it was given: only a rule can tell what that means.
    default = error_of(schemas, calls[0], missing)
    assert (default["errorCategory"], default["code"], default["isRetryable"]) == ("business", "TOOL_ERROR", False)
    # ... and that path is the agent's own (the call carries it): kept, not `[path]`.
    assert calls[0][1]["repo_path"] in default["description"]
    assert "[path]" not in default["description"]
    # "Ref 'deadbeef' did not resolve to an object": the revision the call named does not exist.
    assert (error_of(schemas, calls[1], revision)["errorCategory"], error_of(schemas, calls[1], revision)["code"]) == (
        "validation",
        "NOT_FOUND",
    )


# --- @modelcontextprotocol/server-filesystem --------------------------------------------------


def filesystem_calls(files: Path) -> list[Call]:
    return [
        ("read_text_file", {"path": "/etc/hostname"}),
        ("read_text_file", {"path": str(files / "missing.txt")}),
        ("read_text_file", {"path": str(files / "sub")}),
        ("edit_file", {"path": str(files / "notes.txt"), "edits": [{"oldText": "no such text", "newText": "x"}]}),
        ("get_file_info", {}),
        ("read_text_file", {"path": str(files / "notes.txt")}),
    ]


def test_server_filesystem_failures_with_the_shipped_rules(node_servers: dict[str, list[str]], files: Path) -> None:
    calls = filesystem_calls(files)
    command = proxied(*node_servers["filesystem"], str(files), rules="server-filesystem.toml")
    schemas, (outside, missing, directory, edit, no_path, read) = session(command, calls)
    expected = [
        (outside, "PATH_NOT_ALLOWED"),
        (missing, "PATH_NOT_FOUND"),
        (directory, "IS_A_DIRECTORY"),
        (edit, "EDIT_TEXT_NOT_FOUND"),
    ]
    for (result, code), call in zip(expected, calls, strict=False):
        envelope = error_of(schemas, call, result)
        assert (envelope["errorCategory"], envelope["code"]) == ("validation", code)
        assert_nothing_leaks(result)
    argument = error_of(schemas, calls[4], no_path)
    assert (argument["errorCategory"], [e["field"] for e in argument["fieldErrors"]]) == ("validation", ["path"])
    assert argument["executionState"] == "not_executed"  # the server's own -32602: it did not run
    assert not read.get("isError")
    assert read["content"][0]["text"] == "first line\n"


SECRET_NAME = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def path_calls(files: Path) -> list[Call]:
    """Reads outside the allowed directory, of missing files (three levels deep and one), of a credential's name."""
    return [
        ("read_text_file", {"path": str(files.parent / "elsewhere" / "notes.txt")}),
        ("read_text_file", {"path": str(files / "no" / "such" / "file.txt")}),
        ("read_text_file", {"path": str(files / "absent.txt")}),  # not `filesystem_calls`' missing.txt: no repeat
        ("read_text_file", {"path": str(files / f"{SECRET_NAME}.txt")}),
    ]


def guarded_calls(root: Path) -> list[Call]:
    """Read a missing file, write it, read it again; list a missing folder, create it, list it again."""
    report, folder = str(root / "report.txt"), str(root / "drafts")
    return [
        ("read_text_file", {"path": report}),
        ("write_file", {"path": report, "content": "written by the agent\n"}),
        ("read_text_file", {"path": report}),
        ("list_directory", {"path": folder}),
        ("create_directory", {"path": folder}),
        ("list_directory", {"path": folder}),
    ]


@pytest.fixture(scope="module")
def guarded_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second directory the filesystem server may use, empty: `guarded_calls` create what they read."""
    return tmp_path_factory.mktemp("guarded").resolve()


@pytest.fixture(scope="module")
def filesystem_without_rules(node_servers: dict[str, list[str]], files: Path, guarded_root: Path) -> Answers:
    """server-filesystem behind one proxy without a rules file but with `--repeat-guard 60`: its answers to
    `filesystem_calls`, `path_calls`, then `guarded_calls` (in `guarded_root`).

    One session for the three tests that only read these answers, not one proxy each. The
    guard answers only a call that repeats one that failed, and no call before `guarded_calls`
    repeats another: to them the proxy is the one without rules.
    """
    command = [*PROXY, "--repeat-guard", "60", "--", *node_servers["filesystem"], str(files), str(guarded_root)]
    return session(command, [*filesystem_calls(files), *path_calls(files), *guarded_calls(guarded_root)])


def test_server_filesystem_without_rules_is_classified_from_its_words(
    filesystem_without_rules: Answers, files: Path
) -> None:
    calls = filesystem_calls(files)
    schemas, (outside, missing, *_) = filesystem_without_rules
    denied = error_of(schemas, calls[0], outside)
    # "Access denied - path outside allowed directories": the fix is a path inside them.
    assert (denied["errorCategory"], denied["categoryInferred"]) == ("validation", True)
    not_found = error_of(schemas, calls[1], missing)
    assert (not_found["errorCategory"], not_found["code"]) == ("validation", "NOT_FOUND")
    assert "ENOENT" in not_found["description"]


def test_server_filesystem_failures_keep_the_paths_the_agent_sent_and_the_directories_it_may_use(
    filesystem_without_rules: Answers, files: Path
) -> None:
    # Without a rules file: only the words, and what the agent already knows.
    calls = path_calls(files)
    schemas, results = filesystem_without_rules
    first = len(filesystem_calls(files))
    outside, deep, shallow, secret = results[first : first + len(calls)]

    denied = error_of(schemas, calls[0], outside)["description"]
    # "Access denied - path outside allowed directories: X not in Y": the agent's X, the server's Y.
    assert calls[0][1]["path"] in denied
    assert str(files) in denied
    for call, result in zip(calls[1:3], (deep, shallow), strict=True):
        # ENOENT ... open 'X': three levels deep or one, the path the agent sent is kept.
        assert call[1]["path"] in error_of(schemas, call, result)["description"]
    # A credential is never echoed, even one the agent put in a path itself.
    assert SECRET_NAME not in str(secret)
    assert_nothing_leaks(secret, SECRET_NAME)


# --- @modelcontextprotocol/server-everything -------------------------------------------------

EVERYTHING_CALLS: list[Call] = [
    ("get-sum", {"a": "one", "b": 2}),
    ("gzip-file-as-resource", {"name": "x.gz", "data": "http://127.0.0.1:9/unreachable"}),
    ("get-structured-content", {"location": "Atlantis"}),
    ("no-such-tool", {}),
    ("get-sum", {"a": 1, "b": 2}),
]


GZIP_ENV = {"GZIP_ALLOWED_DOMAINS": "127.0.0.1"}


async def listings(
    command: Sequence[str], *, env: dict[str, str] | None = None, calls: Sequence[Call] = ()
) -> dict[str, Any]:
    """What a legacy host that samples and elicits lists, reads and is answered by server-everything; `calls` last."""

    async def sample(context: Any, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        return mcp_types.CreateMessageResult(
            role="assistant", content=mcp_types.TextContent(type="text", text="a sampled answer"), model="test-model"
        )

    async def elicit(context: Any, params: Any) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"name": "Ada"})

    progresses: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progresses.append(progress)

    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=env)
    # Server-initiated requests exist on the 2025-11-25 protocol: a legacy host.
    async with Client(params, mode="legacy", sampling_callback=sample, elicitation_callback=elicit) as client:
        tools = (await client.list_tools()).tools
        resources = await client.list_resources()
        first = resources.resources[0]
        return {
            "tools": sorted(tool.name for tool in tools),
            "resources": sorted(str(resource.uri) for resource in resources.resources),
            "templates": sorted(t.uri_template for t in (await client.list_resource_templates()).resource_templates),
            "prompts": sorted(prompt.name for prompt in (await client.list_prompts()).prompts),
            "read": (await client.read_resource(first.uri)).model_dump(mode="json", exclude_none=True)["contents"],
            "sampled": (await client.call_tool("trigger-sampling-request", {"prompt": "hi"})).content[0].text,  # type: ignore[union-attr]
            "elicited": [
                block.text  # type: ignore[union-attr]
                for block in (await client.call_tool("trigger-elicitation-request", {})).content
            ],
            "progress": (
                await client.call_tool(
                    "trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_callback=on_progress
                ),
                progresses,
            )[1],
            # Last, so that their failures come after everything above.
            "schemas": {tool.name: tool.output_schema for tool in tools},
            "calls": [
                (await client.call_tool(name, arguments)).model_dump(mode="json", by_alias=True, exclude_none=True)
                for name, arguments in calls
            ],
        }


@pytest.fixture(scope="module")
def everything_through_the_proxy(node_servers: dict[str, list[str]]) -> dict[str, Any]:
    """server-everything behind one proxy, one legacy host session: `listings` with EVERYTHING_CALLS.

    Shared by the two tests that only read it (one proxy, not one each).
    """
    return anyio.run(
        functools.partial(listings, proxied(*node_servers["everything"]), env=GZIP_ENV, calls=EVERYTHING_CALLS)
    )


def test_server_everything_failures_come_out_in_the_contract(everything_through_the_proxy: dict[str, Any]) -> None:
    schemas = everything_through_the_proxy["schemas"]
    argument, fetch, structured, unknown, ok = everything_through_the_proxy["calls"]
    wrong = error_of(schemas, EVERYTHING_CALLS[0], argument)
    assert (wrong["errorCategory"], [e["field"] for e in wrong["fieldErrors"]]) == ("validation", ["a"])
    # The tool's own failure: its fetch of an unreachable URL.
    own = error_of(schemas, EVERYTHING_CALLS[1], fetch)
    assert (own["errorCategory"], own["isRetryable"], own["executionState"]) == ("transient", True, "outcome_unknown")
    assert "fetch failed" in own["description"]
    assert error_of(schemas, EVERYTHING_CALLS[2], structured)["errorCategory"] == "validation"
    assert error_of(schemas, EVERYTHING_CALLS[3], unknown)["code"] == "UNKNOWN_TOOL"
    assert ok["content"][0]["text"] == "The sum of 1 and 2 is 3."


@pytest.mark.skipif(
    fastmcp_before_4_2(), reason="fastmcp 4.1's proxy answers sampling as model 'fastmcp-client' (docs/proxy.md)"
)
def test_server_everything_passes_sampling_elicitation_progress_resources_and_prompts_through(
    node_servers: dict[str, list[str]], everything_through_the_proxy: dict[str, Any]
) -> None:
    direct = anyio.run(listings, node_servers["everything"])
    through = {key: value for key, value in everything_through_the_proxy.items() if key not in ("schemas", "calls")}
    del direct["schemas"], direct["calls"]
    # The proxy's own client declares roots, sampling and elicitation whatever the host does,
    # and this server registers a tool per capability it sees: the proxy may show more tools.
    assert set(through.pop("tools")) >= set(direct.pop("tools"))
    assert through == direct
    assert "a sampled answer" in through["sampled"]
    assert any("Ada" in text for text in through["elicited"])
    assert through["progress"] == [1, 2]


# --- the strict TypeScript client ---------------------------------------------------------------

TS_CALLS: list[Call] = [
    ("forecast", {"city": "Atlantis"}),
    ("forecast", {}),
    ("fail", {"message": "rate limit exceeded, retry after 3 seconds"}),
    ("fail_jsonrpc", {"code": -32602, "message": "bad", "data": {"field": "day"}}),
    ("fail_structured", {"structured": {"status": 503}}),
    ("no_such_tool", {}),
    ("search", {"query": "nothing"}),
    ("forecast", {"city": "Oslo"}),
]


def test_the_strict_typescript_client_never_throws_through_the_proxy(call_tools: Any) -> None:
    run = call_tools("v1", "legacy", TS_CALLS, proxied(*UPSTREAM))
    schemas = {tool["name"]: tool.get("outputSchema") for tool in run["tools"]}
    for call, made in zip(TS_CALLS, run["calls"], strict=True):
        assert "thrown" not in made, (call, made.get("thrown"))
        result = made["result"]
        if call[0] in ("search",) or call[1] == {"city": "Oslo"}:
            check_success(result, schemas.get(call[0]))
        else:
            check_error(result, schemas.get(call[0]))


def test_the_strict_typescript_client_reaches_a_third_party_servers_errors_through_the_proxy(
    call_tools: Any, node_servers: dict[str, list[str]]
) -> None:
    calls: list[Call] = [("get-structured-content", {"location": "Atlantis"}), ("get-sum", {"a": "x", "b": 1})]
    run = call_tools("v1", "legacy", calls, proxied(*node_servers["everything"]))
    schemas = {tool["name"]: tool.get("outputSchema") for tool in run["tools"]}
    for call, made in zip(calls, run["calls"], strict=True):
        assert "thrown" not in made, made.get("thrown")
        assert check_error(made["result"], schemas.get(call[0]))["errorCategory"] == "validation"


# --- mcp-errors check, before and after ----------------------------------------------------------


def check_commands(name: str, node_servers: dict[str, list[str]], files: Path, repository: Path) -> list[str]:
    return {
        "mcp-server-time": TIME,
        "mcp-server-git": [sys.executable, "-m", "mcp_server_git", "--repository", str(repository)],
        "server-filesystem": [*node_servers["filesystem"], str(files)],
        "server-everything": node_servers["everything"],
    }[name]


@pytest.mark.parametrize("name", ["mcp-server-time", "mcp-server-git", "server-filesystem", "server-everything"])
def test_check_finds_no_errors_through_the_proxy_where_the_bare_server_has_some(
    name: str, node_servers: dict[str, list[str]], files: Path, repository: Path
) -> None:
    command = check_commands(name, node_servers, files, repository)
    options = CheckOptions(timeout=30, connect_timeout=60, total_timeout=300)
    bare = anyio.run(check_server, command, options)
    through = anyio.run(check_server, proxied(*command), options)
    assert bare.failed
    # Warnings too (docs/proxy.md's table): the proxy's own texts keep the upstream's words
    # without their raw parts (ME024).
    assert [(finding["rule"], finding["severity"]) for finding in through.to_json()["findings"]] == []
    assert not through.failed


# --- the repeat guard after the agent did what the answer asked --------------------------------
# Their sessions (`--repeat-guard 60`) are `filesystem_without_rules` and `git_without_rules`.


def test_the_repeat_guard_lets_a_read_through_once_the_missing_file_or_folder_was_created(
    filesystem_without_rules: Answers, guarded_root: Path
) -> None:
    missing, wrote, read, unlisted, created, listed = filesystem_without_rules[1][-len(guarded_calls(guarded_root)) :]
    for failed in (missing, unlisted):
        assert failed["isError"]
        assert failed["structuredContent"]["isRetryable"] is False
    assert not wrote.get("isError")
    assert not created.get("isError")
    assert not read.get("isError"), read
    assert "written by the agent" in read["content"][0]["text"]
    assert not listed.get("isError"), listed


def test_the_repeat_guard_lets_a_checkout_through_once_the_missing_branch_was_created(
    git_without_rules: Answers,
) -> None:
    missing, created, checked_out = git_without_rules[1][-3:]
    assert missing["isError"]
    assert missing["structuredContent"]["isRetryable"] is False
    assert not created.get("isError"), created
    assert not checked_out.get("isError"), checked_out


# --- --disguised-failures and the text of files -------------------------------------------------

FILES_WITH_ERROR_WORDS = {
    "build.log": "Error: connection refused (postgres:5432)\nretrying in 5 s\nBuild failed: 3 errors\n",
    "oauth-fixture.json": '{"error": "invalid_grant", "error_description": "The refresh token has expired"}\n',
    "troubleshooting.md": "Failed to connect: timeout\n\nIf you see this, check the firewall.\n",
}


def test_disguised_failures_pass_the_files_server_filesystem_reads_unchanged_and_never_open_a_circuit(
    node_servers: dict[str, list[str]], tmp_path: Path
) -> None:
    root = tmp_path.resolve()
    for name, text in FILES_WITH_ERROR_WORDS.items():
        (root / name).write_text(text)
    calls: list[Call] = [("read_text_file", {"path": str(root / name)}) for name in FILES_WITH_ERROR_WORDS] * 3
    command = [*PROXY, "--disguised-failures", "--breaker-failures", "2", "--", *node_servers["filesystem"], str(root)]
    _, results = session(command, calls)
    assert [result.get("isError", False) for result in results] == [False] * len(calls)
    assert [result["content"][0]["text"] for result in results] == [
        FILES_WITH_ERROR_WORDS[Path(arguments["path"]).name] for _, arguments in calls
    ]
