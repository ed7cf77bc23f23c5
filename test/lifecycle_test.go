//go:build unix

package test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSIGTERMCleansUp: SIGTERM stops accepting, removes the readiness file
// and the socket, logs mcp:shutdown with the final counters, exits 0.
func TestSIGTERMCleansUp(t *testing.T) {
	d := startDaemon(t)
	c := dialRaw(t, d.socket)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	c.recv()
	if fi, err := os.Stat(d.socket); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi.Mode(), err)
	}
	d.stop(t)
	for _, p := range []string{d.socket, d.ready} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left behind", p)
		}
	}
	log := d.stderr.String()
	for _, want := range []string{"mcp:ready mode=socket path=" + d.socket, "mcp:shutdown mode=socket", `"total_requests":1`, `"ts":"`} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	// Every stderr line is a JSON log record with an ISO-8601 UTC time.
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		if !strings.HasPrefix(line, "{") || !strings.Contains(line, `Z","`) {
			t.Errorf("not a UTC JSON log line: %s", line)
		}
	}
}

// TestSecondInstanceRefused: a second daemon for the same data directory
// and socket exits with a clear message and leaves the first one serving.
func TestSecondInstanceRefused(t *testing.T) {
	d := startDaemon(t)
	second := exec.Command(bin.hearthd, "serve")
	second.Env = d.cmd.Env
	var stderr bytes.Buffer
	second.Stderr = &stderr
	err := second.Run()
	var ee *exec.ExitError
	// The first daemon owns the data directory: the second names it.
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(stderr.String(), "is owned by hearthd socket (pid "+strconv.Itoa(d.cmd.Process.Pid)) ||
		!strings.Contains(stderr.String(), d.socket) {
		t.Fatalf("second daemon: %v\n%s", err, stderr.String())
	}
	c := dialRaw(t, d.socket)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if line := c.recv(); !strings.Contains(line, `"result"`) {
		t.Fatalf("first daemon disturbed: %s", line)
	}
}

// TestStdioEOFExitsCleanly: stdin closing ends a stdio daemon with exit 0
// after every request read has been answered.
func TestStdioEOFExitsCleanly(t *testing.T) {
	cmd := exec.Command(bin.hearthd) // bare: MCP_ENDPOINT defaults to stdio
	cmd.Env = append(os.Environ(), "MCP_ENDPOINT=", "HEARTH_HOME="+t.TempDir())
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("exit: %v\n%s", err, stderr.String())
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"
	if stdout.String() != want {
		t.Fatalf("stdout %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "mcp:ready mode=stdio") || !strings.Contains(stderr.String(), "mcp:shutdown mode=stdio") {
		t.Fatalf("stderr:\n%s", stderr.String())
	}
}

// TestStdioBrokenStdoutExitsCleanly: a client that stops reading ends the
// daemon (exit 0), not a crash on SIGPIPE and not a hang.
func TestStdioBrokenStdoutExitsCleanly(t *testing.T) {
	cmd := exec.Command(bin.hearthd, "stdio")
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+t.TempDir())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close() // the client goes away without closing our stdin
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}()
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("daemon kept running with a broken stdout\n%s", stderr.String())
	}
}

// TestStdioSIGTERMExits: a signal ends a stdio daemon even while stdin is
// still open and idle.
func TestStdioSIGTERMExits(t *testing.T) {
	cmd := exec.Command(bin.hearthd, "stdio")
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+t.TempDir(), "MCP_READY_FILE="+filepath.Join(t.TempDir(), "ready"))
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "mcp:ready") {
		if time.Now().After(deadline) {
			t.Fatal("not ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("stdio daemon ignored SIGTERM\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), `"reason":"signal"`) {
		t.Fatalf("stderr:\n%s", stderr.String())
	}
}

// TestManyClientsAtOnce: 64 concurrent clients each complete a session.
func TestManyClientsAtOnce(t *testing.T) {
	d := startDaemon(t)
	errs := make(chan error, 64)
	for i := 0; i < 64; i++ {
		go func() { errs <- pipeline(d.socket, i, 50, true) }()
	}
	for i := 0; i < 64; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
