"""The demo support desk (`mcp-errors serve`) and the scenario simulator (`mcp-errors demo`).

The names below are imported on first use, so that `mcp-errors --help` (which registers
`serve` and `demo`) does not load the MCP SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_errors.demo._db import Database
    from mcp_errors.demo._faults import FaultConfig
    from mcp_errors.demo._server import DeskConfig, build_server

__all__ = ["Database", "DeskConfig", "FaultConfig", "build_server"]

_HOMES = {"Database": "_db", "FaultConfig": "_faults", "DeskConfig": "_server", "build_server": "_server"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
