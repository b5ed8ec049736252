"""Fixtures shared by every test module.

- `anyio_backend`: anyio runs every async test on asyncio.
- `mode`: a test that takes it runs once per connection mode of `mcp.Client` in memory,
  `"legacy"` (2025-11-25, JSON-RPC streams) and `"auto"` (the modern path); their wire
  rules differ.
- `zero_wait`: the recovery policy skips its backoff waits (`mcp_errors.testing`).
- Every test starts with full default retry budgets.
- `postgres_url`, `redis_url`: real servers started for the session (`tests/services.py`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import pytest

from mcp_errors.testing import reset_retry_budgets, set_testing

pytest_plugins = ["services"]

Mode = Literal["legacy", "auto"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["legacy", "auto"])
def mode(request: pytest.FixtureRequest) -> Mode:
    """Each connection mode of the in-memory `mcp.Client`."""
    value: Mode = request.param
    return value


@pytest.fixture
def zero_wait() -> Iterator[None]:
    """No backoff waits for the duration of the test (skipped waits still count)."""
    with set_testing():
        yield


@pytest.fixture(autouse=True)
def fresh_default_retry_budgets() -> None:
    """Calls made without a policy share one process-wide budget per server; start each test full."""
    reset_retry_budgets()
