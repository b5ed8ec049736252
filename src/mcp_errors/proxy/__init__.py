"""`mcp-errors proxy`: the error contract in front of any MCP server, with no change to its code.

The command wraps a stdio server (`mcp-errors proxy -- <command> [args...]`) or a streamable
HTTP server (`mcp-errors proxy <URL>`) and serves it over stdio (or `--http HOST:PORT`):
every tool failure comes out in the contract, everything else passes unchanged. This package
is its Python face, for embedding the proxy and for tests. See docs/proxy.md.

The proxy is built on fastmcp, an optional dependency (the `proxy` extra, or `pip install "fastmcp>=4,<5"`):
the names below are imported on first use, so that the `mcp-errors` command (which
registers `proxy`) starts without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_errors._shared.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from mcp_errors.proxy._child import ChildProcess
    from mcp_errors.proxy._rules import RulesError, load_rules
    from mcp_errors.proxy._server import ProxySettings, StartupError, build_proxy, serve

__all__ = ["ChildProcess", "ProxySettings", "RulesError", "StartupError", "build_proxy", "load_rules", "serve"]

_HOMES = {
    "ChildProcess": "_child",
    "RulesError": "_rules",
    "load_rules": "_rules",
    "ProxySettings": "_server",
    "StartupError": "_server",
    "build_proxy": "_server",
    "serve": "_server",
}


__getattr__, __dir__ = _lazy_exports(__name__, _HOMES)
