//go:build unix

package test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// bin holds the paths of the binaries built once for the whole run.
var bin struct {
	dir     string
	hearthd string
	hearth  string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hearth-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// World-readable so a test can run a client as another user.
	os.Chmod(dir, 0o755)
	bin.dir = dir
	bin.hearthd = filepath.Join(dir, "hearthd")
	bin.hearth = filepath.Join(dir, "hearth") // beside hearthd, where the shim looks first
	for out, pkg := range map[string]string{
		bin.hearthd:                        "github.com/hearth-mcp/hearth/daemon/hearthd",
		bin.hearth:                         "github.com/hearth-mcp/hearth/shim/hearth",
		filepath.Join(dir, "rawping"):      "github.com/hearth-mcp/hearth/test/internal/rawping",
		filepath.Join(dir, "hostedserver"): "github.com/hearth-mcp/hearth/test/internal/hostedserver",
		filepath.Join(dir, "recordserver"): "github.com/hearth-mcp/hearth/test/internal/recordserver",
		filepath.Join(dir, "leaver"):       "github.com/hearth-mcp/hearth/test/internal/leaver",
	} {
		if o, err := exec.Command("go", "build", "-tags", "hearth_resultcheck", "-o", out, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, o)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// inCI reports whether the run must not skip tests for missing parts.
func inCI() bool { return os.Getenv("CI") == "true" }

// needOrSkip skips a test whose optional part is missing, except in CI,
// where a missing part is a failure.
func needOrSkip(t *testing.T, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if inCI() {
		t.Fatalf("%s is missing; CI must have it (.ci/run installs it)", what)
	}
	t.Skipf("%s is missing; skipping (CI installs it)", what)
}

// lockedBuffer collects a process's stderr safely.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// daemonProc is a running `hearthd serve`.
type daemonProc struct {
	cmd    *exec.Cmd
	socket string
	ready  string
	stderr *lockedBuffer
	done   chan error
}

// shortTempDir returns a temp dir whose paths fit in sun_path.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "he")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startDaemon starts `hearthd serve` in a fresh runtime directory and waits
// for its readiness file.
func startDaemon(t *testing.T, extraEnv ...string) *daemonProc {
	t.Helper()
	return startDaemonAt(t, "", extraEnv...)
}

// startDaemonAt is startDaemon with an explicit MCP_SOCKET_PATH ("" for the default).
func startDaemonAt(t *testing.T, socket string, extraEnv ...string) *daemonProc {
	t.Helper()
	runtime := shortTempDir(t)
	d := &daemonProc{
		stderr: &lockedBuffer{},
		done:   make(chan error, 1),
	}
	if socket != "" {
		d.socket = socket
		d.ready = filepath.Join(runtime, "hearthd.ready")
	}
	d.cmd = exec.Command(bin.hearthd, "serve")
	d.cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"),
		"HOME="+runtime, // no config file: the user's must not leak in
		"MCP_SOCKET_PATH="+socket, "MCP_READY_FILE="+d.ready)
	d.cmd.Env = append(d.cmd.Env, extraEnv...)
	if socket == "" { // where the daemon's own environment puts it
		d.socket = defaultSocket(t, d.cmd.Env)
		d.ready = filepath.Join(filepath.Dir(d.socket), endpoint.ReadyName(d.socket))
	}
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
		if t.Failed() {
			t.Logf("hearthd stderr:\n%s", d.stderr.String())
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(d.ready); err == nil {
			return d
		}
		select {
		case err := <-d.done:
			t.Fatalf("hearthd exited before ready: %v\n%s", err, d.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("hearthd not ready in 15s:\n%s", d.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (d *daemonProc) stop(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err // for the cleanup's receive
		if err != nil {
			t.Fatalf("hearthd exited with %v\n%s", err, d.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("hearthd did not stop on SIGTERM\n%s", d.stderr.String())
	}
}

// rawConn is a line-level client on the socket for what no SDK would send.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	sc *bufio.Scanner
}

func dialRaw(t *testing.T, socket string) *rawConn {
	t.Helper()
	c, err := net.Dial("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	return &rawConn{t: t, c: c, sc: sc}
}

func (r *rawConn) send(line string) {
	r.t.Helper()
	if _, err := r.c.Write([]byte(line + "\n")); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *rawConn) recv() string {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if !r.sc.Scan() {
		r.t.Fatalf("connection ended: %v", r.sc.Err())
	}
	return r.sc.Text()
}

func (r *rawConn) initialize() {
	r.t.Helper()
	r.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if line := r.recv(); !strings.Contains(line, `"result"`) {
		r.t.Fatalf("initialize: %s", line)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

var _ = context.Background

// defaultSocket is the socket a daemon or shim with environment env uses
// (the last of a repeated variable wins, as for exec).
func defaultSocket(t *testing.T, env []string) string {
	t.Helper()
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	path, _, err := endpoint.SocketPath(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// portableEnv is the switch that selects on Linux the mechanisms other
// systems use (pkg/portable, docs/decisions/0044-platforms.md). CI runs the
// end-to-end tests that carry hearth's promises a second time with it set
// (.ci/run, docs/development.md); every environment the tests build keeps
// it, so the daemons and shims they start run the portable path.
const portableEnv = "HEARTH_PORTABLE"

// portableRun reports whether this run selected the portable mechanisms.
func portableRun() bool { return os.Getenv(portableEnv) == "1" }
