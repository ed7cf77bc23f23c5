// Starts one MCP server the way a client starts it from a config entry,
// with the official TypeScript SDK v1's StdioClientTransport: the entry's
// command, args, env (over the SDK's default environment) and cwd. Prints
// the server's name and its tool names as one JSON line.
//
//   node entry.mjs '{"command": "...", "args": [...], "env": {...}, "cwd": "..."}'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const entry = JSON.parse(process.argv[2] ?? "null");
if (!entry?.command) {
  console.error("usage: node entry.mjs '{\"command\": ..., \"args\": [...], \"env\": {...}, \"cwd\": ...}'");
  process.exit(2);
}
const transport = new StdioClientTransport({
  command: entry.command,
  args: entry.args ?? [],
  env: entry.env,
  cwd: entry.cwd,
  stderr: "inherit",
});
const client = new Client({ name: "hearth-e2e-entry", version: "1.0.0" });
try {
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  console.log(JSON.stringify({ server: client.getServerVersion()?.name ?? null, tools }));
  await client.close();
} catch (err) {
  console.error("entry client failed:", err?.stack ?? err);
  process.exit(1);
}
