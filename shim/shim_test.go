//go:build linux

package shim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/handoff"
	"github.com/hearth-mcp/hearth/pkg/localsock"
)

func newTestShim(getenv map[string]string) (*Shim, *bytes.Buffer) {
	var out bytes.Buffer
	s := &Shim{
		place:  place{getenv: func(k string) string { return getenv[k] }},
		client: stdio{out: frame.NewWriter(&out)},
		ledger: newLedger(),
		end:    ending{done: make(chan struct{})},
	}
	s.link.gen = 1 // as if connected once
	return s, &out
}

func TestAnswerLostEchoesIDs(t *testing.T) {
	s, out := newTestShim(nil)
	s.answerLost([]owedReq{{id: json.RawMessage(`"x"`)}, {id: json.RawMessage(`42`)}}, "gone")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32004,"message":"gone"}}`,
		`{"jsonrpc":"2.0","id":42,"error":{"code":-32004,"message":"gone"}}`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s", out.String())
	}
}

// pipeConn gives replay a connection to write to.
func pipeConn(t *testing.T) (*conn, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return localsock.FileConn(w, localsock.Peer{}), r
}

func readAll(t *testing.T, f *os.File, c *conn) string {
	t.Helper()
	c.Close()
	var b bytes.Buffer
	b.ReadFrom(f)
	return b.String()
}

func TestReplayRewritesInitializeAndIsAProbe(t *testing.T) {
	s, _ := newTestShim(nil)
	s.ledger.note([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"ed"}}}`))
	s.ledger.note([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	c, r := pipeConn(t)
	s.link.conn = c
	ack := s.replay()
	sent := readAll(t, r, c)
	lines := strings.Split(strings.TrimSpace(sent), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"id":"hearth-shim-replay-1"`) || !strings.Contains(lines[0], `"protocolVersion":"2025-06-18"`) ||
		!strings.Contains(lines[1], "notifications/initialized") {
		t.Fatalf("replayed:\n%s", sent)
	}
	if !s.ledger.settle([]byte(`{"jsonrpc":"2.0","id":"hearth-shim-replay-1","result":{}}`), s.link.gen) {
		t.Fatal("the replay's reply reached the client")
	}
	select {
	case <-ack:
	default:
		t.Fatal("probe not acknowledged")
	}
	if _, ok := s.ledger.owed["1"]; !ok {
		t.Fatal("the client's own initialize id must stay owed until answered")
	}
}

func TestReplayWithoutInitializePings(t *testing.T) {
	s, _ := newTestShim(nil)
	c, r := pipeConn(t)
	s.link.conn = c
	s.replay()
	if sent := readAll(t, r, c); !strings.Contains(sent, `"method":"ping"`) || !strings.Contains(sent, `hearth-shim-replay-1`) {
		t.Fatalf("probe: %s", sent)
	}
}

// A modern (stateless) session has no initialize to replay: the probe is a
// server/discover carrying the modern _meta, and its reply is swallowed.
func TestReplayOfAModernSessionDiscovers(t *testing.T) {
	s, _ := newTestShim(nil)
	s.ledger.note([]byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{}}}`))
	s.ledger.note([]byte(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`)) // not its first: no legacy replay
	c, r := pipeConn(t)
	s.link.conn = c
	ack := s.replay()
	sent := readAll(t, r, c)
	var probe struct {
		ID     string
		Method string
		Params struct {
			Meta map[string]any `json:"_meta"`
		}
	}
	if strings.Count(strings.TrimSpace(sent), "\n") != 0 || json.Unmarshal([]byte(sent), &probe) != nil || probe.Method != "server/discover" ||
		probe.ID != "hearth-shim-replay-1" || probe.Params.Meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" ||
		probe.Params.Meta["io.modelcontextprotocol/clientCapabilities"] == nil {
		t.Fatalf("probe: %s", sent)
	}
	if !s.ledger.settle([]byte(`{"jsonrpc":"2.0","id":"hearth-shim-replay-1","result":{"resultType":"complete"}}`), s.link.gen) {
		t.Fatal("the probe's reply reached the client")
	}
	<-ack
}

// An autostarted daemon gets the base, hearth's places and nothing else of
// the shim's environment: not systemd's variables, not a setting (the
// client that happened to start it must not configure the daemon every
// other client shares), not a secret of that client's (every other
// window's hosted servers would hold it; decision 0042).
func TestDaemonEnv(t *testing.T) {
	env := daemonEnv([]string{"PATH=/bin", "NOTIFY_SOCKET=/run/x", "LISTEN_FDS=1", "LISTEN_PID=9", "WATCHDOG_USEC=1", "HOME=/h",
		"SYN_SCHEMAS_DIR=/s", "HEARTH_IDLE_TIMEOUT=1h", "PREFLIGHTS_LLM_API_KEY=k", "HEARTH_HOME=/d", "HEARTH_CONFIG=/c.toml",
		"MCP_SOCKET_PATH=/r/s.sock", "HEARTH_AUTOSTARTED=0", "GITHUB_TOKEN=A", "AWS_SECRET_ACCESS_KEY=s", "SSH_AUTH_SOCK=/a",
		"USER=u", "LOGNAME=u", "SHELL=/bin/zsh", "LANG=C.UTF-8", "LC_TIME=C", "TZ=UTC", "TMPDIR=/t", "TERM=xterm",
		"XDG_RUNTIME_DIR=/r", "XDG_DATA_HOME=/x", "MCP_ENDPOINT=stdio", "HTTPS_PROXY=http://p:3128", "CLAUDE_CODE_SESSION_ID=1", "HEARTH_DAEMON=/b/hearthd",
		"HEARTH_PORTABLE=1", "HEARTH_KEEPER_PORTABLE=1", "HEARTH_SHIM_RELAY=1"})
	got := strings.Join(env, " ")
	if got != "PATH=/bin HOME=/h HEARTH_HOME=/d HEARTH_CONFIG=/c.toml MCP_SOCKET_PATH=/r/s.sock USER=u LOGNAME=u SHELL=/bin/zsh "+
		"LANG=C.UTF-8 LC_TIME=C TZ=UTC TMPDIR=/t XDG_RUNTIME_DIR=/r XDG_DATA_HOME=/x HTTPS_PROXY=http://p:3128 HEARTH_PORTABLE=1 HEARTH_KEEPER_PORTABLE=1 HEARTH_AUTOSTARTED=1" {
		t.Fatalf("%s", got)
	}
	ignored := ignoredSettings(func(k string) string {
		return map[string]string{"SYN_SCHEMAS_DIR": "/s", "HEARTH_HOME": "/d", "HEARTH_KILL_GRACE": "1s"}[k]
	})
	if strings.Join(ignored, " ") != "SYN_SCHEMAS_DIR HEARTH_KILL_GRACE" {
		t.Fatalf("ignored settings: %v", ignored)
	}
}

func TestDaemonBinaryOrder(t *testing.T) {
	s, _ := newTestShim(map[string]string{"HEARTH_DAEMON": "/opt/custom/hearthd"})
	if got, err := s.daemonBinary(); err != nil || got != "/opt/custom/hearthd" {
		t.Fatalf("HEARTH_DAEMON: %q %v", got, err)
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "hearthd")
	os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755)
	t.Setenv("PATH", dir)
	s, _ = newTestShim(nil)
	// Beside the test binary there is no hearthd, so PATH is used.
	if got, err := s.daemonBinary(); err != nil || got != fake {
		t.Fatalf("PATH: %q %v", got, err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := s.daemonBinary(); err == nil || !strings.Contains(err.Error(), "HEARTH_DAEMON") {
		t.Fatalf("not found: %v", err)
	}
}

func TestDialRefusals(t *testing.T) {
	if _, err := dial(filepath.Join(t.TempDir(), "none.sock")); !absent(err) {
		t.Fatalf("missing socket should read as absent: %v", err)
	}
	notSock := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notSock, nil, 0o600)
	if _, err := dial(notSock); err == nil {
		t.Fatal("a regular file was dialed")
	}
}

// A daemon that fails at start explains itself on stderr lines that begin
// "hearthd: "; the shim shows those, from its start on, not older ones.
func TestDaemonReason(t *testing.T) {
	log := filepath.Join(t.TempDir(), "hearthd.log")
	old := "hearthd: an older run's refusal\n"
	fresh := `{"level":"error","msg":"version guard refused to start"}` + "\n" +
		"hearthd: the data directory /h holds format 2.0; run hearthd migrate\n" +
		"hearthd: second line\n"
	if err := os.WriteFile(log, []byte(old+fresh), 0o600); err != nil {
		t.Fatal(err)
	}
	got := daemonReason(log, int64(len(old)))
	if got != "the data directory /h holds format 2.0; run hearthd migrate; second line" {
		t.Fatalf("%q", got)
	}
	if daemonReason(filepath.Join(t.TempDir(), "none"), 0) != "" {
		t.Fatal("a missing log gives a reason")
	}
}

// The hello tells the daemon which data directory this client resolved.
func TestHelloNamesTheDataDirectory(t *testing.T) {
	s, _ := newTestShim(nil)
	s.place.home = "/data/hearth"
	c, r := pipeConn(t)
	s.mu.Lock()
	s.attach(c)
	s.end.ended.Store(true) // its reader fails on the pipe's write end: no reconnect
	s.mu.Unlock()
	buf := make([]byte, 4096)
	n, _ := r.Read(buf)
	var hello struct {
		Method string
		Params map[string]any
	}
	if err := json.Unmarshal(bytes.TrimSpace(buf[:n]), &hello); err != nil || hello.Method != "$/hearth/hello" || hello.Params["home"] != "/data/hearth" {
		t.Fatalf("hello %q: %v", buf[:n], err)
	}
}

// Requests lost in a daemon restart are answered in the order they were
// sent, whatever the map's order.
func TestLostRepliesInRequestOrder(t *testing.T) {
	s, out := newTestShim(nil)
	var want []string
	for i := 0; i < 50; i++ {
		s.ledger.note([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)))
		want = append(want, fmt.Sprintf(`"id":%d,`, i))
	}
	s.answerLost(s.ledger.take(s.link.gen), "gone")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, line := range lines {
		if !strings.Contains(line, want[i]) {
			t.Fatalf("reply %d is %s, want %s", i, line, want[i])
		}
	}
}

// An older daemon answers the attach request -32601 (it knows no such
// method): the shim relays over that same connection from then on, its
// hello first. The descriptors it sent never reach such a daemon's code.
func TestAttachRefusedFallsBackToTheRelay(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	daemonEnd := os.NewFile(uintptr(fds[1]), "daemon")
	defer daemonEnd.Close()
	unix.SetNonblock(fds[0], true)
	c := localsock.FileConn(os.NewFile(uintptr(fds[0]), "shim"), localsock.Peer{})
	defer c.Close()
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	s, _ := newTestShim(nil)
	s.opts = Options{Stdin: r, Stdout: w}
	s.place.home = "/data/hearth"
	if !s.prepareDirect() {
		t.Fatal("pipes can be handed over")
	}
	got := make(chan []int, 1)
	go func() {
		buf, oob := make([]byte, 4096), make([]byte, unix.CmsgSpace(handoff.AttachFDs*4))
		n, oobn, _, _, err := unix.Recvmsg(fds[1], buf, oob, 0)
		if err != nil {
			got <- nil
			return
		}
		msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
		var passed []int
		for i := range msgs {
			f, _ := unix.ParseUnixRights(&msgs[i])
			passed = append(passed, f...)
		}
		if !strings.Contains(string(buf[:n]), `"method":"$/hearth/attach"`) {
			passed = nil
		}
		daemonEnd.Write([]byte(`{"jsonrpc":"2.0","id":"hearth-attach","error":{"code":-32601,"message":"Method not found"}}` + "\n"))
		got <- passed
	}()
	s.mu.Lock()
	how := s.attachDirect(c, new([]owedReq))
	s.mu.Unlock()
	passed := <-got
	for _, fd := range passed {
		unix.Close(fd)
	}
	if how != refused || s.direct || len(passed) != handoff.AttachFDs {
		t.Fatalf("attach: %v, direct %v, %d descriptors passed", how, s.direct, len(passed))
	}
	s.mu.Lock()
	s.attach(c)
	s.mu.Unlock()
	line, _ := bufio.NewReader(daemonEnd).ReadString('\n')
	if !strings.Contains(line, `"method":"$/hearth/hello"`) {
		t.Fatalf("after the refusal the shim sent %q", line)
	}
	s.finish(0)
}

// A daemon killed in the middle of writing a frame leaves a cut line on the
// relay's connection: the client gets the whole frames before it, never the
// cut one (the request it answered stays owed, to be answered as lost).
func TestCutFrameFromADyingDaemonIsNotForwarded(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	daemonEnd := os.NewFile(uintptr(fds[1]), "daemon")
	c := localsock.FileConn(os.NewFile(uintptr(fds[0]), "shim"), localsock.Peer{})
	defer c.Close()
	s, out := newTestShim(nil)
	s.link.gen = 2 // the connection read is an older one: lost() leaves the shim as it is
	daemonEnd.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"resu`))
	daemonEnd.Close()
	dead := make(chan struct{})
	s.readDaemon(c, 1, dead)
	<-dead
	if got := out.String(); got != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Fatalf("the client got %q", got)
	}
}

// A daemon killed with replies the relay's reader has already read ahead:
// the shim's next write to it fails first, so lost() takes the requests in
// flight while that reader still holds the reply to one of them. The client
// gets one answer to that request, never its reply and -32004 both
// (docs/decisions/0020, "Exactly one answer"). The old reader is held back
// by a client whose stdout is full, as a loaded client is.
func TestReplyReadAheadFromALostDaemonIsNotAnsweredTwice(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "hearthd.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The next daemon answers the reconnect's probe, and nothing else.
	probed := make(chan struct{})
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		sc := bufio.NewScanner(nc)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"hearth-shim-replay-1"`) {
				nc.Write([]byte(`{"jsonrpc":"2.0","id":"hearth-shim-replay-1","result":{}}` + "\n"))
				close(probed)
			}
		}
	}()

	// The client's stdout, full: the reader blocks writing the first reply.
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	size, err := unix.FcntlInt(outW.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	outW.Write(bytes.Repeat([]byte("\n"), size))

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	old := localsock.FileConn(os.NewFile(uintptr(fds[0]), "shim"), localsock.Peer{})
	daemonEnd := os.NewFile(uintptr(fds[1]), "daemon")

	s := &Shim{
		place: place{getenv: func(string) string { return "" }, socket: sock,
			home: dir, noAutostart: true}, // no owner: the shim dials the socket
		client: stdio{out: frame.NewWriter(outW), raw: outW, reading: true}, // the client's stdin is not read here
		ledger: newLedger(),
		end:    ending{done: make(chan struct{})},
	}
	s.mu.Lock()
	s.link.set(old)
	s.link.gen = 1
	s.mu.Unlock()
	for _, req := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	} {
		s.ledger.note([]byte(req))
	}
	// The daemon answers both, in one read of the shim's, and dies.
	daemonEnd.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"))
	daemonEnd.Close()
	dead := make(chan struct{})
	go s.readDaemon(old, 1, dead)
	// Reply 1 settled: the reader is writing it and holds reply 2.
	for {
		s.ledger.mu.Lock()
		_, owed := s.ledger.owed["1"]
		s.ledger.mu.Unlock()
		if !owed {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// The client's next request finds the daemon gone.
	forwarded := make(chan struct{})
	go func() {
		s.forward([]byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`))
		close(forwarded)
	}()
	select {
	case <-probed: // the reconnect took what was in flight, then probed
	case <-forwarded:
		t.Fatal("the shim did not reconnect")
	}
	var got bytes.Buffer
	drained := make(chan struct{})
	go func() { got.ReadFrom(outR); close(drained) }()
	<-forwarded
	<-dead
	s.finish(0)
	outW.Close()
	<-drained

	answers := map[string][]string{}
	for _, line := range strings.Split(got.String(), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("the client got %q", line)
		}
		what := "result"
		if m.Error != nil {
			what = fmt.Sprint(m.Error.Code)
		}
		answers[string(m.ID)] = append(answers[string(m.ID)], what)
	}
	for _, id := range []string{"1", "2", "3"} {
		if len(answers[id]) != 1 {
			t.Errorf("request %s answered %d times: %v", id, len(answers[id]), answers[id])
		}
	}
	if fmt.Sprint(answers["1"], answers["3"]) != "[result] [-32004]" {
		t.Errorf("answers %v", answers)
	}
}

// A relaying shim forwards none of its client's notifications of hearth's
// own: the hello that opens the connection is the shim's alone.
func TestClientInternalNotificationsAreNotForwarded(t *testing.T) {
	for line, want := range map[string]bool{
		`{"jsonrpc":"2.0","method":"$/hearth/hello","params":{}}`:           true,
		`{"jsonrpc":"2.0","method":"$/hearth/tooLarge"}`:                    true,
		`{"jsonrpc":"2.0","method":"$/hearth/\u0068ello","params":{}}`:      true,
		`{"jsonrpc":"2.0","id":1,"method":"$/hearth/handover","params":{}}`: false, // refused by the daemon, in its place
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`:            false,
		`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}`:    false,
		`not json`: false,
	} {
		if got := clientInternal([]byte(line)); got != want {
			t.Errorf("%s: dropped %v, want %v", line, got, want)
		}
	}
}
