package route

import (
	"encoding/json"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

func queuedFor(c *Client, id string) queuedReq {
	return queuedReq{c: c, q: &request{msg: &jsonrpc.Message{Kind: jsonrpc.Request, ID: jsonrpc.RawID([]byte(id)), Method: "tools/call"}}}
}

// What waits for the upstream is counted and taken per client, the other
// clients' left in their order.
func TestLinkWaitingPerClient(t *testing.T) {
	l := newLink()
	a, b := &Client{}, &Client{}
	l.waiting = []waiter{{a, json.RawMessage(`0`)}, {b, json.RawMessage(`"b0"`)}}
	l.queued = []queuedReq{queuedFor(a, "1"), queuedFor(b, "2"), queuedFor(a, "3"), queuedFor(b, "4")}
	if l.pendingOf(a) != 3 || l.pendingOf(b) != 3 {
		t.Fatalf("pending %d %d", l.pendingOf(a), l.pendingOf(b))
	}
	if !l.unqueue(b, jsonrpc.RawID([]byte("4")).Key()) || l.unqueue(a, jsonrpc.RawID([]byte("4")).Key()) {
		t.Fatal("unqueue takes a client's own queued request only")
	}
	inits, queued := l.takeOf(a)
	if len(inits) != 1 || string(inits[0]) != `0` || len(queued) != 2 || string(queued[0].msg.ID.Raw()) != "1" || string(queued[1].msg.ID.Raw()) != "3" {
		t.Fatalf("took %s %v", inits, queued)
	}
	if len(l.queued) != 1 || l.queued[0].c != b || len(l.waiting) != 1 || l.waiting[0].c != b {
		t.Fatal("b's were taken or reordered")
	}
	l.dropWaiting(b)
	if len(l.waiting) != 0 || len(l.queued) != 1 {
		t.Fatal("dropWaiting takes the initialize only")
	}
}
