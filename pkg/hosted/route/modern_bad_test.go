package route

import (
	"encoding/json"
	"fmt"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"strings"
	"sync"
	"testing"
	"time"
)

// scripted is an upstream the test plays by hand: it sees each frame the
// router sends and answers with what the test says.
type scripted struct {
	t       *testing.T
	r       *Router
	frames  chan map[string]any
	mu      sync.Mutex
	trouble []string
}

func newScripted(t *testing.T) *scripted {
	s := &scripted{t: t, frames: make(chan map[string]any, 64)}
	s.r = New(Options{Name: "scripted",
		Wake: func() {
			go s.r.Up(WriteFunc(func(f []byte) error {
				var m map[string]any
				json.Unmarshal(f, &m)
				s.frames <- m
				return nil
			}))
		},
		Trouble: func(err error) { s.mu.Lock(); s.trouble = append(s.trouble, err.Error()); s.mu.Unlock() },
	})
	return s
}

// expect reads the next frame of method the router sent (skipping
// notifications) and returns its id's JSON.
func (s *scripted) expect(method string) string {
	s.t.Helper()
	for {
		select {
		case m := <-s.frames:
			if m["method"] != method {
				if _, isReq := m["id"]; !isReq {
					continue
				}
				s.t.Fatalf("upstream got %v, want %s", m, method)
			}
			return string(mustJSON(m["id"]))
		case <-time.After(5 * time.Second):
			s.t.Fatalf("upstream never got %s", method)
		}
	}
}

func (s *scripted) reply(id, body string) {
	if err := s.r.FromUpstream([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, id, body))); err != nil {
		s.t.Fatal(err)
	}
}

func (s *scripted) client() *rawClient {
	rc := &rawClient{t: s.t, frames: make(chan string, 256)}
	rc.c = s.r.Attach(chanPeer(rc.frames), nil)
	return rc
}

const refusal = `"error":{"code":-32601,"message":"Method not found"}`

// Each malformed answer to the probe fails the start with an error that
// quotes both refusals; the client's initialize gets it.
func TestBadDiscoverResults(t *testing.T) {
	for _, tc := range []struct{ name, discover, want string }{
		{"an error", `"error":{"code":-32601,"message":"no such method"}`, "server/discover: no such method"},
		{"unsupported version", `"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2027-01-01"]}}`, "Unsupported protocol version"},
		{"not an object", `"result":[1,2]`, "not an object"},
		{"no versions", `"result":{"capabilities":{}}`, "no supportedVersions"},
		{"versions not strings", `"result":{"supportedVersions":[2026],"capabilities":{}}`, "no supportedVersions"},
		{"other versions only", `"result":{"supportedVersions":["2027-01-01"],"capabilities":{}}`, "it supports 2027-01-01"},
		{"no capabilities", `"result":{"supportedVersions":["2026-07-28"]}`, "no capabilities object"},
		{"capabilities not an object", `"result":{"supportedVersions":["2026-07-28"],"capabilities":"all"}`, "no capabilities object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScripted(t)
			c := s.client()
			c.send(strings.Replace(initReq, "%s", "1", 1))
			s.reply(s.expect("initialize"), refusal)
			s.reply(s.expect("server/discover"), tc.discover)
			m := c.response()
			if !strings.Contains(m["_text"].(string), "scripted refused initialize (Method not found) and is no 2026-07-28 server either") ||
				!strings.Contains(m["_text"].(string), tc.want) || m["error"].(map[string]any)["code"] != float64(CodeUpstream) {
				t.Fatalf("got %s, want %q", m["_text"], tc.want)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.trouble) != 1 {
				t.Fatalf("trouble %v: the upstream must be stopped", s.trouble)
			}
		})
	}
}

// A modern upstream's DiscoverResult with a serverInfo or instructions of
// the wrong type still serves: the legacy client gets the server's name.
func TestDiscoverResultIllTypedOptionalMembers(t *testing.T) {
	s := newScripted(t)
	c := s.client()
	c.send(strings.Replace(initReq, "%s", "1", 1))
	s.reply(s.expect("initialize"), refusal)
	s.reply(s.expect("server/discover"), `"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"instructions":7,"_meta":{"io.modelcontextprotocol/serverInfo":"me"}}`)
	m := c.response()
	if !strings.Contains(m["_text"].(string), `"serverInfo":{"name":"scripted","version":"unknown"}`) || strings.Contains(m["_text"].(string), "instructions") {
		t.Fatalf("got %s", m["_text"])
	}
}

// A DiscoverResult's instructions holding control characters (a bell, a
// vertical tab, U+0001) reach the legacy client's initialize result as
// JSON: quoted as encoding/json quotes, not as Go quotes (\a, \v and \x01
// are no JSON escapes, and the client could not read its answer).
func TestDiscoverInstructionsWithControlCharacters(t *testing.T) {
	s := newScripted(t)
	c := s.client()
	c.send(strings.Replace(initReq, "%s", "1", 1))
	s.reply(s.expect("initialize"), refusal)
	s.reply(s.expect("server/discover"), `"result":{"supportedVersions":["2026-07-28"],"capabilities":{},"instructions":"bell\u0007 tab\u000b one\u0001 é"}`)
	m := c.response()
	res, _ := m["result"].(map[string]any)
	if res == nil || res["instructions"] != "bell\a tab\v one\x01 é" {
		t.Fatalf("got %s", m["_text"])
	}
}

// Each malformed InputRequiredResult answers that request with an error
// naming the server and the fault; the instance keeps serving the client
// and another one.
func TestBadInputRequiredResults(t *testing.T) {
	s := newScripted(t)
	a, b := s.client(), s.client()
	a.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"a","version":"1"}}}`)
	s.reply(s.expect("initialize"), refusal)
	s.reply(s.expect("server/discover"), `"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`)
	a.response()
	b.initialize()
	for i, tc := range []struct{ name, result, want string }{
		{"neither member", `{"resultType":"input_required"}`, "neither inputRequests nor requestState"},
		{"inputRequests not an object", `{"resultType":"input_required","inputRequests":[1]}`, "inputRequests is not an object"},
		{"empty without state", `{"resultType":"input_required","inputRequests":{}}`, "empty and it has no requestState"},
		{"request not an object", `{"resultType":"input_required","inputRequests":{"x":5}}`, `is not a request object`},
		{"unknown method", `{"resultType":"input_required","inputRequests":{"x":{"method":"tools/call","params":{}}}}`, `(sampling/createMessage, elicitation/create or roots/list expected)`},
		{"params not an object", `{"resultType":"input_required","inputRequests":{"x":{"method":"roots/list","params":"all"}}}`, "params is not an object"},
		{"state not a string", `{"resultType":"input_required","requestState":{"a":1}}`, "requestState is not a string"},
		{"undeclared capability", `{"resultType":"input_required","inputRequests":{"x":{"method":"sampling/createMessage","params":{}}}}`, "did not declare"},
	} {
		a.send(callFrame(fmt.Sprint(i+1), "t", `{}`))
		s.reply(s.expect("tools/call"), `"result":`+tc.result)
		m := a.response()
		if m["id"] != float64(i+1) || !strings.Contains(m["_text"].(string), "scripted answered tools/call with an InputRequiredResult hearth cannot use") ||
			!strings.Contains(m["_text"].(string), tc.want) {
			t.Errorf("%s: got %s, want %q", tc.name, m["_text"], tc.want)
		}
	}
	// An upstream that keeps asking is given up after maxInputRounds.
	a.send(callFrame("99", "t", `{}`))
	for range maxInputRounds {
		s.reply(s.expect("tools/call"), `"result":{"resultType":"input_required","requestState":"again"}`)
	}
	s.reply(s.expect("tools/call"), `"result":{"resultType":"input_required","requestState":"again"}`)
	if m := a.response(); !strings.Contains(m["_text"].(string), "asked for input 10 times") {
		t.Fatalf("endless rounds: %s", m["_text"])
	}
	// Both clients are still served.
	for _, c := range []*rawClient{a, b} {
		c.send(callFrame("100", "t", `{}`))
		s.reply(s.expect("tools/call"), `"result":{"content":[{"type":"text","text":"fine"}]}`)
		if m := c.response(); textOfRaw(t, m) != "fine" {
			t.Fatalf("after bad input: %s", m["_text"])
		}
	}
}

// A legacy client's initialize with ill-typed members still gets its
// requests through: its _meta carries what is well typed.
func TestIllTypedInitializeParamsOnModernUpstream(t *testing.T) {
	s := newScripted(t)
	a := s.client()
	a.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":5,"capabilities":"all","clientInfo":{"name":1}}}`)
	s.reply(s.expect("initialize"), refusal)
	s.reply(s.expect("server/discover"), `"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}`)
	if m := a.response(); !strings.Contains(m["_text"].(string), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", m["_text"])
	}
	a.send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}`)
	if m := a.response(); !strings.Contains(m["_text"].(string), "-32602") {
		t.Fatalf("bad level: %s", m["_text"])
	}
	a.send(callFrame("2", "t", `{}`))
	var up map[string]any
	select {
	case up = <-s.frames:
	case <-time.After(5 * time.Second):
		t.Fatal("no call upstream")
	}
	meta := up["params"].(map[string]any)["_meta"].(map[string]any)
	if meta[metaVersion] != "2026-07-28" || fmt.Sprint(meta[metaCapabilities]) != "map[]" || meta[metaClientInfo] != nil {
		t.Fatalf("meta %v", meta)
	}
}

// A legacy client's params of every shape get the modern _meta: put first
// into an object without one, its members after the client's own in the
// client's _meta (a member the client wrote twice once, as its last value),
// and params that are no object left alone (the upstream words that
// error). The client's text is kept as it wrote it, read from the one
// decode of the frame.
func TestWithModernMeta(t *testing.T) {
	c := &Client{session: clientSession{level: levelOf("info"), initParams: json.RawMessage(`{"capabilities":{"roots":{}},"clientInfo":{"name":"n","version":"1"}}`)}}
	for _, tc := range []struct{ in, want string }{
		{``, `{"_meta":{M}}`},
		{`null`, `{"_meta":{M}}`},
		{`{}`, `{"_meta":{M}}`},
		{` { } `, `{"_meta":{M}}`},
		{`{"name":"x"}`, `{"_meta":{M},"name":"x"}`},
		{` {"name":"x","arguments":{"a": [1]}} `, `{"_meta":{M},"name":"x","arguments":{"a": [1]}}`},
		{`{"_meta":{"progressToken":5},"name":"x"}`, `{"_meta":{"progressToken":5,M},"name":"x"}`},
		{`{"name":"x","_meta":{"io.modelcontextprotocol/logLevel":"error","a":1,"a":2}}`, `{"name":"x","_meta":{"io.modelcontextprotocol/logLevel":"info","a":2,` +
			`"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"n","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`},
		{`{"_meta":7,"name":"x"}`, `{"_meta":{M},"name":"x"}`},
		{`[1,2]`, `[1,2]`},
	} {
		c.session.meta = nil
		members := `"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"n","version":"1"},"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/protocolVersion":"2026-07-28"`
		want := strings.Replace(tc.want, "M", members, 1)
		msg := &jsonrpc.Message{Kind: jsonrpc.Request, ID: jsonrpc.RawID([]byte("1")), Method: "tools/call"}
		if tc.in != "" {
			msg.Params = json.RawMessage(tc.in)
		}
		q := readRequest(msg)
		c.withModernMeta(q)
		got := string(q.params())
		if got != want {
			t.Errorf("%q: got %s, want %s", tc.in, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%q: not JSON: %s", tc.in, got)
		}
	}
}

// On a modern upstream each translated request carries its own client's
// capabilities, and a server may list other tools for other capabilities
// (as server-everything lists its sampling tool only to a client that can
// sample): a list cached for one client is given again only to a client
// of the same capabilities.
func TestModernListCacheIsPerCapabilities(t *testing.T) {
	s := newScripted(t)
	a, b, c := s.client(), s.client(), s.client()
	a.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"a","version":"1"}}}`)
	s.reply(s.expect("initialize"), refusal)
	s.reply(s.expect("server/discover"), `"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}}}`)
	a.response()
	s.expect("subscriptions/listen") // hearth's own, for list changes: left open
	b.initialize()                   // no capabilities
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`)
	c.response()
	const withSampling, without = `{"tools":[{"name":"echo"},{"name":"sample"}]}`, `{"tools":[{"name":"echo"}]}`
	list := `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`
	a.send(list)
	s.reply(s.expect("tools/list"), `"result":`+withSampling)
	if got := a.response()["_text"].(string); !strings.Contains(got, `"sample"`) {
		t.Fatalf("a listed %s", got)
	}
	b.send(list) // other capabilities: asks the upstream
	s.reply(s.expect("tools/list"), `"result":`+without)
	if got := b.response()["_text"].(string); strings.Contains(got, `"sample"`) {
		t.Fatalf("b, which cannot sample, was given a list made for a client that can: %s", got)
	}
	c.send(list) // a's capabilities: a's list, from the cache
	if got := c.response()["_text"].(string); !strings.Contains(got, `"sample"`) {
		t.Fatalf("c listed %s", got)
	}
	select {
	case m := <-s.frames:
		if m["method"] == "tools/list" {
			t.Fatalf("c's list reached the upstream: the cache was not used")
		}
	default:
	}
}
