"""The demo support desk (`mcp-errors serve`) and the scenario simulator (`mcp-errors demo`).

The names below are imported on first use, so that `mcp-errors --help` (which registers
`serve` and `demo`) does not load the MCP SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_errors._shared.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from mcp_errors.demo._db import Database
    from mcp_errors.demo._faults import FaultConfig
    from mcp_errors.demo._server import DeskConfig, build_server

__all__ = ["Database", "DeskConfig", "FaultConfig", "build_server"]

_HOMES = {"Database": "_db", "FaultConfig": "_faults", "DeskConfig": "_server", "build_server": "_server"}


__getattr__, __dir__ = _lazy_exports(__name__, _HOMES)
