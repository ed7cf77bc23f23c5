package schemas

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// BenchmarkValidateCorpus validates the corpus examples, decoded once, as
// test/bench's ValidateVsPeers does, without the peers.
func BenchmarkValidateCorpus(b *testing.B) {
	root := repoData(b, synestheticData)
	cat, err := Load(filepath.Join(root, "jsonschema"), filepath.Join(root, "examples"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	type job struct {
		doc    *jsonval.Doc
		schema string
	}
	var jobs []job
	for _, ex := range cat.Examples("all") {
		raw, _ := os.ReadFile(filepath.Join(root, "examples", ex.Path))
		doc, err := jsonval.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		if s, _ := cat.Lookup(ex.Component); !hasFastCheck(s, doc) {
			b.Fatalf("%s: no fast checker", ex.Component)
		}
		jobs = append(jobs, job{doc, ex.Component})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := jobs[i%len(jobs)]
		if ok, _, _ := cat.ValidateDoc(j.doc, j.schema); !ok {
			b.Fatal("invalid")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "validations/s")
}

func hasFastCheck(s *Schema, doc *jsonval.Doc) bool {
	_, fast := s.sch.FastVerdict(doc)
	return fast
}

// BenchmarkValidateAssetCall is one validate_asset call as the daemon runs
// it once the frame is read: the arguments checked against the tool's input
// schema, then the handler (bind, decode, validate), on each corpus example.
func BenchmarkValidateAssetCall(b *testing.B) {
	root := repoData(b, synestheticData)
	fam, reg := openFamily(b, map[string]string{"SYN_SCHEMAS_DIR": filepath.Join(root, "jsonschema"), "SYN_EXAMPLES_DIR": filepath.Join(root, "examples")})
	entry, _ := reg.Lookup("validate_asset")
	cat, _ := fam.catalog()
	var calls []json.RawMessage
	for _, ex := range cat.Examples("all") {
		raw, _ := os.ReadFile(filepath.Join(root, "examples", ex.Path))
		// As a client's JSON.stringify sends it: compact, nothing escaped.
		var asset bytes.Buffer
		if err := json.Compact(&asset, raw); err != nil {
			b.Fatal(err)
		}
		calls = append(calls, json.RawMessage(`{"asset":`+asset.String()+`,"schema":"`+ex.Component+`"}`))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args, bad := entry.Check(calls[i%len(calls)])
		if bad != nil {
			b.Fatal(bad)
		}
		res, err := entry.Handler(context.Background(), tool.NewCall("validate_asset", args.Raw, args.Doc, tool.Client{}, nil))
		if err != nil || res.(result)["ok"] != true {
			b.Fatal(res, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkDiffAssetsCall is one diff_assets call as the daemon runs it: the
// arguments decoded as a frame's are (jsonval.ParseRaw), checked against the
// tool's input schema, the handler, and its result encoded. Each corpus
// example is diffed against an edited copy, both compact as a client's
// JSON.stringify sends them.
func BenchmarkDiffAssetsCall(b *testing.B) {
	root := repoData(b, synestheticData)
	fam, reg := openFamily(b, map[string]string{"SYN_SCHEMAS_DIR": filepath.Join(root, "jsonschema"), "SYN_EXAMPLES_DIR": filepath.Join(root, "examples")})
	entry, _ := reg.Lookup("diff_assets")
	cat, _ := fam.catalog()
	var calls [][]byte
	size := 0
	for i, ex := range cat.Examples("all") {
		raw, _ := os.ReadFile(filepath.Join(root, "examples", ex.Path))
		var base bytes.Buffer
		if err := json.Compact(&base, raw); err != nil {
			b.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			b.Fatal(err)
		}
		n := i
		edited, err := json.Marshal(editEvery(v, 7, &n))
		if err != nil {
			b.Fatal(err)
		}
		call := []byte(`{"base":` + base.String() + `,"new":` + string(edited) + `}`)
		calls = append(calls, call)
		size += len(call)
	}
	b.SetBytes(int64(size / len(calls)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		doc, err := jsonval.ParseRaw(calls[i%len(calls)])
		if err != nil {
			b.Fatal(err)
		}
		args, bad := entry.CheckDoc(doc)
		if bad != nil {
			b.Fatal(bad)
		}
		res, err := entry.Handler(context.Background(), tool.NewCall("diff_assets", args.Raw, args.Doc, tool.Client{}, nil))
		if err != nil || res.(result)["ok"] != true {
			b.Fatal(res, err)
		}
		if _, err := json.Marshal(res); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// editEvery changes every k-th scalar of a decoded document (counting with
// *n) and adds a member to every k-th object, for a realistic patch.
func editEvery(v any, k int, n *int) any {
	*n++
	edit := *n%k == 0
	switch x := v.(type) {
	case map[string]any:
		for _, key := range slices.Sorted(maps.Keys(x)) {
			x[key] = editEvery(x[key], k, n)
		}
		if edit {
			x["edited"] = true
		}
	case []any:
		for i, e := range x {
			x[i] = editEvery(e, k, n)
		}
	case json.Number:
		if edit {
			return json.Number("0.75")
		}
	case string:
		if edit {
			return x + " (edited)"
		}
	case bool:
		if edit {
			return !x
		}
	}
	return v
}
