// Benchmark peer: validates the corpus examples with ajv's Draft 2020-12
// build, the same work hearth's BenchmarkValidateVsPeers times, and prints
// {"validations":N,"seconds":S}. Usage: node bench_ajv.mjs <schemasDir> <examplesDir> <rounds>
import Ajv2020 from "ajv/dist/2020.js";
import { readFileSync, readdirSync } from "node:fs";
import { join, basename } from "node:path";

const [schemasDir, examplesDir, roundsArg] = process.argv.slice(2);
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
  const doc = JSON.parse(readFileSync(join(examplesDir, f), "utf8"));
  const validate = ajv.getSchema(byFile.get(basename(doc.$schema)));
  delete doc.$schema; // the document's reference to its schema, not content
  if (!validate(doc)) throw new Error(`${f} does not validate: ${JSON.stringify(validate.errors).slice(0, 300)}`);
  work.push([validate, doc]);
}
const start = process.hrtime.bigint();
let n = 0;
for (let r = 0; r < rounds; r++) for (const [validate, doc] of work) { validate(doc); n++; }
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
console.log(JSON.stringify({ validations: n, seconds }));
