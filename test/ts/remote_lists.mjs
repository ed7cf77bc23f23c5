// Lists a remote server's tools with the official TypeScript SDK v1 twice:
// connecting to it itself (Streamable HTTP), and as a stdio client of
// `hearth run --url URL` (the command and its arguments given, with this
// process's environment). Prints {"direct": [...], "hearth": [...]}.
//
//   node remote_lists.mjs URL HEARTH
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, hearth] = process.argv.slice(2);
if (!url || !hearth) {
  console.error("usage: node remote_lists.mjs URL HEARTH");
  process.exit(2);
}

async function names(transport) {
  const client = new Client({ name: "hearth-e2e-remote", version: "1.0.0" });
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  await client.close();
  return tools;
}

try {
  const direct = await names(new StreamableHTTPClientTransport(new URL(url)));
  const viaHearth = await names(
    new StdioClientTransport({ command: hearth, args: ["run", "--url", url], env: { ...process.env }, stderr: "inherit" }),
  );
  console.log(JSON.stringify({ direct, hearth: viaHearth }));
} catch (err) {
  console.error("remote_lists failed:", err?.stack ?? err);
  process.exit(1);
}
