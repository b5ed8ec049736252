"""`mcp-errors proxy`: what is not a tool failure passes through unchanged.

The upstream is `tests/servers/proxy_upstream.py`, a server without the contract; the shared
clients (`client`, `stdio_client`) are in `tests/proxy/conftest.py`.
"""

from __future__ import annotations

import json

import pytest
from mcp import Client

from mcp_errors import read_result
from proxying import (
    schemas,
    wire,
)
from servers.checks import check_success

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """Module-wide, so that tests can share one proxy (`client`, `tests/proxy/conftest.py`)."""
    return "asyncio"


# --- what is not a tool failure passes unchanged ------------------------------------


@pytest.mark.anyio
async def test_results_resources_prompts_and_foreign_meta_pass_through_unchanged(shared_client: Client) -> None:
    echoed = await shared_client.call_tool("echo", {"text": "hi"})
    meta = await shared_client.call_tool("with_meta", {}, meta={"trace": "t-1", "mcp-errors/idempotencyKey": "k-1"})  # type: ignore[arg-type]
    resource = await shared_client.read_resource("note://greeting")
    prompt = await shared_client.get_prompt("summarize", {"topic": "rivers"})
    assert (echoed.is_error, echoed.structured_content, echoed.content[0].text) == (False, {"result": "hi"}, "hi")  # type: ignore[union-attr]
    assert meta.meta is not None
    assert meta.meta["echo"].items() >= {"trace": "t-1", "mcp-errors/idempotencyKey": "k-1"}.items()
    assert resource.contents[0].text == "hello from upstream"  # type: ignore[union-attr]
    assert prompt.messages[0].content.text == "Summarize rivers."  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_success_with_its_data_only_in_structured_content_keeps_it_and_gains_its_text(
    shared_client: Client,
) -> None:
    result = await shared_client.call_tool("structured_only", {})
    assert not result.is_error
    assert result.structured_content == {"items": ["a", "b", "c"]}
    assert read_result(result).kind == "success"
    assert [json.loads(block.text) for block in result.content] == [{"items": ["a", "b", "c"]}]  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_a_success_with_no_content_becomes_a_valid_empty_result(shared_client: Client) -> None:
    listed = await schemas(shared_client)
    found_nothing = await shared_client.call_tool("search", {"query": "q"})
    bare = await shared_client.call_tool("nothing", {})
    for result, name in ((found_nothing, "search"), (bare, "nothing")):
        outcome = read_result(result)
        assert outcome.kind == "empty"
        assert result.content
        assert "returned nothing" in result.content[0].text  # type: ignore[union-attr]
        check_success(wire(result), listed[name])
