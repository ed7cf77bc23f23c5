// End-to-end client of the stateless era: the TypeScript SDK v2 client
// (@modelcontextprotocol/client) pinned to protocol 2026-07-28, driving a
// hearth endpoint over stdio. Every step prints one JSON line on stdout:
//
//   {"step":"subscribed","pid":<the transport's child pid>}  then waits for
//   a list-changed notification (the Go test sends SIGHUP meanwhile),
//   {"step":"done", ...}                                      the summary.
//
//   REPO=<git repo> BIG=<large tree> node modern.mjs <command> [args...]
//
// The command gets this process's environment. Tools are called with
// repo_path where they need a repository. Any failure exits non-zero with
// the error on stderr.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [command, ...args] = process.argv.slice(2);
const { REPO, BIG } = process.env;
if (!command || !REPO || !BIG) {
  console.error("usage: REPO=<dir> BIG=<dir> node modern.mjs <command> [args...]");
  process.exit(2);
}
const say = (v) => console.log(JSON.stringify(v));

const transport = new StdioClientTransport({ command, args, env: process.env, cwd: "/", stderr: "inherit" });
const client = new Client(
  { name: "hearth-e2e-ts-modern", version: "1.0.0" },
  { versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
const result = (r) => ({ isError: r.isError ?? false, structured: r.structuredContent ?? (r.isError ? JSON.parse(r.content?.[0]?.text ?? "null") : null) });

const t0 = Date.now();
try {
  await client.connect(transport);
  const era = client.getProtocolEra();
  const version = client.getNegotiatedProtocolVersion();
  const discover = client.getDiscoverResult();
  const tools = (await client.listTools()).tools.map((t) => t.name);

  const status = result(await client.callTool({ name: "daemon_status", arguments: {} }));
  const validate = result(await client.callTool({ name: "validate_asset", arguments: { schema: "shader", asset: {} } }));
  const add = result(await client.callTool({ name: "add_memory", arguments: { text: "the modern era remembers zebras" } }));
  const found = result(await client.callTool({ name: "search_memory", arguments: { query: "zebras" } }));
  const build = result(await client.callTool({ name: "index_build", arguments: { repo_path: REPO } }));
  const search = result(await client.callTool({ name: "search", arguments: { repo_path: REPO, query: "greeting", limit: 5 } }));
  const arch = result(await client.callTool({ name: "read_architecture", arguments: { repo_path: REPO } }));

  // A big build, cancelled on its first progress report: the SDK sends
  // notifications/cancelled.
  const progress = [];
  const abort = new AbortController();
  let cancelled = null;
  try {
    await client.callTool({ name: "index_build", arguments: { repo_path: BIG, incremental: false } }, {
      signal: abort.signal,
      onprogress: (p) => { progress.push(p.progress); if (p.progress > 0) abort.abort("enough"); },
      timeout: 120000,
    });
    cancelled = "completed";
  } catch (err) {
    cancelled = `${err?.name}: ${err?.message}`;
  }
  // The connection serves on after the cancellation.
  const after = result(await client.callTool({ name: "daemon_status", arguments: {} }));

  const changed = [];
  let notified;
  const got = new Promise((resolve) => { notified = resolve; });
  client.setNotificationHandler("notifications/resources/list_changed", () => { changed.push("resources"); notified(); });
  client.setNotificationHandler("notifications/tools/list_changed", () => { changed.push("tools"); notified(); });
  const sub = await client.listen({ toolsListChanged: true, resourcesListChanged: true });
  say({ step: "subscribed", at: Date.now() - t0, pid: transport.pid ?? null, honored: sub.honoredFilter });
  let timer;
  await Promise.race([got, new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("no list-changed notification in 30 s")), 30000);
  })]);
  clearTimeout(timer);
  await sub.close();

  say({
    step: "done", ms: Date.now() - t0, era, version, discover, tools, status, validate, add, found, build, search, arch,
    progress, cancelled, after, changed,
  });
  await client.close();
} catch (err) {
  console.error("modern client failed:", err?.stack ?? err);
  process.exit(1);
}
