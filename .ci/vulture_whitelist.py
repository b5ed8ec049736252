"""Names vulture (`uv run vulture`, run by .ci/run) cannot see used, each with why it is kept.

Vulture counts a name as used wherever it is read, so one `_.name` line keeps every definition
of that name. Add a line here only for what something outside src/ reads (a framework, the
protocol, a caller); delete code that nothing reads instead.
"""

_ = object()  # only attribute reads below; vulture reads the names, nothing runs this file

# Module hooks Python itself calls.
_.__getattr__  # PEP 562 lazy re-exports in mcp_errors, check, demo and proxy __init__.py
_.__dir__  # PEP 562: lists the lazy names in mcp_errors/__init__.py
_.tb  # __exit__/__aexit__ signature the context-manager protocol requires

# Attributes read by the runtime or a library, not by our code.
_.__suppress_context__  # read by the traceback printer (_server/fastmcp.py)
_.__signature__  # read by inspect.signature in Docket and fastmcp (_server/tasks.py)
_.row_factory  # read by sqlite3 when it builds rows (demo/_db.py)
_.metavar  # read by click when it prints help (_cli.py)
_.on_request  # fastmcp Middleware hook, called by fastmcp (proxy/_gateway.py)
_.receive  # anyio ByteReceiveStream method, read by the SDK's stdio client (proxy/_child.py's adopted pipe)
_.returncode  # the process's exit status, read by the SDK's stdio client on close (proxy/_child.py)
_.claims  # MCP SDK client extension hook, called by the SDK (_client/task_polling.py)
_.identifier  # MCP SDK client extension id, read by the SDK (_client/task_polling.py)
_.name_param  # MCP SDK request class var, mirrored into the Mcp-Name header (_client/task_polling.py)

# Pydantic and dataclass fields: wire or public data, read by serialisation or by callers.
_.status_message  # tasks/get result field from the wire (_client/task_polling.py)
_.principal_changed  # public CallRecord field (_client/policy.py)
_.servers_key  # HostConfig field: which key holds the servers (proxy/_hosts.py)
_.resultCount  # demo tool output, wire name
_.placed_on  # demo tool output field
_.refunded  # demo tool output field
_.currency  # demo tool output field
_.refundId  # demo tool output, wire name
_.orderId  # demo tool output, wire name
_.remainingRefundable  # demo tool output, wire name
_.lifetime_value  # demo tool output field
_.outstanding_balance  # demo tool output field
_.credit_limit  # demo tool output field
_.snippet  # demo tool output field

# Demo tools: registered on the server by decorator, called by the agent.
_.lookup_customer  # demo tool
_.process_refund  # demo tool
_.get_financial_records  # demo tool
_.search_knowledge  # demo tool

# Public API: read by users' code (and the tests), not by the library itself.
_.OFF  # `--contract off` choice of `mcp-errors check` (check/_cli.py)
_.tokens  # public RetryBudget property (_client/budget.py)
_.to_tool_result  # public PartialResult method (_client/partial.py)
_.merged_with  # public PartialResult method (_client/partial.py)
_.to_structured  # public FailureDetails method (_shared/envelope.py)
_.to_text  # public FailureDetails method (_shared/envelope.py)
_.made  # public CheckReport property (check/_report.py)
_.last_report  # public attribute of the agent integrations (openai_agents.py, pydantic_ai.py)
_.side_effects  # public counter of mcp_errors.testing's flaky tool (testing.py)
_.refunds_for  # demo database query used by the demo's tests and docs (demo/_db.py)
_.refund_count  # demo database query used by the demo's tests (demo/_db.py)
_.stored_bytes  # public MemoryStore property (stores/_memory.py)
