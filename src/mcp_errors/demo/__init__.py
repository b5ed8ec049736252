"""The demo support desk (`mcp-errors serve`) and the scenario simulator (`mcp-errors demo`)."""

from mcp_errors.demo._db import Database
from mcp_errors.demo._faults import FaultConfig
from mcp_errors.demo._server import DeskConfig, build_server

__all__ = ["Database", "DeskConfig", "FaultConfig", "build_server"]
