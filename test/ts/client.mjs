// End-to-end client: drives a hearth endpoint with the official MCP TypeScript
// SDK over stdio and prints one JSON summary line for the Go test to check.
//
//   node client.mjs <command> [args...]
//
// The command is started by the SDK's StdioClientTransport (hearthd stdio,
// or the hearth shim). Any failure exits non-zero with the error on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node client.mjs <command> [args...]");
  process.exit(2);
}

const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
const client = new Client({ name: "hearth-e2e-ts", version: "1.0.0" });

try {
  await client.connect(transport);
  const server = client.getServerVersion();
  await client.ping();

  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);

  const status = await client.callTool({ name: "daemon_status", arguments: {} });
  const bad = await client.callTool({ name: "daemon_status", arguments: { unexpected: 1 } });

  console.log(JSON.stringify({
    server,
    tools: tools.map((t) => ({ name: t.name, meta: t._meta ?? null, annotations: t.annotations ?? null })),
    status: { isError: status.isError ?? false, structured: status.structuredContent ?? null, text: status.content?.[0]?.text ?? null },
    bad: { isError: bad.isError ?? false, text: bad.content?.[0]?.text ?? null },
  }));
  await client.close();
} catch (err) {
  console.error("client failed:", err?.stack ?? err);
  process.exit(1);
}
