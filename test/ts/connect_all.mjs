// Connects to N stdio MCP servers at once, as a client does when it starts
// (the TypeScript SDK v1 client: initialize, then every page of
// tools/list), closes them, and prints one JSON line for
// test/bench/catalog_test.go: the wall time of the whole (from the first
// connect to the last list, this process's own start left out) and each
// server's time and tool count.
//
//   node connect_all.mjs < servers.json
//
// servers.json: [{"name", "command", "args", "env"}, ...]. Each server's
// environment is this process's with the entry's env over it, as a client
// that launches its configured servers gives them. Any failure exits
// non-zero with the error on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";

const servers = JSON.parse(readFileSync(0, "utf8"));
if (!Array.isArray(servers) || servers.length === 0) {
  console.error("usage: node connect_all.mjs < servers.json (a non-empty array)");
  process.exit(2);
}

const clients = [];
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

async function connectAndList(s) {
  const t0 = process.hrtime.bigint();
  const transport = new StdioClientTransport({
    command: s.command,
    args: s.args ?? [],
    env: { ...process.env, ...(s.env ?? {}) },
    stderr: "ignore",
  });
  const client = new Client({ name: "hearth-bench-connect-all", version: "1.0.0" });
  clients.push(client);
  await client.connect(transport);
  let tools = 0;
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools += page.tools.length;
    cursor = page.nextCursor;
  } while (cursor);
  return { name: s.name, ms: ms(t0), tools };
}

try {
  const t0 = process.hrtime.bigint();
  const results = await Promise.all(servers.map(connectAndList));
  const total = ms(t0);
  await Promise.all(clients.map((c) => c.close()));
  console.log(JSON.stringify({ totalMs: total, servers: results }));
} catch (err) {
  console.error("connect_all failed:", err?.stack ?? err);
  await Promise.allSettled(clients.map((c) => c.close()));
  process.exit(1);
}
