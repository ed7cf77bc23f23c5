package jsondiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// decodeNumbers decodes one JSON document with exact numbers (UseNumber).
func decodeNumbers(t testing.TB, doc string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", doc, err)
	}
	return v
}

func marshalPatch(t testing.TB, ops []Op) string {
	t.Helper()
	b, err := json.Marshal(ops)
	if err != nil {
		t.Fatalf("marshal patch: %v", err)
	}
	return string(b)
}

// TestDiffRules pins each rule of the package comment on every way a
// document comes in: the patch must be exactly the expected JSON text.
func TestDiffRules(t *testing.T) {
	tests := []struct {
		name      string
		base, new string
		want      string
	}{
		{"equal objects", `{"a":1,"b":[1,2]}`, `{"a":1,"b":[1,2]}`, `[]`},
		{"key order and whitespace do not matter", `{"b": [1, 2], "a": 1}`, "{\"a\":1,\n\"b\":[1,2]}", `[]`},
		{"add a member", `{"a":1}`, `{"a":1,"b":{"c":true}}`, `[{"op":"add","path":"/b","value":{"c":true}}]`},
		{"remove a member carries no value", `{"a":1,"b":2}`, `{"a":1}`, `[{"op":"remove","path":"/b"}]`},
		{"replace a scalar", `{"a":1}`, `{"a":2}`, `[{"op":"replace","path":"/a","value":2}]`},
		{"nested objects are walked", `{"a":{"b":{"c":1,"d":1}}}`, `{"a":{"b":{"c":2,"d":1}}}`, `[{"op":"replace","path":"/a/b/c","value":2}]`},
		{"arrays are replaced whole", `{"a":[1,2,3]}`, `{"a":[1,2,4]}`, `[{"op":"replace","path":"/a","value":[1,2,4]}]`},
		{"arrays of objects are replaced whole", `{"a":[{"x":1}]}`, `{"a":[{"x":2}]}`, `[{"op":"replace","path":"/a","value":[{"x":2}]}]`},
		{"equal arrays give nothing", `{"a":[{"x":1,"y":[null]}]}`, `{"a":[{"y":[null],"x":1.0}]}`, `[]`},
		{"type change of a member", `{"a":{"b":1}}`, `{"a":[1]}`, `[{"op":"replace","path":"/a","value":[1]}]`},
		{"root scalar change", `1`, `2`, `[{"op":"replace","path":"","value":2}]`},
		{"root scalar unchanged", `"x"`, `"x"`, `[]`},
		{"root type change", `{"a":1}`, `[1]`, `[{"op":"replace","path":"","value":[1]}]`},
		{"root array change", `[1]`, `[2]`, `[{"op":"replace","path":"","value":[2]}]`},
		{"root object to null", `{}`, `null`, `[{"op":"replace","path":"","value":null}]`},
		{"root null to object", `null`, `{}`, `[{"op":"replace","path":"","value":{}}]`},
		{"added null is kept", `{}`, `{"a":null}`, `[{"op":"add","path":"/a","value":null}]`},
		{"replaced by null is kept", `{"a":1}`, `{"a":null}`, `[{"op":"replace","path":"/a","value":null}]`},
		{"null replaced", `{"a":null}`, `{"a":false}`, `[{"op":"replace","path":"/a","value":false}]`},
		{"null unchanged", `{"a":null}`, `{"a":null}`, `[]`},
		{"slash in key", `{}`, `{"a/b":1}`, `[{"op":"add","path":"/a~1b","value":1}]`},
		{"tilde in key", `{}`, `{"m~n":1}`, `[{"op":"add","path":"/m~0n","value":1}]`},
		{"literal ~1 in key", `{}`, `{"~1":1}`, `[{"op":"add","path":"/~01","value":1}]`},
		{"empty key", `{"":1}`, `{"":2}`, `[{"op":"replace","path":"/","value":2}]`},
		{"empty keys nested", `{"":{"":1}}`, `{"":{"":2}}`, `[{"op":"replace","path":"//","value":2}]`},
		{"unicode key", `{}`, `{"é":"ü"}`, `[{"op":"add","path":"/é","value":"ü"}]`},
		{"escaped and literal keys are the same key", `{"\u00e9":1}`, `{"é":1}`, `[]`},
		{"escaped and literal strings are equal", `{"a":"\n\u00e9\/"}`, "{\"a\":\"\\u000a\u00e9/\"}", `[]`},
		{"1 equals 1.0", `{"a":1}`, `{"a":1.0}`, `[]`},
		{"1e2 equals 100", `{"a":1e2}`, `{"a":100}`, `[]`},
		{"-0 equals 0", `{"a":-0}`, `{"a":0.0}`, `[]`},
		{"0.1 equals 0.10", `{"a":0.1}`, `{"a":1E-1}`, `[]`},
		{"big integers are exact", `{"a":9007199254740993}`, `{"a":9007199254740992}`, `[{"op":"replace","path":"/a","value":9007199254740992}]`},
		{"huge numbers compare exactly", `{"a":1e400}`, `{"a":10e399}`, `[]`},
		{"huge exponents compare exactly", `{"a":1e99999999999999999999}`, `{"a":10e99999999999999999998}`, `[]`},
		{"huge exponents differ", `{"a":1e99999999999999999999}`, `{"a":1e99999999999999999998}`, `[{"op":"replace","path":"/a","value":1e99999999999999999998}]`},
		{"true is not 1", `{"a":true}`, `{"a":1}`, `[{"op":"replace","path":"/a","value":1}]`},
		{"string is not number", `{"a":"1"}`, `{"a":1}`, `[{"op":"replace","path":"/a","value":1}]`},
		{"duplicate keys: the last wins", `{"a":1,"a":2}`, `{"a":2}`, `[]`},
		{"sorted by path, not by op", `{"b":1,"c":1}`, `{"a":1,"c":2}`,
			`[{"op":"add","path":"/a","value":1},{"op":"remove","path":"/b"},{"op":"replace","path":"/c","value":2}]`},
		{"sorted by pointer text, not by key", `{"a":{"x":1},"a b":1}`, `{"a":{"x":2},"a b":2}`,
			`[{"op":"replace","path":"/a b","value":2},{"op":"replace","path":"/a/x","value":2}]`},
		{"HTML characters are escaped alike", `{}`, `{"<":"&>"}`, `[{"op":"add","path":"/\u003c","value":"\u0026\u003e"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := DiffJSON([]byte(tc.base), []byte(tc.new))
			if err != nil {
				t.Fatalf("DiffJSON: %v", err)
			}
			if got := marshalPatch(t, ops); got != tc.want {
				t.Errorf("DiffJSON:\n got %s\nwant %s", got, tc.want)
			}
			base, newDoc, _ := asArguments(t, tc.base, tc.new)
			if got := marshalPatch(t, Diff(base, newDoc)); got != tc.want {
				t.Errorf("Diff of arguments:\n got %s\nwant %s", got, tc.want)
			}
			if got := marshalPatch(t, Diff(parsed(t, tc.base), parsed(t, tc.new))); got != tc.want {
				t.Errorf("Diff without the text:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// asArguments decodes base and new as diff_assets receives them: members of
// one arguments object, decoded with its text as a frame is. false: the
// object does not decode (a document at the depth limit).
func asArguments(t testing.TB, base, newDoc string) (*jsonval.Doc, *jsonval.Doc, bool) {
	t.Helper()
	args, err := jsonval.ParseRaw([]byte(`{"base": ` + base + `, "new": ` + newDoc + `}`))
	if err != nil {
		return nil, nil, false
	}
	return args.Sub(args.Get(args.Root(), "base")), args.Sub(args.Get(args.Root(), "new")), true
}

// parsed decodes a document without keeping its text (jsonval.Parse).
func parsed(t testing.TB, doc string) *jsonval.Doc {
	t.Helper()
	d, err := jsonval.ParseString(doc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDiffJSONRejectsMalformedInput is the table of bad documents: each is
// refused with jsonval's message and offset, naming the document.
func TestDiffJSONRejectsMalformedInput(t *testing.T) {
	deep := strings.Repeat("[", jsonval.MaxDepth+1) + strings.Repeat("]", jsonval.MaxDepth+1)
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", "unexpected end of JSON input"},
		{"only spaces", "  \n", "unexpected end of JSON input"},
		{"unterminated object", `{"a":1`, "unexpected end of JSON input"},
		{"missing value", `{"a":}`, "invalid character '}' looking for beginning of value"},
		{"trailing comma", `[1,]`, "invalid character ']' looking for beginning of value"},
		{"missing colon", `{"a" 1}`, "invalid character '1' after object key"},
		{"non-string key", `{1:2}`, "invalid character '1' looking for beginning of object key string"},
		{"leading zero", `01`, "invalid character '1' after top-level value"},
		{"bare minus", `-`, "unexpected end of JSON input"},
		{"dangling point", `1.`, "unexpected end of JSON input"},
		{"dangling exponent", `1e+`, "unexpected end of JSON input"},
		{"bad literal", `tru`, "unexpected end of JSON input"},
		{"wrong literal", `trux`, "invalid character 'x' in literal true"},
		{"control character", "\"a\x01\"", `invalid character '\x01' in string literal`},
		{"invalid UTF-8", "\"\xff\"", "invalid UTF-8 in string at offset 1"},
		{"invalid UTF-8 after valid", "[\"é\", \"a\xc3\"]", "invalid UTF-8 in string at offset 9"},
		{"bad escape", `"\x"`, "invalid character 'x' in string escape code"},
		{"short unicode escape", `"\u12"`, `invalid character '"' in \u hexadecimal character escape`},
		{"bad unicode escape", `"\u12g4"`, `invalid character 'g' in \u hexadecimal character escape`},
		{"unterminated string", `"abc`, "unexpected end of JSON input"},
		{"two values", `{} {}`, "invalid character '{' after top-level value"},
		{"too deep", deep, "exceeded max depth"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DiffJSON([]byte(tc.doc), []byte(`{}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "base document") {
				t.Errorf("base: got %v, want an error about the base document containing %q", err, tc.want)
			}
			var se *jsonval.SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(tc.doc) {
				t.Errorf("error %v is not a *jsonval.SyntaxError with an offset in the input", err)
			}
			_, err = DiffJSON([]byte(`{}`), []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "new document") {
				t.Errorf("new: got %v, want an error about the new document containing %q", err, tc.want)
			}
		})
	}
}

func TestOpMarshal(t *testing.T) {
	tests := []struct {
		op   Op
		want string
	}{
		{Op{Op: Add, Path: "/a", Value: nil}, `{"op":"add","path":"/a","value":null}`},
		{Op{Op: Replace, Path: "", Value: json.RawMessage("null")}, `{"op":"replace","path":"","value":null}`},
		{Op{Op: Remove, Path: "/a", Value: 1}, `{"op":"remove","path":"/a"}`},
		{Op{Op: Replace, Path: "/a", Value: json.RawMessage(`{"b": [1, 2]}`)}, `{"op":"replace","path":"/a","value":{"b":[1,2]}}`},
	}
	for _, tc := range tests {
		b, err := json.Marshal(tc.op)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("got %s, want %s", b, tc.want)
		}
	}
	if _, err := json.Marshal(Op{Op: Add, Path: "/a", Value: func() {}}); err == nil {
		t.Error("marshalling an unencodable value succeeded")
	}
}

// TestOpOrderOnEqualPaths pins remove < add < replace on one path. The diff
// itself never emits two operations on one path (see the package comment), so
// the rule is checked on the comparator.
func TestOpOrderOnEqualPaths(t *testing.T) {
	ops := []Op{
		{Op: Replace, Path: "/b"}, {Op: Add, Path: "/b"}, {Op: Remove, Path: "/b"},
		{Op: Replace, Path: "/a"}, {Op: Remove, Path: "/a"}, {Op: Add, Path: ""},
	}
	slices.SortFunc(ops, compareOps)
	var got []string
	for _, o := range ops {
		got = append(got, o.Op+" "+o.Path)
	}
	want := []string{"add ", "remove /a", "replace /a", "remove /b", "add /b", "replace /b"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestDiffJSONValuesDoNotAliasInput(t *testing.T) {
	base, newDoc := []byte(`{}`), []byte(`{"a": [1, 2]}`)
	ops, err := DiffJSON(base, newDoc)
	if err != nil {
		t.Fatal(err)
	}
	copy(newDoc, bytes.Repeat([]byte(" "), len(newDoc)))
	if got := marshalPatch(t, ops); got != `[{"op":"add","path":"/a","value":[1,2]}]` {
		t.Errorf("patch changed with its input: %s", got)
	}
}

// TestDiffValuesAreIndependent: values share one buffer, but appending to
// one never writes over the next.
func TestDiffValuesAreIndependent(t *testing.T) {
	ops, err := DiffJSON([]byte(`{}`), []byte(`{"a":1,"b":2}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = append(ops[0].Value.(json.RawMessage), "999"...)
	if got := marshalPatch(t, ops); got != `[{"op":"add","path":"/a","value":1},{"op":"add","path":"/b","value":2}]` {
		t.Fatalf("appending to a value changed another: %s", got)
	}
}

// TestDiffValueText: a value is the new document's text, compacted, when the
// document keeps it (escapes and number literals as written); else an
// encoding of the value.
func TestDiffValueText(t *testing.T) {
	base, newDoc := `{"a":1}`, `{"a": {"s": "\u00e9\/<", "n": 1.50, "d": 1, "d": 2}}`
	want := `{"s":"\u00e9\/<","n":1.50,"d":1,"d":2}`
	ops, err := DiffJSON([]byte(base), []byte(newDoc))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(ops[0].Value.(json.RawMessage)); got != want {
		t.Errorf("DiffJSON: %s, want %s", got, want)
	}
	b, n, _ := asArguments(t, base, newDoc)
	if got := string(Diff(b, n)[0].Value.(json.RawMessage)); got != want {
		t.Errorf("Diff of arguments: %s, want %s", got, want)
	}
	want = `{"s":"é/<","n":1.50,"d":1,"d":2}`
	if got := string(Diff(parsed(t, base), parsed(t, newDoc))[0].Value.(json.RawMessage)); got != want {
		t.Errorf("Diff without the text: %s, want %s", got, want)
	}
}
