package route

//lint:file-ignore SA1019 the era bridge turns a 2025 upstream's sampling requests (deprecated in 2026-07-28) into input_required results

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernMetaJSON is a 2026-07-28 client's _meta, with sampling and roots
// declared (and a log level when level is not "").
func modernMetaJSON(level string) string {
	m := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"roots":{}}`
	if level != "" {
		m += `,"io.modelcontextprotocol/logLevel":"` + level + `"`
	}
	return m
}

func modernCall(id, tool, args, extra string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s%s,"_meta":{%s}}}`, id, tool, args, extra, modernMetaJSON(""))
}

// inputRequired reads an InputRequiredResult: its inputRequests and its
// requestState.
func readInputRequired(t *testing.T, m map[string]any) (map[string]any, string) {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	if res == nil || res["resultType"] != "input_required" {
		t.Fatalf("no InputRequiredResult: %s", m["_text"])
	}
	reqs, _ := res["inputRequests"].(map[string]any)
	state, _ := res["requestState"].(string)
	if len(reqs) == 0 || state == "" {
		t.Fatalf("InputRequiredResult without requests or state: %s", m["_text"])
	}
	return reqs, state
}

func onlyKey(t *testing.T, m map[string]any) string {
	t.Helper()
	if len(m) != 1 {
		t.Fatalf("want one input request, got %v", m)
	}
	for k := range m {
		return k
	}
	return ""
}

// A 2026-07-28 client of a 2025 upstream: its probe is answered from the
// upstream's initialize; the upstream's sampling and roots requests during
// its call become InputRequiredResults on that call, and its retries carry
// the answers back to the requests the upstream is waiting on; the
// results carry resultType.
func TestModernClientOfLegacyUpstream(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	a.send(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{` + modernMetaJSON("") + `}}}`)
	m := a.response()
	res, _ := m["result"].(map[string]any)
	if res == nil || res["resultType"] != "complete" || fmt.Sprint(res["supportedVersions"]) != "[2026-07-28]" ||
		res["capabilities"].(map[string]any)["tools"] == nil || res["_meta"].(map[string]any)[metaServerInfo].(map[string]any)["name"] != "testserver" {
		t.Fatalf("discover: %s", m["_text"])
	}
	a.send(modernCall(`1`, "echo", `{"text":"hi"}`, ""))
	m = a.response()
	if res, _ := m["result"].(map[string]any); res == nil || res["resultType"] != "complete" || textOfRaw(t, m) != "hi" {
		t.Fatalf("echo: %s", m["_text"])
	}

	a.send(modernCall(`2`, "sample", `{"text":"q"}`, ""))
	reqs, state := readInputRequired(t, a.response())
	key := onlyKey(t, reqs)
	if req := reqs[key].(map[string]any); req["method"] != "sampling/createMessage" || !strings.Contains(fmt.Sprint(req["params"]), "q") {
		t.Fatalf("input request: %v", reqs)
	}
	answer := fmt.Sprintf(`,"inputResponses":{%q:{"role":"assistant","content":{"type":"text","text":"paris"},"model":"m"}},"requestState":%q`, key, state)
	a.send(modernCall(`3`, "sample", `{"text":"q"}`, answer))
	m = a.response()
	if m["id"] != float64(3) || textOfRaw(t, m) != "sampled: paris" {
		t.Fatalf("retry: %s", m["_text"])
	}
	// The state is used: the same retry again is refused.
	a.send(modernCall(`4`, "sample", `{"text":"q"}`, answer))
	if m := a.response(); m["error"] == nil || !strings.Contains(m["_text"].(string), "used already") {
		t.Fatalf("replay: %s", m["_text"])
	}

	a.send(modernCall(`5`, "roots", `{}`, ""))
	reqs, state = readInputRequired(t, a.response())
	key = onlyKey(t, reqs)
	// With params, even where the upstream sent none (clients' decoders
	// fail on an absent one).
	if req := reqs[key].(map[string]any); req["method"] != "roots/list" || req["params"] == nil {
		t.Fatalf("roots input request: %v", reqs)
	}
	a.send(modernCall(`6`, "roots", `{}`, fmt.Sprintf(`,"inputResponses":{%q:{"roots":[{"uri":"file:///w"}]}},"requestState":%q`, key, state)))
	if m := a.response(); textOfRaw(t, m) != "file:///w" {
		t.Fatalf("roots retry: %s", m["_text"])
	}
	if n := h.count("initialize"); n != 1 {
		t.Fatalf("upstream initialized %d times", n)
	}
}

// What a retry of a parked call may get wrong is refused with a clear
// error, and the call stays parked for the right retry; answers to keys
// hearth never asked are ignored, and a retry that leaves a request
// unanswered is asked again.
func TestBridgeBadRetries(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	a.send(modernCall(`1`, "sample", `{"text":"x"}`, ""))
	reqs, state := readInputRequired(t, a.response())
	key := onlyKey(t, reqs)
	good := fmt.Sprintf(`{%q:{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}}`, key)
	dot := strings.LastIndexByte(state, '.')
	flipped := []byte(state)
	if flipped[dot+1] == 'A' {
		flipped[dot+1] = 'B'
	} else {
		flipped[dot+1] = 'A'
	}
	other := New(Options{Name: "other"}).bridge.seal(stateClaims{N: 1, M: "tools/call", D: requestDigest("tools/call", json.RawMessage(`{"name":"sample","arguments":{"text":"x"}}`)), X: time.Now().Add(time.Hour).UnixMilli()})
	cases := []struct {
		name, args, extra, want string
	}{
		{"no state", `{"text":"x"}`, `,"inputResponses":` + good, "without requestState"},
		{"state not a string", `{"text":"x"}`, `,"inputResponses":` + good + `,"requestState":7`, "not a string"},
		{"forged", `{"text":"x"}`, `,"inputResponses":` + good + `,"requestState":"hello"`, "not one hearth gave"},
		{"tampered mac", `{"text":"x"}`, `,"inputResponses":` + good + `,"requestState":"` + string(flipped) + `"`, "not one hearth gave"},
		{"another router's key", `{"text":"x"}`, `,"inputResponses":` + good + `,"requestState":"` + other + `"`, "not one hearth gave"},
		{"other arguments", `{"text":"y"}`, `,"inputResponses":` + good + `,"requestState":"` + state + `"`, "another request"},
		{"responses not an object", `{"text":"x"}`, `,"inputResponses":[1],"requestState":"` + state + `"`, "not an object"},
		{"a response not an object", `{"text":"x"}`, fmt.Sprintf(`,"inputResponses":{%q:"yes"},"requestState":%q`, key, state), "not a result object"},
	}
	for i, tc := range cases {
		a.send(modernCall(fmt.Sprint(10+i), "sample", tc.args, tc.extra))
		m := a.response()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32602) || !strings.Contains(e["message"].(string), tc.want) {
			t.Errorf("%s: %s", tc.name, m["_text"])
		}
	}
	// Only keys hearth never asked: the request is asked for again.
	a.send(modernCall(`30`, "sample", `{"text":"x"}`, fmt.Sprintf(`,"inputResponses":{"nobody":{"x":1}},"requestState":%q`, state)))
	reqs2, state2 := readInputRequired(t, a.response())
	if onlyKey(t, reqs2) != key || state2 == state {
		t.Fatalf("asked again: %v %q", reqs2, state2)
	}
	a.send(modernCall(`31`, "sample", `{"text":"x"}`, `,"inputResponses":`+good+`,"requestState":"`+state2+`"`))
	if m := a.response(); textOfRaw(t, m) != "sampled: ok" {
		t.Fatalf("the right retry: %s", m["_text"])
	}
}

// A parked call whose state expired is refused, and the upstream's request
// is answered with an error once AnswerTimeout passes.
func TestBridgeExpiredState(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{AnswerTimeout: 300 * time.Millisecond})
	a := h.raw()
	a.send(modernCall(`1`, "sample", `{"text":"x"}`, ""))
	reqs, state := readInputRequired(t, a.response())
	key := onlyKey(t, reqs)
	deadline := time.Now().Add(10 * time.Second)
	for h.count("response") == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if f := strings.Join(h.framesOf("response"), ""); !strings.Contains(f, "did not retry") {
		t.Fatalf("the upstream was answered %q", f)
	}
	a.send(modernCall(`2`, "sample", `{"text":"x"}`, fmt.Sprintf(`,"inputResponses":{%q:{"role":"assistant","content":{"type":"text","text":"late"},"model":"m"}},"requestState":%q`, key, state)))
	if m := a.response(); m["error"] == nil || !strings.Contains(m["_text"].(string), "expired") {
		t.Fatalf("late retry: %s", m["_text"])
	}
}

// A 2026-07-28 client's listen on a 2025 upstream is acknowledged with
// what the upstream's capabilities announce, and its resource URIs
// subscribed upstream; log messages reach it only at the level its
// request names.
func TestModernListenOnLegacyUpstream(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	a.send(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["test://a"]},"_meta":{` + modernMetaJSON("") + `}}}`)
	m := a.next()
	if m["method"] != "notifications/subscriptions/acknowledged" || !strings.Contains(m["_text"].(string), `"resourceSubscriptions":["test://a"]`) {
		t.Fatalf("ack: %s", m["_text"])
	}
	deadline := time.Now().Add(10 * time.Second)
	for ts.subscriptions() != "+test://a" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := ts.subscriptions(); got != "+test://a" {
		t.Fatalf("upstream subscriptions %q", got)
	}
	a.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"l"}}`)
	for ts.subscriptions() != "+test://a,-test://a" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := ts.subscriptions(); got != "+test://a,-test://a" {
		t.Fatalf("after the listen ended, upstream subscriptions %q", got)
	}
}

func TestCompleteResult(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:                              `{"resultType":"complete"}`,
		` {"a":1}`:                        `{"resultType":"complete","a":1}`,
		`{"resultType":"input_required"}`: `{"resultType":"input_required"}`,
		`{"text":"resultType"}`:           `{"resultType":"complete","text":"resultType"}`,
		`[1]`:                             `[1]`,
	} {
		if got := string(completeResult(json.RawMessage(in))); got != want {
			t.Errorf("completeResult(%s) = %s, want %s", in, got, want)
		}
	}
}

// The requests 2026-07-28 removed are refused to a 2026-07-28 client of a
// 2025 upstream, as a 2026-07-28 server refuses them.
func TestRemovedMethodsRefusedToModernClients(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	for i, method := range []string{"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"level":"info","uri":"test://a","_meta":{%s}}}`, i, method, modernMetaJSON("")))
		m := a.response()
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(-32601) {
			t.Errorf("%s: %s", method, m["_text"])
		}
	}
	if n := h.count("logging/setLevel") + h.count("resources/subscribe"); n != 0 {
		t.Fatalf("the upstream was sent %v", h.sent)
	}
}

// An upstream that asks twice at once during one call (two sampling
// requests before either is answered): the second, made while the call is
// parked, is asked in the next round; the call completes once both are
// answered.
func TestBridgeTwoAsksAtOnce(t *testing.T) {
	ts := newTestServer()
	mcp.AddTool(ts.srv, &mcp.Tool{Name: "sample-twice", Description: "samples twice at once"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		var wg sync.WaitGroup
		out := make([]string, 2)
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
					Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprint(i)}}}})
				if err != nil {
					out[i] = "error: " + err.Error()
					return
				}
				out[i] = res.Content.(*mcp.TextContent).Text
			}()
		}
		wg.Wait()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(out, "+")}}}, nil, nil
	})
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	a.send(modernCall(`1`, "sample-twice", `{}`, ""))
	answered := map[string]bool{}
	id := 2
	state := ""
	reqs, st := readInputRequired(t, a.response())
	for {
		state = st
		var parts []string
		for key, req := range reqs {
			text := req.(map[string]any)["params"].(map[string]any)["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"]
			parts = append(parts, fmt.Sprintf(`%q:{"role":"assistant","content":{"type":"text","text":"s%v"},"model":"m"}`, key, text))
			answered[key] = true
		}
		a.send(modernCall(fmt.Sprint(id), "sample-twice", `{}`, `,"inputResponses":{`+strings.Join(parts, ",")+`},"requestState":"`+state+`"`))
		id++
		m := a.response()
		if res, _ := m["result"].(map[string]any); res != nil && res["resultType"] == "input_required" {
			reqs, st = readInputRequired(t, m)
			continue
		}
		if got := textOfRaw(t, m); got != "s0+s1" {
			t.Fatalf("the call: %s", m["_text"])
		}
		break
	}
	if len(answered) != 2 {
		t.Fatalf("asked %v", answered)
	}
}
