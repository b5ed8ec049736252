"""Helpers for testing code that uses the recovery policy: no waits, scripted failures.

- `set_testing()` makes `call_tool_with_recovery` skip its backoff waits (like stamina's
  `set_testing`), and `is_testing()` says whether it is on. Skipped waits still count
  towards the deadline and still appear in the report, so behaviour is the same as in
  production, only faster.
- `add_flaky_tool()` registers on an `MCPServer` a tool that fails a given number of times
  in a given category, then succeeds, and counts its calls and side effects.
- `drop_answers()` wraps a client so that the first answers are lost after the server ran
  the call: what a client sees when a write times out after it was applied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import REQUEST_TIMEOUT, CallToolResult, ToolAnnotations

from mcp_errors._client.adapter import CallFn, adapt_client
from mcp_errors._client.policy import DEFAULT_POLICY
from mcp_errors._server.errors import ToolError
from mcp_errors._shared.config import is_testing, set_testing
from mcp_errors._shared.contract import ErrorCategory, ExecutionState, FieldError

__all__ = [
    "FlakyTool",
    "add_flaky_tool",
    "drop_answers",
    "is_testing",
    "reset_retry_budgets",
    "set_testing",
]


@dataclass
class FlakyTool:
    """A scripted tool: fails `failures` times in `category`, then returns `result`.

    `calls` counts every call, `side_effects` the calls that applied their change: a
    success, and a failure with `execution_state=OUTCOME_UNKNOWN`, which applies it before
    failing. With the default `execution_state=None` the failures send no `executionState`
    and apply nothing.
    """

    failures: int
    category: ErrorCategory = ErrorCategory.TRANSIENT
    result: str = "ok"
    execution_state: ExecutionState | None = None
    retry_after_seconds: float | None = None
    calls: int = 0
    side_effects: int = 0

    def __call__(self, query: str = "") -> str:
        self.calls += 1
        if self.calls <= self.failures:
            if self.execution_state is ExecutionState.OUTCOME_UNKNOWN:
                self.side_effects += 1
            raise self._error()
        self.side_effects += 1
        return self.result

    def _error(self) -> ToolError:
        category = self.category
        return ToolError(
            f"Scripted {category.value} failure {self.calls}",
            category=category,
            description=f"A scripted {category.value} failure for tests.",
            code=f"SCRIPTED_{category.value.upper()}",
            retry_after_seconds=self.retry_after_seconds if category is ErrorCategory.TRANSIENT else None,
            field_errors=[FieldError(field="query", problem="scripted rejection")]
            if category is ErrorCategory.VALIDATION
            else (),
            execution_state=self.execution_state,
        )


def add_flaky_tool(
    server: MCPServer[Any],
    name: str,
    *,
    failures: int,
    category: ErrorCategory | str = ErrorCategory.TRANSIENT,
    result: str = "ok",
    read_only: bool = False,
    idempotent: bool = False,
    execution_state: ExecutionState | str | None = None,
    retry_after_seconds: float | None = None,
) -> FlakyTool:
    """Register a tool that fails `failures` times, then succeeds.

    The tool takes one optional argument, `query: str`. Use with `install(server)` so that
    its failures become contract errors (without it they are the SDK's text-only errors).

    Args:
        server: The `MCPServer` to add the tool to.
        name: The tool's name.
        failures: How many calls fail before the first success (`10**9` for an outage).
        category: The category of every failure.
        result: The text of a success.
        read_only: Annotate the tool `readOnlyHint`.
        idempotent: Annotate the tool `idempotentHint`.
        execution_state: What the failures say about execution (`None`: nothing said).
        retry_after_seconds: Transient failures ask for this wait.

    Returns:
        The `FlakyTool`, whose `calls` and `side_effects` the test can assert.

    Example:
        ```python
        from mcp.server.mcpserver import MCPServer
        from mcp_errors import install
        from mcp_errors.testing import add_flaky_tool

        server = install(MCPServer("test"))
        flaky = add_flaky_tool(server, "search", failures=2, read_only=True)
        assert flaky.calls == 0
        ```
    """
    tool = FlakyTool(
        failures=failures,
        category=ErrorCategory(category),
        result=result,
        execution_state=ExecutionState(execution_state) if execution_state is not None else None,
        retry_after_seconds=retry_after_seconds,
    )

    def run(query: str = "") -> str:
        return tool(query)

    annotations = ToolAnnotations(read_only_hint=read_only or None, idempotent_hint=idempotent or None)
    server.add_tool(run, name=name, description=f"Scripted tool {name} for tests.", annotations=annotations)
    return tool


def drop_answers(client: object, *, times: int = 1) -> CallFn:
    """Wrap a client so that the answers of its first `times` calls are lost.

    Each lost call still reaches the server and runs; the caller gets the JSON-RPC
    `REQUEST_TIMEOUT` error instead of the result, as after a client-side timeout.

    Args:
        client: An `mcp.Client`, a fastmcp `Client` or a call function.
        times: How many answers to lose.

    Returns:
        A call function for `call_tool_with_recovery` (pass the server's `tools=` along,
        since a function cannot list them).
    """
    call = adapt_client(client).call
    remaining = [times]

    async def lossy(name: str, arguments: dict[str, Any], meta: dict[str, Any] | None) -> CallToolResult:
        result = await call(name, arguments, meta)
        if remaining[0] > 0:
            remaining[0] -= 1
            raise MCPError(code=REQUEST_TIMEOUT, message=f"Request {name!r} timed out")
        return result

    return lossy


def reset_retry_budgets() -> None:
    """Refill the retry budgets of the default policy (used by calls made without one).

    The default policy is shared by the whole process, so that calls without a policy still
    share each server's budget; in a test suite that lets one test's outage throttle the
    retries of the next. Call this between tests (e.g. in an autouse fixture).
    """
    DEFAULT_POLICY.reset_budgets()
