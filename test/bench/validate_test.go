package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
	"github.com/hearth-mcp/hearth/pkg/schemas"
)

// peerRate runs a peer script and returns its validations per second.
func peerRate(b *testing.B, name string, args ...string) float64 {
	b.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.Output()
	if err != nil {
		b.Logf("%s peer unavailable: %v", name, err)
		return 0
	}
	var r struct {
		Validations float64 `json:"validations"`
		Seconds     float64 `json:"seconds"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil || r.Seconds <= 0 {
		b.Fatalf("%s peer printed %q", name, out)
	}
	return r.Validations / r.Seconds
}

// BenchmarkValidateVsPeers validates the fifteen corpus examples against
// their schemas and in the same run has ajv (Draft 2020-12 build, warmed
// up) and Python's jsonschema (Debian python3-jsonschema) do the same.
// Targets: ≥ 1× ajv, ≥ 20× python-jsonschema.
//
// Two measures: documents decoded once and validation alone timed
// (validations/s, x-ajv, x-python), and validate_asset's own work from the
// document's text, decode included (text-validations/s against ajv with
// JSON.parse, x-ajv-text).
func BenchmarkValidateVsPeers(b *testing.B) {
	root, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "fixtures", "synesthetic-schemas"))
	schemasDir, examplesDir := filepath.Join(root, "jsonschema"), filepath.Join(root, "examples")
	if _, err := os.Stat(schemasDir); err != nil {
		b.Skip("corpus fixtures not present")
	}
	cat, err := schemas.Load(schemasDir, examplesDir, schemas.Options{})
	if err != nil {
		b.Fatal(err)
	}
	type job struct {
		raw    []byte
		doc    *jsonval.Doc
		schema string
	}
	var jobs []job
	for _, ex := range cat.Examples("all") {
		raw, _ := os.ReadFile(filepath.Join(examplesDir, ex.Path))
		doc, err := jsonval.Parse(raw)
		if err != nil {
			b.Fatalf("%s: %v", ex.Path, err)
		}
		if ok, errs, _ := cat.ValidateDoc(doc, ex.Component); !ok {
			b.Fatalf("%s: %v", ex.Path, errs)
		}
		jobs = append(jobs, job{raw, doc, ex.Component})
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		j := &jobs[i%len(jobs)]
		if ok, _, _ := cat.ValidateDoc(j.doc, j.schema); !ok {
			b.Fatal("invalid")
		}
	}
	elapsed := time.Since(start)
	// From text: what validate_asset does with the asset it receives.
	textN := max(b.N/10, len(jobs))
	start = time.Now()
	for i := 0; i < textN; i++ {
		j := &jobs[i%len(jobs)]
		doc, err := jsonval.Parse(j.raw)
		if err != nil {
			b.Fatal(err)
		}
		if ok, _, _ := cat.ValidateDoc(doc, j.schema); !ok {
			b.Fatal("invalid")
		}
	}
	textElapsed := time.Since(start)
	b.StopTimer()
	ours := float64(b.N) / elapsed.Seconds()
	oursText := float64(textN) / textElapsed.Seconds()
	b.ReportMetric(ours, "validations/s")
	b.ReportMetric(oursText, "text-validations/s")

	ajvScript := filepath.Join("..", "ts", "bench_ajv.mjs")
	rounds := strconv.Itoa(max(b.N/len(jobs), 20))
	if ajv := peerRate(b, "ajv", "node", ajvScript, schemasDir, examplesDir, rounds, "decoded"); ajv > 0 {
		b.ReportMetric(ajv, "ajv-validations/s")
		b.ReportMetric(ours/ajv, "x-ajv")
	}
	textRounds := strconv.Itoa(max(textN/len(jobs), 5))
	if ajv := peerRate(b, "ajv", "node", ajvScript, schemasDir, examplesDir, textRounds, "text"); ajv > 0 {
		b.ReportMetric(ajv, "ajv-text-validations/s")
		b.ReportMetric(oursText/ajv, "x-ajv-text")
	}
	pyRounds := strconv.Itoa(max(b.N/len(jobs)/50, 5))
	if py := peerRate(b, "python-jsonschema", "/usr/bin/python3", filepath.Join("peers", "bench_jsonschema.py"), schemasDir, examplesDir, pyRounds); py > 0 {
		b.ReportMetric(py, "python-validations/s")
		b.ReportMetric(ours/py, "x-python")
	}
}
