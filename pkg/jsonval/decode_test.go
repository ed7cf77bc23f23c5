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

func TestOrderDuplicatesAndGet(t *testing.T) {
	v, err := ParseString(`{"b":1,"a":2,"b":3}`)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range v.Kids {
		keys = append(keys, m.Key)
	}
	if strings.Join(keys, ",") != "b,a,b" {
		t.Fatalf("members %v, want document order with the duplicate", keys)
	}
	if g := v.Get("b"); g == nil || g.Str != "3" {
		t.Fatalf("Get(b) = %+v, want the last one", g)
	}
	if v.Get("zz") != nil {
		t.Fatal("Get of a missing key")
	}
	w := v.Without("b")
	if len(w.Kids) != 1 || w.Kids[0].Key != "a" || len(v.Kids) != 3 {
		t.Fatalf("Without: %+v (original %d members)", w.Kids, len(v.Kids))
	}
}

func TestPlainInt(t *testing.T) {
	for in, want := range map[string]bool{`1`: true, `-20`: true, `0`: true, `1.0`: false, `1e2`: false, `0.5`: false} {
		v, err := ParseString(in)
		if err != nil || v.IsPlainInt() != want {
			t.Errorf("%s: IsPlainInt=%v err=%v, want %v", in, v.IsPlainInt(), err, want)
		}
	}
}

func TestFromAnyRoundTrip(t *testing.T) {
	in := `{"z":[1,2.5,"s",null,true,false,{"k":{}}],"a":{"b":[]},"":-0}`
	want, _ := reference(in)
	v, ok := FromAny(want)
	if !ok {
		t.Fatal("FromAny refused a decoded document")
	}
	if !reflect.DeepEqual(v.Any(), want) {
		t.Fatalf("round trip: %#v", v.Any())
	}
	if v.Kids[0].Key != "" || v.Kids[2].Key != "z" {
		t.Fatalf("members not sorted: %+v", v.Kids)
	}
	if f, ok := FromAny(map[string]any{"x": 2.0}); !ok || f.Kids[0].Value.Str != "2" || !f.Kids[0].Value.IsPlainInt() {
		t.Fatalf("float64 2: %+v", f)
	}
	if _, ok := FromAny(map[string]any{"x": make(chan int)}); ok {
		t.Fatal("FromAny accepted a channel")
	}
}

// TestCorpus decodes every JSON file of the fixtures both ways.
func TestCorpus(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "fixtures")
	n := 0
	filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".json") || n >= 400 {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err == nil {
			n++
			agree(t, string(raw))
		}
		return nil
	})
	if n == 0 {
		t.Skip("fixtures not present")
	}
}

func FuzzAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",null]}`, `"\ud83d\ude00"`, `[1e5,-0.0]`, "\"\xff\"", `{"a":1,"a":2}`, `[[]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		agree(t, in)
		// Parse and ParseString agree too (Parse copies).
		a, errA := Parse([]byte(in))
		b, errB := ParseString(in)
		if (errA == nil) != (errB == nil) || (errA == nil && !reflect.DeepEqual(a.Any(), b.Any())) {
			t.Fatalf("%q: Parse and ParseString differ", in)
		}
		if errA == nil {
			// Re-encoding and decoding again gives the same value.
			out, err := json.Marshal(a.Any())
			if err != nil {
				t.Fatal(err)
			}
			c, err := Parse(out)
			if err != nil || !reflect.DeepEqual(c.Any(), a.Any()) {
				t.Fatalf("%q: re-encoded %s does not decode to the same value (%v)", in, out, err)
			}
		}
	})
}

// BenchmarkDecodeCorpus decodes the synesthetic examples with jsonval and,
// for comparison, as the schema validator does (encoding/json, UseNumber).
func BenchmarkDecodeCorpus(b *testing.B) {
	dir := filepath.Join("..", "..", "..", "shared", "fixtures", "synesthetic-schemas", "examples")
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		b.Skip("fixtures not present")
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
