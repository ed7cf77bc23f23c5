// End-to-end client on the TypeScript SDK v2 (@modelcontextprotocol/client):
// drives a hearth endpoint over stdio and prints one JSON summary line for
// the Go test to check.
//
//   node v2client.mjs [--negotiation=legacy|auto] <command> [args...]
//
// The command is started by the v2 StdioClientTransport with its DEFAULT
// environment (no env option: only HOME, LOGNAME, PATH, SHELL, TERM and USER
// reach it), as an editor built on the v2 SDK starts its servers. Without
// --negotiation the client keeps the SDK's default version negotiation;
// with auto it first probes with server/discover: a dual-era server such as
// hearth answers it and the connection is modern (2026-07-28); a legacy one
// does not and the client falls back to the initialize handshake. Any
// failure exits non-zero with the error on stderr.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const argv = process.argv.slice(2);
let negotiation;
if (argv[0]?.startsWith("--negotiation=")) {
  negotiation = argv.shift().slice("--negotiation=".length);
}
const [command, ...args] = argv;
if (!command) {
  console.error("usage: node v2client.mjs [--negotiation=legacy|auto] <command> [args...]");
  process.exit(2);
}

const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client(
  { name: "hearth-e2e-ts-v2", version: "1.0.0" },
  negotiation ? { versionNegotiation: { mode: negotiation } } : undefined,
);

// result keeps what the Go test checks of a tools/call result.
const result = (r) => ({
  isError: r.isError ?? false,
  structured: r.structuredContent ?? (r.isError ? JSON.parse(r.content?.[0]?.text ?? "null") : null),
  text: r.content?.[0]?.type === "text" ? r.content[0].text : null,
});

try {
  await client.connect(transport);
  const server = client.getServerVersion() ?? null;
  const protocolVersion = client.getNegotiatedProtocolVersion?.() ?? null;
  const era = client.getProtocolEra?.() ?? null;
  // ping belongs to the 2025 era: a modern connection has none.
  let pinged = false;
  if (era !== "modern" && typeof client.ping === "function") {
    await client.ping();
    pinged = true;
  }

  // Without a cursor the v2 client walks every page itself; walk them here
  // too, in case a server ever returns one page with a nextCursor.
  const tools = [];
  let page = await client.listTools();
  tools.push(...page.tools);
  while (page.nextCursor) {
    page = await client.listTools({ cursor: page.nextCursor });
    tools.push(...page.tools);
  }

  const status = await client.callTool({ name: "daemon_status", arguments: {} });
  const schemas = await client.callTool({ name: "list_schemas", arguments: {} });
  const validate = await client.callTool({ name: "validate_asset", arguments: { schema: "shader", asset: {} } });
  const bad = await client.callTool({ name: "daemon_status", arguments: { unexpected: 1 } });

  console.log(JSON.stringify({
    server,
    protocolVersion,
    era,
    pinged,
    tools: tools.map((t) => ({ name: t.name, meta: t._meta ?? null, annotations: t.annotations ?? null })),
    status: result(status),
    schemas: result(schemas),
    validate: result(validate),
    bad: result(bad),
  }));
  await client.close();
} catch (err) {
  console.error("v2 client failed:", err?.stack ?? err);
  process.exit(1);
}
