package schemas

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// BenchmarkValidateCorpus validates the corpus examples, decoded once, as
// test/bench's ValidateVsPeers does, without the peers.
func BenchmarkValidateCorpus(b *testing.B) {
	root := needFixture(b, "synesthetic-schemas")
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
	root := needFixture(b, "synesthetic-schemas")
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
