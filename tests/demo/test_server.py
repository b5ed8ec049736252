"""The demo support desk end to end through `mcp.Client`: in memory in both modes, and over stdio."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult

from mcp_errors._shared.contract import HONOURS_IDEMPOTENCY_META, IDEMPOTENCY_KEY_META
from mcp_errors.demo import Database, DeskConfig, FaultConfig, build_server
from servers.checks import assert_nothing_leaks, check_error, check_success

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


def wire(result: CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json")


@asynccontextmanager
async def desk(
    mode: str, *, role: str = "support", faults: FaultConfig | None = None, db: Database | None = None
) -> AsyncIterator[tuple[Client, dict[str, Any]]]:
    config = DeskConfig(role=role, faults=faults or FaultConfig())  # type: ignore[arg-type]
    async with Client(build_server(config, database=db), mode=mode) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        yield client, schemas


async def call(client: Client, name: str, arguments: dict[str, Any], key: str | None = None) -> dict[str, Any]:
    with anyio.fail_after(10):
        result = await client.call_tool(name, arguments, meta={IDEMPOTENCY_KEY_META: key} if key else None)  # type: ignore[arg-type]
    return wire(result)


@pytest.mark.anyio
async def test_unknown_email_is_a_valid_empty_result_not_an_error(mode: str) -> None:
    async with desk(mode) as (client, schemas):
        result = await call(client, "lookup_customer", {"email": "john@example.com"})
    structured = check_success(result, schemas["lookup_customer"])
    assert structured == {"resultCount": 0, "customers": []}
    assert "executed successfully" in result["content"][0]["text"]


@pytest.mark.anyio
async def test_known_email_finds_the_customer(mode: str) -> None:
    async with desk(mode) as (client, schemas):
        result = await call(client, "lookup_customer", {"email": "Ana.Silva@example.com"})
    structured = check_success(result, schemas["lookup_customer"])
    assert structured["resultCount"] == 1
    assert structured["customers"][0]["id"] == "C-1001"


@pytest.mark.anyio
async def test_malformed_order_id_names_the_expected_format_and_the_received_value(mode: str) -> None:
    async with desk(mode) as (client, schemas):
        result = await call(client, "get_order", {"order_id": "order-abc"})
    envelope = check_error(result, schemas["get_order"])
    assert (envelope["errorCategory"], envelope["code"]) == ("validation", "INVALID_ORDER_ID")
    [field] = envelope["fieldErrors"]
    assert field["field"] == "order_id"
    assert "#NNNNN" in field["expected"]
    assert "order-abc" in field["received"]


@pytest.mark.anyio
async def test_unknown_well_formed_order_is_a_valid_empty_result(mode: str) -> None:
    async with desk(mode) as (client, schemas):
        empty = await call(client, "get_order", {"order_id": "#99999"})
        found = await call(client, "get_order", {"order_id": "#10007"})
    assert check_success(empty, schemas["get_order"]) == {"resultCount": 0, "order": None}
    order = check_success(found, schemas["get_order"])["order"]
    assert order["id"] == "#10007"
    assert order["refundable"] == order["total"]


@pytest.mark.anyio
async def test_refund_over_the_limit_is_a_business_error_and_applies_nothing(mode: str) -> None:
    db = Database()
    async with desk(mode, db=db) as (client, schemas):
        result = await call(client, "process_refund", {"order_id": "#10002", "amount": 750, "reason": "broken"})
    envelope = check_error(result, schemas["process_refund"])
    assert (envelope["errorCategory"], envelope["code"]) == ("business", "REFUND_NEEDS_APPROVAL")
    assert envelope["executionState"] == "not_executed"
    assert db.refunds_for("#10002") == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    "amount", [0, -5, float("nan"), 0.004], ids=["zero", "negative", "nan", "below-a-cent-once-rounded"]
)
async def test_a_refund_amount_below_one_cent_is_a_validation_error(mode: str, amount: float) -> None:
    db = Database()
    async with desk(mode, db=db) as (client, schemas):
        result = await call(client, "process_refund", {"order_id": "#10003", "amount": amount, "reason": "x"})
    envelope = check_error(result, schemas["process_refund"])
    assert envelope["errorCategory"] == "validation"
    assert [error["field"] for error in envelope["fieldErrors"]] == ["amount"]
    assert db.refunds_for("#10003") == []


@pytest.mark.anyio
async def test_a_refund_amount_is_rounded_to_cents_before_it_is_checked_stored_and_reported(mode: str) -> None:
    db = Database()
    refundable = db.get_order("#10003")["refundable"]  # type: ignore[index]
    async with desk(mode, db=db) as (client, schemas):
        result = await call(client, "process_refund", {"order_id": "#10003", "amount": 1.006, "reason": "x"})
        order = await call(client, "get_order", {"order_id": "#10003"})
    receipt = check_success(result, schemas["process_refund"])
    assert receipt["amount"] == 1.01
    assert [refund["amount"] for refund in db.refunds_for("#10003")] == [1.01]
    assert receipt["remainingRefundable"] == round(refundable - 1.01, 2)
    assert order["structuredContent"]["order"]["refundable"] == receipt["remainingRefundable"]


@pytest.mark.anyio
async def test_refund_beyond_the_remaining_total_is_a_business_error(mode: str) -> None:
    db = Database()
    refundable = db.get_order("#10003")["refundable"]  # type: ignore[index]
    async with desk(mode, db=db) as (client, schemas):
        first = await call(client, "process_refund", {"order_id": "#10003", "amount": refundable - 1, "reason": "a"})
        second = await call(client, "process_refund", {"order_id": "#10003", "amount": 2, "reason": "b"})
        order = await call(client, "get_order", {"order_id": "#10003"})
    check_success(first, schemas["process_refund"])
    envelope = check_error(second, schemas["process_refund"])
    assert (envelope["errorCategory"], envelope["code"]) == ("business", "REFUND_EXCEEDS_REMAINING")
    assert envelope["remainingRefundable"] == pytest.approx(1.0)
    assert order["structuredContent"]["order"]["refundable"] == pytest.approx(1.0)


@pytest.mark.anyio
async def test_refund_of_an_unknown_order_is_refused(mode: str) -> None:
    async with desk(mode) as (client, schemas):
        result = await call(client, "process_refund", {"order_id": "#99999", "amount": 5, "reason": "x"})
    assert check_error(result, schemas["process_refund"])["code"] == "ORDER_NOT_FOUND"


@pytest.mark.anyio
async def test_financial_records_are_denied_before_existence_is_checked(mode: str) -> None:
    async with desk(mode) as (client, schemas):
        existing = await call(client, "get_financial_records", {"customer_id": "C-1001"})
        missing = await call(client, "get_financial_records", {"customer_id": "C-9999"})
        malformed = await call(client, "get_financial_records", {"customer_id": "nope"})
    envelopes = [check_error(result, schemas["get_financial_records"]) for result in (existing, missing, malformed)]
    # Same category, code and description whatever the id: nothing is learnt about existence.
    assert {(e["errorCategory"], e["code"], e["description"]) for e in envelopes} == {
        ("permission", "FINANCE_ROLE_REQUIRED", envelopes[0]["description"])
    }


@pytest.mark.anyio
async def test_finance_role_reads_records_and_gets_an_empty_result_for_unknown_customers(mode: str) -> None:
    async with desk(mode, role="finance") as (client, schemas):
        found = await call(client, "get_financial_records", {"customer_id": "C-1001"})
        missing = await call(client, "get_financial_records", {"customer_id": "C-9999"})
    assert check_success(found, schemas["get_financial_records"])["record"]["customer_id"] == "C-1001"
    assert check_success(missing, schemas["get_financial_records"])["resultCount"] == 0


@pytest.mark.anyio
async def test_search_answers_from_the_source_and_an_outage_is_a_transient_error(mode: str) -> None:
    faults = FaultConfig.build(outages=["search_knowledge:tickets"])
    async with desk(mode, faults=faults) as (client, schemas):
        hit = await call(client, "search_knowledge", {"query": "refund", "source": "policies"})
        miss = await call(client, "search_knowledge", {"query": "zeppelin", "source": "faq"})
        down = await call(client, "search_knowledge", {"query": "refund", "source": "tickets"})
        bad = await call(client, "search_knowledge", {"query": "refund", "source": "rumours"})
    assert check_success(hit, schemas["search_knowledge"])["results"][0]["source"] == "policies"
    assert check_success(miss, schemas["search_knowledge"])["resultCount"] == 0
    envelope = check_error(down, schemas["search_knowledge"])
    assert (envelope["errorCategory"], envelope["isRetryable"], envelope["executionState"]) == (
        "transient",
        True,
        "not_executed",
    )
    assert check_error(bad, schemas["search_knowledge"])["fieldErrors"][0]["field"] == "source"


@pytest.mark.anyio
async def test_a_search_of_thousands_of_words_is_a_validation_error_not_an_internal_one(mode: str) -> None:
    # Each word is a clause of the search: 25,000 broke SQLite's limits (found by the corpus run's fuzz).
    query = " ".join(f"w{index}" for index in range(25_000))
    async with desk(mode) as (client, schemas):
        result = await call(client, "search_knowledge", {"query": query, "source": "faq"})
    envelope = check_error(result, schemas["search_knowledge"])
    assert (envelope["errorCategory"], envelope["code"]) == ("validation", "QUERY_TOO_LONG")


@pytest.mark.anyio
async def test_a_search_word_longer_than_sqlite_takes_as_a_pattern_is_a_validation_error_not_an_internal_one(
    mode: str,
) -> None:
    # 16,667 three-byte characters make a LIKE pattern of over 50,000 bytes, which SQLite refuses
    # as "too complex" (found by tests/demo/test_fuzz.py).
    async with desk(mode) as (client, schemas):
        result = await call(client, "search_knowledge", {"query": "漢" * 16_667, "source": "faq"})
    envelope = check_error(result, schemas["search_knowledge"])
    assert (envelope["errorCategory"], envelope["code"]) == ("validation", "QUERY_TOO_LONG")


@pytest.mark.anyio
async def test_annotations_are_truthful(mode: str) -> None:
    async with Client(build_server(), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"lookup_customer", "get_order", "process_refund", "get_financial_records", "search_knowledge"}
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None
        writes = name == "process_refund"
        assert hints.read_only_hint is not writes
        assert hints.idempotent_hint is not writes
        assert hints.destructive_hint is writes
    assert (tools["process_refund"].meta or {}).get(HONOURS_IDEMPOTENCY_META) is True


@pytest.mark.anyio
async def test_a_resent_refund_with_the_same_key_is_replayed_not_applied_twice(mode: str) -> None:
    db = Database()
    args = {"order_id": "#10004", "amount": 3.5, "reason": "late"}
    async with desk(mode, db=db) as (client, schemas):
        first = await call(client, "process_refund", args, key="k-1")
        again = await call(client, "process_refund", args, key="k-1")
        reused = await call(client, "process_refund", {**args, "amount": 4}, key="k-1")
    assert first["structuredContent"] == again["structuredContent"]
    assert len(db.refunds_for("#10004")) == 1
    envelope = check_error(reused, schemas["process_refund"])
    assert (envelope["errorCategory"], envelope["code"]) == ("validation", "IDEMPOTENCY_KEY_REUSED")
    assert len(db.refunds_for("#10004")) == 1


@pytest.mark.anyio
async def test_commit_then_timeout_applies_the_refund_and_says_the_outcome_is_unknown(mode: str) -> None:
    db = Database()
    faults = FaultConfig.build(commit_then_timeout=1.0)
    args = {"order_id": "#10005", "amount": 2, "reason": "late"}
    async with desk(mode, faults=faults, db=db) as (client, schemas):
        lost = await call(client, "process_refund", args, key="k-lost")
        replay = await call(client, "process_refund", args, key="k-lost")
    envelope = check_error(lost, schemas["process_refund"])
    assert (envelope["errorCategory"], envelope["executionState"]) == ("transient", "outcome_unknown")
    assert check_success(replay, schemas["process_refund"])["orderId"] == "#10005"
    assert len(db.refunds_for("#10005")) == 1


@pytest.mark.anyio
async def test_same_seed_injects_the_same_faults(mode: str) -> None:
    async def pattern() -> list[bool]:
        async with desk(mode, faults=FaultConfig.build(fault_rate=0.5, seed=3)) as (client, _):
            return [(await call(client, "get_order", {"order_id": "#10001"})).get("isError", False) for _ in range(20)]

    first, second = await pattern(), await pattern()
    assert first == second
    assert 0 < sum(first) < 20


@pytest.mark.anyio
async def test_without_the_contract_failures_are_plain_text(mode: str) -> None:
    async with Client(build_server(DeskConfig(contract=False)), mode=mode) as client:
        result = wire(await client.call_tool("get_order", {"order_id": "order-abc"}))
    assert result["isError"] is True
    assert "structuredContent" not in result


def test_database_file_is_created_and_seeded_once(tmp_path: Any) -> None:
    path = tmp_path / "nested" / "desk.sqlite3"
    first = Database(path)
    first.refund("#10001", 1.0, "x", idempotency_key=None, check=lambda _refundable: None)
    first.close()
    again = Database(path)
    assert again.find_customer("ana.silva@example.com") is not None
    assert again.refund_count() == 1


@pytest.mark.anyio
async def test_serve_over_stdio_answers_with_the_contract() -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_errors", "serve", "--db", ":memory:"])
    with anyio.fail_after(30):
        async with Client(params) as client:
            schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
            empty = wire(await client.call_tool("lookup_customer", {"email": "john@example.com"}))
            denied = wire(await client.call_tool("get_financial_records", {"customer_id": "C-1001"}))
    assert check_success(empty, schemas["lookup_customer"])["resultCount"] == 0
    assert check_error(denied, schemas["get_financial_records"])["errorCategory"] == "permission"
    assert_nothing_leaks(denied)


@pytest.mark.anyio
async def test_the_outage_targets_name_exactly_the_desks_tools_and_sources() -> None:
    from mcp_errors.demo._db import KNOWLEDGE_SOURCES
    from mcp_errors.demo._server import DESK_TOOLS, OUTAGE_TARGETS

    async with Client(build_server()) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
    assert set(DESK_TOOLS) == listed
    assert listed | {f"search_knowledge:{source}" for source in KNOWLEDGE_SOURCES} == OUTAGE_TARGETS


@pytest.mark.parametrize(
    "args",
    [
        ["--outage", "get_ordr"],
        ["--outage", "get_order", "--outage", "search_knowledge:wiki"],
        ["--role", "admin"],
    ],
    ids=["unknown-tool", "unknown-source", "unknown-role"],
)
def test_serve_refuses_unknown_outages_and_roles_before_starting(args: list[str]) -> None:
    from typer.testing import CliRunner

    from mcp_errors._cli import app

    result = CliRunner().invoke(app, ["serve", "--db", ":memory:", *args])
    assert result.exit_code == 2


@pytest.mark.parametrize("port", ["0", "99999"])
def test_serve_refuses_a_port_outside_the_tcp_range(port: str) -> None:
    from typer.testing import CliRunner

    from mcp_errors._cli import app

    result = CliRunner().invoke(app, ["serve", "--db", ":memory:", "--http", port])
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_serve_refuses_a_file_that_is_not_a_database_and_leaves_it_alone(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mcp_errors._cli import app

    notes = tmp_path / "notes.sqlite3"
    notes.write_text("my notes, not a database\n")
    result = CliRunner().invoke(app, ["serve", "--db", str(notes)])
    assert result.exit_code == 2
    assert "--db" in result.output
    assert notes.read_text() == "my notes, not a database\n"


_AMOUNT = re.compile(r"(?<![\w.#-])\d+\.\d{2}(?![\d])")
_MONEY_FIELDS = frozenset(
    {"amount", "total", "refunded", "refundable", "remainingRefundable", "limit"}
    | {"lifetime_value", "outstanding_balance", "credit_limit"}
)


def amounts_without_currency(text: str) -> list[str]:
    """Every `123.45` in `text` that is not followed by the desk's currency."""
    return [match.group() for match in _AMOUNT.finditer(text) if not text.startswith(" EUR", match.end())]


def money_without_currency(value: object) -> list[object]:
    """Amounts in a JSON value that do not say their currency: in prose, or beside no `currency`."""
    if isinstance(value, str):
        return list(amounts_without_currency(value))
    if isinstance(value, list):
        return [bad for item in value for bad in money_without_currency(item)]
    if isinstance(value, dict):
        bad: list[object] = [key for key in value if key in _MONEY_FIELDS and value.get("currency") != "EUR"]
        return bad + [found for item in value.values() for found in money_without_currency(item)]
    return []


@pytest.mark.anyio
async def test_every_text_that_names_money_names_its_currency(mode: str) -> None:
    db = Database()
    refundable = db.get_order("#10003")["refundable"]  # type: ignore[index]
    async with desk(mode, role="finance", db=db) as (client, _):
        tools = (await client.list_tools()).tools
        instructions = client.instructions or ""
        answers = [
            await call(client, "process_refund", {"order_id": "#10002", "amount": 750, "reason": "broken"}),
            await call(client, "process_refund", {"order_id": "#10003", "amount": 0.001, "reason": "x"}),
            await call(client, "process_refund", {"order_id": "#10003", "amount": 1.5, "reason": "x"}),
            await call(client, "process_refund", {"order_id": "#10003", "amount": refundable, "reason": "x"}),
            await call(client, "get_order", {"order_id": "#10003"}),
            await call(client, "get_financial_records", {"customer_id": "C-1001"}),
            await call(client, "search_knowledge", {"query": "refund", "source": "policies"}),
        ]
    assert "500.00 EUR" in instructions
    for text in [instructions, *(tool.description or "" for tool in tools)]:
        assert amounts_without_currency(text) == [], text
    for answer in answers:
        text = answer["content"][0]["text"]
        # A success's text is its JSON; an error's is prose, and its envelope is JSON.
        assert money_without_currency(json.loads(text) if text.startswith("{") else text) == [], text
        assert money_without_currency(answer["structuredContent"]) == [], answer["structuredContent"]
