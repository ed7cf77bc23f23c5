package route

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

func parsedRequest(t testing.TB, params string) *request {
	t.Helper()
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`
	if params != "" {
		line = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + params + `}`
	}
	msg, perr := jsonrpc.Parse([]byte(line))
	if perr != nil {
		t.Fatalf("%s: %v", line, perr.Err)
	}
	return readRequest(msg)
}

// A request's _meta is read from the session's decode: a 2026-07-28 one by
// its version key (however its name is written), its progress token as
// written, the last of a member written twice.
func TestReadRequestMeta(t *testing.T) {
	for _, c := range []struct {
		params string
		modern bool
		token  string
	}{
		{``, false, ""},
		{`{}`, false, ""},
		{`[1]`, false, ""},
		{`{"_meta":7}`, false, ""},
		{`{"_meta":{"progressToken":"p"}}`, false, `"p"`},
		{`{"_meta":{"progressToken": 12 }}`, false, `12`},
		{`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, true, ""},
		{`{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","progressToken":null}}`, true, `null`},
		{`{"_meta":{"progressToken":1},"_meta":{"progressToken":2}}`, false, `2`},
	} {
		q := parsedRequest(t, c.params)
		if q.modern != c.modern || string(q.token) != c.token {
			t.Errorf("%s: modern %v token %q, want %v %q", c.params, q.modern, q.token, c.modern, c.token)
		}
		if got := string(q.params()); got != c.params && !(c.params == "" && got == "") {
			t.Errorf("%s: params %s, want them as written", c.params, got)
		}
	}
	q := parsedRequest(t, `{"uri":"file:///a","level":5,"cursor":"c"}`)
	if q.str("uri") != "file:///a" || q.str("level") != "" || string(q.param("level")) != "5" || q.param("none") != nil ||
		!reflect.DeepEqual(q.keys(), []string{"uri", "level", "cursor"}) {
		t.Fatalf("members: %q %q %s %v", q.str("uri"), q.str("level"), q.param("level"), q.keys())
	}
}

// What the router sets goes in place of the client's member, or after the
// client's members; the client's text is kept for everything else, and a
// key written twice is written once, as its last value.
func TestRequestParamsRewritten(t *testing.T) {
	q := parsedRequest(t, `{"level":"info","a": [1, 2],"_meta":{"progressToken":"p","x":{}}}`)
	q.setParam("level", quote("debug"))
	q.setParam("added", json.RawMessage(`true`))
	q.setMetaMember("progressToken", quote("hearth-1"))
	q.setMetaMember("progressToken", quote("hearth-2"))
	want := `{"level":"debug","a":[1, 2],"_meta":{"progressToken":"hearth-2","x":{}},"added":true}`
	if got := string(q.params()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	var b strings.Builder
	b.WriteString(`{`)
	for i := 0; i < 40; i++ {
		b.WriteString(`"k":` + string(rune('0'+i%10)) + `,`)
	}
	b.WriteString(`"k":"last"}`)
	q = parsedRequest(t, b.String())
	q.setParam("z", json.RawMessage(`1`))
	if got := string(q.params()); got != `{"k":"last","z":1}` {
		t.Fatalf("a large object with a key written many times: %s", got)
	}
}

// FuzzWriteObject: whatever object a client sends, the params the router
// writes with a member and a _meta member set are JSON, and read back by
// encoding/json as the client's object with those two members set.
func FuzzWriteObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"_meta":{"progressToken":"x"},"name":"n"}`, `{"_meta":[1],"a":"\u00e9\n"}`,
		`{"a":1,"a":{"b":2},"_meta":{"p":1,"p":2}}`, `{"\u005fmeta":{"k":"v"}}`, `{"x<y":"&"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		msg, perr := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":` + params + `}`))
		if perr != nil || msg.Kind != jsonrpc.Request {
			return
		}
		var want map[string]any
		if json.Unmarshal(msg.Params, &want) != nil {
			return // not an object: passed as it is
		}
		q := readRequest(msg)
		q.setParam("set", json.RawMessage(`"by hearth"`))
		q.setMetaMember("progressToken", json.RawMessage(`"hearth-1"`))
		out := q.params()
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: wrote %s: %v", params, out, err)
		}
		meta, _ := want["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta["progressToken"] = "hearth-1"
		want["_meta"], want["set"] = meta, "by hearth"
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: wrote %s\n got %v\nwant %v", params, out, got, want)
		}
	})
}
