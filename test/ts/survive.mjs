// A TypeScript SDK v1 Streamable HTTP client that outlives hearthd: it
// connects, calls daemon_status, prints {"phase":"first",...}, waits for a
// line on stdin (the Go test kills the daemon and starts another meanwhile),
// calls daemon_status again with the same client object, prints
// {"phase":"second",...} and exits. No reconnection code of its own.
//
//   node survive.mjs <url> <token>
import { createInterface } from "node:readline";

const [url, token] = process.argv.slice(2);
const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
const client = new Client({ name: "hearth-e2e-survive-v1", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
// An error on the session's own stream (the daemon gone) is the
// transport's to report; the test judges the calls alone.
client.onerror = () => {};

const call = async () => {
  try {
    const r = await client.callTool({ name: "daemon_status", arguments: {} });
    return { ok: !r.isError, pid: r.structuredContent?.pid ?? null };
  } catch (e) {
    return { ok: false, error: String(e?.message ?? e) };
  }
};

await client.connect(transport);
const sessionId = transport.sessionId;
console.log(JSON.stringify({ phase: "first", sessionId, ...(await call()) }));
const lines = createInterface({ input: process.stdin });
for await (const _ of lines) break;
console.log(JSON.stringify({ phase: "second", sessionId: transport.sessionId, ...(await call()) }));
// End the session as a client that is done does (DELETE).
await transport.terminateSession();
await transport.close();
process.exit(0);
