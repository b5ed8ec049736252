"""Optional libraries' classes recognised by name: their subclasses too, and nobody else's of the same name."""

from __future__ import annotations

import httpx
import httpx2
import pytest
from fastmcp import FastMCP

from mcp_errors._shared.optional_types import is_fastmcp, is_httpx


@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_httpx_exceptions_and_their_subclasses_are_recognised_in_either_distribution(module: object) -> None:
    read_timeout = module.ReadTimeout("slow")  # type: ignore[attr-defined]
    assert is_httpx(read_timeout, "TimeoutException")  # a subclass of the named class
    assert is_httpx(read_timeout, "ReadTimeout", "ConnectError")
    assert not is_httpx(read_timeout, "ConnectError")


def test_a_class_of_the_same_name_from_elsewhere_is_not_httpxs() -> None:
    class ReadTimeout(Exception):  # noqa: N818  # httpx's name, on purpose
        pass

    assert not is_httpx(ReadTimeout(), "ReadTimeout")


def test_fastmcp_objects_are_recognised_by_their_class_name() -> None:
    assert is_fastmcp(FastMCP("x"), "FastMCP")
    assert not is_fastmcp(object(), "FastMCP")


def test_each_class_is_judged_once_and_what_is_remembered_stays_bounded() -> None:
    from mcp_errors._shared import optional_types

    made = [type(f"ReadTimeout{number}", (Exception,), {}) for number in range(optional_types._KNOWN_MAX + 10)]
    for klass in made:
        assert not is_httpx(klass(), "ReadTimeout")  # a name of its own, and not httpx's module
    assert len(optional_types._KNOWN) <= optional_types._KNOWN_MAX
    assert is_httpx(httpx.ReadTimeout("slow"), "TimeoutException")
    assert is_httpx(httpx.ReadTimeout("slow"), "TimeoutException")  # the remembered answer, the same
