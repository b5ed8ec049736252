"""The classifier: which category each kind of failure gets, and that its texts are safe."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    REQUEST_TIMEOUT,
)

from leak_strategies import FILLER, a_traceback, texts_with_a_path, texts_with_a_secret
from mcp_errors import (
    ENVELOPE_SCHEMA,
    AccessDeniedError,
    BusinessRuleError,
    FieldError,
    InputValidationError,
    ToolError,
    TransientError,
    register_exception,
)
from mcp_errors._server.classify import _shared_details, classify_failure, new_error_id
from mcp_errors._shared.contract import is_protocol_signal
from mcp_errors._shared.envelope import error_result
from servers.checks import check_details, details_on_the_wire

HTTP_MODULES = [httpx, httpx2]
ERROR_ID = "0123456789ab"


@pytest.fixture(autouse=True)
def empty_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mcp_errors._server.classify._registry", {})


def raised(make: Callable[[], BaseException]) -> BaseException:
    """The exception with a real traceback, as a tool would raise it."""
    try:
        raise make()
    except BaseException as exc:
        return exc


def http_status_error(module: Any, status: int, headers: dict[str, str] | None = None) -> BaseException:
    request = module.Request("GET", "https://api.example.com/orders")
    response = module.Response(status, headers=headers or {}, request=request)
    error: BaseException = module.HTTPStatusError(f"HTTP {status}", request=request, response=response)
    return error


async def anyio_timeout() -> BaseException:
    try:
        with anyio.fail_after(0):
            await anyio.sleep_forever()
    except TimeoutError as exc:
        return exc
    raise AssertionError("fail_after did not time out")


async def asyncio_timeout() -> BaseException:
    try:
        await asyncio.wait_for(asyncio.Event().wait(), timeout=0)
    except TimeoutError as exc:  # asyncio.TimeoutError is this class since 3.11
        return exc
    raise AssertionError("wait_for did not time out")


@pytest.mark.anyio
@pytest.mark.parametrize("make", [anyio_timeout, asyncio_timeout])
async def test_async_timeouts_are_transient_with_unknown_outcome(make: Callable[[], Any]) -> None:
    envelope = check_details(classify_failure(await make(), error_id=ERROR_ID), "transient", "UPSTREAM_TIMEOUT")
    assert envelope["isRetryable"] is True
    assert envelope["executionState"] == "outcome_unknown"


@pytest.mark.parametrize(
    ("make", "code", "state"),
    [
        (lambda: TimeoutError("read timed out"), "UPSTREAM_TIMEOUT", "outcome_unknown"),
        (lambda: ConnectionRefusedError(111, "Connection refused"), "UPSTREAM_UNAVAILABLE", "outcome_unknown"),
        (lambda: ConnectionResetError(104, "Connection reset by peer"), "UPSTREAM_CONNECTION_LOST", "outcome_unknown"),
    ],
    ids=["TimeoutError", "ConnectionRefusedError", "ConnectionResetError"],
)
# Every exception the tool did not classify leaves the outcome unknown, whatever failed: the
# tool may have written before it (only the tool's own ToolError can say "not executed").
def test_builtin_timeouts_and_connection_errors_are_transient(
    make: Callable[[], BaseException], code: str, state: str
) -> None:
    envelope = check_details(classify_failure(raised(make), error_id=ERROR_ID), "transient", code)
    assert envelope["executionState"] == state


@pytest.mark.parametrize(
    ("code", "category", "error_code"),
    [
        (REQUEST_TIMEOUT, "transient", "UPSTREAM_TIMEOUT"),
        (CONNECTION_CLOSED, "transient", "UPSTREAM_CONNECTION_LOST"),
        (INTERNAL_ERROR, "business", "INTERNAL_ERROR"),
        (INVALID_PARAMS, "validation", "INVALID_ARGUMENTS"),
        (-32099, "business", "INTERNAL_ERROR"),
    ],
)
def test_a_jsonrpc_error_a_tool_lets_escape_is_classified_by_its_code_never_by_its_text(
    code: int, category: str, error_code: str
) -> None:
    exc = raised(lambda: MCPError(code, "downstream: password=hunter2 at /srv/app/db.py"))
    details = classify_failure(exc, error_id=ERROR_ID)
    check_details(details, category, error_code)
    assert "hunter2" not in details.to_text()
    assert "/srv/app" not in details.to_text()
    assert not is_protocol_signal(exc)


@pytest.mark.parametrize("module", HTTP_MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize(
    ("name", "code", "state"),
    [
        ("ConnectError", "UPSTREAM_UNAVAILABLE", "outcome_unknown"),
        ("ConnectTimeout", "UPSTREAM_TIMEOUT", "outcome_unknown"),
        ("ReadTimeout", "UPSTREAM_TIMEOUT", "outcome_unknown"),
        ("RemoteProtocolError", "UPSTREAM_CONNECTION_LOST", "outcome_unknown"),
    ],
)
def test_httpx_transport_errors_are_transient(module: Any, name: str, code: str, state: str) -> None:
    request = module.Request("POST", "https://api.example.com/refunds")
    exc = raised(lambda: getattr(module, name)("boom", request=request))
    envelope = check_details(classify_failure(exc, error_id=ERROR_ID), "transient", code)
    assert envelope["executionState"] == state


@pytest.mark.parametrize("module", HTTP_MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize(
    ("status", "category", "code"),
    [
        (408, "transient", "UPSTREAM_TIMEOUT"),
        (429, "transient", "UPSTREAM_RATE_LIMITED"),
        (502, "transient", "UPSTREAM_BAD_GATEWAY"),
        (503, "transient", "UPSTREAM_UNAVAILABLE"),
        (504, "transient", "UPSTREAM_BAD_GATEWAY"),
        (401, "permission", "NOT_AUTHENTICATED"),
        (403, "permission", "ACCESS_DENIED"),
        (400, "validation", "INVALID_ARGUMENTS"),
        (422, "validation", "INVALID_ARGUMENTS"),
        (404, "validation", "NOT_FOUND"),
        (409, "business", "CONFLICT"),
        (412, "business", "CONFLICT"),
        (500, "business", "UPSTREAM_INTERNAL_ERROR"),
    ],
)
def test_http_statuses_map_to_their_category(module: Any, status: int, category: str, code: str) -> None:
    envelope = check_details(classify_failure(http_status_error(module, status), error_id=ERROR_ID), category, code)
    assert envelope["isRetryable"] is (category == "transient")


@pytest.mark.parametrize("module", HTTP_MODULES, ids=lambda m: m.__name__)
def test_retry_after_in_seconds_becomes_retry_after_seconds(module: Any) -> None:
    details = classify_failure(http_status_error(module, 429, {"Retry-After": "30"}), error_id=ERROR_ID)
    assert details.to_structured()["retryAfterSeconds"] == 30
    assert "after 30s" in details.to_text()


@pytest.mark.parametrize("module", HTTP_MODULES, ids=lambda m: m.__name__)
def test_retry_after_as_an_http_date_becomes_seconds_from_now(module: Any) -> None:
    when = email.utils.formatdate(time.time() + 120, usegmt=True)
    seconds = classify_failure(
        http_status_error(module, 503, {"Retry-After": when}), error_id=ERROR_ID
    ).retry_after_seconds
    assert seconds is not None
    assert 100 <= seconds <= 121


@pytest.mark.parametrize("value", ["soon", "-5", ""])
def test_an_unreadable_retry_after_is_left_out(value: str) -> None:
    assert (
        classify_failure(http_status_error(httpx, 503, {"Retry-After": value}), error_id=ERROR_ID).retry_after_seconds
        is None
    )


def test_an_unmapped_http_status_is_an_internal_error() -> None:
    check_details(classify_failure(http_status_error(httpx, 418), error_id=ERROR_ID), "business", "INTERNAL_ERROR")


@pytest.fixture
def locked_database(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    path = tmp_path / "shop.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE orders (id TEXT)")
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(path, timeout=0)
    yield other
    other.close()
    holder.execute("ROLLBACK")
    holder.close()


def test_a_locked_sqlite_database_is_transient(locked_database: sqlite3.Connection) -> None:
    with pytest.raises(sqlite3.OperationalError) as caught:
        locked_database.execute("INSERT INTO orders VALUES ('#12345')")
    envelope = check_details(classify_failure(caught.value, error_id=ERROR_ID), "transient", "DATABASE_BUSY")
    assert envelope["executionState"] == "outcome_unknown"


def test_other_sqlite_errors_are_internal() -> None:
    with pytest.raises(sqlite3.OperationalError) as caught:
        sqlite3.connect(":memory:").execute("SELECT * FROM missing")
    check_details(classify_failure(caught.value, error_id=ERROR_ID), "business", "INTERNAL_ERROR")


def test_the_builtin_permission_error_is_permission(tmp_path: Path) -> None:
    exc = raised(lambda: PermissionError(13, "Permission denied", str(tmp_path / "salaries.csv")))
    details = classify_failure(exc, error_id=ERROR_ID)
    check_details(details, "permission", "ACCESS_DENIED")
    assert str(tmp_path) not in details_on_the_wire(details)


def test_a_tool_error_keeps_what_the_tool_said() -> None:
    error = TransientError(
        "Inventory busy",
        description="Resend in 5 seconds.",
        code="INVENTORY_BUSY",
        retry_after_seconds=5,
        execution_state="not_executed",
        extra={"service": "inventory"},
    )
    envelope = check_details(classify_failure(raised(lambda: error), error_id=ERROR_ID), "transient", "INVENTORY_BUSY")
    assert envelope == {
        "errorCategory": "transient",
        "isRetryable": True,
        "description": "Resend in 5 seconds.",
        "code": "INVENTORY_BUSY",
        "retryAfterSeconds": 5,
        "executionState": "not_executed",
        "service": "inventory",
    }


def test_sdk_wrappers_and_single_exception_groups_are_looked_through() -> None:
    inner = raised(lambda: BusinessRuleError("Over limit", description="Escalate.", code="OVER_LIMIT"))
    wrapper = SDKToolError("Error executing tool refund: Over limit")
    wrapper.__cause__ = inner
    check_details(classify_failure(wrapper, error_id=ERROR_ID), "business", "OVER_LIMIT")
    check_details(
        classify_failure(ExceptionGroup("tg", [TimeoutError()]), error_id=ERROR_ID), "transient", "UPSTREAM_TIMEOUT"
    )


class QuotaExceededError(Exception):
    pass


class MonthlyQuotaExceededError(QuotaExceededError):
    pass


def quota_handler(category: str) -> Callable[[BaseException], ToolError]:
    return lambda exc: ToolError("Quota used up", category=category, description="Ask a human.", code="QUOTA")


def test_a_registered_type_and_its_subclasses_use_the_handler() -> None:
    register_exception(QuotaExceededError, quota_handler("business"))
    check_details(classify_failure(raised(QuotaExceededError), error_id=ERROR_ID), "business", "QUOTA")
    check_details(classify_failure(raised(MonthlyQuotaExceededError), error_id=ERROR_ID), "business", "QUOTA")


def test_the_most_specific_registration_wins_whatever_the_order() -> None:
    register_exception(MonthlyQuotaExceededError, quota_handler("permission"))
    register_exception(QuotaExceededError, quota_handler("business"))
    check_details(classify_failure(raised(MonthlyQuotaExceededError), error_id=ERROR_ID), "permission", "QUOTA")
    check_details(classify_failure(raised(QuotaExceededError), error_id=ERROR_ID), "business", "QUOTA")


def test_a_plain_sdk_tool_error_is_a_business_error_that_carries_its_message_unless_registered() -> None:
    plain = raised(lambda: SDKToolError("Order #1 is archived"))
    envelope = check_details(classify_failure(plain, error_id=ERROR_ID), "business", "TOOL_ERROR")
    assert envelope["description"].startswith("Order #1 is archived. ")
    register_exception(SDKToolError, quota_handler("permission"))
    check_details(classify_failure(plain, error_id=ERROR_ID), "permission", "QUOTA")


def test_a_registration_overrides_the_built_in_mapping() -> None:
    register_exception(
        TimeoutError, lambda exc: BusinessRuleError("Report too large", description="Ask for a smaller range.")
    )
    check_details(classify_failure(raised(TimeoutError), error_id=ERROR_ID), "business", None)  # type: ignore[arg-type]


def test_a_registration_made_after_a_builtin_exception_was_classified_still_wins() -> None:
    check_details(classify_failure(raised(TimeoutError), error_id=ERROR_ID), "transient", "UPSTREAM_TIMEOUT")
    register_exception(
        TimeoutError, lambda exc: BusinessRuleError("Report too large", description="Ask for a smaller range.")
    )
    check_details(classify_failure(raised(TimeoutError), error_id=ERROR_ID), "business", None)  # type: ignore[arg-type]


def test_each_crash_of_a_builtin_exception_is_logged_with_its_own_error_id(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_errors")
    for error_id in ("0000000000a1", "0000000000a2"):
        check_details(classify_failure(raised(lambda: KeyError("x")), error_id=error_id), "business", "INTERNAL_ERROR")
        check_details(classify_failure(raised(TimeoutError), error_id=error_id), "transient", "UPSTREAM_TIMEOUT")
    assert [(record.levelno, record.error_id) for record in caplog.records] == [  # type: ignore[attr-defined]
        (logging.ERROR, "0000000000a1"),
        (logging.INFO, "0000000000a1"),
        (logging.ERROR, "0000000000a2"),
        (logging.INFO, "0000000000a2"),
    ]


def test_a_broken_handler_degrades_to_an_internal_error(caplog: pytest.LogCaptureFixture) -> None:
    def broken(exc: BaseException) -> ToolError:
        raise KeyError("oops")

    register_exception(QuotaExceededError, broken)
    check_details(classify_failure(raised(QuotaExceededError), error_id=ERROR_ID), "business", "INTERNAL_ERROR")
    assert any("register_exception handler" in record.getMessage() for record in caplog.records)


def test_unclassified_exceptions_get_a_fixed_text_and_a_logged_error_id(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_errors")
    details = classify_failure(raised(lambda: KeyError("customer_42")), tool_name="lookup", error_id=ERROR_ID)
    envelope = check_details(details, "business", "INTERNAL_ERROR")
    assert envelope["executionState"] == "outcome_unknown"
    assert "customer_42" not in details_on_the_wire(details)
    (record,) = caplog.records
    assert record.levelno == logging.ERROR
    assert ERROR_ID in record.getMessage()
    assert record.error_id == ERROR_ID  # type: ignore[attr-defined]


def test_the_log_line_of_a_failure_without_a_code_has_no_stray_space(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_errors")
    classify_failure(raised(lambda: BusinessRuleError("No", description="Refused.")), tool_name="t", error_id=ERROR_ID)
    (record,) = caplog.records
    assert record.getMessage() == f"tool 't' failed: business, errorId {ERROR_ID}"


# Generated inputs: whatever a tool puts into its error, or whatever an exception says,
# no secret, absolute path or traceback reaches the agent.

leaky_texts = st.one_of(
    texts_with_a_secret().map(lambda case: (case[0], [case[1]])),
    texts_with_a_path().map(lambda case: (case[0], [case[1]])),
    FILLER.map(lambda text: (a_traceback(text), ["Traceback", 'File "', __file__])),
)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(leaky_texts, leaky_texts, leaky_texts, st.sampled_from([TransientError, BusinessRuleError, AccessDeniedError]))
def test_nothing_secret_reaches_the_agent_from_a_tool_error(
    message: tuple[str, list[str]],
    description: tuple[str, list[str]],
    field: tuple[str, list[str]],
    klass: type[ToolError],
) -> None:
    details = classify_failure(klass(message[0], description=description[0]), error_id=ERROR_ID)
    validation = classify_failure(
        InputValidationError(
            "Bad input",
            description="Fix it.",
            field_errors=[FieldError("query", field[0], expected=field[0], received=field[0])],
        ),
        error_id=ERROR_ID,
    )
    jsonschema.validate(details.to_structured(), ENVELOPE_SCHEMA)
    wire = details_on_the_wire(details) + details_on_the_wire(validation)
    everything = message[0] + description[0] + field[0]
    for _, needles in (message, description, field):
        for needle in needles:
            # A planted secret that the free text around it repeats is no longer a secret.
            assume(everything.count(needle) == 1 or needle in ("Traceback", 'File "', __file__))
            assert needle not in wire


@given(texts_with_a_secret(), st.sampled_from([RuntimeError, ValueError, KeyError, OSError, LookupError]))
def test_unclassified_exception_text_never_reaches_the_agent(case: tuple[str, str], klass: type[Exception]) -> None:
    text, secret = case
    details = classify_failure(raised(lambda: klass(text)), error_id=ERROR_ID)
    assert secret not in details_on_the_wire(details)
    assert details.code == "INTERNAL_ERROR"


def test_extra_fields_are_sanitised_like_any_text_that_reaches_the_agent() -> None:
    error = TransientError(
        "Inventory busy",
        description="Resend shortly.",
        extra={"upstream": {"dsn": "postgres://app:hunter2@db/prod", "log": ["/srv/app/inventory/worker.py"]}},
    )
    wire = details_on_the_wire(classify_failure(raised(lambda: error), error_id=ERROR_ID))
    assert "hunter2" not in wire
    assert "/srv/app" not in wire


def test_repeated_failures_of_one_kind_get_their_own_ids_and_results_that_share_no_state() -> None:
    def refuse() -> BaseException:
        return raised(lambda: BusinessRuleError("Over limit", description="Escalate.", code="OVER_LIMIT"))

    first_id, second_id = new_error_id(), new_error_id()
    first = error_result(classify_failure(refuse(), error_id=first_id), error_id=first_id)
    assert first.structured_content is not None
    first.structured_content["description"] = "changed by a caller"
    second = error_result(classify_failure(refuse(), error_id=second_id), error_id=second_id)
    assert second.structured_content is not None
    assert second.structured_content["description"] == "Escalate."
    assert (first.structured_content["errorId"], second.structured_content["errorId"]) == (first_id, second_id)
    assert second.content[0].text.endswith(f"(errorId: {second_id})")  # type: ignore[union-attr]
    assert first_id != second_id


def test_failures_with_long_texts_are_classified_but_not_kept() -> None:
    """The shared-instance cache must stay small whatever texts the tools raise."""
    before = _shared_details.cache_info().currsize
    long_text = "Stock count drifted. " * 500
    details = classify_failure(raised(lambda: BusinessRuleError(long_text, description=long_text)), error_id=ERROR_ID)
    assert details.code is None
    assert details.category == "business"
    assert len(details.description) <= 1000
    assert _shared_details.cache_info().currsize == before


def test_error_ids_are_twelve_hex_digits_and_do_not_repeat() -> None:
    ids = [new_error_id() for _ in range(2000)]  # more than one batch
    assert all(re.fullmatch(r"[0-9a-f]{12}", error_id) for error_id in ids)
    assert len(set(ids)) == len(ids)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_worker_does_not_hand_out_its_parents_error_ids() -> None:
    new_error_id()  # the parent now holds a batch of spare ids
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(write_end, " ".join(new_error_id() for _ in range(20)).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        child = pipe.read().split()
    os.waitpid(pid, 0)
    parent = [new_error_id() for _ in range(20)]
    assert len(child) == 20
    assert not set(child) & set(parent)


def test_extra_fields_are_made_json_with_sanitised_keys() -> None:
    error = BusinessRuleError(
        "Over limit",
        description="Escalate.",
        extra={"handle": object(), "/home/alice/.ssh/id_rsa token=abc123def456": 1},
    )
    envelope = classify_failure(raised(lambda: error), error_id=ERROR_ID).to_structured(ERROR_ID)
    json.dumps(envelope)  # no object left that JSON cannot carry
    assert "abc123def456" not in json.dumps(envelope)
    assert "/home/alice" not in json.dumps(envelope)


def test_results_written_from_one_validation_failure_share_no_nested_state() -> None:
    error = InputValidationError(
        "Bad input", description="Fix it.", field_errors=[FieldError("query", "too short", received="'a'")]
    )
    details = classify_failure(raised(lambda: error), error_id=ERROR_ID)
    first = error_result(details, error_id="a1")
    assert first.structured_content is not None
    first.structured_content["fieldErrors"][0]["received"] = "changed by a caller"
    second = error_result(details, error_id="a2")
    assert second.structured_content is not None
    assert second.structured_content["fieldErrors"][0]["received"] == "'a'"


def test_several_failures_of_one_kind_at_once_are_that_kind_and_mixed_ones_are_internal() -> None:
    timeouts = ExceptionGroup("fetches", [TimeoutError(), ExceptionGroup("retry", [TimeoutError()]), TimeoutError()])
    check_details(classify_failure(timeouts, error_id=ERROR_ID), "transient", "UPSTREAM_TIMEOUT")
    mixed = ExceptionGroup("fetches", [TimeoutError(), KeyError("k")])
    check_details(classify_failure(mixed, error_id=ERROR_ID), "business", "INTERNAL_ERROR")


def _raised(exc: BaseException, cause: BaseException | None = None) -> BaseException:
    """`exc` as raised (with a traceback), from `cause` when given."""
    try:
        if cause is None:
            raise exc
        raise exc from cause
    except BaseException as caught:  # the raised object is what is wanted
        return caught


CHAINS = {
    "a builtin alone": lambda: _raised(TimeoutError("slow")),
    "a crash alone": lambda: _raised(ValueError("bug")),
    "the SDK's ToolError raised by the tool": lambda: _raised(SDKToolError("Refused: archived")),
    "a tool's ToolError raised from a builtin": lambda: _raised(SDKToolError("Refused"), _raised(KeyError("k"))),
    "our error behind a builtin": lambda: _raised(
        RuntimeError("x"), _raised(BusinessRuleError("No", description="Take another path.", code="NO"))
    ),
    "two links": lambda: _raised(RuntimeError("x"), _raised(OSError("y"), _raised(TimeoutError("z")))),
    "a one-member group": lambda: _raised(BaseExceptionGroup("g", [_raised(TimeoutError("z"))])),
    "a group behind a wrapper": lambda: _raised(RuntimeError("x"), BaseExceptionGroup("g", [TimeoutError("z")])),
}


@pytest.mark.parametrize("chain", CHAINS.values(), ids=list(CHAINS))
def test_the_failure_read_from_a_chain_is_the_one_its_innermost_exception_says(
    chain: Callable[[], BaseException],
) -> None:
    from mcp_errors._server.classify import _unwrap

    exc = chain()
    leaf = _unwrap(exc)  # the full walk, which the shortcuts of `classify_failure` must agree with
    expected = classify_failure(leaf, error_id="e") if leaf is not exc else None
    found = classify_failure(exc, error_id="e")
    if expected is not None:
        assert (found.category, found.code) == (expected.category, expected.code)
    assert found.code is not None


def test_classify_http_status_still_answers_but_warns_that_it_is_deprecated() -> None:
    from mcp_errors._server.classify import classify_http_status

    with pytest.warns(DeprecationWarning, match="classify_failure"):
        details = classify_http_status(503, retry_after=5)
    assert details is not None
    assert details.category.value == "transient"


def test_the_register_exception_docstring_example_runs_and_teaches_the_classifier() -> None:
    import textwrap

    from mcp_errors._server import classify

    assert classify.register_exception.__doc__ is not None
    found = re.search(r"```python\n(.*?)```", classify.register_exception.__doc__, re.S)
    assert found is not None
    namespace: dict[str, Any] = {}
    exec(textwrap.dedent(found.group(1)), namespace)  # the autouse fixture empties the registry again
    failure = classify_failure(namespace["QuotaExceeded"](), error_id=ERROR_ID)
    assert (failure.category.value, failure.code) == ("business", "QUOTA_EXCEEDED")
