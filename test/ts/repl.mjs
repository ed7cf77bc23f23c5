// A TypeScript SDK client that a Go test drives line by line, so several
// real clients can be connected to hearth at the same time.
//
//   node repl.mjs <command> [args...]
//
// The command is started by the SDK's StdioClientTransport with the SDK's
// DEFAULT environment (no env option: only HOME, LOGNAME, PATH, SHELL, TERM
// and USER reach it), as an editor using the SDK starts its servers. Each
// stdin line is {"tool": name, "args": {...}} (prints {"isError", "result"}),
// {"start": name, "args": {...}} (sends the call and prints {"started": true}
// at its first progress, without waiting for the result), or {"close": true}
// (closes the client as an editor does when its window closes). The first
// output line is {"connected": true, ...}.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node repl.mjs <command> [args...]");
  process.exit(2);
}
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "hearth-e2e-ts-repl", version: "1.0.0" });
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");

try {
  await client.connect(transport);
  say({ connected: true, server: client.getServerVersion(), pid: transport.pid ?? null });
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const cmd = JSON.parse(line);
    if (cmd.close) break;
    if (cmd.start) {
      let said = false;
      client.callTool({ name: cmd.start, arguments: cmd.args ?? {} }, undefined, {
        timeout: 600000,
        onprogress: (p) => { if (!said && p.progress > 0) { said = true; say({ started: true }); } },
      }).catch(() => {});
      continue;
    }
    try {
      const res = await client.callTool({ name: cmd.tool, arguments: cmd.args ?? {} });
      say({ isError: res.isError ?? false, result: res.structuredContent ?? (res.isError ? JSON.parse(res.content?.[0]?.text ?? "null") : null) });
    } catch (err) {
      say({ error: String(err?.message ?? err) });
    }
  }
  await client.close();
  say({ closed: true });
} catch (err) {
  console.error("repl client failed:", err?.stack ?? err);
  process.exit(1);
}
