package jsondiff

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	wi2l "github.com/wI2L/jsondiff"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// examplesDir is the synesthetic corpus's examples: the embedded default
// catalog's copy in pkg/schemas (synesthetic/SOURCE there says which release).
var examplesDir = filepath.Join("..", "synesthetic", "examples")

type benchPair struct {
	name                string
	base, new           []byte       // compact, as a client sends them
	baseIndented        []byte       // the file as written: indented
	baseDoc, newDoc     *jsonval.Doc // base and new decoded as a frame is (with their text)
	baseFloat, newFloat any          // decoded into float64s, for wI2L
}

// loadBenchPairs turns every corpus example into a realistic edit: a few
// values changed, a member removed, one added, one array element edited.
func loadBenchPairs(tb testing.TB) []benchPair {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("corpus examples missing in %s", examplesDir)
	}
	slices.Sort(files)
	r := rand.New(rand.NewPCG(42, 42))
	var pairs []benchPair
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		base := decodeNumbers(tb, string(raw))
		edited := editAsset(r, decodeNumbers(tb, string(raw)), 0)
		if m, ok := edited.(map[string]any); ok {
			m["edited_by"] = "benchmark"
		}
		p := benchPair{name: filepath.Base(f), baseIndented: raw}
		if p.base, err = json.Marshal(base); err != nil {
			tb.Fatal(err)
		}
		if p.new, err = json.Marshal(edited); err != nil {
			tb.Fatal(err)
		}
		if p.baseDoc, err = jsonval.ParseRaw(p.base); err != nil {
			tb.Fatal(err)
		}
		if p.newDoc, err = jsonval.ParseRaw(p.new); err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(p.base, &p.baseFloat); err != nil {
			tb.Fatal(err)
		}
		if err := json.Unmarshal(p.new, &p.newFloat); err != nil {
			tb.Fatal(err)
		}
		pairs = append(pairs, p)
	}
	return pairs
}

func editAsset(r *rand.Rand, v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		}) {
			switch n := r.IntN(100); {
			case n < 3 && depth > 0:
				delete(x, k)
			default:
				x[k] = editAsset(r, x[k], depth+1)
			}
		}
	case []any:
		if len(x) > 0 && r.IntN(10) == 0 {
			i := r.IntN(len(x))
			x[i] = editAsset(r, x[i], depth+1)
		}
	case json.Number:
		if r.IntN(10) == 0 {
			return json.Number("0.75")
		}
	case string:
		if r.IntN(10) == 0 {
			return x + " (edited)"
		}
	case bool:
		if r.IntN(10) == 0 {
			return !x
		}
	}
	return v
}

// TestBenchInputsMakeRealPatches keeps the benchmark honest: its inputs must
// differ, and both differs must agree that they do.
func TestBenchInputsMakeRealPatches(t *testing.T) {
	for _, p := range loadBenchPairs(t) {
		ours, err := DiffJSON(p.base, p.new)
		if err != nil {
			t.Fatal(err)
		}
		if len(ours) == 0 {
			t.Errorf("%s: no changes", p.name)
		}
		checkPatch(t, p.base, p.new, ours)
		fromIndented, err := DiffJSON(p.baseIndented, p.new)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := marshalPatch(t, ours), marshalPatch(t, fromIndented); a != b {
			t.Errorf("%s: formatting of base changed the patch:\n%s\n%s", p.name, a, b)
		}
		theirs, err := wi2l.CompareJSON(p.base, p.new)
		if err != nil {
			t.Fatal(err)
		}
		if len(theirs) == 0 {
			t.Errorf("%s: wI2L/jsondiff sees no changes", p.name)
		}
	}
}

// BenchmarkDiff compares this package with github.com/wI2L/jsondiff on the
// corpus edits; one iteration diffs all fifteen pairs. "json" starts from the
// text; "docs" from jsonval documents decoded with their text (what
// diff_assets diffs: its arguments as the frame's decode left them), against
// wI2L on values decoded by encoding/json ("values").
func BenchmarkDiff(b *testing.B) {
	pairs := loadBenchPairs(b)
	var size int64
	for _, p := range pairs {
		size += int64(len(p.base) + len(p.new))
	}
	run := func(name string, f func(p *benchPair) error) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for i := range pairs {
					if err := f(&pairs[i]); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	run("json/hearth", func(p *benchPair) error { _, err := DiffJSON(p.base, p.new); return err })
	run("json/wI2L", func(p *benchPair) error { _, err := wi2l.CompareJSON(p.base, p.new); return err })
	run("json-indented-base/hearth", func(p *benchPair) error { _, err := DiffJSON(p.baseIndented, p.new); return err })
	run("json-indented-base/wI2L", func(p *benchPair) error { _, err := wi2l.CompareJSON(p.baseIndented, p.new); return err })
	run("docs/hearth", func(p *benchPair) error { Diff(p.baseDoc, p.newDoc); return nil })
	run("values/wI2L", func(p *benchPair) error { _, err := wi2l.CompareWithoutMarshal(p.baseFloat, p.newFloat); return err })
	run("json+marshal/hearth", func(p *benchPair) error {
		ops, err := DiffJSON(p.base, p.new)
		if err == nil {
			_, err = json.Marshal(ops)
		}
		return err
	})
	run("json+marshal/wI2L", func(p *benchPair) error {
		ops, err := wi2l.CompareJSON(p.base, p.new)
		if err == nil {
			_, err = json.Marshal(ops)
		}
		return err
	})
}
