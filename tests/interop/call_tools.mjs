// Call tools of a stdio MCP server with a real TypeScript SDK client and print what it got.
//
//   node call_tools.mjs <v1|v2> <legacy|auto> '<calls JSON>' <command> [args...]
//
// <calls JSON> is a list of {"name", "arguments"}. The client lists the tools first, as a
// host does (the v1 client compiles its outputSchema validators there), then makes each
// call. Prints one JSON object: {"tools": <tools/list result>, "calls": [{"name", "result"} |
// {"name", "thrown"}]}, where "thrown" is what the client raised instead of returning a result.

const [sdk, mode, callsJson, command, ...args] = process.argv.slice(2);
const calls = JSON.parse(callsJson);

async function makeClient() {
  const info = { name: "mcp-errors-interop", version: "0.0.0" };
  if (sdk === "v1") {
    const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    return { client: new Client(info), transport: new StdioClientTransport({ command, args, stderr: "inherit" }) };
  }
  if (sdk === "v2") {
    const { Client } = await import("@modelcontextprotocol/client");
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    const client = new Client(info, { versionNegotiation: { mode } });
    return { client, transport: new StdioClientTransport({ command, args, stderr: "inherit" }) };
  }
  throw new Error(`unknown sdk ${sdk}`);
}

const { client, transport } = await makeClient();
await client.connect(transport);
const { tools } = await client.listTools();
const out = [];
for (const call of calls) {
  try {
    out.push({ name: call.name, result: await client.callTool({ name: call.name, arguments: call.arguments }) });
  } catch (error) {
    out.push({ name: call.name, thrown: { code: error.code ?? null, message: String(error.message ?? error) } });
  }
}
await client.close();
process.stdout.write(JSON.stringify({ tools, calls: out }) + "\n");
