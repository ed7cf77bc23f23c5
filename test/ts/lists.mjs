// Lists what servers offer one TypeScript SDK client, v1
// (@modelcontextprotocol/sdk) or v2 (@modelcontextprotocol/client), each
// with the SDK's default capabilities and environment: for each target,
// its tools, prompts, resources and resource templates (every page) and,
// when it has list_allowed_directories (server-filesystem), that tool's
// answer. Prints one JSON object, by target name, for
// test/hosted_shape_test.go to compare a direct spawn with `hearth run`.
//
// usage: node lists.mjs v1|v2 CWD NAME=COMMAND[\tARG...]...
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";

const [sdk, cwd, ...targets] = process.argv.slice(2);
// The SDKs warn on stdout (v2: a list the server does not offer); only the
// result goes there.
const print = console.log.bind(console);
console.log = console.warn = console.info = (...a) => process.stderr.write(a.join(" ") + "\n");
const [Client, Stdio] = sdk === "v2" ? [ClientV2, StdioV2] : [ClientV1, StdioV1];
const out = {};

// all walks every page of one list; an error is kept as its message.
async function all(list, member) {
  try {
    const items = [];
    let page = await list({});
    items.push(...page[member]);
    while (page.nextCursor) {
      page = await list({ cursor: page.nextCursor });
      items.push(...page[member]);
    }
    return items;
  } catch (e) {
    return { error: String(e.message) };
  }
}

for (const t of targets) {
  const [name, spec] = t.split(/=(.*)/s);
  const [command, ...args] = spec.split("\t");
  const client = new Client({ name: `hearth-e2e-lists-${sdk}`, version: "1" });
  const transport = new Stdio({ command, args, cwd, stderr: "inherit" });
  await client.connect(transport);
  const r = {
    tools: await all((p) => client.listTools(p), "tools"),
    prompts: await all((p) => client.listPrompts(p), "prompts"),
    resources: await all((p) => client.listResources(p), "resources"),
    templates: await all((p) => client.listResourceTemplates(p), "resourceTemplates"),
  };
  if (Array.isArray(r.tools) && r.tools.some((x) => x.name === "list_allowed_directories")) {
    const res = await client.callTool({ name: "list_allowed_directories", arguments: {} });
    r.allowed = (res.content || []).map((c) => c.text || "").join("");
  }
  out[name] = r;
  // Ended at once: close waits up to 2 s for a server that does not exit
  // when its stdin closes (server-everything).
  if (transport.pid) process.kill(transport.pid, "SIGKILL");
  await client.close();
}
print(JSON.stringify(out));
