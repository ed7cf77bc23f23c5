"""Benchmark peer: validates the corpus examples with Python's jsonschema
(Draft202012Validator: the validator of the Python adapter whose result
shapes hearth's schema tools keep), the same work hearth's
BenchmarkValidateVsPeers times, and prints {"validations":N,"seconds":S}.
Usage: python3 bench_jsonschema.py <schemasDir> <examplesDir> <rounds>"""
import json
import os
import sys
import time

import jsonschema

schemas_dir, examples_dir, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
by_file, store = {}, {}
for f in sorted(os.listdir(schemas_dir)):
    if f.endswith(".json"):
        with open(os.path.join(schemas_dir, f)) as fh:
            schema = json.load(fh)
        by_file[f] = schema
        store[schema["$id"]] = schema

work = []
for f in sorted(os.listdir(examples_dir)):
    if not f.endswith(".json"):
        continue
    with open(os.path.join(examples_dir, f)) as fh:
        doc = json.load(fh)
    schema = by_file[os.path.basename(doc.pop("$schema"))]
    resolver = jsonschema.RefResolver.from_schema(schema, store=store)
    validator = jsonschema.Draft202012Validator(schema, resolver=resolver)
    validator.validate(doc)  # raises if the corpus does not validate
    work.append((validator, doc))

start = time.perf_counter()
n = 0
for _ in range(rounds):
    for validator, doc in work:
        for _err in validator.iter_errors(doc):
            pass
        n += 1
print(json.dumps({"validations": n, "seconds": time.perf_counter() - start}))
