// End-to-end client of hearthd's Streamable HTTP endpoint on the official
// TypeScript SDK: v1 (@modelcontextprotocol/sdk, the 2025 handshake) or v2
// (@modelcontextprotocol/client, pinned to 2026-07-28). Prints one JSON
// summary line for the Go test to check.
//
//   node httpclient.mjs v1|v2 <url> [token]
//
// It lists the tools, calls one tool of each family (schemas, memory and
// its graph, workspace, the daemon's own), runs an index_build of the
// directory in $HEARTH_E2E_REPO asking for progress, and cancels a second
// build with an AbortSignal once its first progress arrives. Any failure
// exits non-zero with the error on stderr.
const [sdk, url, token] = process.argv.slice(2);
if (!sdk || !url) {
  console.error("usage: node httpclient.mjs v1|v2 <url> [token]");
  process.exit(2);
}
const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;

let client, transport;
if (sdk === "v1") {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  client = new Client({ name: "hearth-e2e-http-v1", version: "1.0.0" });
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
} else {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  client = new Client({ name: "hearth-e2e-http-v2", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  transport = new StreamableHTTPClientTransport(new URL(url), { requestInit });
}

// callTool's options are its third argument in v1 (after a result schema),
// its second in v2.
const call = (params, options) => (sdk === "v1" ? client.callTool(params, undefined, options) : client.callTool(params, options));

const result = (r) => ({
  isError: r.isError ?? false,
  structured: r.structuredContent ?? (r.isError ? JSON.parse(r.content?.[0]?.text ?? "null") : null),
});

try {
  await client.connect(transport);
  const era = client.getProtocolEra?.() ?? "legacy";
  const protocolVersion = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null;
  const sessionId = transport.sessionId ?? null;
  const tools = [];
  let page = await client.listTools();
  tools.push(...page.tools);
  while (page.nextCursor) {
    page = await client.listTools({ cursor: page.nextCursor });
    tools.push(...page.tools);
  }
  const repo = process.env.HEARTH_E2E_REPO;
  const calls = {
    status: await client.callTool({ name: "daemon_status", arguments: {} }),
    schemas: await client.callTool({ name: "list_schemas", arguments: {} }),
    validate: await client.callTool({ name: "validate_asset", arguments: { schema: "shader", asset: {} } }),
    add: await client.callTool({ name: "add_memory", arguments: { text: `remember the ${sdk} http client` } }),
    search: await client.callTool({ name: "search_memory", arguments: { query: `${sdk} http client` } }),
    entities: await client.callTool({ name: "create_entities", arguments: { entities: [{ name: `client-${sdk}`, entityType: "client", observations: ["speaks HTTP"] }] } }),
    graph: await client.callTool({ name: "read_graph", arguments: {} }),
    workspace: await client.callTool({ name: "workspace_status", arguments: { repo_path: repo } }),
    bad: await client.callTool({ name: "daemon_status", arguments: { unexpected: 1 } }),
  };

  // Progress: a full build of the repository, asking for progress.
  const progress = [];
  const build = await call(
    { name: "index_build", arguments: { repo_path: repo, incremental: false } },
    { onprogress: (p) => progress.push(p.progress), timeout: 120000 },
  );

  // Cancellation: a second build, aborted at its first progress.
  const ac = new AbortController();
  let cancelled = "not cancelled";
  const started = Date.now();
  try {
    await call(
      { name: "index_build", arguments: { repo_path: repo, incremental: false } },
      { signal: ac.signal, onprogress: () => ac.abort("enough"), timeout: 120000 },
    );
  } catch (e) {
    cancelled = String(e?.message ?? e);
  }
  const cancelMs = Date.now() - started;
  // The session still serves after the cancellation.
  const after = await client.callTool({ name: "daemon_status", arguments: {} });

  const summary = {
    era, protocolVersion, sessionId,
    tools: tools.map((t) => t.name),
    calls: Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, result(v)])),
    build: result(build), progress, cancelled, cancelMs, after: result(after),
  };
  if (sdk === "v1") await transport.terminateSession?.();
  await client.close();
  console.log(JSON.stringify(summary));
} catch (e) {
  console.error(e?.stack ?? String(e));
  process.exit(1);
}
