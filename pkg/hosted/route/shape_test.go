package route

import (
	"encoding/json"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// Shapes that are one (what the protocol defines as equal, the JSON
// written another way, a _meta of one request, another clientInfo) and
// shapes that are not (anything else a server can see differently).
func TestShapeEquivalence(t *testing.T) {
	base := `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1"}}`
	for _, tc := range []struct {
		name   string
		params string
		same   bool
	}{
		{"the same", base, true},
		{"members and keys in another order, with space", `{ "clientInfo" : {"version":"1","name":"c"}, "capabilities":{"elicitation":{"form":{}},"roots":{}}, "protocolVersion":"2025-11-25"}`, true},
		{"elicitation {} is form mode", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}`, true},
		{"roots.listChanged false is none", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":false},"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1"}}`, true},
		{"a _meta of its own", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1"},"_meta":{"trace":"x"}}`, true},
		{"roots.listChanged", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1"}}`, false},
		{"no roots", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1"}}`, false},
		{"elicitation's URL mode", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"c","version":"1"}}`, false},
		{"URL mode alone", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"url":{}}},"clientInfo":{"name":"c","version":"1"}}`, false},
		{"sampling", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"form":{}},"sampling":{}},"clientInfo":{"name":"c","version":"1"}}`, false},
		{"an extension", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}},"clientInfo":{"name":"c","version":"1"}}`, false},
		{"a capability nobody knows yet", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"form":{}},"future":{}},"clientInfo":{"name":"c","version":"1"}}`, false},
		{"another protocol version", `{"protocolVersion":"2025-06-18","capabilities":{"roots":{},"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1"}}`, false},
		{"another client declaring the same", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"form":{}}},"clientInfo":{"name":"d","version":"1"}}`, true},
		{"another version of it declaring the same", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"2"}}`, true},
		{"a member of initialize nobody knows yet", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{},"elicitation":{"form":{}}},"clientInfo":{"name":"c","version":"1"},"later":true}`, false},
	} {
		if got := Shape(json.RawMessage(tc.params)) == Shape(json.RawMessage(base)); got != tc.same {
			t.Errorf("%s: same shape %v, want %v\n%s\n%s", tc.name, got, tc.same, Shape(json.RawMessage(tc.params)), Shape(json.RawMessage(base)))
		}
	}
}

// Bad input: params that are no object have a shape of their own (never
// a panic, never another client's); a modern request's shape is that of
// the initialize it stands for; other messages have none.
func TestShapeBadInput(t *testing.T) {
	seen := map[string]string{}
	for _, p := range []string{``, `null`, `[]`, `"x"`, `7`, `{`, `{"capabilities":[]}`, `{"capabilities":null}`, `{"capabilities":{"elicitation":null}}`, `{"capabilities":{"elicitation":[]}}`, `{}`} {
		s := Shape(json.RawMessage(p))
		if other, ok := seen[s]; ok {
			t.Errorf("%q and %q have one shape %s", p, other, s)
		}
		seen[s] = p
	}
	modern, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"m","version":"1"}}}}`))
	init, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"m","version":"1"}}}`))
	ms, ok1 := ShapeOf(modern)
	is, ok2 := ShapeOf(init)
	if !ok1 || !ok2 || ms != is {
		t.Errorf("a modern request's shape %q (%v), its initialize's %q (%v)", ms, ok1, is, ok2)
	}
	for _, f := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","method":"initialize","params":{}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`} {
		m, _ := jsonrpc.Parse([]byte(f))
		if s, ok := ShapeOf(m); ok {
			t.Errorf("%s has the shape %s", f, s)
		}
	}
	if _, ok := ShapeOf(nil); ok {
		t.Error("no message has a shape")
	}
}

// Shape never panics, and a shape is its own shape's (canonical).
func FuzzShape(f *testing.F) {
	for _, s := range []string{`{}`, `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"roots":{"listChanged":false}},"clientInfo":{"name":"c","version":"1"},"_meta":{}}`, `[]`, `{"capabilities":{"elicitation":{"url":{}}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		s := Shape(json.RawMessage(params))
		Described(json.RawMessage(params))
		var v map[string]any
		if json.Unmarshal([]byte(params), &v) == nil && v != nil {
			if again := Shape(json.RawMessage(s)); again != s {
				t.Fatalf("the shape of %q is %s, and that shape's is %s", params, s, again)
			}
		}
	})
}

// Described words what a client declares, for status.
func TestDescribed(t *testing.T) {
	for params, want := range map[string]string{
		`{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"claude-code","version":"2.1.332"}}`: "2025-11-25, elicitation(form,url) roots(listChanged)",
		`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}`:                                                                                "2025-06-18, no capabilities",
		`{"capabilities":{"roots":{"listChanged":false}}}`: "roots",
		`nonsense`: "no capabilities",
	} {
		if got := Described(json.RawMessage(params)); got != want {
			t.Errorf("%s: %q, want %q", params, got, want)
		}
	}
}
