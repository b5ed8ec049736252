"""Judging one answer: leaks (and paths that are not leaks), failures disguised as successes,
error texts an agent cannot use, and silent empty results, with or without the contract."""

from __future__ import annotations

from typing import Any

import pytest
from mcp_types import CallToolResult, TextContent, Tool, ToolAnnotations

from mcp_errors.check._judge import judge_call, raw_dump, reads_as_failure
from mcp_errors.check._probes import Probe

TOOL = Tool(name="connect", input_schema={"type": "object", "properties": {"api_key": {"type": "string"}}})
PROBE = Probe("missing-required", {}, ("api_key",), "required api_key missing")
FILES = Tool(name="read_file", input_schema={"type": "object", "properties": {"path": {"type": "string"}}})


def plain(text: str, *, is_error: bool = True, structured: dict[str, Any] | None = None) -> CallToolResult:
    """A result from a server without the contract."""
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured, is_error=is_error
    )


def rules(
    result: CallToolResult, probe: Probe | None = None, *, tool: Tool = TOOL, domain: tuple[str, ...] = ()
) -> set[str]:
    verdicts = judge_call(tool, probe or Probe("valid", {"api_key": "k-12345"}), result, domain=domain)
    return {rule for rule, _ in verdicts} - {"ME002"}


def error_with(description: str) -> CallToolResult:
    data = {"errorCategory": "validation", "isRetryable": False, "description": description}
    text = f"[validation error, not retryable] Invalid arguments. {description}"
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data, is_error=True)


def leak_rules(description: str) -> list[str]:
    return [rule for rule, _ in judge_call(TOOL, PROBE, error_with(description)) if rule == "ME010"]


@pytest.mark.parametrize(
    "description",
    [
        "The argument api_key is wrong. Fields: api_key: required argument is missing (expected a string).",
        "Correct password and call again. Fields: password: String should have at least 8 characters.",
        "The api_key was rejected (token=[REDACTED]); send a valid api_key and call again.",
        'The api_key was rejected ({"api_key": "[REDACTED]"}); send a valid one and call again.',
        "The api_key must be a string, not a number: api_key: 12345 is not of type 'string'.",
        "The api_key is missing; send a Bearer authentication header or the api_key argument.",
        "The database at postgres://admin:[REDACTED]@db.internal/prod refused the api_key; call again later.",
    ],
)
def test_a_secret_named_field_with_its_problem_or_a_redaction_is_not_a_leak(description: str) -> None:
    assert leak_rules(description) == []


@pytest.mark.parametrize(
    "description",
    [
        "The api_key was rejected: api_key=sk-live-4f9a8b7c6d5e4f3a2b1c0d. Send a valid api_key.",
        "The api_key was rejected for user bob with password: hunter2. Send a valid api_key.",
        'The api_key was rejected ({"api_key": "a1b2c3d4e5f6"}); send a valid one and call again.',
        "The api_key was refused; upstream said Authorization: Bearer abc123def456ghi789.",
        "The database at postgres://admin:hunter@db.internal/prod refused the api_key; call again later.",
        "The api_key was rejected; the stored key is ghp_abcdefghijklmnopqrstuvwxyz0123 and differs.",
    ],
)
def test_a_credential_looking_value_is_a_leak(description: str) -> None:
    assert leak_rules(description) == ["ME010"]


def read(path: str) -> Probe:
    return Probe("valid", {"path": path})


@pytest.mark.parametrize(
    ("text", "probe", "domain"),
    [
        # The caller's own path argument, quoted back.
        ("Access denied - path outside allowed directories: /etc/passwd not in /srv/notes", read("/etc/passwd"), ()),
        # The caller's relative path, as the server resolved it.
        ("ENOENT: no such file or directory, open '/srv/notes/today.txt'", read("today.txt"), ()),
        # An allowed root the error names so the agent can fix its input.
        ("Repository path 'x' is outside the allowed repository '/home/ci/work/repo'", read("x"), ()),
        ("Path not allowed; the allowed directories are: /data/a, /data/b", read("y"), ()),
        # The caller's own path as pydantic quotes it back, shortened in the middle.
        (
            "1 validation error for gitArguments\ntarget\n  Field required [type=missing, input_value={'repo_path': "
            "'/tmp/pytes...t_mcp_server_git0/repo'}, input_type=dict]",
            read("/tmp/pytest-of-ci/pytest-7/test_mcp_server_git0/repo"),
            (),
        ),
        # A root the server listed (list_allowed_directories) or the --args file named.
        ("EISDIR: illegal operation on a directory, read '/srv/notes/drafts'", read("drafts"), ("/srv/notes",)),
        # The place to look, named in prose (no "allowed"), with what to do next.
        ("Note 'ideas' does not exist under /srv/notes. Call list_folder to see the notes.", read("ideas"), ()),
        ("No report was found in '/data/reports/2024'; list the folder to see what it holds.", read("q3"), ()),
        # URL routes are addresses of an API, not files.
        ("GET /api/v2/dags failed: connection refused; try again later.", read("dags"), ()),
        ("Order /v1/orders/ord-123 was not found; check the order id.", read("ord-123"), ()),
        ("The endpoint /internal/jobs/run answered 502; try again later.", read("run"), ()),
    ],
)
def test_a_path_in_the_servers_own_domain_is_information(text: str, probe: Probe, domain: tuple[str, ...]) -> None:
    assert "ME010" not in rules(plain(text), probe, tool=FILES, domain=domain)


@pytest.mark.parametrize(
    ("text", "probe", "domain"),
    [
        ("Lookup failed in /home/alice/src/orders/handlers.py; try again later.", read("today.txt"), ("/srv/notes",)),
        ("/usr/lib/python3.11/site-packages/orders/db.py raised KeyError; retry.", read("/srv/notes/a"), ()),
        # A traceback stays a leak even when its frames are inside an allowed root.
        (
            'Traceback (most recent call last):\n  File "/srv/notes/app.py", line 3, in read\nOSError: locked',
            read("a"),
            ("/srv/notes",),
        ),
        # Named next to an allowed root, but not under it.
        ("Path outside the allowed directories: /srv/notes. Config: /home/bob/.config/app.toml", read("q"), ()),
        # Named as a place to look, but a place no caller could know.
        ("Note 'ideas' does not exist under /home/alice/notes. Call list_folder first.", read("ideas"), ()),
        ("Lookup failed in /srv/app/handlers.py; try again later.", read("q"), ()),
        ("Lookup failed in /opt/app/node_modules/db/index; try again later.", read("q"), ()),
        # A path nobody named as a place.
        ("Could not load /srv/app/config/settings.toml: permission denied.", read("q"), ()),
        # A route beside a leak: the route is information, the installed package is not.
        ("GET /api/v2/dags failed in /usr/lib/python3/site-packages/requests/api.py", read("dags"), ()),
    ],
)
def test_a_path_the_caller_could_not_know_is_a_leak(text: str, probe: Probe, domain: tuple[str, ...]) -> None:
    assert "ME010" in rules(plain(text), probe, tool=FILES, domain=domain)


@pytest.mark.parametrize(
    "text",
    [
        "Error: Only SELECT queries are allowed",
        'Database error: near "SELEC": syntax error',
        "sqlite3.OperationalError: no such table: orders",
        "Cmd('git') failed due to: exit code(128)\n  cmdline: git checkout nowhere",
        "Request failed: 503 Service Unavailable",
        "Upload failed: the bucket is full",
        "Upload failed: No space left on device",
        "Failed to connect to the database at db.internal",
        "  error - the index is locked",
    ],
)
def test_a_success_that_reads_as_a_failure_is_a_disguised_failure(text: str) -> None:
    assert rules(plain(text, is_error=False)) == {"ME022"}


@pytest.mark.parametrize(
    "text",
    [
        "No errors found in the last 24 hours.",
        "Error rate: 0.3% over the last hour.",
        # A tool that reads logs or files may be asked for a traceback (tests/corpus/successes.toml).
        "Traceback (most recent call last):\n  ...",
        "Errors: none. All 12 checks passed.",
        "The order #12345 shipped on 2024-01-31.",
        "example: Error - ENOENT: no such file or directory",  # one item of a partial result
        # A label followed by a value is data: a statistic, a count of failed jobs.
        "Standard error: 0.051",
        "Mean squared error: 1.2",
        "Margin of error: ±3%",
        "Jobs failed: 0 of 12; all 12 succeeded.",
        "Checks failed: none",
        "Checks failed: n/a; the suite was skipped.",
    ],
)
def test_a_success_that_mentions_errors_is_not_a_disguised_failure(text: str) -> None:
    assert "ME022" not in rules(plain(text, is_error=False))


def test_a_success_whose_structured_content_carries_an_error_is_a_disguised_failure() -> None:
    result = plain("Done.", is_error=False, structured={"error": "quota exceeded"})

    assert rules(result) == {"ME022"}


@pytest.mark.parametrize(
    "text",
    [
        "fetch failed",
        "Error executing tool connect",
        "Internal error",
        "Error: Something went wrong",
        "",
        "MCP error -32603: failed",
    ],
)
def test_an_error_text_that_says_nothing_is_generic(text: str) -> None:
    assert rules(plain(text)) == {"ME023"}


@pytest.mark.parametrize(
    "text",
    [
        "Error executing tool get_current_time: Invalid timezone: 'No time zone found with key Mars/Olympus'",
        "No changes staged for commit. Use git_add to stage changes first.",
        "The orders database is locked by a backup; try again in a minute.",
        "[validation error, not retryable] Invalid arguments. The api_key must be 32 characters; correct it.",
    ],
)
def test_an_error_text_that_says_what_went_wrong_passes_the_text_rules(text: str) -> None:
    assert rules(plain(text)) == set()


@pytest.mark.parametrize(
    "text",
    [
        "1 validation error for connectArguments\napi_key\n  Field required [type=missing, input_value={}, "
        "input_type=dict]\n    For further information visit https://errors.pydantic.dev/2.14/v/missing",
        "git log failed: Command '['git', 'log']' returned non-zero exit status 128: not a git repository",
        'Invalid arguments: [{"code": "invalid_type", "expected": "string", "received": "number", "path": ["x"]}]',
    ],
)
def test_a_raw_library_dump_is_flagged(text: str) -> None:
    assert rules(plain(text)) == {"ME024"}


def test_an_error_with_no_category_and_no_retry_signal_is_flagged() -> None:
    assert rules(plain("The lookup went sideways at stage 3 of 5.")) == {"ME025"}


@pytest.mark.parametrize(
    ("text", "structured", "meta"),
    [
        ("The lookup went sideways at stage 3 of 5.", {"retryable": True}, None),
        (
            "The lookup went sideways at stage 3 of 5.",
            None,
            {"io.modelcontextprotocol/toolFailure": {"class": "reliability"}},
        ),
        ("The api_key went sideways at stage 3 of 5.", None, None),  # names the argument to fix
    ],
)
def test_a_structured_signal_or_a_named_argument_is_a_recovery_hint(
    text: str, structured: dict[str, Any] | None, meta: dict[str, Any] | None
) -> None:
    result = plain(text, structured=structured)
    if meta is not None:
        result = result.model_copy(update={"meta": meta})

    assert "ME025" not in rules(result)


@pytest.mark.parametrize("text", ["", "[]", "{}", "null", "None", '""', "''", "   "])
def test_an_empty_success_without_a_sentence_is_silent(text: str) -> None:
    assert rules(plain(text, is_error=False)) == {"ME013"}


@pytest.mark.parametrize(
    "text", ["No orders match #12345; the search ran and found nothing.", "Total: 0 files, 0 directories"]
)
def test_an_empty_success_that_says_so_is_not_silent(text: str) -> None:
    assert rules(plain(text, is_error=False)) == set()


@pytest.mark.parametrize("text", ["0", "0.0", "false"])
def test_a_bare_value_is_an_answer_not_an_empty_result(text: str) -> None:
    assert rules(plain(text, is_error=False)) == set()


def test_without_an_envelope_the_contract_finding_says_what_the_agent_loses() -> None:
    verdicts = dict(judge_call(TOOL, PROBE, plain("api_key is required; pass it and call again.")))

    assert verdicts["ME002"].startswith("probe 'required api_key missing': ")
    assert "no category and no retry verdict" in verdicts["ME002"]


@pytest.mark.parametrize(
    ("text", "structured"),
    [
        ('{"error": "Connection refused: the Airflow API at http://localhost:8080 is not answering."}', None),
        ('  {"error": {"code": 502, "message": "upstream down"}, "data": null}', None),
        ('{"status": "failed", "reason": "the export job was cancelled"}', None),
        ('{"ok": false, "detail": "quota exceeded"}', None),
        ("Done.", {"error": "quota exceeded"}),
        ("Done.", {"errors": [{"message": "rate limited"}]}),
    ],
)
def test_a_success_whose_json_reports_a_failure_reads_as_one(text: str, structured: dict[str, Any] | None) -> None:
    result = plain(text, is_error=False, structured=structured)

    assert reads_as_failure(result) is not None
    assert rules(result) == {"ME022"}


@pytest.mark.parametrize(
    "text",
    [
        '{"error": null, "dags": ["daily_sales"]}',
        '{"error": "", "count": 3}',
        '{"data": {"orders": []}, "errors": [{"message": "one field failed"}]}',  # GraphQL's partial result
        '{"status": "success", "rows": 2}',
        '{"error": "unclosed',  # not JSON: judged as text
    ],
)
def test_a_success_whose_json_reports_no_failure_reads_as_a_success(text: str) -> None:
    assert reads_as_failure(plain(text, is_error=False)) is None


def valid(**arguments: str) -> Probe:
    return Probe("valid", dict(arguments))


def empty(**arguments: str) -> Probe:
    return Probe("empty", dict(arguments), source="--args")


def tool(name: str, *, read_only: bool | None = True) -> Tool:
    annotations = ToolAnnotations(read_only_hint=read_only) if read_only is not None else None
    return Tool(name=name, input_schema={"type": "object"}, annotations=annotations)


@pytest.mark.parametrize(
    ("text", "probe", "called"),
    [
        # A missing resource the caller addressed stays an error.
        ("404 Not Found: nothing is published there; check the URL.", valid(url="https://example.com/x"), "fetch"),
        ("Note 'ideas' does not exist under /srv/notes. Call list_folder first.", valid(name="ideas"), "read_note"),
        ("ENOENT: no such file or directory, open '/srv/notes/x.md'", empty(path="x.md"), "read_file"),
        ("Folder 'archive' not found; list the root to see its folders.", empty(folder="archive"), "list_folder"),
    ],
)
def test_a_missing_resource_the_caller_named_is_an_error_not_an_empty_result(
    text: str, probe: Probe, called: str
) -> None:
    assert "ME012" not in rules(plain(text), probe, tool=tool(called))


@pytest.mark.parametrize(
    ("text", "probe"),
    [
        # A query or listing that ran and matched nothing, answered as an error.
        ("No notes match 'milk'.", valid(query="milk")),
        ("Order not found", valid(order_id="#99999")),  # a lookup by key that matched nothing
        (None, valid(query="milk")),  # no content at all
        ("The search could not complete.", empty(query="zzz")),  # --args says it matches nothing
        ("No files found in the folder.", valid(path="/srv/notes/empty")),  # a listing of nothing
    ],
)
def test_a_query_that_matched_nothing_answered_as_an_error_is_flagged(text: str | None, probe: Probe) -> None:
    result = plain(text) if text is not None else CallToolResult(content=[], is_error=True)

    assert "ME012" in rules(result, probe, tool=tool("search"))


def test_a_tool_that_declares_a_write_ran_no_query_so_no_empty_result_rule_applies() -> None:
    writer = tool("archive_note", read_only=False)

    assert "ME012" not in rules(plain("Note not found"), valid(name="ideas"), tool=writer)
    assert "ME013" not in rules(plain("", is_error=False), valid(name="ideas"), tool=writer)


def test_the_frameworks_raw_report_has_one_shape_whatever_the_tool_and_field() -> None:
    def report(name: str, field: str, value: str) -> CallToolResult:
        function = name.removeprefix("git_")  # mcp-server-git registers `status` as `git_status`
        return plain(
            f"Error executing tool {name}: 1 validation error for {function}Arguments\n{field}\n  Field required "
            f"[type=missing, input_value={value}, input_type=dict]\n    For further information visit "
            "https://errors.pydantic.dev/2.14/v/missing"
        )

    first = raw_dump("git_status", report("git_status", "repo_path", "{}"))
    second = raw_dump("git_log", report("git_log", "max_count", "{'repo_path': '/srv/repo'}"))
    own = raw_dump("git_log", plain("git log failed: Command '['git', 'log']' returned non-zero exit status 128"))

    assert first is not None
    assert first == second
    assert own is not None
    assert own[0] != first[0]
    assert raw_dump("git_log", plain("The log is empty; make a first commit.")) is None
