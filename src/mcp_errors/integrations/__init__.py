"""Glue for agent frameworks, so that the error category reaches the model.

One module per framework, each imported on its own and needing its optional extra:

- `mcp_errors.integrations.langchain` (the `langchain` extra): LangChain / LangGraph tools
  built on `mcp.Client`;
- `mcp_errors.integrations.openai_agents` (the `openai-agents` extra): an OpenAI Agents SDK
  MCP server wrapper;
- `mcp_errors.integrations.pydantic_ai` (the `pydantic-ai` extra): a Pydantic AI MCP toolset.

Nothing here is imported by `mcp_errors` itself, so the frameworks stay optional.
See `docs/integrations.md` for what each framework does on its own with an error result.
"""
