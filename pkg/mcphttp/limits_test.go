package mcphttp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// eventually waits, boundedly, for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after 10s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReplayBoundedByBytes: a 2025 session answering many large calls
// keeps at most MaxReplay bytes of them for resumption, however many it
// answered: the oldest replies are dropped first, and resuming one of
// those answers its request with REPLY_NOT_KEPT. What the sessions keep
// draws on the replay budget and is given back when the session ends.
func TestReplayBoundedByBytes(t *testing.T) {
	const (
		maxReplay = 1 << 20
		reply     = 200 << 10
		calls     = 70
	)
	held := frame.NewBudget(512 << 20)
	replay := held.Share(64 << 20)
	ts, h, _, _ := newLimitedServer(t, Options{MaxReplay: maxReplay, Replay: replay})
	url := ts.URL + "/mcp"
	sid := openLegacy(t, url)
	var primes []string
	for i := 0; i < calls; i++ {
		res, body := do(t, newReq(t, "POST", url, fmt.Sprintf(`{"jsonrpc":"2.0","id":"big%d","method":"tools/call","params":{"name":"big","arguments":{"size":%d}}}`, i, reply),
			map[string]string{"Mcp-Session-Id": sid}))
		ids, data := sseEvents(body)
		if res.StatusCode != 200 || len(ids) != 2 || !strings.Contains(data[1], strings.Repeat("b", reply)) {
			t.Fatalf("call %d: %d, %d events", i, res.StatusCode, len(ids))
		}
		primes = append(primes, ids[0])
	}
	eventually(t, "the session keeps at most MaxReplay", func() bool { return h.ReplayBytes() <= maxReplay })
	if h.ReplayBytes() <= 0 || replay.Used() != h.ReplayBytes() || held.Used() != replay.Used() {
		t.Fatalf("kept %d bytes, the replay budget counts %d, the daemon's %d", h.ReplayBytes(), replay.Used(), held.Used())
	}
	// Resume every call's stream from its priming event: what can still be
	// replayed is within the bound, the latest is, and the oldest is not.
	// Beyond the last keptStreams the streams themselves are forgotten.
	replayed, notKept := 0, 0
	for i, prime := range primes {
		res, body := do(t, newReq(t, "GET", url, "", map[string]string{"Mcp-Session-Id": sid, "Last-Event-ID": prime}))
		if i < calls-keptStreams {
			if res.StatusCode != 404 {
				t.Fatalf("resume call %d, beyond the streams kept: %d %.200s", i, res.StatusCode, body)
			}
			continue
		}
		_, data := sseEvents(body)
		if res.StatusCode != 200 || len(data) != 1 || !strings.Contains(data[0], fmt.Sprintf(`"id":"big%d"`, i)) {
			t.Fatalf("resume call %d: %d %.200s", i, res.StatusCode, body)
		}
		switch {
		case strings.Contains(data[0], "REPLY_NOT_KEPT"):
			notKept++
			if i == calls-1 {
				t.Fatalf("the latest reply is not kept: %s", data[0])
			}
		default:
			replayed += len(data[0])
			if i == calls-keptStreams {
				t.Fatal("the oldest of 64 large replies is still kept")
			}
		}
	}
	if replayed > maxReplay || notKept < keptStreams-maxReplay/reply {
		t.Fatalf("replayed %d bytes of replies (bound %d), %d not kept", replayed, maxReplay, notKept)
	}
	do(t, newReq(t, "DELETE", url, "", map[string]string{"Mcp-Session-Id": sid}))
	eventually(t, "an ended session gives back what it kept", func() bool {
		return h.ReplayBytes() == 0 && replay.Used() == 0 && held.Used() == 0
	})
}

// TestReplayBudgetSpent: with the replay budget spent, a session keeps
// only what it has still to write; the reply still reaches its POST.
func TestReplayBudgetSpent(t *testing.T) {
	replay := frame.NewBudget(64 << 10)
	ts, h, _, _ := newLimitedServer(t, Options{Replay: replay})
	url := ts.URL + "/mcp"
	sid := openLegacy(t, url)
	var first string
	for i := 0; i < 5; i++ {
		res, body := do(t, newReq(t, "POST", url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big","arguments":{"size":%d}}}`, 10+i, 100<<10),
			map[string]string{"Mcp-Session-Id": sid}))
		ids, data := sseEvents(body)
		if res.StatusCode != 200 || len(data) != 2 || !strings.Contains(data[1], strings.Repeat("b", 100<<10)) {
			t.Fatalf("call %d: %d %.200s", i, res.StatusCode, body)
		}
		if i == 0 {
			first = ids[0]
		}
	}
	eventually(t, "the session keeps no more than the replay budget", func() bool {
		return replay.Used() <= replay.Max() && h.ReplayBytes() == replay.Used()
	})
	res, body := do(t, newReq(t, "GET", url, "", map[string]string{"Mcp-Session-Id": sid, "Last-Event-ID": first}))
	if _, data := sseEvents(body); res.StatusCode != 200 || len(data) != 1 || !strings.Contains(data[0], "REPLY_NOT_KEPT") || !strings.Contains(data[0], `"id":10`) {
		t.Fatalf("resuming a reply the spent budget dropped: %d %.300s", res.StatusCode, body)
	}
}

// slowBody opens a connection that announces a 1 MiB body and sends one
// byte of it.
func slowBody(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 1048576\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSlowBodiesHoldLittle: connections that announce 1 MiB bodies and
// send a byte hold what they sent, not what they announced, so another
// client's large request is still served meanwhile; after BodyTimeout
// each is answered 408 and gives back what it held.
func TestSlowBodiesHoldLittle(t *testing.T) {
	const slow = 4
	budget := frame.NewBudget(slow << 20) // as much as the slow bodies announce
	reg := tool.NewRegistry("test+0")
	srv := mcp.New(mcp.Options{Registry: reg})
	h := New(Options{Serve: srv.Serve, Budget: budget, BodyTimeout: 2 * time.Second})
	var reading atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = &firstRead{ReadCloser: r.Body, n: &reading}
		h.ServeHTTP(w, r)
	}))
	// Closed after the slow connections (cleanups run last first).
	t.Cleanup(func() { h.Close(); ts.Close() })
	addr := strings.TrimPrefix(ts.URL, "http://")
	var conns []net.Conn
	for i := 0; i < slow; i++ {
		conns = append(conns, slowBody(t, addr))
	}
	eventually(t, "every slow body is being read", func() bool { return reading.Load() == slow })
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("a", 300<<10) + `"}}`
	res, body := do(t, newReq(t, "POST", ts.URL, big, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "ping"}))
	if res.StatusCode != 200 {
		t.Fatalf("a large request while %d slow bodies are read: %d %s", slow, res.StatusCode, body)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("slow body %d: %v", i, err)
		}
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "did not arrive whole") || !strings.Contains(string(b), `"code":-32600`) {
			t.Fatalf("slow body %d: %d %s", i, res.StatusCode, b)
		}
	}
	eventually(t, "the slow bodies gave back what they held", func() bool { return budget.Used() == 0 })
}

// firstRead counts a body once something reads it.
type firstRead struct {
	io.ReadCloser
	n    *atomic.Int64
	seen bool
}

func (f *firstRead) Read(p []byte) (int, error) {
	if !f.seen {
		f.seen = true
		f.n.Add(1)
	}
	return f.ReadCloser.Read(p)
}

// TestStreamOutlivesBodyDeadline: the body's deadline is the body's alone:
// a request's SSE stream still delivers its reply after BodyTimeout.
func TestStreamOutlivesBodyDeadline(t *testing.T) {
	ts, _, events, gate := newLimitedServer(t, Options{BodyTimeout: 300 * time.Millisecond})
	url := ts.URL + "/mcp"
	sid := openLegacy(t, url)
	res, err := http.DefaultClient.Do(newReq(t, "POST", url, `{"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":"gate"}}`,
		map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	waitFor(t, events, "started")
	// A slow body started after the call's body was read is answered 408:
	// the call's own deadline has passed too.
	c := slowBody(t, strings.TrimPrefix(ts.URL, "http://"))
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	slowRes, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || slowRes.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("slow body: %v %v", slowRes, err)
	}
	close(gate)
	b, _ := io.ReadAll(res.Body)
	if _, data := sseEvents(string(b)); len(data) != 2 || !strings.Contains(data[1], "opened") {
		t.Fatalf("the call's stream after the body deadline: %s", b)
	}
}
