package jsonc

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestSpansAndValues(t *testing.T) {
	src := "\ufeff// the servers\n{\n  \"a\": [1, -2.5e3, true, null], /* x */\n  \"b\": {\"c\": \"\\u00e9\\ud83d\\ude00\\n\"},\n  \"a\": \"last\",\n}\n"
	n, err := Parse([]byte(src), JSONC)
	if err != nil {
		t.Fatal(err)
	}
	if n.Kind != Object || len(n.Members) != 3 {
		t.Fatalf("root: %+v", n)
	}
	if got := n.Get("a"); got.Kind != String || got.Str != "last" {
		t.Fatalf("Get returns the last duplicate: %+v", got)
	}
	if v := n.Visible(); len(v) != 2 || v[0].Key != "b" || v[1].Key != "a" || v[1].Value.Str != "last" {
		t.Fatalf("Visible: %+v", v)
	}
	arr := n.Members[0].Value
	if src[arr.Start:arr.End] != "[1, -2.5e3, true, null]" || src[arr.Elems[1].Start:arr.Elems[1].End] != "-2.5e3" {
		t.Fatalf("array span %q", src[arr.Start:arr.End])
	}
	if m := n.Members[1]; src[m.KeyStart:m.KeyEnd] != `"b"` || m.Value.Get("c").Str != "é😀\n" {
		t.Fatalf("member b: %q %q", src[m.KeyStart:m.KeyEnd], m.Value.Get("c").Str)
	}
}

// TestBadInputs: every malformed file is refused with a message that says
// what is wrong and where, never a panic or a silently wrong tree.
func TestBadInputs(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		opt       Options
		want      string // in the message
		line, col int
	}{
		{"empty", "", Options{}, "the file is empty", 1, 1},
		{"only a comment", "// nothing\n", JSONC, "the file is empty", 2, 1},
		{"comment in strict JSON", "{\n  // no\n}", Options{}, "comments are not allowed", 2, 3},
		{"unclosed block comment", "{ /* never", JSONC, "never closed", 1, 3},
		{"lone slash", "{ / }", JSONC, "a comment starts with", 1, 3},
		{"trailing comma strict", `{"a": 1,}`, Options{}, "comma after the last member", 1, 8},
		{"trailing comma with comment between", "[1, // x\n]", Options{Comments: true}, "comma after the last element", 1, 3},
		{"missing comma", "{\"a\": 1\n \"b\": 2}", Options{}, `',' or '}' is expected after the member "a"`, 2, 2},
		{"missing colon", `{"a" 1}`, Options{}, `':' is expected after the key "a"`, 1, 6},
		{"unquoted key", `{a: 1}`, JSONC, "key (a string) is expected", 1, 2},
		{"single quotes", `{'a': 1}`, JSONC, "key (a string) is expected", 1, 2},
		{"unclosed object", `{"a": 1`, Options{}, "an object opened here is never closed", 1, 1},
		{"unclosed array", `[1, 2`, Options{}, "an array opened here is never closed", 1, 1},
		{"unclosed string", `{"a": "b}`, Options{}, "a string opened here is never closed", 1, 7},
		{"raw newline in string", "[\"a\nb\"]", Options{}, "control character", 1, 4},
		{"bad escape", `["\x"]`, Options{}, `unknown escape "\\x"`, 1, 3},
		{"short unicode escape", `["\u12"]`, Options{}, "four hexadecimal digits", 1, 3},
		{"leading zero", `[01]`, Options{}, "leading zero", 1, 2},
		{"bare minus", `[-]`, Options{}, "a digit is expected", 1, 3},
		{"dot without digits", `[1.]`, Options{}, "after '.'", 1, 4},
		{"empty exponent", `[1e]`, Options{}, "exponent", 1, 4},
		{"word", `[tru]`, Options{}, "a value is expected", 1, 2},
		{"literal glued", `[truex]`, Options{}, "a value is expected", 1, 2},
		{"two values", `{} {}`, Options{}, "after the top-level value", 1, 4},
		{"comma first", `[,1]`, Options{}, "a value is expected", 1, 2},
		{"NaN", `[NaN]`, JSONC, "a value is expected", 1, 2},
		{"missing value", `{"a": }`, Options{}, "a value is expected", 1, 7},
		{"value cut off", `{"a": `, Options{}, "a value is missing", 1, 7},
		{"too deep", strings.Repeat("[", MaxDepth+1), Options{}, "nested deeper", 1, MaxDepth + 1},
		{"binary", "\x00", Options{}, "byte 0x00", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), tc.opt)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("want a SyntaxError, got %v", err)
			}
			if !strings.Contains(se.Error(), tc.want) || se.Line != tc.line || se.Column != tc.col {
				t.Fatalf("got %q (line %d, column %d); want %q at line %d, column %d", se.Error(), se.Line, se.Column, tc.want, tc.line, tc.col)
			}
		})
	}
}

func TestBlank(t *testing.T) {
	if !Blank([]byte(" \n// x\n/* y */\n"), JSONC) || Blank([]byte("// x"), Options{}) || Blank([]byte("{}"), JSONC) {
		t.Fatal("Blank")
	}
}

// FuzzParse: in strict mode the parser accepts exactly what encoding/json
// accepts, each value's span holds that value alone, and strings decode as
// encoding/json decodes them; in JSONC mode it never panics and its spans
// are inside the input.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"mcpServers":{"a":{"command":"npx","args":["-y","x"]}}}`, "[1,2,]", "// c\n{\"a\":/*b*/1}", `"\ud83d\ude00"`, `"\ud800x"`, `-0.5E+7`, `{"a":[{}],"a":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		n, err := Parse(src, Options{})
		deep := err != nil && strings.Contains(err.Error(), "nested deeper")
		bom := len(src) >= 3 && string(src[:3]) == "\ufeff"
		if !deep && !bom && (err == nil) != json.Valid(src) {
			t.Fatalf("Parse error %v, json.Valid %v for %q", err, json.Valid(src), src)
		}
		if err == nil {
			checkSpans(t, src, n)
		}
		if n, err := Parse(src, JSONC); err == nil {
			walk(n, func(v *Node) {
				if v.Start < 0 || v.End > len(src) || v.Start >= v.End {
					t.Fatalf("span [%d,%d) outside %d bytes", v.Start, v.End, len(src))
				}
			})
		}
	})
}

func checkSpans(t *testing.T, src []byte, root *Node) {
	walk(root, func(v *Node) {
		text := src[v.Start:v.End]
		alone, err := Parse(text, Options{})
		if err != nil || alone.Kind != v.Kind {
			t.Fatalf("span %q does not parse alone as %v: %v", text, v.Kind, err)
		}
		if v.Kind == String {
			var want string
			if err := json.Unmarshal(text, &want); err != nil || want != v.Str {
				t.Fatalf("string %q decoded %q, encoding/json %q (%v)", text, v.Str, want, err)
			}
		}
		for _, m := range v.Members {
			var key string
			if err := json.Unmarshal(src[m.KeyStart:m.KeyEnd], &key); err != nil || key != m.Key {
				t.Fatalf("key span %q decoded %q", src[m.KeyStart:m.KeyEnd], m.Key)
			}
		}
	})
}

func walk(n *Node, fn func(*Node)) {
	fn(n)
	for _, m := range n.Members {
		walk(m.Value, fn)
	}
	for _, e := range n.Elems {
		walk(e, fn)
	}
}
