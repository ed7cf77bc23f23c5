package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// loadCorpus loads the synesthetic schema corpus as the daemon would.
func loadCorpus(b *testing.B) *schemas.Catalog {
	root, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "fixtures", "synesthetic-schemas"))
	if _, err := os.Stat(filepath.Join(root, "jsonschema")); err != nil {
		b.Skip("corpus fixtures not present")
	}
	cat, err := schemas.Load(filepath.Join(root, "jsonschema"), filepath.Join(root, "examples"), schemas.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return cat
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
	cat := loadCorpus(b)
	schemasDir, examplesDir := cat.SchemasDir, cat.ExamplesDir
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

// BenchmarkValidateAssetVsAjvServer: validate_asset called over stdio, one
// call at a time, on each corpus example (compact, as JSON.stringify sends
// it), served by hearthd and, in the same run, by the same tool built with
// the official TypeScript SDK's McpServer and ajv (test/ts/ajv_server.mjs).
// The whole call is timed: framing, parsing, argument checks, validation
// and the reply. Reports p50/p99 of both and hearth's speed-up.
func BenchmarkValidateAssetVsAjvServer(b *testing.B) {
	cat := loadCorpus(b)
	schemasDir, examplesDir := cat.SchemasDir, cat.ExamplesDir
	var lines []string
	for i, ex := range cat.Examples("all") {
		raw, _ := os.ReadFile(filepath.Join(examplesDir, ex.Path))
		var asset bytes.Buffer
		if err := json.Compact(&asset, raw); err != nil {
			b.Fatal(err)
		}
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"validate_asset","arguments":{"asset":%s,"schema":%q}}}`,
			10+i, asset.Bytes(), ex.Component))
	}
	build(b)
	hearth := stdioPeerEnv(b, []string{"SYN_SCHEMAS_DIR=" + schemasDir, "SYN_EXAMPLES_DIR=" + examplesDir}, bins.hearthd, "stdio")
	peers := map[string]*conn{"hearth": hearth}
	if _, err := exec.LookPath("node"); err == nil {
		if _, err := os.Stat(filepath.Join("..", "ts", "node_modules", "ajv")); err == nil {
			peers["ajv"] = stdioPeer(b, "node", filepath.Join("..", "ts", "ajv_server.mjs"), schemasDir)
		}
	}
	if peers["ajv"] == nil {
		if os.Getenv("CI") == "true" {
			b.Fatal("the ajv server peer needs node and test/ts/node_modules (npm ci)")
		}
		b.Log("ajv server peer unavailable: run npm ci in test/ts")
	}
	measure := func(name string, c *conn, n int) []time.Duration {
		lat := make([]time.Duration, 0, n)
		for i := 0; i < n; i++ {
			line := lines[i%len(lines)]
			t0 := time.Now()
			c.roundTrip(b, line)
			lat = append(lat, time.Since(t0))
			if !bytes.Contains(c.reply(), []byte(`"structuredContent":{"ok":true}`)) {
				b.Fatalf("%s: %.300s", name, c.reply())
			}
		}
		return lat
	}
	for name, c := range peers {
		measure(name, c, 20*len(lines)) // warm up (V8's JIT, Go's heap)
	}
	b.ResetTimer()
	lat := map[string][]time.Duration{}
	for _, name := range []string{"hearth", "ajv"} {
		if c := peers[name]; c != nil {
			lat[name] = measure(name, c, b.N)
		}
	}
	b.StopTimer()
	hp50, hp99 := quantiles(b, "hearth-", lat["hearth"])
	b.ReportMetric(1e6/hp50, "hearth-calls/s-at-p50")
	if lat["ajv"] != nil {
		ap50, ap99 := quantiles(b, "ajv-server-", lat["ajv"])
		b.ReportMetric(ap50/hp50, "speedup-p50-x")
		b.ReportMetric(ap99/hp99, "speedup-p99-x")
	}
}
