"""`mcp-errors check`: a conformance checker for any MCP server's error responses.

It lists a server's tools, calls each with arguments that break its inputSchema (and, on
request, with one valid call; with `CallArguments` from an `--args` file, with real data),
and judges every result against the rules in `docs/rules.md`.
"""

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
