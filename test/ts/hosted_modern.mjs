// Drives a hosted server that speaks only MCP 2026-07-28 (the tests' own
// hostedserver -modern) behind `hearth run` with a TypeScript SDK v1 client
// (legacy: initialize, its default environment) and a TypeScript SDK v2
// client in its auto mode (probes with server/discover), at once, and
// prints what each saw as one JSON object for test/hosted_modern_test.go.
//
// usage: node hosted_modern.mjs HEARTH SERVER
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as V2Client } from "@modelcontextprotocol/client";
import { StdioClientTransport as V2Stdio } from "@modelcontextprotocol/client/stdio";

const [hearth, server] = process.argv.slice(2);
const args = ["run", "--", server, "-modern"];
const text = (r) => (r.content || []).map((c) => c.text || "").join("");
const out = {};

const v1 = new V1Client({ name: "v1", version: "1" }, { capabilities: { sampling: {} } });
v1.setRequestHandler(CreateMessageRequestSchema, async (req) => ({
  model: "m", role: "assistant", content: { type: "text", text: `v1 answers ${req.params.messages[0].content.text}` },
}));
let listChanged = 0;
v1.setNotificationHandler(ToolListChangedNotificationSchema, async () => { listChanged++; });
// No env: the SDK passes its default environment.
await v1.connect(new V1Stdio({ command: hearth, args, stderr: "inherit" }));
out.v1 = {
  server: v1.getServerVersion(),
  instructions: v1.getInstructions(),
  echo: text(await v1.callTool({ name: "echo", arguments: { text: "v1" } })),
  sample: text(await v1.callTool({ name: "sample", arguments: { text: "q1" } })),
};
await v1.setLoggingLevel("info");
const progress = [];
out.v1.sleep = text(await v1.callTool({ name: "sleep", arguments: { ms: 100 } }, undefined, { onprogress: (p) => progress.push(p.progress) }));
out.v1.progress = progress;

const v2 = new V2Client({ name: "v2", version: "1" }, { versionNegotiation: { mode: "auto" } });
await v2.connect(new V2Stdio({ command: hearth, args, stderr: "inherit" }));
out.v2 = {
  era: v2.getProtocolEra?.() ?? null,
  protocolVersion: v2.getNegotiatedProtocolVersion?.() ?? null,
  server: v2.getServerVersion() ?? null,
  echo: text(await v2.callTool({ name: "echo", arguments: { text: "v2" } })),
  tools: (await v2.listTools()).tools.map((t) => t.name).sort(),
};

// A change of the tool list reaches the v1 client as list_changed.
await v2.callTool({ name: "add_tool", arguments: { text: "added" } });
for (let i = 0; i < 100 && listChanged === 0; i++) await new Promise((r) => setTimeout(r, 50));
out.v1.listChanged = listChanged;
out.v1.tools = (await v1.listTools()).tools.map((t) => t.name).sort();

console.log(JSON.stringify(out));
await v1.close();
await v2.close();
