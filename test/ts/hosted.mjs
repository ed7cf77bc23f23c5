// Drives @modelcontextprotocol/server-everything hosted behind `hearth run`
// with three TypeScript SDK v1 clients at once, each with the SDK's default
// environment, and prints what each saw as one JSON object for
// test/hosted_npm_test.go to check.
//
// usage: node hosted.mjs HEARTH SERVER_JS
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { readdirSync, readFileSync } from "node:fs";

const [hearth, serverJS] = process.argv.slice(2);
const out = {};

// upstreams counts the live processes running server-everything that a
// daemon of this user (this HOME) started.
function upstreams() {
  let n = 0;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, "utf8");
      // The server's own process, not a shim whose arguments name it.
      // (nor hearth's keeper, the shell that leads the server's group).
      if (!cmd.includes(serverJS) || cmd.split("\0")[0].endsWith("hearth") || cmd.includes("hearth-keeper")) continue;
      const ppid = readFileSync(`/proc/${d}/stat`, "utf8").split(") ")[1].split(" ")[1];
      const parentEnv = readFileSync(`/proc/${ppid}/environ`, "utf8");
      if (parentEnv.split("\0").includes(`HOME=${process.env.HOME}`)) n++;
    } catch {}
  }
  return n;
}

// connect opens a session of one client (one set of capabilities:
// sessions of one client share an upstream); name tells the sessions'
// answers apart.
async function connect(name) {
  const client = new Client({ name: "hearth-e2e", version: "1" }, { capabilities: { sampling: {} } });
  client.asked = 0;
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    client.asked++;
    return { model: "m", role: "assistant", content: { type: "text", text: `answer of ${name}` } };
  });
  // No env: the SDK passes its default environment (HOME, PATH, ...); a run
  // over the portable mechanisms adds its switch, which the SDK merges in.
  const env = process.env.HEARTH_PORTABLE ? { HEARTH_PORTABLE: process.env.HEARTH_PORTABLE } : undefined;
  await client.connect(new StdioClientTransport({ command: hearth, args: ["run", "--", process.execPath, serverJS], env, stderr: "inherit" }));
  return client;
}

const text = (r) => (r.content || []).map((c) => c.text || "").join("");

const a = await connect("a");
const b = await connect("b");
const c = await connect("c");
out.upstreams = upstreams();
out.server = a.getServerVersion();

// Same ids from different clients: each SDK client numbers its requests
// alike, so these echo calls carry the same id on every client.
const echoes = await Promise.all([a, b, c].map((cl, i) => cl.callTool({ name: "echo", arguments: { message: `from ${"abc"[i]}` } })));
out.echoes = echoes.map(text);

// Progress: a and b each run a long operation at once.
const prog = { a: [], b: [] };
await Promise.all([
  a.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 2 } }, undefined, { onprogress: (p) => prog.a.push(p.progress) }),
  b.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 2 } }, undefined, { onprogress: (p) => prog.b.push(p.progress) }),
]);
out.progress = prog;

// Cancel: a cancels its call; b's, with the same id, completes.
const ctl = new AbortController();
const aCall = a.callTool({ name: "trigger-long-running-operation", arguments: { duration: 3, steps: 3 } }, undefined, { signal: ctl.signal })
  .then(() => "completed", (e) => "rejected: " + e.message);
const bCall = b.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1, steps: 1 } }).then(text, (e) => "rejected: " + e.message);
setTimeout(() => ctl.abort("user cancelled"), 300);
out.cancel = { a: await aCall, b: await bCall };

// Sampling during a's call alone reaches a.
const tools = (await a.listTools()).tools.map((t) => t.name);
out.hasSampling = tools.includes("trigger-sampling-request");
if (out.hasSampling) {
  const r = await a.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } });
  out.samplingAlone = { text: text(r), isError: !!r.isError, askedA: a.asked, askedB: b.asked };
  // With b's call in flight too, the sampling request is refused and nobody sees it.
  const hold = b.callTool({ name: "trigger-long-running-operation", arguments: { duration: 1.5, steps: 1 } });
  await new Promise((r) => setTimeout(r, 300));
  let shared;
  try {
    const r2 = await a.callTool({ name: "trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } });
    shared = { text: text(r2), isError: !!r2.isError };
  } catch (e) {
    shared = { text: e.message, isError: true };
  }
  await hold;
  out.samplingShared = { ...shared, askedA: a.asked, askedB: b.asked };
}
out.ping = await c.ping().then(() => "ok", (e) => e.message);
out.upstreamsAtEnd = upstreams();
for (const cl of [a, b, c]) await cl.close();
console.log(JSON.stringify(out));
