package mcphttp

import (
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// What the sink is told belongs to a request goes on that request's POST
// stream (progress, a log message, a request of the server's, as a hosted
// server's are labelled); the reply ends it. A POST answered with JSON
// carries its reply alone, so a request of the server's about it goes on
// the session's own stream, where the client can see and answer it.
func TestFramesGoWhereTheirRequestListens(t *testing.T) {
	s := newLegacySession()
	s.maxHeld = 1 << 20
	sse := s.openStream("1", jsonrpc.RawID([]byte("1")), false)
	plain := s.openStream(`"j"`, jsonrpc.RawID([]byte(`"j"`)), true)
	progress := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`
	sampling := `{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{}}`
	s.Send([]byte(progress), "1")
	s.Send([]byte(sampling), "1")
	s.Send([]byte(sampling), `"j"`)
	s.Send([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), "")

	evs, _, done, _ := sse.after(0)
	if len(evs) != 3 || string(evs[0]) != progress || string(evs[1]) != sampling || !done {
		t.Fatalf("the SSE POST's stream: %q (done %v)", evs, done)
	}
	if evs, _, _, _ := plain.after(0); len(evs) != 0 {
		t.Fatalf("the JSON POST's stream got %q", evs)
	}
	if evs, _, _, _ := s.own.after(0); len(evs) != 1 || string(evs[0]) != sampling {
		t.Fatalf("the session's own stream: %q", evs)
	}
}
