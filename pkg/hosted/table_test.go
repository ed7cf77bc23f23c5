//go:build linux

package hosted

import (
	"encoding/json"
	"fmt"
	"github.com/hearth-mcp/hearth/pkg/hosted/route"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/supervisor"
)

// newTable hosts upstreams under a keeper, the test binary (TestMain).
func newTable(t *testing.T) *Table {
	t.Helper()
	exe, _ := os.Executable()
	return newTableKept(t, exe)
}

// newTableKept is newTable with the keeper given ("": none).
func newTableKept(t *testing.T, keeper string) *Table {
	t.Helper()
	tb := NewTable(Options{Supervisor: supervisor.New(supervisor.Options{Grace: 300 * time.Millisecond, KeeperPath: keeper}), LogDir: t.TempDir()})
	t.Cleanup(tb.Close)
	return tb
}

// testSpec hosts the test binary as the server of mode.
func testSpec(mode string, sharing Sharing) Spec {
	exe, _ := os.Executable()
	return Spec{Name: "test-" + mode, Command: exe, Env: []string{"HOSTED_TEST_SERVER=" + mode}, Sharing: sharing, IdleTimeout: time.Minute}
}

type client struct {
	t         *testing.T
	s         *Session
	frames    chan map[string]any
	leftovers atomic.Int32 // frames of the leftover descendant (main_test.go) received
}

var conns uint64

// attach attaches a client bound as its initialize would bind it
// (initialize sends the same params), so that the instance exists before
// any frame.
func attach(t *testing.T, tb *Table, spec Spec, dir string) *client {
	t.Helper()
	c := open(t, tb, spec, dir)
	if err := c.s.bind(testShape, false); err != nil {
		t.Fatal(err)
	}
	return c
}

// open attaches a client without binding it: it is bound by what it sends.
func open(t *testing.T, tb *Table, spec Spec, dir string) *client {
	t.Helper()
	c := &client{t: t, frames: make(chan map[string]any, 64)}
	conns++
	s, err := tb.Attach(spec, dir, conns, "", route.WriteFunc(func(f []byte) error {
		var m map[string]any
		if err := json.Unmarshal(f, &m); err != nil {
			t.Errorf("bad frame %s", f)
		}
		m["_text"] = string(f)
		if m["method"] == "notifications/leftover" {
			c.leftovers.Add(1)
		}
		c.frames <- m
		return nil
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.s = s
	return c
}

// testInit are the initialize params of the tests' clients, and
// testShape their shape.
const testInit = `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`

var testShape = route.Shape(json.RawMessage(testInit))

func (c *client) call(id int, method, params string) map[string]any {
	c.t.Helper()
	c.s.Handle(jsonrpc.Parse(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)))
	return c.reply(15 * time.Second)
}

func (c *client) reply(within time.Duration) map[string]any {
	c.t.Helper()
	deadline := time.After(within)
	for {
		select {
		case m := <-c.frames:
			if _, ok := m["method"]; !ok {
				return m
			}
		case <-deadline:
			c.t.Fatalf("no reply within %v", within)
			return nil
		}
	}
}

func (c *client) initialize() map[string]any {
	c.t.Helper()
	m := c.call(0, "initialize", testInit)
	c.s.Handle(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)))
	return m
}

func text(t *testing.T, m map[string]any) string {
	t.Helper()
	res, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("not a result: %s", m["_text"])
	}
	return res["content"].([]any)[0].(map[string]any)["text"].(string)
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil && !zombie(pid) }

func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return f[0] == "Z" || f[0] == "X"
}

func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Lazy start, one upstream for two clients, idle stop after the last one.
func TestSharedInstanceStartsLazilyAndStopsWhenIdle(t *testing.T) {
	tb := newTable(t)
	spec := testSpec("normal", Global)
	spec.IdleTimeout = 300 * time.Millisecond
	a, b := attach(t, tb, spec, "/a"), attach(t, tb, spec, "/b")
	if st := tb.Statuses(); len(st) != 1 || st[0].Pid != 0 || st[0].Clients != 2 || st[0].State != "idle" {
		t.Fatalf("before any request: %+v", st)
	}
	a.initialize()
	b.initialize()
	pa := text(t, a.call(1, "tools/call", `{"name":"echo","arguments":{"text":"a"}}`))
	pb := text(t, b.call(1, "tools/call", `{"name":"echo","arguments":{"text":"b"}}`))
	if strings.Fields(pa)[2] != strings.Fields(pb)[2] {
		t.Fatalf("two upstreams: %q %q", pa, pb)
	}
	st := tb.Statuses()[0]
	if st.State != "running" || st.Era != "2025-11-25" || st.RSSBytes == 0 || st.Server != "test-normal" || strings.Join(st.EnvNames, ",") != "HOSTED_TEST_SERVER" {
		t.Fatalf("status: %+v", st)
	}
	a.s.Detach()
	b.s.Detach()
	waitFor(t, "idle stop", 5*time.Second, func() bool { return !alive(st.Pid) && len(tb.Statuses()) == 0 })
}

// The upstream killed mid-call: the caller is answered at once with an
// error naming the server and its log; the next call restarts it.
func TestUpstreamKilledMidCall(t *testing.T) {
	tb := newTable(t)
	a := attach(t, tb, testSpec("normal", Global), "/a")
	a.initialize()
	a.s.Handle(jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"hang","arguments":{}}}`)))
	var pid int
	waitFor(t, "running", 10*time.Second, func() bool { st := tb.Statuses(); pid = st[0].Pid; return st[0].State == "running" })
	time.Sleep(100 * time.Millisecond)
	syscall.Kill(pid, syscall.SIGKILL)
	m := a.reply(time.Second)
	msg := m["_text"].(string)
	if m["id"] != "h" || !strings.Contains(msg, "test-normal exited (killed by signal: killed)") && !strings.Contains(msg, "test-normal exited") || !strings.Contains(msg, ".log") {
		t.Fatalf("in-flight answer: %s", msg)
	}
	if out := text(t, a.call(2, "tools/call", `{"name":"echo","arguments":{"text":"again"}}`)); !strings.HasPrefix(out, "again") {
		t.Fatalf("after the crash: %q", out)
	}
	if st := tb.Statuses()[0]; st.Restarts != 1 || st.Pid == pid || !strings.Contains(st.LastError, "exited") {
		t.Fatalf("status: %+v", st)
	}
}

// Bad upstreams each give a clear error naming the server and its log, and
// another instance keeps serving.
func TestBadUpstreams(t *testing.T) {
	tb := newTable(t)
	good := attach(t, tb, testSpec("normal", Global), "/g")
	good.initialize()
	missing := testSpec("normal", Global)
	missing.Name, missing.Command = "missing", "/no/such/server"
	// The two silent servers are waited for to the end of InitTimeout; it
	// also bounds their start and, for the second, its refusal of
	// initialize, which a loaded machine under -race has taken over 500 ms
	// (the refusal then read as silence).
	silent := testSpec("silent", Global)
	silent.InitTimeout = 2 * time.Second
	probeSilent := testSpec("refuse-then-silent", Global)
	probeSilent.InitTimeout = 2 * time.Second
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{missing, "missing could not be started"},
		{testSpec("exit", Global), "cannot open the widget database"},
		{testSpec("garbage", Global), "wrote something other than JSON-RPC to its stdout: \"Server listening on port 3000\""},
		{silent, "never answered initialize within 2s"},
		{probeSilent, "never answered server/discover after refusing initialize (no sessions here) within 2s"},
	} {
		c := attach(t, tb, tc.spec, "/x")
		m := c.initialize()
		msg, _ := m["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, tc.want) || !strings.Contains(msg, tc.spec.Label()) || !strings.Contains(msg, filepath.Join(tb.logDir, "")) {
			t.Errorf("%s: got %q, want %q with the server and its log", tc.spec.Label(), msg, tc.want)
		}
		if out := text(t, good.call(9, "tools/call", `{"name":"echo","arguments":{"text":"ok"}}`)); !strings.HasPrefix(out, "ok") {
			t.Fatalf("the good instance after %s: %q", tc.spec.Label(), out)
		}
		c.s.Detach()
	}
}

// A server that exits at once, again and again, is marked failed with its
// last stderr lines; requests then fail at once; a restart clears it.
func TestCrashLoopIsMarkedFailed(t *testing.T) {
	tb := newTable(t)
	spec := testSpec("exit", Global)
	c := attach(t, tb, spec, "/x")
	var msg string
	for i := range crashLoop {
		m := c.call(i, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
		msg = m["error"].(map[string]any)["message"].(string)
	}
	if !strings.Contains(msg, "marked failed") || !strings.Contains(msg, "widget database") {
		t.Fatalf("after %d crashes: %q", crashLoop, msg)
	}
	began := time.Now()
	m := c.call(99, "tools/list", `{}`)
	if !strings.Contains(m["_text"].(string), "marked failed") || time.Since(began) > time.Second {
		t.Fatalf("failed instance: %s", m["_text"])
	}
	if st := tb.Statuses()[0]; st.State != "failed" || !strings.Contains(st.LastError, "marked failed") {
		t.Fatalf("status: %+v", st)
	}
	// The client goes: the failed instance stays, and the command its
	// error names finds it and clears the failure.
	c.s.Detach()
	advice := regexp.MustCompile("run `hearthd servers restart ([^`]+)`").FindStringSubmatch(msg)
	if advice == nil {
		t.Fatalf("no command to run in %q", msg)
	}
	if st := tb.Statuses(); len(st) != 1 || st[0].State != "failed" {
		t.Fatalf("the failed instance without clients: %+v", st)
	}
	if n, err := tb.Restart(advice[1]); n != 1 || err != nil {
		t.Fatalf("restart %s, as the error says: %d %v", advice[1], n, err)
	}
	if st := tb.Statuses()[0]; st.State == "failed" {
		t.Fatalf("still failed after restart: %+v", st)
	}
}

// A server that ignores its stdin closing and SIGTERM is killed within the
// grace when its instance stops.
func TestStubbornServerIsKilledWithinGrace(t *testing.T) {
	tb := newTable(t)
	spec := testSpec("stubborn", Global)
	spec.IdleTimeout = 100 * time.Millisecond
	c := attach(t, tb, spec, "/x")
	c.initialize()
	pid := tb.Statuses()[0].Pid
	c.s.Detach()
	began := time.Now()
	waitFor(t, "the stubborn server's end", 5*time.Second, func() bool { return !alive(pid) })
	if took := time.Since(began); took > 2*time.Second {
		t.Fatalf("took %v with a 100ms idle timeout and a 300ms grace", took)
	}
}

// Keys: directory instances per client directory (a subdirectory of a
// repository is its own, as a direct spawn there would be), an entry with
// another token gets its own, client instances one per connection; the
// upstream runs in the client's directory with the entry's environment.
func TestInstanceKeys(t *testing.T) {
	repo := t.TempDir()
	os.Mkdir(filepath.Join(repo, ".git"), 0o700)
	sub := filepath.Join(repo, "sub")
	os.Mkdir(sub, 0o700)
	other := t.TempDir()
	spec := testSpec("normal", Directory)
	token := spec
	token.Env = append([]string{"API_TOKEN=secret-two"}, spec.Env...)
	spec.Env = append([]string{"API_TOKEN=secret-one"}, spec.Env...)
	scope := func(dir string) string { return spec.Scope(dir, 1) }
	if spec.Key(scope(repo), "") == spec.Key(scope(sub), "") {
		t.Fatal("a subdirectory of the repository shares the repository's key")
	}
	if spec.Key(scope(sub), "") != spec.Key(spec.Scope(sub+"/", 2), "") {
		t.Fatal("one directory, written two ways, has two keys")
	}
	if spec.Key(scope(repo), "") == spec.Key(scope(other), "") {
		t.Fatal("two directories share a key")
	}
	if spec.Key(scope(repo), "") == token.Key(scope(repo), "") {
		t.Fatal("two tokens share a key")
	}
	per := testSpec("normal", PerClient)
	if per.Key(per.Scope("/x", 1), "") == per.Key(per.Scope("/x", 2), "") {
		t.Fatal("two connections share a client instance")
	}
	tb := newTable(t)
	c := attach(t, tb, spec, sub)
	c.initialize()
	if out := text(t, c.call(1, "tools/call", `{"name":"env","arguments":{"text":"API_TOKEN"}}`)); out != "secret-one|"+sub {
		t.Fatalf("env and directory: %q", out)
	}
	for _, st := range tb.Statuses() {
		b, _ := json.Marshal(st)
		if strings.Contains(string(b), "secret") {
			t.Fatalf("a secret in the status: %s", b)
		}
	}
}

// An upstream that crashed leaving a descendant that holds its stdout and
// writes to it (here one that escaped every kill: no keeper runs it): once
// the upstream is declared dead, nothing that descendant writes reaches a
// client, neither while the next upstream starts nor while it serves.
func TestDeadUpstreamsLeftoverNeverSpeaks(t *testing.T) {
	tb := newTableKept(t, "")
	spec := testSpec("leaky", Global)
	mark := filepath.Join(t.TempDir(), "leftover")
	spec.Env = append(spec.Env, "HOSTED_LEFTOVER="+mark)
	a := attach(t, tb, spec, "/a")
	a.initialize()
	first := text(t, a.call(1, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`))
	b, err := os.ReadFile(mark)
	if err != nil {
		t.Fatal(err)
	}
	left, _ := strconv.Atoi(string(b))
	t.Cleanup(func() { syscall.Kill(left, syscall.SIGKILL) })
	pid := tb.Statuses()[0].Pid
	syscall.Kill(pid, syscall.SIGKILL)
	waitFor(t, "the crash noticed", 10*time.Second, func() bool { return tb.Statuses()[0].Pid != pid })
	os.WriteFile(mark+".go", nil, 0o600)
	waitFor(t, "the leftover's first write after the crash", 10*time.Second, func() bool {
		_, err := os.Stat(mark + ".wrote")
		return err == nil
	})
	served := 0
	for i := 2; i < 40; i++ {
		m := a.call(i, "tools/call", `{"name":"echo","arguments":{"text":"x"}}`)
		if m["error"] != nil && strings.Contains(m["_text"].(string), "test-leaky exited") {
			continue // a call made as the crash was being noticed
		}
		served++
		if out := text(t, m); out == first {
			t.Fatalf("call %d answered by the dead upstream: %q", i, out)
		}
	}
	if served == 0 {
		t.Fatal("the next upstream served no call")
	}
	if !alive(left) {
		t.Fatal("the leftover ended before the calls to the next upstream were made")
	}
	if n := a.leftovers.Load(); n > 0 {
		t.Fatalf("the client got %d frames of the dead upstream's descendant", n)
	}
}
