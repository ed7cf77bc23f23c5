// Drives @modelcontextprotocol/server-everything hosted behind `hearth run`
// with three TypeScript SDK v1 clients sharing one directory instance (each
// with the SDK's default environment, and one client's shape: the same
// capabilities, as sessions of one client declare), and a
// fourth on a `--share client` instance, through logging, resources and
// subscriptions, elicitation, roots and list changes; prints what each
// client saw as one JSON object for test/hosted_npm_test.go to check.
//
// Every check rests on order, never on time: server-everything writes the
// log messages and resource updates a request causes before its answer,
// the router keeps the upstream's order to each client, so once a client
// has the answer to a later request (barrier) it has every frame routed to
// it before.
//
// usage: node hosted_features.mjs HEARTH SERVER_JS WORK_DIR
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [hearth, serverJS, work] = process.argv.slice(2);
const out = {};

async function connect(name, { elicitation = false, roots = false, share = "" } = {}) {
  const capabilities = {};
  if (elicitation) capabilities.elicitation = {};
  if (roots) capabilities.roots = { listChanged: true };
  const client = new Client({ name: "hearth-features", version: "1" }, { capabilities });
  Object.assign(client, { logs: [], updated: [], resourcesChanged: 0, elicited: 0, rootsAsked: 0 });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => client.logs.push(n.params));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => client.updated.push(n.params.uri));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => client.resourcesChanged++);
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async () => {
      client.elicited++;
      return { action: "accept", content: { name: `from ${name}` } };
    });
  }
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, async () => {
      client.rootsAsked++;
      return { roots: [{ uri: `file:///roots/of/${name}`, name: `root of ${name}` }] };
    });
  }
  const args = ["run", ...(share ? ["--share", share] : []), "--", process.execPath, serverJS];
  // No env: the SDK passes its default environment (HOME, PATH, ...).
  await client.connect(new StdioClientTransport({ command: hearth, args, cwd: work, stderr: "inherit" }));
  return client;
}

const text = (r) => (r.content || []).map((c) => c.text || "").join("");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// waitFor polls cond until it holds or ms pass; it bounds a wait, it
// asserts nothing about time.
async function waitFor(cond, ms) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if (cond()) return true;
  return cond();
}
const logsWith = (cl, s) => cl.logs.filter((l) => String(l.data).includes(s)).length;
const callOrError = (cl, name, args = {}) =>
  cl.callTool({ name, arguments: args }).then((r) => ({ text: text(r), isError: !!r.isError }), (e) => ({ text: e.message, isError: true }));

// a opens the instance: what it declares (elicitation, roots) is what the
// upstream is initialized with, and b and c declare the same. 350 ms after
// initialize the upstream asks for roots: a, the only client, answers with
// its own, and the upstream logs what it got (to a).
const a = await connect("a", { elicitation: true, roots: true });
out.rootsLogged = await waitFor(() => logsWith(a, "Roots updated: 1 root(s)") > 0, 10000);
const b = await connect("b", { elicitation: true, roots: true });
const c = await connect("c", { elicitation: true, roots: true });
const all = [a, b, c];
// barrier: one echo per client, one at a time (never two in flight).
const barrier = async () => {
  for (const cl of all) await cl.callTool({ name: "echo", arguments: { message: "barrier" } });
};

// Roots on a directory instance: the ones a gave, no other client asked.
out.rootsDirectory = { text: (await callOrError(a, "get-roots-list")).text, askedA: a.rootsAsked, askedB: b.rootsAsked };

// Logging: a at debug, b at info, c at notice.
await a.setLoggingLevel("debug");
await b.setLoggingLevel("info");
await c.setLoggingLevel("notice");
const R1 = "demo://resource/dynamic/text/1";
const R2 = "demo://resource/dynamic/text/2";
const subscribed = (uri) => `Subscribe Resource request for URI: ${uri}`;
const unsubscribed = (uri) => `Unsubscribe Resource request: ${uri}`;
const counts = (s) => Object.fromEntries(all.map((cl, i) => ["abc"[i], logsWith(cl, s)]));

// The log of a's subscribe, a's only request in flight: a alone (b's level
// would let it through).
await a.subscribeResource({ uri: R1 });
await barrier();
out.logAlone = counts(subscribed(R1));
// b's subscribe to the same URI is counted by hearth: the upstream never
// sees it, so logs nothing.
await b.subscribeResource({ uri: R1 });
await barrier();
out.logSecondSubscribe = counts(subscribed(R1));

// Two clients in flight: c holds a long operation (its first progress says
// the upstream is running it) while b subscribes to R2 and a asks for an
// elicitation.
let cProgress = 0;
const ctl = new AbortController();
const hold = c
  .callTool({ name: "trigger-long-running-operation", arguments: { duration: 20, steps: 40 } }, undefined, {
    signal: ctl.signal,
    onprogress: () => cProgress++,
  })
  .catch(() => "cancelled");
out.holdStarted = await waitFor(() => cProgress > 0, 10000);
// b's subscribe log goes to every client, each by its level: a (debug) and
// b (info), not c (notice), though c has a request in flight.
await b.subscribeResource({ uri: R2 });
// The elicitation is refused (-32011 to the upstream) and no client sees it.
out.elicitShared = await callOrError(a, "trigger-elicitation-request");
ctl.abort("done holding");
await hold;
await barrier();
out.logShared = counts(subscribed(R2));
out.elicitShared.askedA = a.elicited;
out.elicitShared.askedB = b.elicited;
// b alone unsubscribes R2, the last subscriber: it reaches the upstream.
await b.unsubscribeResource({ uri: R2 });

// Elicitation during a's call alone reaches a; its answer returns upstream.
out.elicitAlone = await callOrError(a, "trigger-elicitation-request");
out.elicitAlone.askedA = a.elicited;
out.elicitAlone.askedB = b.elicited;

// Subscriptions: toggle-subscriber-updates sends, before its answer, one
// notifications/resources/updated per URI the upstream holds a
// subscription to; c (no subscriber) toggles it on and at once off.
const pulse = async () => {
  await c.callTool({ name: "toggle-subscriber-updates", arguments: {} });
  await c.callTool({ name: "toggle-subscriber-updates", arguments: {} });
  await barrier();
  return Object.fromEntries(all.map((cl, i) => ["abc"[i], cl.updated.filter((u) => u === R1).length]));
};
out.updates = { both: await pulse() }; // a and b subscribed
await a.unsubscribeResource({ uri: R1 }); // b still holds R1: hearth answers it
out.updates.afterA = await pulse();
await b.unsubscribeResource({ uri: R1 }); // the last: the upstream unsubscribes
out.updates.afterB = await pulse();
await barrier();
out.unsubscribeLogs = { R1: counts(unsubscribed(R1)), R2: counts(unsubscribed(R2)) };
out.updates.other = all.map((cl) => cl.updated.filter((u) => u !== R1));

// A client that leaves releases its subscriptions: e, the only subscriber
// of R3, closes; hearth unsubscribes upstream, whose log (no request in
// flight) goes to every client by its level.
const R3 = "demo://resource/dynamic/text/3";
const e = await connect("e", { elicitation: true, roots: true });
await e.subscribeResource({ uri: R3 });
await e.close();
out.leftUnsubscribed = await waitFor(() => logsWith(a, unsubscribed(R3)) > 0, 10000);
await barrier();
out.unsubscribeLogs.R3 = counts(unsubscribed(R3));

// Resources: list and read.
const listed = (await b.listResources()).resources;
const doc = listed.find((r) => r.uri.startsWith("demo://resource/static/document/"));
out.resources = { count: listed.length, uri: doc?.uri };
if (doc) {
  const read = await b.readResource({ uri: doc.uri });
  out.resources.readURI = read.contents[0]?.uri;
  out.resources.readBytes = (read.contents[0]?.text || "").length;
}

// List changes: a's gzip-file-as-resource registers a resource; every
// client is told, and b's next resources/list (its last one was answered
// from hearth's cache) has it.
const added = "demo://resource/session/hearth-e2e.txt.gz";
const gz = await callOrError(a, "gzip-file-as-resource", { name: "hearth-e2e.txt.gz", data: "data:text/plain,hello", outputType: "resourceLink" });
await barrier();
out.listChange = {
  call: gz,
  before: listed.some((r) => r.uri === added),
  after: (await b.listResources()).resources.some((r) => r.uri === added),
  told: all.map((cl) => cl.resourcesChanged),
};

// Logging by level over messages no request caused: b toggles the
// upstream's simulated logging (a random level every 5 s, one at once
// during b's call); with no request in flight each goes to every client by
// its level. Wait for one at notice or above, or two, at a (debug).
const mark = all.map((cl) => cl.logs.length);
await b.callTool({ name: "toggle-simulated-logging", arguments: {} });
const fresh = (i) => all[i].logs.slice(mark[i]);
const SEV = { debug: 0, info: 1, notice: 2, warning: 3, error: 4, critical: 5, alert: 6, emergency: 7 };
await waitFor(() => fresh(0).some((l) => SEV[l.level] >= SEV.notice) || fresh(0).length >= 2, 12000);
await b.callTool({ name: "toggle-simulated-logging", arguments: {} });
await barrier();
out.simulated = { a: fresh(0).map((l) => l.level), b: fresh(1).map((l) => l.level), c: fresh(2).map((l) => l.level) };

// Roots on a client instance: d's own roots, verbatim.
const d = await connect("d", { roots: true, share: "client" });
out.rootsClient = { text: (await callOrError(d, "get-roots-list")).text, askedD: d.rootsAsked };

for (const cl of [...all, d]) await cl.close();
console.log(JSON.stringify(out));
