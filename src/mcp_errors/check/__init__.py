"""`mcp-errors check`: a conformance checker for any MCP server's error responses.

It lists a server's tools, calls each with arguments that break its inputSchema (and, on
request, with one valid call), and judges every result against the rules in
`docs/rules.md`.
"""

from mcp_errors.check._report import CheckReport
from mcp_errors.check._rules import RULES, Finding, Rule, Severity
from mcp_errors.check._runner import CheckOptions, Target, check_server

__all__ = ["RULES", "CheckOptions", "CheckReport", "Finding", "Rule", "Severity", "Target", "check_server"]
