package remote

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// The rules of x-mcp-header: each bad annotation makes its tool invalid.
func TestToolHeaders(t *testing.T) {
	for _, c := range []struct {
		schema, want, err string
	}{
		{`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"q":{"type":"string"}}}`, "region>Region", ""},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}}}`, "a.n>N", ""},
		{`{"type":"object","properties":{"f":{"type":"boolean","x-mcp-header":"F"}}}`, "f>F", ""},
		{`{"type":"object"}`, "", ""},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "", "not a header name"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`, "", "not a header name"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\r\nX: y"}}}`, "", "not a header name"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":7}}}`, "", "not a header name"},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, "", "twice"},
		{`{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`, "", "type"},
		{`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, "", "type"},
		{`{"type":"object","properties":{"a":{"type":["string","null"],"x-mcp-header":"A"}}}`, "", "type"},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`, "", "reachable"},
		{`{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`, "", "reachable"},
		{`not json`, "", "not JSON"},
	} {
		hs, err := toolHeaders(json.RawMessage(c.schema))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.schema, err, c.err)
			}
			continue
		}
		var got []string
		for _, h := range hs {
			got = append(got, strings.Join(h.path, ".")+">"+h.header)
		}
		if err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("%s: %v %v, want %s", c.schema, got, err, c.want)
		}
	}
}

// A 2026-07-28 tools/list: the tool with a broken annotation is left out,
// and tools/call mirrors the annotated argument (Base64 when not plain).
func TestParamHeaders(t *testing.T) {
	var mu sync.Mutex
	var call http.Header
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		json.Unmarshal(body, &m)
		w.Header().Set("Content-Type", "application/json")
		if m.Method == "tools/list" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[`+
				`{"name":"good","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}},`+
				`{"name":"bad","inputSchema":{"type":"object","properties":{"x":{"type":"number","x-mcp-header":"X"}}}}]}}`, m.ID)
			return
		}
		mu.Lock()
		call = r.Header.Clone()
		mu.Unlock()
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	}))
	c, r := dial(t, srv.URL, nil)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	write(t, c, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+meta+`}}`)
	tools := r.next()["result"].(map[string]any)["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["name"] != "good" {
		t.Fatalf("tools %v", tools)
	}
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"good","arguments":{"region":"Zürich","n":42},`+meta+`}}`)
	r.next()
	mu.Lock()
	defer mu.Unlock()
	if call.Get("Mcp-Param-Region") != "=?base64?WsO8cmljaA==?=" || call.Get("Mcp-Param-N") != "42" || call.Get("Mcp-Name") != "good" {
		t.Fatalf("headers %v", call)
	}
}
