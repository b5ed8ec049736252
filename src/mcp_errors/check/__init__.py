"""`mcp-errors check`: a conformance checker for any MCP server's error responses.

It lists a server's tools, calls each with arguments that break its inputSchema (and, on
request, with one valid call; with `CallArguments` from an `--args` file, with real data),
and judges every result against the rules in `docs/rules.md`.

The names below are imported on first use, so that `mcp-errors --help` (which registers
`check`) does not load the MCP SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_errors._shared.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from mcp_errors.check._args import CallArguments, ToolArguments, load_call_arguments
    from mcp_errors.check._report import CallRecord, CheckReport
    from mcp_errors.check._rules import RULES, Family, Finding, Rule, Severity
    from mcp_errors.check._runner import CheckOptions, Target, check_server

__all__ = [
    "RULES",
    "CallArguments",
    "CallRecord",
    "CheckOptions",
    "CheckReport",
    "Family",
    "Finding",
    "Rule",
    "Severity",
    "Target",
    "ToolArguments",
    "check_server",
    "load_call_arguments",
]

_HOMES = {
    "CallArguments": "_args",
    "ToolArguments": "_args",
    "load_call_arguments": "_args",
    "CallRecord": "_report",
    "CheckReport": "_report",
    "RULES": "_rules",
    "Family": "_rules",
    "Finding": "_rules",
    "Rule": "_rules",
    "Severity": "_rules",
    "CheckOptions": "_runner",
    "Target": "_runner",
    "check_server": "_runner",
}


__getattr__, __dir__ = _lazy_exports(__name__, _HOMES)
