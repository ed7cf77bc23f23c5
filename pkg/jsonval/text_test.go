package jsonval

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"
)

// compactAgrees checks AppendCompact on the input decoded both ways: from
// ParseRaw it is encoding/json's Compact of the input (when that is valid
// UTF-8), and both texts decode to the document's value.
func compactAgrees(t *testing.T, in string) {
	t.Helper()
	raw, err := ParseRaw([]byte(in))
	if err != nil {
		return
	}
	plain, _ := ParseString(in)
	want := raw.Any()
	for _, d := range []*Doc{raw, plain} {
		out := d.AppendCompact([]byte("x"), d.Root())
		if out[0] != 'x' {
			t.Fatalf("%q: the buffer's content was lost", in)
		}
		out = out[1:]
		if !utf8.Valid(out) {
			t.Fatalf("%q: compact text %q is not UTF-8", in, out)
		}
		got, err := reference(string(out))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: compact text %q decodes to %v (%v), want %v", in, out, got, err, want)
		}
	}
	if utf8.ValidString(in) {
		var c bytes.Buffer
		if err := json.Compact(&c, []byte(in)); err != nil {
			t.Fatal(err)
		}
		if out := raw.AppendCompact(nil, raw.Root()); string(out) != c.String() {
			t.Fatalf("%q: compact %q, encoding/json %q", in, out, c.String())
		}
	}
}

func TestAppendCompact(t *testing.T) {
	for _, in := range []string{
		`null`, ` true `, "\t[ 1 , -2.50e+3 , \"a b\" ]\n", `{ "k" : { "x" : [ ] , "y" : { } } }`,
		`"\u00e9 \" \\ \/ \n"`, `{"a":1,"a":2}`, `{"\u0061 b":"é😀"}`, "\"\xff x\xc3\"", `"<&>"`,
		"\"\u2028\u2029\"", `"\u0000\u001f\b\f\r\t"`, `[{"a":[{"b":null}]}]`,
	} {
		compactAgrees(t, in)
	}
	// A Sub's text is its own value's.
	d, _ := ParseRaw([]byte(`{"a": [1, {"b" : 2}], "c": 3}`))
	if out := d.AppendCompact(nil, d.Get(d.Root(), "a")); string(out) != `[1,{"b":2}]` {
		t.Fatalf("member: %s", out)
	}
	s := d.Sub(d.Get(d.Root(), "a"))
	if out := s.AppendCompact(nil, s.Root()); string(out) != `[1,{"b":2}]` {
		t.Fatalf("Sub: %s", out)
	}
	// Without a document's text, escapes are encoding/json's.
	p, _ := ParseString(`{"\u00e9":"\u003c\u2028\u0001\"\n","n":1.50}`)
	if out := p.AppendCompact(nil, p.Root()); string(out) != `{"é":"<\u2028\u0001\"\n","n":1.50}` {
		t.Fatalf("encoded: %s", out)
	}
}

// TestAppendStringAgreesWithEncodingJSON compares the string encoding with
// encoding/json's (HTML escaping off) on every byte and some sequences.
func TestAppendStringAgreesWithEncodingJSON(t *testing.T) {
	in := []string{"", "plain", "\xff", "a\xc3", "\xed\xa0\x80", "\u2028x\u2029", "é😀", "<&>", "\x7f"}
	for c := range 256 {
		in = append(in, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, s := range in {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
}
