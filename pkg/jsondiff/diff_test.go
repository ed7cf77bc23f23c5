package jsondiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// decodeNumbers decodes one JSON document the way callers of Diff should.
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

// TestDiffRules pins each rule of the package doc on both entry points: the patch must be
// exactly the expected JSON text.
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
			ops, err = Diff(decodeNumbers(t, tc.base), decodeNumbers(t, tc.new))
			if err != nil {
				t.Fatalf("Diff: %v", err)
			}
			if got := marshalPatch(t, ops); got != tc.want {
				t.Errorf("Diff:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestDiffPlainDecodedValues covers callers that decode without UseNumber, or
// build values in Go.
func TestDiffPlainDecodedValues(t *testing.T) {
	tests := []struct {
		name      string
		base, new any
		want      string
	}{
		{"float64 and json.Number compare by value", map[string]any{"a": 1.0}, map[string]any{"a": json.Number("1")}, `[]`},
		{"int and float64", map[string]any{"a": 3}, map[string]any{"a": 3.0}, `[]`},
		{"uint64 beyond float64 stays exact", map[string]any{"a": uint64(1<<63 + 1)}, map[string]any{"a": json.Number("9223372036854775808")},
			`[{"op":"replace","path":"/a","value":9223372036854775808}]`},
		{"float32", []any{float32(0.5)}, []any{0.5}, `[]`},
		{"nil slices and maps inside", map[string]any{"a": []any(nil)}, map[string]any{"a": []any{}}, `[]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := Diff(tc.base, tc.new)
			if err != nil {
				t.Fatal(err)
			}
			if got := marshalPatch(t, ops); got != tc.want {
				t.Errorf("got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestDiffJSONRejectsMalformedInput(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	tests := []struct {
		name, doc, want string
	}{
		{"empty", "", "empty document"},
		{"only spaces", "  \n", "empty document"},
		{"unterminated object", `{"a":1`, "expected ',' or '}'"},
		{"missing value", `{"a":}`, "unexpected character '}'"},
		{"trailing comma", `[1,]`, "unexpected character ']'"},
		{"missing colon", `{"a" 1}`, "expected ':'"},
		{"non-string key", `{1:2}`, "expected a string object key"},
		{"leading zero", `01`, "unexpected data after the top-level value"},
		{"bare minus", `-`, "malformed number"},
		{"dangling point", `1.`, "malformed number"},
		{"dangling exponent", `1e+`, "malformed number"},
		{"bad literal", `tru`, "expected true"},
		{"control character", "\"a\x01\"", "control character"},
		{"invalid UTF-8", "\"\xff\"", "invalid UTF-8"},
		{"bad escape", `"\x"`, `invalid escape \x`},
		{"short unicode escape", `"\u12"`, `short \u escape`},
		{"bad unicode escape", `"\u12g4"`, `invalid \u escape`},
		{"unterminated string", `"abc`, "unterminated string"},
		{"two values", `{} {}`, "unexpected data after the top-level value"},
		{"too deep", deep, "nesting deeper than 10000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DiffJSON([]byte(tc.doc), []byte(`{}`))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "base document") {
				t.Errorf("base: got %v, want an error about the base document containing %q", err, tc.want)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Errorf("error %v is not a *SyntaxError", err)
			}
			_, err = DiffJSON([]byte(`{}`), []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), "new document") {
				t.Errorf("new: got %v, want an error about the new document", err)
			}
		})
	}
}

func TestDiffRejectsNonJSONValues(t *testing.T) {
	type custom struct{}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"NaN", map[string]any{"a": math.NaN()}, `value at "/a": NaN`},
		{"infinity in array", []any{1, math.Inf(1)}, `value at "/1": NaN or infinity`},
		{"struct", map[string]any{"a/b": []any{custom{}}}, `value at "/a~1b/0": unsupported type jsondiff.custom`},
		{"malformed json.Number", json.Number("1x"), `value at "": malformed number`},
		{"cycle", cyclic, "nesting deeper than 10000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Diff(map[string]any{}, tc.v)
			var ve *ValueError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a *ValueError containing %q", err, tc.want)
			}
			if _, err := Diff(tc.v, nil); err == nil || !strings.Contains(err.Error(), "base document") {
				t.Errorf("base: got %v, want an error about the base document", err)
			}
		})
	}
}

// TestDiffRejectsNonJSONValuesEverywhere: a bad value is found wherever it
// sits, even inside parts that are equal on both sides or removed.
func TestDiffRejectsNonJSONValuesEverywhere(t *testing.T) {
	type custom struct{}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	tests := []struct {
		name      string
		base, new any
		want      string
	}{
		{"same NaN on both sides", []any{math.NaN()}, []any{math.NaN()}, `base document: value at "/0": NaN`},
		{"same infinity on both sides", map[string]any{"a": []any{math.Inf(-1)}}, map[string]any{"a": []any{math.Inf(-1)}}, `base document: value at "/a/0": NaN or infinity`},
		{"same bad json.Number", map[string]any{"a": json.Number("x")}, map[string]any{"a": json.Number("x")}, `base document: value at "/a": malformed number`},
		{"same unsupported type", map[string]any{"a": custom{}}, map[string]any{"a": custom{}}, `base document: value at "/a": unsupported type`},
		{"removed subtree", map[string]any{"gone": []any{custom{}}}, map[string]any{}, `base document: value at "/gone/0": unsupported type`},
		{"replacing value", map[string]any{"a": 1}, map[string]any{"a": []any{1, custom{}}}, `new document: value at "/a/1": unsupported type`},
		{"cycle on both sides", cyclic, cyclic, "nesting deeper than 10000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := Diff(tc.base, tc.new)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, %v; want an error containing %q", ops, err, tc.want)
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

func TestNumbersEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"0", "-0", true},
		{"0", "0e10", true},
		{"0.000", "-0.0E-5", true},
		{"1", "1.000", true},
		{"10", "1e1", true},
		{"10", "1E+1", true},
		{"0.5", "5e-1", true},
		{"123.45", "12345e-2", true},
		{"100", "1000e-1", true},
		{"1", "-1", false},
		{"1", "2", false},
		{"1", "10", false},
		{"12", "21", false},
		{"1.1", "1.01", false},
		{"123456789012345678901234567890", "123456789012345678901234567891", false},
		{"123456789012345678901234567890", "12345678901234567890123456789e1", true},
		{"1e9223372036854775807", "10e9223372036854775806", true},
		{"1e-9223372036854775808", "0.1e-9223372036854775807", true},
		{"1e99999999999999999999999", "1e99999999999999999999998", false},
	}
	for _, tc := range tests {
		if got := numbersEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("numbersEqual(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := numbersEqual(tc.b, tc.a); got != tc.want {
			t.Errorf("numbersEqual(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}
