package jsondiff

import (
	"bytes"
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// Keys chosen to stress RFC 6901 escaping and byte-order sorting.
var propertyKeys = []string{
	"a", "b", "c", "ab", "a b", "a/b", "/", "//", "~", "~0", "~1", "~01", "m~n/o",
	"", " ", "é", "日本", "🎉", "\x00", "\"", "\\", "<&>", "A", "z", "0", "-",
}

// Number texts, several of which are numerically equal but written
// differently, so the diff's value equality is exercised.
var propertyNumbers = []string{
	"0", "-0", "0.0", "1", "1.0", "1e0", "10E-1", "-1", "2", "100", "1e2", "1E+2",
	"0.5", "5e-1", "3.14159", "-273.15", "9007199254740993", "9007199254740992",
	"123456789012345678901234567890", "1.23456789012345678901234567890e29", "1e400", "10e399",
}

func randomValue(r *rand.Rand, depth int) any {
	choice := r.IntN(10)
	if depth >= 4 && choice >= 7 {
		choice = r.IntN(7)
	}
	switch choice {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2, 3:
		return json.Number(propertyNumbers[r.IntN(len(propertyNumbers))])
	case 4, 5, 6:
		return propertyKeys[r.IntN(len(propertyKeys))] + propertyKeys[r.IntN(len(propertyKeys))]
	case 7:
		n := r.IntN(4)
		a := make([]any, n)
		for i := range a {
			a[i] = randomValue(r, depth+1)
		}
		return a
	default:
		n := r.IntN(6)
		m := make(map[string]any, n)
		for range n {
			m[propertyKeys[r.IntN(len(propertyKeys))]] = randomValue(r, depth+1)
		}
		return m
	}
}

// mutate returns a variant of v that shares most of its structure, so
// patches mix unchanged, removed, added and replaced members at every depth.
func mutate(r *rand.Rand, v any, depth int) any {
	switch r.IntN(8) {
	case 0:
		return v
	case 1:
		return randomValue(r, depth)
	}
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			switch r.IntN(5) {
			case 0: // removed
			case 1, 2:
				m[k] = mutate(r, e, depth+1)
			default:
				m[k] = e
			}
		}
		for range r.IntN(3) {
			m[propertyKeys[r.IntN(len(propertyKeys))]] = randomValue(r, depth+1)
		}
		return m
	case []any:
		a := append([]any(nil), x...)
		if len(a) > 0 && r.IntN(2) == 0 {
			i := r.IntN(len(a))
			a[i] = mutate(r, a[i], depth+1)
		} else if r.IntN(2) == 0 {
			a = append(a, randomValue(r, depth+1))
		}
		return a
	case json.Number:
		return json.Number(propertyNumbers[r.IntN(len(propertyNumbers))])
	}
	return randomValue(r, depth)
}

// normalize decodes a document with exact numbers and rewrites every number
// as its big.Rat value, so numerically equal numbers compare equal under
// reflect.DeepEqual. It uses nothing from the package under test.
func normalize(t testing.TB, doc []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", doc, err)
	}
	return normalizeValue(t, v)
}

func normalizeValue(t testing.TB, v any) any {
	switch x := v.(type) {
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			t.Fatalf("number %q does not parse", x)
		}
		return "number:" + r.RatString()
	case []any:
		for i := range x {
			x[i] = normalizeValue(t, x[i])
		}
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeValue(t, e)
		}
	}
	return v
}

func isContainer(doc []byte) bool {
	doc = bytes.TrimLeft(doc, " \t\r\n")
	return len(doc) > 0 && (doc[0] == '{' || doc[0] == '[')
}

// checkPatch asserts every property of the patch from base to new: only the
// three operations, values present exactly for add/replace, sorted, no two
// operations on nested or equal locations, and (the point) that applying it in
// order with an independent implementation yields new.
func checkPatch(t testing.TB, base, newDoc []byte, ops []Op) {
	t.Helper()
	for i, o := range ops {
		switch o.Op {
		case Add, Replace, Remove:
		default:
			t.Fatalf("op %d has kind %q", i, o.Op)
		}
		if i > 0 && compareOps(ops[i-1], o) >= 0 {
			t.Fatalf("ops %d and %d out of order: %q then %q", i-1, i, ops[i-1].Path, o.Path)
		}
		if i > 0 && (o.Path == ops[i-1].Path || strings.HasPrefix(o.Path, ops[i-1].Path+"/")) {
			t.Fatalf("op %q is inside op %q", o.Path, ops[i-1].Path)
		}
	}
	for _, o := range ops {
		for _, p := range ops {
			if o.Path != p.Path && strings.HasPrefix(o.Path, p.Path+"/") {
				t.Fatalf("op %s %q is inside op %s %q", o.Op, o.Path, p.Op, p.Path)
			}
		}
	}
	patchJSON, err := json.Marshal(ops)
	if err != nil {
		t.Fatalf("marshal patch: %v", err)
	}
	var wire []map[string]json.RawMessage
	if err := json.Unmarshal(patchJSON, &wire); err != nil {
		t.Fatalf("patch is not JSON: %v", err)
	}
	for i, w := range wire {
		_, has := w["value"]
		if want := ops[i].Op != Remove; has != want {
			t.Fatalf("op %s %q: value present = %v", ops[i].Op, ops[i].Path, has)
		}
	}
	want := normalize(t, newDoc)

	// evanphx/json-patch only accepts an object or array as the document and
	// as the value of a root replace; scalar roots are checked by hand: the
	// patch must be empty (equal values) or one replace of the root.
	if !isContainer(base) || !isContainer(newDoc) {
		switch {
		case len(ops) == 0:
			if got := normalize(t, base); !reflect.DeepEqual(got, want) {
				t.Fatalf("empty patch, but base %s differs from new %s", base, newDoc)
			}
		case len(ops) == 1 && ops[0].Op == Replace && ops[0].Path == "":
			if got := normalize(t, wire[0]["value"]); !reflect.DeepEqual(got, want) {
				t.Fatalf("root replace carries %s, want %s", wire[0]["value"], newDoc)
			}
		default:
			t.Fatalf("scalar root: want no op or one root replace, got %s", patchJSON)
		}
		return
	}
	// evanphx/json-patch resolves an empty reference token inside a path
	// ("//0": member "" then member "0") to the enclosing document itself
	// (partialDoc.get("") returns self), against RFC 6901. So the patch and
	// both documents are checked under one consistent renaming of the key ""
	// to a key they do not use: a bijection, so the patch is right for the
	// renamed documents exactly when it is right for the originals.
	if usesStandIn(base) || usesStandIn(newDoc) {
		t.Skip("documents use the stand-in key")
	}
	renamedPatch := make([]map[string]any, len(wire))
	for i, w := range wire {
		op := map[string]any{"op": ops[i].Op, "path": renameInPointer(ops[i].Path)}
		if v, ok := w["value"]; ok {
			op["value"] = renameEmptyKeys(decodeNumbers(t, string(v)))
		}
		renamedPatch[i] = op
	}
	renamedPatchJSON, err := json.Marshal(renamedPatch)
	if err != nil {
		t.Fatalf("marshal renamed patch: %v", err)
	}
	renamedBase, err := json.Marshal(renameEmptyKeys(decodeNumbers(t, string(base))))
	if err != nil {
		t.Fatalf("marshal renamed base: %v", err)
	}
	renamedNew, err := json.Marshal(renameEmptyKeys(decodeNumbers(t, string(newDoc))))
	if err != nil {
		t.Fatalf("marshal renamed new: %v", err)
	}
	patch, err := jsonpatch.DecodePatch(renamedPatchJSON)
	if err != nil {
		t.Fatalf("independent applier rejects the patch %s: %v", patchJSON, err)
	}
	out, err := patch.Apply(renamedBase)
	if err != nil {
		t.Fatalf("applying %s to %s: %v", patchJSON, base, err)
	}
	if got := normalize(t, out); !reflect.DeepEqual(got, normalize(t, renamedNew)) {
		t.Fatalf("patch %s on %s gives %s, want %s", patchJSON, base, out, newDoc)
	}
}

// emptyStandIn replaces the key "" for the applier (a private-use character).
const emptyStandIn = "\ue000"

func usesStandIn(doc []byte) bool {
	return bytes.Contains(doc, []byte(emptyStandIn)) || bytes.Contains(bytes.ToLower(doc), []byte(`\ue000`))
}

func renameEmptyKeys(v any) any {
	switch x := v.(type) {
	case []any:
		for i := range x {
			x[i] = renameEmptyKeys(x[i])
		}
	case map[string]any:
		if e, ok := x[""]; ok {
			delete(x, "")
			x[emptyStandIn] = e
		}
		for k, e := range x {
			x[k] = renameEmptyKeys(e)
		}
	}
	return v
}

func renameInPointer(p string) string {
	if p == "" {
		return p
	}
	tokens := strings.Split(p[1:], "/")
	for i, tok := range tokens {
		if tok == "" {
			tokens[i] = emptyStandIn
		}
	}
	return "/" + strings.Join(tokens, "/")
}

// TestDiffProperty diffs 20 000 random pairs and applies each patch with an
// independent RFC 6902 implementation. It also checks that every way a
// document comes in gives the same patch (see samePatchEveryWay).
func TestDiffProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 2026))
	const pairs = 20000
	var ops, empty, scalarRoots int
	for i := range pairs {
		var base any
		switch i % 10 {
		case 0:
			base = randomValue(r, 3) // often a scalar root
		case 1:
			base = []any{randomValue(r, 1), randomValue(r, 1)}
		default:
			base = map[string]any{"k": randomValue(r, 1), propertyKeys[r.IntN(len(propertyKeys))]: randomValue(r, 1)}
			if m, ok := randomValue(r, 0).(map[string]any); ok {
				base = m
			}
		}
		newV := mutate(r, base, 0)
		baseJSON, err := json.Marshal(base)
		if err != nil {
			t.Fatal(err)
		}
		newJSON, err := json.Marshal(newV)
		if err != nil {
			t.Fatal(err)
		}
		if !isContainer(baseJSON) || !isContainer(newJSON) {
			scalarRoots++
		}
		got, err := DiffJSON(baseJSON, newJSON)
		if err != nil {
			t.Fatalf("pair %d: DiffJSON(%s, %s): %v", i, baseJSON, newJSON, err)
		}
		checkPatch(t, baseJSON, newJSON, got)
		samePatchEveryWay(t, baseJSON, newJSON, got)
		ops += len(got)
		if len(got) == 0 {
			empty++
		}
	}
	// Guard the generator itself: the run must cover real patches.
	if ops < pairs || empty == 0 || scalarRoots < pairs/20 {
		t.Fatalf("weak generator: %d ops, %d empty patches, %d scalar roots in %d pairs", ops, empty, scalarRoots, pairs)
	}
	t.Logf("%d pairs, %d ops, %d empty patches, %d with a scalar root", pairs, ops, empty, scalarRoots)
}

// samePatchEveryWay checks the patch DiffJSON gave against Diff on the
// documents decoded the other ways a caller holds them: as members of one
// arguments object (what diff_assets diffs), the very same patch text; and
// without their text (jsonval.Parse), the same patch once values are read
// as encoding/json reads them (only escapes may differ). An empty patch is
// exactly jsonval.Equal's verdict.
func samePatchEveryWay(t testing.TB, base, newDoc []byte, ops []Op) {
	t.Helper()
	want := marshalPatch(t, ops)
	// Documents at the depth limit cannot be members of another.
	if b, n, ok := asArguments(t, string(base), string(newDoc)); ok {
		if got := marshalPatch(t, Diff(b, n)); got != want {
			t.Fatalf("DiffJSON and Diff of arguments disagree on %s, %s:\n%s\n%s", base, newDoc, want, got)
		}
	}
	pb, pn := parsed(t, string(base)), parsed(t, string(newDoc))
	got := marshalPatch(t, Diff(pb, pn))
	if !reflect.DeepEqual(normalize(t, []byte(want)), normalize(t, []byte(got))) {
		t.Fatalf("DiffJSON and Diff without the text disagree on %s, %s:\n%s\n%s", base, newDoc, want, got)
	}
	if eq := jsonval.Equal(pb, pb.Root(), pn, pn.Root()); eq != (len(ops) == 0) {
		t.Fatalf("jsonval.Equal(%s, %s) = %v, but the patch has %d operations", base, newDoc, eq, len(ops))
	}
}

// bigExponent finds exponents too large for big.Rat to expand cheaply.
var bigExponent = regexp.MustCompile(`[eE][+-]?0*[0-9]{4,}`)

// FuzzDiff checks, for any two inputs, that DiffJSON fails exactly on the
// inputs that are not valid UTF-8 JSON, and otherwise returns a patch that
// an independent applier turns into the new document, the same patch
// whichever way the documents were decoded (samePatchEveryWay), and that
// jsonval.Equal agrees with an exact reading by encoding/json and math/big.
func FuzzDiff(f *testing.F) {
	seeds := [][2]string{
		{`{}`, `{}`},
		{`{"a":1,"b":[1,2]}`, `{"a":1.0,"c":null}`},
		{`{"a/b":{"~":1}}`, `{"a/b":{"~":2,"":3}}`},
		{`{"a":1,"a":2}`, `{"a":3}`},
		{`[1,2]`, `{"x":[]}`},
		{`1`, `"x"`},
		{`null`, `{"a":null}`},
		{`{"é":"\u00e9"}`, `{"\u00e9":"é"}`},
		{`{"a":{"b":{"c":[{"d":1}]}}}`, `{"a":{"b":{"c":[{"d":1}],"e":true}}}`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, base, newDoc []byte) {
		ops, err := DiffJSON(base, newDoc)
		valid := json.Valid(base) && json.Valid(newDoc) && utf8.Valid(base) && utf8.Valid(newDoc)
		if (err == nil) != valid {
			t.Fatalf("DiffJSON error %v, but inputs valid = %v", err, valid)
		}
		if err != nil {
			return
		}
		if bigExponent.Match(base) || bigExponent.Match(newDoc) {
			t.Skip("exponent too large for the big.Rat oracle")
		}
		samePatchEveryWay(t, base, newDoc, ops)
		a, b := parsed(t, string(base)), parsed(t, string(newDoc))
		want := reflect.DeepEqual(normalize(t, base), normalize(t, newDoc))
		if got := jsonval.Equal(a, a.Root(), b, b.Root()); got != want {
			t.Fatalf("jsonval.Equal(%s, %s) = %v, the reference says %v", base, newDoc, got, want)
		}
		// The applier works on encoding/json's reading of base (duplicate
		// keys: the last wins), which is the document DiffJSON diffs.
		checkPatch(t, canonical(t, base), newDoc, ops)
	})
}

func canonical(t testing.TB, doc []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return out
}
