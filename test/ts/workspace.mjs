// Workspace client: drives index_build, search and show_file with the official
// MCP TypeScript SDK, through whatever command it is given (the hearth shim),
// started in the repository REPO. Then it starts a build of BIG and aborts it
// on its first progress report (the SDK sends notifications/cancelled) and
// asks check_status until no child process is left. Prints one JSON line.
//
//   REPO=<git repo> BIG=<large tree> node workspace.mjs <command> [args...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const { REPO, BIG } = process.env;
if (!command || !REPO || !BIG) {
  console.error("usage: REPO=<dir> BIG=<dir> node workspace.mjs <command> [args...]");
  process.exit(2);
}

const transport = new StdioClientTransport({ command, args, cwd: REPO, env: process.env, stderr: "inherit" });
const client = new Client({ name: "hearth-e2e-ts-workspace", version: "1.0.0" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  await client.connect(transport);
  const progress = [];
  // The SDK runs a notification's handler in a microtask but a response's
  // at once: a progress notification read in the same chunk as its call's
  // response (a slow client, a 3-file build) reaches onprogress after the
  // handler is gone. The progress the daemon sent is taken off the wire.
  const deliver = transport.onmessage;
  transport.onmessage = (m, extra) => {
    if (m.method === "notifications/progress") progress.push(m.params.progress);
    deliver(m, extra);
  };
  const build = await client.callTool({ name: "index_build", arguments: {} }, undefined, {
    onprogress: () => {}, // asks for progress (a progressToken)
  });
  transport.onmessage = deliver;
  const search = await client.callTool({ name: "search", arguments: { query: "greeting", limit: 5 } });
  const show = await client.callTool({ name: "show_file", arguments: { path: "greet.go", start_line: 3, end_line: 3 } });

  const abort = new AbortController();
  let aborted = null;
  try {
    await client.callTool({ name: "index_build", arguments: { repo_path: BIG, incremental: false } }, undefined, {
      signal: abort.signal,
      onprogress: (p) => { if (p.progress > 0) abort.abort("enough"); },
      timeout: 120000,
    });
    aborted = "completed";
  } catch (err) {
    aborted = `${err?.name}: ${err?.message}`;
  }
  let live = -1;
  for (let i = 0; i < 100; i++) {
    const st = await client.callTool({ name: "check_status", arguments: {} });
    live = st.structuredContent.children.live;
    if (live === 0) break;
    await sleep(50);
  }
  console.log(JSON.stringify({
    build: build.structuredContent, buildError: build.isError ?? false, progress,
    search: search.structuredContent, show: show.structuredContent, aborted, live,
  }));
  await client.close();
} catch (err) {
  console.error("workspace client failed:", err?.stack ?? err);
  process.exit(1);
}
