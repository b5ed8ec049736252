"""The MCP servers the tests talk to, in memory (import and build) or as stdio scripts.

Each module builds its server with a function and serves it over stdio when run as a
script (`python tests/servers/<name>.py`); `SERVERS_DIR` finds the scripts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

SERVERS_DIR: Final = Path(__file__).parent
"""This folder: the stdio scripts of the test servers."""

CHECK_SERVERS_DIR: Final = SERVERS_DIR / "check"
"""Servers with the defects (and the lack of them) the checker's rules are about."""

PYTHON: Final = sys.executable
"""The interpreter that runs a server script: this test run's, with `mcp_errors` installed."""


def script(name: str, *args: str) -> list[str]:
    """The command line that starts `tests/servers/<name>.py` over stdio."""
    return [PYTHON, str(SERVERS_DIR / f"{name}.py"), *args]
