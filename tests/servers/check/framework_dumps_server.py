"""An `MCPServer` without the contract: its framework answers bad arguments on every tool with
the same raw pydantic report, and one tool adds a raw dump of its own.

Each tool is registered under another name than its function's, as mcp-server-git does
(`status` as `git_status`), so the report names `statusArguments` for `git_status`. `SHARED`
lists the tools the framework's report covers (one cause, one ME024 for the server);
`OWN_DUMP` answers its valid call with a subprocess dump of its own (an ME024 for that tool).
Run as a stdio server: `python framework_dumps_server.py`.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

SHARED = ("git_status", "git_log", "git_show", "git_branch")
OWN_DUMP = "git_log"

READ_ONLY = ToolAnnotations(read_only_hint=True)


def build_server() -> MCPServer:
    server = MCPServer("framework-dumps")

    @server.tool(name="git_status", annotations=READ_ONLY)
    def status(repo_path: str) -> str:
        """Show the working tree status."""
        return f"On branch main in {repo_path}: nothing to commit, working tree clean."

    @server.tool(name="git_log", annotations=READ_ONLY)
    def log(repo_path: str, max_count: int) -> str:
        """Show the commit log."""
        raise ToolError(
            "Command '['git', 'log', '--max-count=10']' returned non-zero exit status 128:"
            " fatal: your current branch 'main' does not have any commits yet"
        )

    @server.tool(name="git_show", annotations=READ_ONLY)
    def show(repo_path: str, revision: str) -> str:
        """Show a commit."""
        return f"commit {revision} in {repo_path}: Initial commit."

    @server.tool(name="git_branch", annotations=READ_ONLY)
    def branch(repo_path: str, branch_type: str) -> str:
        """List branches ('local' or 'remote')."""
        return "* main"

    return server


if __name__ == "__main__":
    build_server().run()
