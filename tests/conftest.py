"""Shared fixtures: anyio runs every async test on asyncio."""

from __future__ import annotations

import pytest

from mcp_errors.testing import reset_retry_budgets


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def fresh_default_retry_budgets() -> None:
    """Calls made without a policy share one process-wide budget per server; start each test full."""
    reset_retry_budgets()
