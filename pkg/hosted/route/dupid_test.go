package route

import (
	"strings"
	"testing"
)

// An upstream answer that writes its id twice answers no request, and
// leaves none pending: each request in flight it names (by its first id
// or its last) is answered at once with an error saying so, and the
// instance keeps serving.
func TestAnswerWithTwoIDsFailsItsRequests(t *testing.T) {
	s := newScripted(t)
	c := s.client()
	c.send(strings.Replace(initReq, "%s", "0", 1))
	s.reply(s.expect("initialize"), `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}`)
	c.response()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(callFrame("7", "t", `{}`))
	id := s.expect("tools/call")
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":` + id + `,"id":99999,"result":{"content":[]}}`, // the real id first
	} {
		s.r.FromUpstream([]byte(frame))
	}
	m := c.response()
	e, _ := m["error"].(map[string]any)
	if e == nil || !strings.Contains(e["message"].(string), "writes its id twice") {
		t.Fatalf("the call was answered %s", m["_text"])
	}
	c.send(callFrame("8", "t", `{}`))
	id = s.expect("tools/call")
	s.r.FromUpstream([]byte(`{"jsonrpc":"2.0","id":99999,"id":` + id + `,"result":{"content":[]}}`)) // the real id last
	if m := c.response(); m["error"] == nil {
		t.Fatalf("the second call was answered %s", m["_text"])
	}
	c.send(callFrame("9", "t", `{}`))
	s.reply(s.expect("tools/call"), `"result":{"content":[]}`)
	if m := c.response(); m["result"] == nil {
		t.Fatalf("a good answer after: %s", m["_text"])
	}
}
