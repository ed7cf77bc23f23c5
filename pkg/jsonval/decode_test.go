package jsonval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// reference decodes as the schema validator does (encoding/json, UseNumber,
// nothing after the value).
func reference(s string) (any, error) { return jsonschema.UnmarshalJSON(strings.NewReader(s)) }

// agree checks that Parse accepts exactly what encoding/json accepts and
// yields the same value.
func agree(t *testing.T, in string) {
	t.Helper()
	want, werr := reference(in)
	got, gerr := ParseString(in)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: encoding/json err=%v, jsonval err=%v", in, werr, gerr)
	}
	if werr != nil {
		return
	}
	if a := got.Any(); !reflect.DeepEqual(a, want) {
		t.Fatalf("%q: jsonval %#v, encoding/json %#v", in, a, want)
	}
}

func TestAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`null`, `true`, `false`, ` 0 `, `-0`, `1.5e-3`, `1E+9`, `123456789012345678901234567890`,
		`""`, `"a"`, `"\u00e9\n\t\"\\\/\b\f\r"`, `"é😀"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`,
		`"\ud83dx"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, "\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"",
		"\"\x7f\"", `[]`, `{}`, `[1,[2,[3]]]`, `{"a":1,"a":2}`, `{"":{"":[]}}`, `{"a\u0000b":null}`,
		"\t\r\n[ 1 , 2 ]\n", `{"k":"v","n":[true,false,null,{"x":-1.0e10}]}`,
	} {
		agree(t, in)
	}
}

// TestBadInputs is the table of malformed documents: each is refused with
// a message and an offset, as encoding/json refuses it.
func TestBadInputs(t *testing.T) {
	for _, in := range []string{
		``, ` `, `nul`, `nulls`, `tru`, `True`, `01`, `-`, `-a`, `1.`, `1.e5`, `.5`, `1e`, `1e+`, `+1`, `0x10`,
		`NaN`, `Infinity`, `[`, `[1`, `[1,]`, `[,1]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{a:1}`, `{'a':1}`,
		`{"a" 1}`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\nb\"", "\"\x00\"", `"\`, `{} {}`, `1 2`, `[] ]`,
		`{}x`, "\xef\xbb\xbf{}", `[1]]`, `"\'"`, `{"a":1 "b":2}`, `[1 2]`,
	} {
		_, err := ParseString(in)
		if err == nil {
			t.Errorf("%q: accepted", in)
			continue
		}
		var se *SyntaxError
		if !errorsAs(err, &se) || se.Msg == "" || se.Offset < 0 || se.Offset > len(in) {
			t.Errorf("%q: error %v has no message or a bad offset", in, err)
		}
		agree(t, in)
	}
}

func errorsAs(err error, se **SyntaxError) bool {
	e, ok := err.(*SyntaxError)
	*se = e
	return ok
}

func TestDepth(t *testing.T) {
	ok := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := ParseString(ok); err != nil {
		t.Fatalf("depth %d refused: %v", MaxDepth, err)
	}
	deep := strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1)
	if _, err := ParseString(deep); err == nil || !strings.Contains(err.Error(), "max depth") {
		t.Fatalf("depth %d: %v", MaxDepth+1, err)
	}
	agree(t, ok)
	agree(t, deep)
}

// children collects an iteration.
func children(d *Doc, n *Node) []*Node {
	var out []*Node
	for it := d.Kids(n); ; {
		m := it.Next()
		if m == nil {
			return out
		}
		out = append(out, m)
	}
}

func keys(d *Doc, n *Node) string {
	var ks []string
	for _, m := range children(d, n) {
		ks = append(ks, d.Key(m))
	}
	return strings.Join(ks, ",")
}

func TestOrderDuplicatesAndGet(t *testing.T) {
	d, err := ParseString(`{"b":1,"a":2,"b":3}`)
	if err != nil {
		t.Fatal(err)
	}
	root := d.Root()
	if k := keys(d, root); k != "b,a,b" || root.Len() != 3 {
		t.Fatalf("members %v, want document order with the duplicate", k)
	}
	if g := d.Get(root, "b"); g == nil || d.Str(g) != "3" {
		t.Fatalf("Get(b) = %+v, want the last one", g)
	}
	if d.Get(root, "zz") != nil || d.Get(children(d, root)[0], "b") != nil {
		t.Fatal("Get of a missing key, or on a number")
	}
}

func TestWithout(t *testing.T) {
	d, _ := ParseString(`{"$schema":"x","a":1,"\u0062":[2],"$schema":"y","c":{"d":null},"e":5}`)
	for _, c := range []struct {
		drop []string
		want string
	}{
		{[]string{"$schema"}, "a,b,c,e"},
		{[]string{"e"}, "$schema,a,b,$schema,c"},
		{[]string{"$schema", "e", "a"}, "b,c"},
		{[]string{"nope"}, "$schema,a,b,$schema,c,e"},
		{[]string{"$schema", "a", "b", "c", "e"}, ""},
	} {
		w := d.Without(c.drop...)
		if k := keys(w, w.Root()); k != c.want {
			t.Errorf("Without(%v) = %s, want %s", c.drop, k, c.want)
		}
		if !reflect.DeepEqual(w.Any(), func() any {
			m := d.Any().(map[string]any)
			for _, k := range c.drop {
				delete(m, k)
			}
			return m
		}()) {
			t.Errorf("Without(%v).Any() = %v", c.drop, w.Any())
		}
	}
	if k := keys(d, d.Root()); k != "$schema,a,b,$schema,c,e" {
		t.Fatalf("Without changed the document: %s", k)
	}
	// A copy made for a member dropped in the middle keeps nested values.
	w := d.Without("a")
	c := w.Get(w.Root(), "c")
	if c == nil || keys(w, c) != "d" || children(w, c)[0].Kind() != Null || len(children(w, w.Get(w.Root(), "b"))) != 1 {
		t.Fatalf("nested values after Without: %v", w.Any())
	}
	if s, _ := ParseString(`[1]`); s.Without("a") != s {
		t.Fatal("Without on an array")
	}
}

func TestPlainInt(t *testing.T) {
	for in, want := range map[string]bool{`1`: true, `-20`: true, `0`: true, `1.0`: false, `1e2`: false, `0.5`: false, `"1"`: false} {
		d, err := ParseString(in)
		if err != nil || d.Root().IsPlainInt() != want {
			t.Errorf("%s: IsPlainInt err=%v, want %v", in, err, want)
		}
	}
}

func TestFromAny(t *testing.T) {
	in := `{"z":[1,2.5,"s",null,true,false,{"k":{}}],"a":{"b":[]},"":-0}`
	want, _ := reference(in)
	d, err := FromAny(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Any(), want) {
		t.Fatalf("round trip: %#v", d.Any())
	}
	if k := keys(d, d.Root()); k != ",a,z" {
		t.Fatalf("members not sorted: %s", k)
	}
	f, err := FromAny(map[string]any{"x": 2.0})
	if err != nil {
		t.Fatal(err)
	}
	if x := children(f, f.Root())[0]; f.Str(x) != "2" || !x.IsPlainInt() {
		t.Fatalf("float64 2 became %q", f.Str(x))
	}
	if _, err := FromAny(map[string]any{"x": make(chan int)}); err == nil {
		t.Fatal("FromAny accepted a channel")
	}
}

func TestSub(t *testing.T) {
	d, _ := ParseString(`{"a":{"$schema":"s","x":[1,{"y":"\u00e9"}]},"b":"t"}`)
	a := d.Sub(d.Get(d.Root(), "a"))
	want, _ := reference(`{"$schema":"s","x":[1,{"y":"é"}]}`)
	if !reflect.DeepEqual(a.Any(), want) || a.Key(a.Root()) != "" {
		t.Fatalf("Sub: %v", a.Any())
	}
	if w := a.Without("$schema"); keys(w, w.Root()) != "x" {
		t.Fatalf("Without on a Sub: %s", keys(w, w.Root()))
	}
	b := d.Sub(d.Get(d.Root(), "b"))
	if b.Root().Kind() != String || b.Str(b.Root()) != "t" || d.Sub(d.Root()) != d {
		t.Fatal("Sub of a string or of the root")
	}
}

// rawAgrees checks that every node's Raw text decodes to the node's value.
func rawAgrees(t *testing.T, d *Doc) {
	t.Helper()
	var walk func(n *Node)
	walk = func(n *Node) {
		raw, ok := d.Raw(n)
		if !ok {
			t.Fatal("no raw text from ParseRaw")
		}
		want, err := reference(raw)
		if err != nil || !reflect.DeepEqual(want, d.AnyOf(n)) {
			t.Fatalf("raw %q decodes to %v (%v), node holds %v", raw, want, err, d.AnyOf(n))
		}
		it := d.Kids(n)
		for m := it.Next(); m != nil; m = it.Next() {
			walk(m)
		}
	}
	walk(d.Root())
}

func TestRaw(t *testing.T) {
	in := ` { "id" : "a\u0062" , "p":{"x": [ 1.50 , true,null ,"\ud83d\ude00"] ,"y":{}} } `
	d, err := ParseRaw([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	rawAgrees(t, d)
	if r, _ := d.Raw(d.Get(d.Root(), "id")); r != `"a\u0062"` {
		t.Fatalf("id raw %q", r)
	}
	p := d.Sub(d.Get(d.Root(), "p"))
	if r, ok := p.Raw(p.Root()); !ok || r != `{"x": [ 1.50 , true,null ,"\ud83d\ude00"] ,"y":{}}` {
		t.Fatalf("Sub root raw %q", r)
	}
	if _, ok := d.Without("id").Raw(d.Without("id").Root()); ok {
		t.Fatal("a Without root has no input text")
	}
	if plain, _ := ParseString(in); func() bool { _, ok := plain.Raw(plain.Root()); return ok }() {
		t.Fatal("Parse keeps no raw text")
	}
}

func TestKidsOfAForeignNodePanics(t *testing.T) {
	a, _ := ParseString(`[[1]]`)
	b, _ := ParseString(`[[1]]`)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	a.Kids(children(b, b.Root())[0])
}

func TestKindsAndText(t *testing.T) {
	d, err := ParseString(`[null,false,true,-1.5e3,"a\"b",[],{}]`)
	if err != nil {
		t.Fatal(err)
	}
	kids := children(d, d.Root())
	want := []Kind{Null, False, True, Number, String, Array, Object}
	for i, k := range want {
		if kids[i].Kind() != k || kids[i].Kind().String() != k.String() {
			t.Errorf("item %d: %v, want %v", i, kids[i].Kind(), k)
		}
	}
	if d.Str(kids[3]) != "-1.5e3" || d.Str(kids[4]) != `a"b` || d.Str(kids[0]) != "" || kids[5].Len() != 0 || kids[3].Len() != 0 {
		t.Errorf("texts: %q %q", d.Str(kids[3]), d.Str(kids[4]))
	}
	if Kind(99).String() != "invalid" || d.Key(kids[0]) != "" {
		t.Error("invalid kind or array item key")
	}
}

// corpusDirs are the real-world JSON the repository carries as test data:
// the synesthetic schemas and examples (the embedded catalog's copy), the
// JSON-Schema-Test-Suite and the MCP specification's schemas (each
// testdata/README.md says where they came from).
var corpusDirs = []string{
	filepath.Join("..", "schemas", "synesthetic"),
	filepath.Join("..", "schemas", "testdata", "json-schema-test-suite"),
	filepath.Join("..", "mcp", "testdata", "mcp-spec"),
}

// TestCorpus decodes every JSON file of the corpora both ways. They are in
// the repository: a corpus with no JSON file fails the test.
func TestCorpus(t *testing.T) {
	total := 0
	for _, root := range corpusDirs {
		n := 0
		err := filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(p, ".json") {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n++
			agree(t, string(raw))
			compactAgrees(t, string(raw))
			return nil
		})
		if err != nil || n == 0 {
			t.Fatalf("%s: %d JSON files (%v)", root, n, err)
		}
		total += n
	}
	t.Logf("%d JSON files decoded", total)
}

func FuzzAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null]}`, `"\ud83d\ude00"`, `[1e5,-0.0]`, "\"\xff\"", `{"a":1,"a":2}`, `[[]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		agree(t, in)
		compactAgrees(t, in)
		// Parse and ParseString agree too (Parse copies).
		a, errA := Parse([]byte(in))
		b, errB := ParseString(in)
		if (errA == nil) != (errB == nil) || (errA == nil && !reflect.DeepEqual(a.Any(), b.Any())) {
			t.Fatalf("%q: Parse and ParseString differ", in)
		}
		if errA == nil {
			r, err := ParseRaw([]byte(in))
			if err != nil {
				t.Fatalf("ParseRaw refused what Parse accepted: %v", err)
			}
			rawAgrees(t, r)
			// A document equals itself, however it was decoded.
			if !Equal(a, a.Root(), r, r.Root()) || !EqualAny(a.Any(), r.Any()) {
				t.Fatalf("%q: not equal to itself", in)
			}
			// Re-encoding and decoding again gives the same value.
			out, err := json.Marshal(a.Any())
			if err != nil {
				t.Fatal(err)
			}
			c, err := Parse(out)
			if err != nil || !reflect.DeepEqual(c.Any(), a.Any()) || !Equal(a, a.Root(), c, c.Root()) {
				t.Fatalf("%q: re-encoded %s does not decode to the same value (%v)", in, out, err)
			}
		}
	})
}

// BenchmarkDecodeCorpus decodes the synesthetic examples with jsonval and,
// for comparison, as the schema validator does (encoding/json, UseNumber).
func BenchmarkDecodeCorpus(b *testing.B) {
	dir := filepath.Join(corpusDirs[0], "examples")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		b.Fatalf("no corpus examples in %s", dir)
	}
	var docs [][]byte
	size := 0
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		docs = append(docs, raw)
		size += len(raw)
	}
	for _, c := range []struct {
		name string
		dec  func([]byte) error
	}{
		{"jsonval", func(r []byte) error { _, err := Parse(r); return err }},
		{"encoding-json", func(r []byte) error { _, err := reference(string(r)); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(size / len(docs)))
			for i := 0; i < b.N; i++ {
				if err := c.dec(docs[i%len(docs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
