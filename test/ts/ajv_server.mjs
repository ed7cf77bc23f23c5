// Benchmark peer: a validate_asset MCP tool as one would build it in Node,
// with the official TypeScript SDK's McpServer over stdio and ajv's Draft
// 2020-12 build behind it. test/bench's ValidateAssetVsAjvServer calls it and
// hearthd with the same frames in one run.
//
//   node ajv_server.mjs <schemasDir>
//
// Like hearth's catalog it compiles every schema once, validates against a
// schema named by file (synesthetic-asset), and sets a top-level "$schema"
// aside (here: validates a shallow copy without it).
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import Ajv2020 from "ajv/dist/2020.js";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const [schemasDir] = process.argv.slice(2);
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
const byName = new Map();
for (const f of readdirSync(schemasDir).filter((f) => f.endsWith(".json"))) {
  const schema = JSON.parse(readFileSync(join(schemasDir, f), "utf8"));
  ajv.addSchema(schema);
  byName.set(f.replace(/\.schema\.json$|\.json$/, ""), schema.$id);
}

const server = new McpServer({ name: "ajv-validate", version: "1.0.0" });
server.registerTool(
  "validate_asset",
  {
    description: "Validates a JSON document against a loaded schema.",
    inputSchema: { asset: z.any(), schema: z.string() },
  },
  async ({ asset, schema }) => {
    const validate = byName.has(schema) ? ajv.getSchema(byName.get(schema)) : undefined;
    let result;
    if (!validate) {
      result = { ok: false, reason: "validation_failed", errors: [{ path: "", msg: `unknown schema: ${schema}` }] };
    } else {
      let doc = asset;
      if (doc && typeof doc === "object" && !Array.isArray(doc) && "$schema" in doc) {
        const { $schema, ...rest } = doc;
        doc = rest;
      }
      result = validate(doc)
        ? { ok: true }
        : { ok: false, reason: "validation_failed", errors: validate.errors.map((e) => ({ path: e.instancePath, msg: e.message })) };
    }
    return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
  },
);
await server.connect(new StdioServerTransport());
