package schemas

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
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
		doc    any
		schema string
	}
	var jobs []job
	for _, ex := range cat.Examples("all") {
		raw, _ := os.ReadFile(filepath.Join(root, "examples", ex.Path))
		doc, _ := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if s, _ := cat.Lookup(ex.Component); s.fast == nil {
			b.Fatalf("%s: no fast checker", ex.Component)
		}
		jobs = append(jobs, job{doc, ex.Component})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := jobs[i%len(jobs)]
		if ok, _, _ := cat.Validate(j.doc, j.schema); !ok {
			b.Fatal("invalid")
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "validations/s")
}
