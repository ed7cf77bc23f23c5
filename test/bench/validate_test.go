//go:build unix

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
	// The embedded default catalog's copy (pkg/schemas/synesthetic), as
	// directories, so the peers read the same files.
	root, _ := filepath.Abs(filepath.Join("..", "..", "pkg", "schemas", "synesthetic"))
	if _, err := os.Stat(filepath.Join(root, "jsonschema")); err != nil {
		b.Fatalf("the synesthetic corpus is missing: %v", err)
	}
	cat, err := schemas.Load(filepath.Join(root, "jsonschema"), filepath.Join(root, "examples"), schemas.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return cat
}

// BenchmarkValidateVsPeers validates the fifteen corpus examples against
// their schemas and in the same run has ajv (Draft 2020-12 build, warmed
// up) and Python's jsonschema (Debian python3-jsonschema) do the same, in
// turn, five rounds; ratios are taken round by round. Targets: ≥ 1× ajv,
// ≥ 20× python-jsonschema.
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
	// Ours and each peer take turns, round after round: ours decoded,
	// ours from text, then each peer's run of the same documents.
	decoded := func(n int) float64 {
		start := time.Now()
		for i := 0; i < n; i++ {
			j := &jobs[i%len(jobs)]
			if ok, _, _ := cat.ValidateDoc(j.doc, j.schema); !ok {
				b.Fatal("invalid")
			}
		}
		return float64(n) / time.Since(start).Seconds()
	}
	fromText := func(n int) float64 {
		start := time.Now()
		for i := 0; i < n; i++ {
			j := &jobs[i%len(jobs)]
			doc, err := jsonval.Parse(j.raw)
			if err != nil {
				b.Fatal(err)
			}
			if ok, _, _ := cat.ValidateDoc(doc, j.schema); !ok {
				b.Fatal("invalid")
			}
		}
		return float64(n) / time.Since(start).Seconds()
	}
	ajvScript := filepath.Join("..", "ts", "bench_ajv.mjs")
	pyScript := filepath.Join("peers", "bench_jsonschema.py")
	n := max(b.N/peerRounds, 20*len(jobs))
	textN := max(n/10, len(jobs))
	var ours, oursText, ajv, ajvText, py []float64
	b.ResetTimer()
	for r := 0; r < peerRounds; r++ {
		ours = append(ours, decoded(n))
		if a := peerRate(b, "ajv", "node", ajvScript, schemasDir, examplesDir, strconv.Itoa(max(n/len(jobs), 20)), "decoded"); a > 0 {
			ajv = append(ajv, a)
		}
		oursText = append(oursText, fromText(textN))
		if a := peerRate(b, "ajv", "node", ajvScript, schemasDir, examplesDir, strconv.Itoa(max(textN/len(jobs), 5)), "text"); a > 0 {
			ajvText = append(ajvText, a)
		}
		if p := peerRate(b, "python-jsonschema", "/usr/bin/python3", pyScript, schemasDir, examplesDir, strconv.Itoa(max(n/len(jobs)/50, 5))); p > 0 {
			py = append(py, p)
		}
	}
	b.StopTimer()
	reportSpread(b, "validations/s", spreadOf(append([]float64(nil), ours...)))
	reportSpread(b, "text-validations/s", spreadOf(append([]float64(nil), oursText...)))
	ratios := func(name string, a, peer []float64) {
		if len(peer) != len(a) {
			return
		}
		var v []float64
		for i := range a {
			v = append(v, a[i]/peer[i])
		}
		reportSpread(b, name, spreadOf(v))
	}
	if len(ajv) > 0 {
		reportSpread(b, "ajv-validations/s", spreadOf(append([]float64(nil), ajv...)))
		ratios("x-ajv", ours, ajv)
	}
	if len(ajvText) > 0 {
		reportSpread(b, "ajv-text-validations/s", spreadOf(append([]float64(nil), ajvText...)))
		ratios("x-ajv-text", oursText, ajvText)
	}
	if len(py) > 0 {
		reportSpread(b, "python-validations/s", spreadOf(append([]float64(nil), py...)))
		ratios("x-python", ours, py)
	}
}

// peerRounds is how many times ValidateVsPeers runs ours and each peer in
// turn.
const peerRounds = 5

// BenchmarkValidateAssetVsAjvServer: validate_asset called over stdio, one
// call at a time, on each corpus example (compact, as JSON.stringify sends
// it), served by hearthd and, in the same run, by the same tool built with
// the official TypeScript SDK's McpServer and ajv (test/ts/ajv_server.mjs).
// The whole call is timed: framing, parsing, argument checks, validation
// and the reply. The two take turns in blocks, nine rounds; reports p50/p99
// of both and hearth's speed-up, as ranges over the rounds.
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
	check := func(name string, c *conn) {
		if !bytes.Contains(c.reply(), []byte(`"structuredContent":{"ok":true}`)) {
			b.Fatalf("%s: %.300s", name, c.reply())
		}
	}
	// Warm up (V8's JIT, Go's heap).
	for name, c := range peers {
		for i := 0; i < 20*len(lines); i++ {
			c.roundTrip(b, lines[i%len(lines)])
			check(name, c)
		}
	}
	var cs []contender
	for _, name := range []string{"hearth", "ajv"} {
		if c := peers[name]; c != nil {
			i := 0
			cs = append(cs, contender{name, func() time.Duration {
				line := lines[i%len(lines)]
				i++
				d := timed(func() { c.roundTrip(b, line) })
				check(name, c)
				return d
			}})
		}
	}
	b.ResetTimer()
	lat := interleave(rounds, perRound(b), block, cs...)
	b.StopTimer()
	hp50, _ := roundQuantiles(b, "hearth-", lat[0])
	b.ReportMetric(1e6/hp50.mid, "hearth-calls/s-at-p50")
	if len(lat) > 1 {
		roundQuantiles(b, "ajv-server-", lat[1])
		roundRatio(b, "speedup-p50", lat[1], lat[0])
		var v []float64
		for r := range lat[0] {
			v = append(v, quantile(lat[1][r], 0.99)/quantile(lat[0][r], 0.99))
		}
		reportSpread(b, "speedup-p99-x", spreadOf(v))
	}
}
