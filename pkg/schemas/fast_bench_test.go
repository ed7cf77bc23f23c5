package schemas

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
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
		if s, _ := cat.Lookup(ex.Component); s.fast == nil {
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
