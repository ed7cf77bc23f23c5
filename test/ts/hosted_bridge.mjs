// Drives server-everything (a 2025-only server over stdio) behind
// `hearth run` with two TypeScript SDK v2 clients pinned to 2026-07-28, at
// once: each calls the sampling and elicitation tools, which reach it as
// input_required results (hearth's era bridge) that the SDK fulfils with
// its own handlers and retries; prints what each saw as one JSON object
// for test/hosted_bridge_test.go.
//
// usage: node hosted_bridge.mjs HEARTH NODE SERVER
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [hearth, node, server] = process.argv.slice(2);
const args = ["run", "--share", "global", "--", node, server, "stdio"];
const text = (r) => (r.content || []).map((c) => c.text || "").join("");

async function session(name) {
  const client = new Client({ name, version: "1" }, {
    capabilities: { sampling: {}, elicitation: { form: {} } },
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  let sampled = 0, elicited = 0;
  client.setRequestHandler("sampling/createMessage", async () => {
    sampled++;
    return { model: "m", role: "assistant", content: { type: "text", text: `${name} samples` } };
  });
  client.setRequestHandler("elicitation/create", async () => {
    elicited++;
    return { action: "accept", content: { name: `${name} answers` } };
  });
  await client.connect(new StdioClientTransport({ command: hearth, args, stderr: "inherit" }));
  const out = { era: client.getProtocolEra?.() ?? null, protocolVersion: client.getNegotiatedProtocolVersion?.() ?? null };
  out.tools = (await client.listTools()).tools.map((t) => t.name);
  const calls = [];
  for (let i = 0; i < 2; i++) {
    // The two clients' calls run at once: a sampling request whose client
    // is not certain is refused upstream (the tool's result says so), so a
    // call is tried again until it is.
    for (let attempt = 0; attempt < 50; attempt++) {
      const r = text(await client.callTool({ name: "trigger-sampling-request", arguments: { prompt: `${name} ${i}`, maxTokens: 5 } }));
      if (!/not certain/.test(r)) { calls.push(r); break; }
    }
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const r = text(await client.callTool({ name: "trigger-elicitation-request", arguments: {} }));
    if (!/not certain/.test(r)) { out.elicit = r; break; }
  }
  out.sample = calls;
  out.sampled = sampled;
  out.elicited = elicited;
  await client.close();
  return out;
}

const [a, b] = await Promise.all([session("alpha"), session("beta")]);
console.log(JSON.stringify({ alpha: a, beta: b }));
