//go:build unix

package test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTTPRefusesInternalMethods: nothing an HTTP client sends becomes a
// command. Every internal method ($/hearth/...), as a notification and as
// a request, on /mcp and /servers/NAME/mcp, in a 2025 session and as a
// 2026-07-28 request, is refused 403 with an error that names it; the
// request that would then have started the named command (a modern
// tools/list) starts nothing; and the daemon goes on serving. It runs with
// http_auth = "none", the setting under which another local user could
// send the same requests.
func TestHTTPRefusesInternalMethods(t *testing.T) {
	dir := shortTempDir(t)
	marker := filepath.Join(dir, "pwned")
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[servers.echo]\ncommand = %q\nsharing = \"global\"\n", filepath.Join(bin.dir, "hostedserver"))), 0o600)
	d := startHTTPDaemon(t, "HEARTH_CONFIG="+cfg, "HEARTH_HTTP_AUTH=none")
	base := strings.TrimSuffix(d.url, "/mcp")

	post := func(path, sid, body string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if strings.Contains(body, "2026-07-28") {
			var m struct{ Method string }
			json.Unmarshal([]byte(body), &m)
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", m.Method)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return res.StatusCode, res.Header.Get("Mcp-Session-Id"), string(b)
	}
	run := fmt.Sprintf(`{"command":"/bin/sh","args":["-c","id > %s"]}`, marker)
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}`
	internal := func(modern bool) []string {
		params := `{"cwd":"/","pid":1,"run":` + run + `}`
		if modern {
			params = `{"cwd":"/","pid":1,"run":` + run + `,` + modernMeta + `}`
		}
		var frames []string
		for _, m := range []string{"$/hearth/hello", "$/hearth/tooLarge", "$/hearth/attach", "$/hearth/unknown"} {
			frames = append(frames,
				`{"jsonrpc":"2.0","method":"`+m+`","params":`+params+`}`,
				`{"jsonrpc":"2.0","id":7,"method":"`+m+`","params":`+params+`}`)
		}
		return frames
	}
	refused := func(where, frame string, status int, body string) {
		t.Helper()
		if status != http.StatusForbidden || !strings.Contains(body, "only the hearth shim may send it") {
			t.Fatalf("%s: %s was answered %d %s", where, frame, status, body)
		}
		var reply struct {
			ID    json.RawMessage    `json:"id"`
			Error struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &reply); err != nil || reply.Error.Code != -32601 {
			t.Fatalf("%s: %s: the refusal is not a JSON-RPC error: %s", where, frame, body)
		}
		if strings.Contains(frame, `"id":7`) && string(reply.ID) != "7" {
			t.Fatalf("%s: the refusal of a request names id %s", where, reply.ID)
		}
	}
	for _, path := range []string{"/mcp", "/servers/echo/mcp"} {
		// A 2025 session: initialize, then each internal method on it,
		// then the modern request that used to start the command.
		status, sid, body := post(path, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
		if status != 200 || sid == "" {
			t.Fatalf("%s initialize: %d %q %s", path, status, sid, body)
		}
		post(path, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for _, f := range internal(false) {
			status, _, body := post(path, sid, f)
			refused(path+" 2025", f, status, body)
		}
		post(path, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+modernMeta+`}}`)
		if status, _, body := post(path, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); status != 200 || !strings.Contains(body, `"tools"`) {
			t.Fatalf("%s: the 2025 session after the refusals: %d %s", path, status, body)
		}
		// 2026-07-28: each POST is its own session.
		for _, f := range internal(true) {
			status, _, body := post(path, "", f)
			refused(path+" 2026-07-28", f, status, body)
		}
		if status, _, body := post(path, "", `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{`+modernMeta+`}}`); status != 200 || !strings.Contains(body, `"tools"`) {
			t.Fatalf("%s: a modern request after the refusals: %d %s", path, status, body)
		}
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("an HTTP client made the daemon run a command: %s", b)
	}
	// The socket's clients are served as ever.
	c := dialRaw(t, d.socket)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if line := c.recv(); !strings.Contains(line, `"result"`) {
		t.Fatalf("socket ping: %s", line)
	}
}
