package route

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// echoUpstream answers at once: initialize (refused when modern),
// server/discover, and every other request with a small tool result.
func echoUpstream(r **Router, modern bool) Peer {
	return WriteFunc(func(f []byte) error {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(f, &m) != nil || m.ID == nil {
			return nil
		}
		body := `"result":{"content":[{"type":"text","text":"ok"}]}`
		switch {
		case m.Method == "initialize" && modern:
			body = refusal
		case m.Method == "initialize":
			body = `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"b","version":"1"}}`
		case m.Method == "server/discover":
			body = `"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
		}
		(*r).FromUpstream([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, m.ID, body)))
		return nil
	})
}

// benchCall measures the router's round trip of call (after init, when
// set) to an upstream answering at once, legacy or modern.
func benchCall(b *testing.B, init, call string) {
	for _, modern := range []bool{false, true} {
		name := "legacy-upstream"
		if modern {
			name = "modern-upstream"
		}
		b.Run(name, func(b *testing.B) {
			var r *Router
			r = New(Options{Name: "bench", Wake: func() { go r.Up(echoUpstream(&r, modern)) }})
			frames := make(chan string, 16)
			c := r.Attach(chanPeer(frames), nil)
			first := []byte(call)
			if init != "" {
				first = []byte(init)
			}
			c.Handle(first)
			if f := <-frames; !strings.Contains(f, `"result"`) {
				b.Fatalf("first: %s", f)
			}
			line := []byte(call)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				c.Handle(line)
				<-frames
			}
		})
	}
}

// The cost the router adds to a legacy client's tools/call (a round trip
// through the router and an upstream answering at once) on a legacy
// upstream, where it is forwarded, and on a modern one, where it is given
// the 2026-07-28 _meta of its client.
func BenchmarkLegacyClientCall(b *testing.B) {
	benchCall(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"bench","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
}

// The cost the router adds to a 2026-07-28 client's tools/call carrying a
// progress token (its _meta read for its era, its capabilities and its
// token, and the token replaced by one of hearth's), on a legacy upstream
// and on a modern one.
func BenchmarkModernClientCall(b *testing.B) {
	benchCall(b, "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":"p1",`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`)
}
