package route

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// legacyScripted is a scripted upstream that has answered initialize as a
// 2025-11-25 server, with one client attached and initialized.
func legacyScripted(t *testing.T) (*scripted, *rawClient) {
	s := newScripted(t)
	a := s.client()
	a.send(strings.Replace(initReq, "%s", "0", 1))
	s.reply(s.expect("initialize"), `"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"up","version":"1"}}`)
	if m := a.response(); m["result"] == nil {
		t.Fatalf("initialize: %s", m["_text"])
	}
	return s, a
}

// Each malformed response of the upstream to a request in flight reaches
// the client as a valid JSON-RPC error for its id, never as it was written;
// a well-formed error passes through unchanged; a frame with a method is
// the upstream's own request, whatever its id, and answers nothing.
func TestBadUpstreamResponses(t *testing.T) {
	s, a := legacyScripted(t)
	for i, tc := range []struct{ name, line, want string }{
		{"error null", `{"jsonrpc":"2.0","id":%s,"error":null}`, "its error is null, not an object"},
		{"error null, no jsonrpc", `{"id":%s,"error":null}`, `"jsonrpc" must be "2.0"`},
		{"neither result nor error", `{"jsonrpc":"2.0","id":%s}`, "it has neither result nor error"},
		{"both result and error", `{"jsonrpc":"2.0","id":%s,"result":{},"error":{"code":1,"message":"m"}}`, "it has both result and error"},
		{"error a string", `{"jsonrpc":"2.0","id":%s,"error":"boom"}`, `its error is "boom", not an object`},
		{"error an array", `{"jsonrpc":"2.0","id":%s,"error":[1]}`, "not an object"},
		{"no code", `{"jsonrpc":"2.0","id":%s,"error":{"message":"m"}}`, "its error has no integer code"},
		{"code a string", `{"jsonrpc":"2.0","id":%s,"error":{"code":"-1","message":"m"}}`, "its error has no integer code"},
		{"code a fraction", `{"jsonrpc":"2.0","id":%s,"error":{"code":1.5,"message":"m"}}`, "its error has no integer code"},
		{"code null", `{"jsonrpc":"2.0","id":%s,"error":{"code":null,"message":"m"}}`, "its error has no integer code"},
		{"no message", `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000}}`, "its error has no string message"},
		{"message a number", `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":5}}`, "its error has no string message"},
		{"message null", `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":null}}`, "its error has no string message"},
		{"cut short", `{"jsonrpc":"2.0","id":%s,"result":{"content":[`, "Parse error"},
	} {
		id := fmt.Sprint(i + 1)
		a.send(callFrame(id, "t", `{}`))
		line := fmt.Sprintf(tc.line, s.expect("tools/call"))
		if err := s.r.FromUpstream([]byte(line)); !errors.Is(err, ErrInvalidResponse) {
			t.Errorf("%s: FromUpstream said %v, want ErrInvalidResponse", tc.name, err)
		}
		m := a.response()
		e, _ := m["error"].(map[string]any)
		if fmt.Sprint(m["id"]) != id || e == nil || e["code"] != float64(-32603) ||
			!strings.Contains(fmt.Sprint(e["message"]), "scripted sent an invalid response to tools/call: ") ||
			!strings.Contains(fmt.Sprint(e["message"]), tc.want) {
			t.Errorf("%s: got %s, want a -32603 error for id %s saying %q", tc.name, m["_text"], id, tc.want)
		}
	}

	// A well-formed error, data and all, is passed on as the upstream wrote it.
	a.send(callFrame("50", "t", `{}`))
	s.reply(s.expect("tools/call"), `"error":{"code":-32000,"message":"no such widget","data":{"w":1}}`)
	if m := a.response(); m["_text"] != `{"jsonrpc":"2.0","id":50,"error":{"code":-32000,"message":"no such widget","data":{"w":1}}}` {
		t.Fatalf("a valid error: %s", m["_text"])
	}

	// A request of the upstream's own with a bad method and the id of the
	// call in flight answers nothing: the call stays in flight.
	a.send(callFrame("51", "t", `{}`))
	up := s.expect("tools/call")
	if err := s.r.FromUpstream([]byte(`{"jsonrpc":"2.0","id":` + up + `,"method":5}`)); !errors.Is(err, ErrNotJSONRPC) {
		t.Fatalf("a bad request of the upstream: %v", err)
	}
	s.reply(up, `"result":{"content":[{"type":"text","text":"fine"}]}`)
	if m := a.response(); textOfRaw(t, m) != "fine" {
		t.Fatalf("after a bad request: %s", m["_text"])
	}
}

// A reply over the line limit, dropped by the instance, answers its request
// with an error naming the limit when its start shows whose it is; a line
// whose start does not (its id after the huge member, or a request of the
// upstream's) answers nothing.
func TestTooLargeReplyAnswersItsRequest(t *testing.T) {
	s, a := legacyScripted(t)
	a.send(callFrame("7", "t", `{}`))
	up := s.expect("tools/call")

	for _, head := range []string{
		`{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"aaaa`, // id after the result
		`{"jsonrpc":"2.0","id":` + up + `,"method":"sampling/createMessage","params":{"messages":[`,
		`{"jsonrpc":"2.0","id":` + up + `,"params":{"x":"aaaa`, // neither result nor error yet
		`{"jsonrpc":"2.0","id":` + up[:len(up)-1],              // the id itself cut short
		`not json`,
	} {
		if err := s.r.TooLarge([]byte(head), 64<<20); err == nil || !strings.Contains(err.Error(), "no request in flight could be read") {
			t.Errorf("head %s: %v", head, err)
		}
	}
	a.quiet(0)

	err := s.r.TooLarge([]byte(`{"jsonrpc":"2.0","id":`+up+`,"result":{"content":[{"type":"text","text":"aaaa`), 64<<20)
	if err == nil || !strings.Contains(err.Error(), "the reply to tools/call, answered to its client") {
		t.Fatalf("TooLarge: %v", err)
	}
	m := a.response()
	e, _ := m["error"].(map[string]any)
	if m["id"] != float64(7) || e == nil || e["code"] != float64(-32603) ||
		e["message"] != "scripted's reply to tools/call was larger than hearth's 64 MiB limit for one line of a hosted server's output, so it was dropped" {
		t.Fatalf("got %s", m["_text"])
	}
	// The call is settled: a late answer under its id goes nowhere.
	s.reply(up, `"result":{}`)
	a.quiet(0)
}
