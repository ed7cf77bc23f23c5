// Benchmark peer: validates the corpus examples with ajv's Draft 2020-12
// build, the same work hearth's BenchmarkValidateVsPeers times, and prints
// {"validations":N,"seconds":S}.
// Usage: node bench_ajv.mjs <schemasDir> <examplesDir> <rounds> [decoded|text]
//   decoded (default): documents parsed once, validation alone is timed.
//   text: every validation parses the document's file text first
//         (JSON.parse) and sets "$schema" aside, as a server receiving the
//         document does; hearth's text mode parses the same bytes.
// The same number of rounds runs untimed first, so V8 has compiled the
// validators with its optimizing JIT before the clock starts.
import Ajv2020 from "ajv/dist/2020.js";
import { readFileSync, readdirSync } from "node:fs";
import { join, basename } from "node:path";

const [schemasDir, examplesDir, roundsArg, mode = "decoded"] = process.argv.slice(2);
const rounds = Number(roundsArg || 1000);
// Formats are annotations in 2020-12 (hearth asserts none either).
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
const byFile = new Map();
for (const f of readdirSync(schemasDir).filter((f) => f.endsWith(".json"))) {
  const schema = JSON.parse(readFileSync(join(schemasDir, f), "utf8"));
  ajv.addSchema(schema);
  byFile.set(f, schema.$id);
}
const work = [];
for (const f of readdirSync(examplesDir).filter((f) => f.endsWith(".json")).sort()) {
  const raw = readFileSync(join(examplesDir, f), "utf8");
  const doc = JSON.parse(raw);
  const validate = ajv.getSchema(byFile.get(basename(doc.$schema)));
  // "$schema" is the document's reference to its schema, not content (hearth
  // sets it aside too). Deleting a property can leave a V8 object in slow
  // dictionary mode, so the timed documents are parsed afresh without it.
  delete doc.$schema;
  if (!validate(doc)) throw new Error(`${f} does not validate: ${JSON.stringify(validate.errors).slice(0, 300)}`);
  work.push([validate, JSON.parse(JSON.stringify(doc)), raw]);
}
const run = () => {
  let n = 0;
  if (mode === "text") {
    for (let r = 0; r < rounds; r++) for (const [validate, , raw] of work) {
      const doc = JSON.parse(raw);
      delete doc.$schema;
      validate(doc);
      n++;
    }
  } else {
    for (let r = 0; r < rounds; r++) for (const [validate, doc] of work) { validate(doc); n++; }
  }
  return n;
};
run();
const start = process.hrtime.bigint();
const n = run();
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ validations: n, seconds }));
