//go:build unix

package test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// freeLoopbackPort is a port nothing listens on now: the daemon is
// configured with it, so the one started after a crash listens on the same.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// restartableHTTPDaemon starts hearthd serve with HTTP on port, its home,
// state and socket all under dir: a daemon started again with the same dir
// and port is the same user's next daemon.
func restartableHTTPDaemon(t *testing.T, dir string, port int) *httpDaemon {
	t.Helper()
	d := startDaemonAt(t, filepath.Join(dir, "hearthd.sock"),
		"HOME="+dir, "HEARTH_HOME="+filepath.Join(dir, "home"),
		"HEARTH_HTTP_LISTEN=127.0.0.1:"+strconv.Itoa(port))
	return httpOf(t, d)
}

// kill9 kills the daemon as a crash would: nothing of it runs afterwards.
func (d *daemonProc) kill9(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGKILL)
	err := <-d.done
	d.done <- err // for the cleanup's receive
}

func statusPID(t *testing.T, res *mcp.CallToolResult) float64 {
	t.Helper()
	st, _ := res.StructuredContent.(map[string]any)
	pid, _ := st["pid"].(float64)
	if pid == 0 {
		t.Fatalf("daemon_status without a pid: %v", res.StructuredContent)
	}
	return pid
}

// TestHTTPSessionSurvivesKill9: a 2025 session of the Go SDK's streamable
// client and one of the TypeScript SDK v1's carry on across a kill -9 of
// the daemon and the start of another on the same port: the same client
// objects call again, with no code of their own, and reach the new daemon.
// The session's record is private (0600 in a 0700 directory); a DELETE
// removes it; a drain (SIGTERM) keeps it for the next daemon.
func TestHTTPSessionSurvivesKill9(t *testing.T) {
	dir := shortTempDir(t)
	port := freeLoopbackPort(t)
	d := restartableHTTPDaemon(t, dir, port)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-survive-go", Version: "1"}, nil)
	// Pinned to 2025-11-25: the SDK would speak 2026-07-28, whose POSTs
	// are sessions of their own, with nothing to outlive a daemon.
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.url, HTTPClient: &http.Client{Transport: bearer{d.token}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" || cs.ID() == "" {
		t.Fatalf("the Go SDK client speaks %q, session %q: not a 2025 session", v, cs.ID())
	}
	first := statusPID(t, callTool(t, cs, "daemon_status", map[string]any{}))

	// The TypeScript SDK v1 client, paused between its two calls.
	node := needNode(t)
	script, _ := filepath.Abs(filepath.Join("ts", "survive.mjs"))
	ts := exec.Command(node, script, d.url, d.token)
	tsIn, _ := ts.StdinPipe()
	tsOut, _ := ts.StdoutPipe()
	var tsErr lockedBuffer
	ts.Stderr = &tsErr
	if err := ts.Start(); err != nil {
		t.Fatal(err)
	}
	defer ts.Process.Kill()
	lines := bufio.NewScanner(tsOut)
	type tsCall struct {
		Phase, SessionID, Error string
		OK                      bool
		PID                     float64
	}
	readTS := func() tsCall {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("survive.mjs printed nothing more: %v\n%s", lines.Err(), tsErr.String())
		}
		var c tsCall
		if err := json.Unmarshal(lines.Bytes(), &c); err != nil {
			t.Fatalf("survive.mjs: %q: %v", lines.Text(), err)
		}
		return c
	}
	tsFirst := readTS()
	if !tsFirst.OK || tsFirst.PID != first || tsFirst.SessionID == "" {
		t.Fatalf("TypeScript client's first call: %+v\n%s", tsFirst, tsErr.String())
	}

	d.kill9(t)
	d2 := restartableHTTPDaemon(t, dir, port)
	if d2.url != d.url {
		t.Fatalf("the new daemon serves %s, the old one served %s", d2.url, d.url)
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel2()
	res, err := cs.CallTool(ctx2, &mcp.CallToolParams{Name: "daemon_status", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("Go SDK client after kill -9 and restart: %v", err)
	}
	if second := statusPID(t, res); second == first {
		t.Fatalf("the call after the restart reached the old daemon (pid %v)", second)
	}
	// The session taken back knows its client.
	found := false
	for _, c := range res.StructuredContent.(map[string]any)["clients"].([]any) {
		c := c.(map[string]any)
		found = found || (c["transport"] == "http" && c["name"] == "e2e-survive-go")
	}
	if !found {
		t.Fatalf("the session taken back does not say who its client is: %v", res.StructuredContent.(map[string]any)["clients"])
	}

	// The sessions are kept, privately.
	keep := filepath.Join(dir, ".local", "state", "hearth", "http-sessions")
	if fi, err := os.Stat(keep); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v %v", keep, err, fi)
	}
	rec := filepath.Join(keep, tsFirst.SessionID+".json")
	if fi, err := os.Stat(rec); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v", rec, err, fi)
	}

	tsIn.Write([]byte("go on\n"))
	tsSecond := readTS()
	if !tsSecond.OK || tsSecond.PID == first || tsSecond.PID == 0 || tsSecond.SessionID != tsFirst.SessionID {
		t.Fatalf("TypeScript client after kill -9 and restart: %+v\n%s", tsSecond, tsErr.String())
	}
	if err := ts.Wait(); err != nil {
		t.Fatalf("survive.mjs: %v\n%s", err, tsErr.String())
	}
	// Its close sent DELETE: the record is gone.
	if _, err := os.Stat(rec); !os.IsNotExist(err) {
		t.Fatalf("the record of a deleted session is still there: %v", err)
	}
	// A daemon that drains (SIGTERM: a restart, an upgrade) keeps the
	// sessions for the next one.
	goRec := filepath.Join(keep, cs.ID()+".json")
	d2.stop(t)
	if _, err := os.Stat(goRec); err != nil {
		t.Fatalf("the session's record after a drain: %v", err)
	}
	d3 := restartableHTTPDaemon(t, dir, port)
	res, err = cs.CallTool(ctx2, &mcp.CallToolParams{Name: "daemon_status", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("Go SDK client after SIGTERM and restart: %v", err)
	}
	if third := statusPID(t, res); third == first || third == tsSecond.PID {
		t.Fatalf("the call after the second restart reached an earlier daemon (pid %v)", third)
	}
	cs.Close()
	if _, err := os.Stat(goRec); !os.IsNotExist(err) {
		t.Fatalf("the record of a session its client closed is still there: %v", err)
	}
	d3.stop(t)
}
