//go:build unix

package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// replayClient speaks to a stdio MCP server as a client whose handshake
// is given as it was recorded (its server/discover probe, if any, and its
// initialize params): what a client that cannot be driven without an
// account (the Claude Code CLI lists no tools without one) really sends,
// replayed. It answers the server's roots/list as that client answered
// (with its directory), ping, and nothing else.
type replayClient struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	roots json.RawMessage // its answer to roots/list (nil: it declared no roots)
	// initResult is the server's answer to its initialize, as JSON.
	initResult string

	mu      sync.Mutex
	waiting map[string]chan json.RawMessage // by id: the whole response
	asked   chan struct{}                   // closed once it answered a roots/list
	once    sync.Once
	nextID  int
}

// replayRoots is the roots/list answer a recording says its client gives
// in dir: a client that answered with the directory it ran in answers
// with dir; any other answer is replayed as it is.
func replayRoots(rec *claudeRecording, dir string) json.RawMessage {
	if rec.Roots == nil {
		return nil
	}
	var r struct {
		Roots []struct{ URI string } `json:"roots"`
	}
	ran := (&url.URL{Scheme: "file", Path: filepath.ToSlash(rec.Dir)}).String()
	if json.Unmarshal(rec.Roots, &r) == nil && len(r.Roots) == 1 && r.Roots[0].URI == ran {
		return mustMarshal(map[string]any{"roots": []map[string]string{{"uri": (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()}}})
	}
	return rec.Roots
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// startReplay starts argv in dir with env and makes the recorded
// handshake: the probe (its answer is read and dropped), initialize, and
// notifications/initialized. The process is killed at the test's end.
func startReplay(t *testing.T, env []string, dir string, argv []string, probe, init, roots json.RawMessage) *replayClient {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	c := &replayClient{t: t, cmd: cmd, in: in, roots: roots, waiting: map[string]chan json.RawMessage{}, asked: make(chan struct{})}
	go c.read(out)
	if probe != nil {
		// A 2025 server spawned directly refuses it; hearth answers it
		// from the server's initialize (docs/decisions/0072-era-bridge.md).
		// The recorded client went on with initialize either way, which
		// binds it to the same instance.
		m := c.request("server/discover", probe)
		if m["error"] == nil && !strings.Contains(m["_text"].(string), `"supportedVersions":["2026-07-28"]`) {
			t.Fatalf("%v: server/discover of a 2025 server: %s", argv, m["_text"])
		}
	}
	m := c.request("initialize", init)
	if m["result"] == nil {
		t.Fatalf("%v: initialize: %s", argv, m["_text"])
	}
	c.initResult = string(mustMarshal(m["result"]))
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *replayClient) send(frame string) {
	if _, err := io.WriteString(c.in, frame+"\n"); err != nil {
		c.t.Errorf("write to %v: %v", c.cmd.Args, err)
	}
}

// read routes the server's frames: answers to their request, and the
// server's own requests answered as the client would.
func (c *replayClient) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch {
		case m.Method == "" && m.ID != nil:
			c.mu.Lock()
			ch := c.waiting[string(m.ID)]
			delete(c.waiting, string(m.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- line
			}
		case m.Method == "roots/list" && c.roots != nil:
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, c.roots))
			c.once.Do(func() { close(c.asked) })
		case m.Method == "ping":
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID))
		case m.ID != nil:
			c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID))
		}
	}
}

// request sends method with params and returns the response, decoded,
// with its text as "_text".
func (c *replayClient) request(method string, params json.RawMessage) map[string]any {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := fmt.Sprint(c.nextID)
	ch := make(chan json.RawMessage, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	if params == nil {
		params = json.RawMessage(`{}`)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, params))
	select {
	case line := <-ch:
		var m map[string]any
		json.Unmarshal(line, &m)
		m["_text"] = string(line)
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("%v: no answer to %s within 30s", c.cmd.Args, method)
		return nil
	}
}

// listing lists what the server offers the replayed client (every page),
// as the other clients of the matrix do (listing).
func (c *replayClient) listing() listing {
	c.t.Helper()
	l := listing{"initialize": c.initResult}
	for _, k := range listKinds {
		var items []json.RawMessage
		cursor := ""
		for {
			params := json.RawMessage(`{}`)
			if cursor != "" {
				params = mustMarshal(map[string]string{"cursor": cursor})
			}
			m := c.request(k.method, params)
			res, ok := m["result"].(map[string]any)
			if !ok {
				l[k.method] = "error: " + errorText(m["error"])
				break
			}
			for _, it := range anySlice(res[k.member]) {
				items = append(items, mustMarshal(it))
			}
			if cursor, _ = res["nextCursor"].(string); cursor == "" {
				l[k.method] = string(mustMarshal(items))
				break
			}
		}
	}
	if strings.Contains(l["tools/list"], `"list_allowed_directories"`) {
		if c.roots != nil {
			// It answers the server's roots/list before it goes on, as
			// any client would by the time it calls a tool.
			select {
			case <-c.asked:
			case <-time.After(10 * time.Second):
				c.t.Errorf("%v: the server never asked for the roots the client declared", c.cmd.Args)
			}
		}
		l["allowed"] = stableAllowed(func() string {
			m := c.request("tools/call", json.RawMessage(`{"name":"list_allowed_directories","arguments":{}}`))
			return toolText(m["result"])
		})
	}
	return l
}

func anySlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func errorText(v any) string {
	e, _ := v.(map[string]any)
	return fmt.Sprint(e["message"])
}

func toolText(v any) string {
	res, _ := v.(map[string]any)
	var b strings.Builder
	for _, c := range anySlice(res["content"]) {
		if m, ok := c.(map[string]any); ok {
			fmt.Fprint(&b, m["text"])
		}
	}
	return b.String()
}

// stableAllowed is list_allowed_directories' answer once it stops
// changing: server-filesystem replaces its directories with a client's
// roots a moment after it gets them.
func stableAllowed(call func() string) string {
	last := call()
	for same, deadline := 0, time.Now().Add(5*time.Second); same < 3 && time.Now().Before(deadline); {
		time.Sleep(30 * time.Millisecond)
		if now := call(); now == last {
			same++
		} else {
			last, same = now, 0
		}
	}
	return last
}
