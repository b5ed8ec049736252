"""`--http` takes the same forms in `serve` and `proxy`: PORT, or HOST:PORT; `--store` is checked at start-up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from mcp_errors._cli import app
from mcp_errors._cli_params import parse_http_address
from services import free_port, running_redis

pytestmark = pytest.mark.slow  # starts servers or processes (`-m "not slow"` leaves it out)


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


# --- --store is opened and checked at start-up -----------------------------------------------

STARTS = {
    "proxy": ["proxy", "--idempotency-keys", "--store", "{url}", "--", sys.executable, "-c", "pass"],
    "serve": ["serve", "--db", ":memory:", "--store", "{url}"],
}


def start(command: str, url: str) -> subprocess.CompletedProcess[str]:
    """`mcp-errors <command> --store <url>` as a host runs it, stdin closed."""
    args = [arg.replace("{url}", url) for arg in STARTS[command]]
    return subprocess.run(
        [sys.executable, "-m", "mcp_errors", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("command", ["proxy", "serve"])
@pytest.mark.parametrize("scheme", ["redis", "postgresql"])
def test_a_store_on_a_closed_port_stops_the_start_with_one_line_naming_it_without_its_password(
    command: str, scheme: str
) -> None:
    url = f"{scheme}://app:s3cret-pw@127.0.0.1:{free_port()}/0"

    done = start(command, url)

    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"mcp-errors {command}: --store: ")
    assert url.replace("s3cret-pw", "***") in line
    assert "s3cret-pw" not in done.stderr
    assert "Traceback" not in done.stderr


def test_a_postgres_store_the_server_refuses_stops_the_proxy_at_start_up(postgres_url: str) -> None:
    url = postgres_url.replace("postgres@", "nobody:wrong-password@")

    done = start("proxy", url)

    assert done.returncode == 2, done.stderr
    assert "nobody" in done.stderr
    assert "wrong-password" not in done.stderr


def test_a_redis_store_with_a_wrong_password_stops_the_proxy_at_start_up(redis_url: str) -> None:
    with running_redis(password="right-password") as url:
        done = start("proxy", url.replace("redis://", "redis://:wrong-password@"))

    assert done.returncode == 2, done.stderr
    assert "redis://:***@127.0.0.1" in done.stderr
    assert "wrong-password" not in done.stderr


@pytest.mark.parametrize("command", ["proxy", "serve"])
def test_a_sqlite_store_in_a_missing_folder_stops_the_start_and_creates_nothing(command: str, tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent-dir"

    done = start(command, f"sqlite:///{missing}/keys.db")

    assert done.returncode == 2, done.stderr
    assert f"the folder {missing} does not exist" in done.stderr
    assert not missing.exists()
