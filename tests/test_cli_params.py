"""`--http` takes the same forms in `serve` and `proxy`: PORT, or HOST:PORT."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from mcp_errors._cli import app
from mcp_errors._cli_params import parse_http_address


@pytest.mark.parametrize(
    ("value", "address"),
    [
        ("8080", ("127.0.0.1", 8080)),
        ("0.0.0.0:80", ("0.0.0.0", 80)),
        ("localhost:65535", ("localhost", 65535)),
        ("[::1]:8080", ("::1", 8080)),
    ],
)
def test_an_http_address_is_a_port_or_a_host_and_port(value: str, address: tuple[str, int]) -> None:
    assert parse_http_address(value) == address


def test_a_bare_port_uses_the_default_host() -> None:
    assert parse_http_address("8080", default_host="0.0.0.0") == ("0.0.0.0", 8080)


@pytest.mark.parametrize("value", ["", "0", "65536", "host", "host:", ":8080x", "127.0.0.1:-1", "[]:80"])
def test_an_http_address_without_a_usable_port_is_refused(value: str) -> None:
    with pytest.raises(typer.BadParameter):
        parse_http_address(value)


@pytest.mark.parametrize("command", ["serve", "proxy"])
@pytest.mark.parametrize("value", ["0", "localhost:99999", "localhost"])
def test_serve_and_proxy_refuse_the_same_bad_addresses(command: str, value: str) -> None:
    target = [] if command == "serve" else ["--", "python"]
    result = CliRunner().invoke(app, [command, "--http", value, *target], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "expected PORT or HOST:PORT" in result.output


def test_serve_refuses_two_different_interfaces() -> None:
    result = CliRunner().invoke(app, ["serve", "--db", ":memory:", "--http", "127.0.0.1:8080", "--host", "0.0.0.0"])
    assert result.exit_code == 2
