#!/usr/bin/env node
// A stdio MCP server of the kind clients leave behind (the orphan sweep's
// end-to-end test, test/sweep_test.go): the official TypeScript SDK's
// McpServer with one tool, and a timer that keeps it running once its
// stdin ends, as a server that polls something does.
//
//   node server.mjs [--ignore-term] [--detach]
//
// --ignore-term: SIGTERM does nothing (only SIGKILL ends it).
// --detach: it starts a grandchild in a session of its own (node's
// detached spawn calls setsid) that keeps its stdin, as a server that
// starts a helper and forgets it does.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { spawn } from "node:child_process";

const flags = new Set(process.argv.slice(2));
if (flags.has("--ignore-term")) {
  process.on("SIGTERM", () => {});
}
if (flags.has("--detach")) {
  const g = spawn(process.execPath, ["-e", "setInterval(() => {}, 1e6)"], { detached: true, stdio: ["inherit", "ignore", "ignore"] });
  g.unref();
}
setInterval(() => {}, 1e6);

const server = new McpServer({ name: "lingering", version: "1.0.0" });
server.registerTool("pid", { description: "this server's pid" }, async () => ({ content: [{ type: "text", text: String(process.pid) }] }));
await server.connect(new StdioServerTransport());
