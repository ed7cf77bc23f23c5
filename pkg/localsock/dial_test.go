//go:build linux

package localsock

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serveEnv makes the test binary a server of the socket it names: the
// process of another user that TestDialRefusesAServerOfAnotherUser needs.
const serveEnv = "LOCALSOCK_TEST_SERVE"

func TestMain(m *testing.M) {
	if path := os.Getenv(serveEnv); path != "" {
		serveForTest(path)
		return
	}
	os.Exit(m.Run())
}

// serveForTest answers "hello\n" to every connection on path, until killed.
func serveForTest(path string) {
	ln, err := Listen(path, Options{Mode: 0o666})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("ready\n")
	for {
		c, err := ln.Accept()
		if err != nil {
			continue
		}
		c.Write([]byte("hello\n"))
		c.Close()
	}
}

// A dialed connection and its accepted end each know the other's process.
func TestDialAndAcceptKnowEachOther(t *testing.T) {
	path := socketPath(t)
	ln, err := Listen(path, private)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Remove()
	accepted := make(chan *Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	c, err := Dial(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := <-accepted
	defer s.Close()
	me, _ := Me()
	for name, p := range map[string]Peer{"dialed": c.Peer, "accepted": s.Peer} {
		if p.PID != os.Getpid() || p.User != me {
			t.Errorf("%s: peer %+v, want pid %d user %s", name, p, os.Getpid(), me)
		}
		if err := Ours(p, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Both ways, then the half-close: the server reads the end of input and
	// can still answer.
	c.Write([]byte("ping\n"))
	if line, _ := bufio.NewReader(s).ReadString('\n'); line != "ping\n" {
		t.Fatalf("server read %q", line)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(s); err != nil || len(b) != 0 {
		t.Fatalf("after CloseWrite the server read %q, %v", b, err)
	}
	s.Write([]byte("pong\n"))
	s.Close()
	if b, _ := io.ReadAll(c); string(b) != "pong\n" {
		t.Fatalf("client read %q", b)
	}
	// Closing the listener ends a waiting Accept with ErrClosed.
	go func() { time.Sleep(50 * time.Millisecond); ln.Close() }()
	if _, err := ln.Accept(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
}

func TestDialNobodyServes(t *testing.T) {
	dir := shortDir(t)
	if _, err := Dial(filepath.Join(dir, "none.sock")); !Absent(err) {
		t.Fatalf("no socket file: %v, want Absent", err)
	}
	ln, err := Listen(filepath.Join(dir, "s.sock"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // the file stays, nobody accepts
	if _, err := Dial(filepath.Join(dir, "s.sock")); !Absent(err) {
		t.Fatalf("a socket nobody accepts on: %v, want Absent", err)
	}
	ln.Remove()
}

// A socket file another user owns is refused before connecting.
func TestDialRefusesASocketOfAnotherUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a socket to another user")
	}
	path := filepath.Join(shortDir(t), "s.sock")
	ln, err := Listen(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Remove()
	os.Chown(path, 65534, 65534)
	_, err = Dial(path)
	if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Fatalf("got %v", err)
	}
}

// A socket file of ours, served by a process of another user (it bound the
// socket; root gave the file to us afterwards), is refused once connected,
// before a byte is sent: the file's owner alone is not the check.
func TestDialRefusesAServerOfAnotherUser(t *testing.T) {
	path := foreignServer(t)
	_, err := Dial(path)
	if !errors.Is(err, ErrNotOurs) || !strings.Contains(err.Error(), "runs as uid 65534, not as you (uid 0)") {
		t.Fatalf("got %v", err)
	}
	// What Dial refused does answer: the refusal was the peer check's.
	if _, answers := Answers(path); !answers {
		t.Fatal("the other user's server does not answer")
	}
}

// foreignServer starts the test binary as uid 65534 serving a socket whose
// file then belongs to this process's user (root), and returns its path.
func foreignServer(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to run a server as another user")
	}
	dir := shortDir(t)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "server")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	sockDir := filepath.Join(dir, "s")
	os.Mkdir(sockDir, 0o755)
	os.Chown(sockDir, 65534, 65534)
	path := filepath.Join(sockDir, "s.sock")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), serveEnv+"="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the other user's server did not start: %q", line)
	}
	// The directory and the file become ours: only the peer is another's.
	if err := os.Chown(path, 0, 0); err != nil {
		t.Fatal(err)
	}
	os.Chown(sockDir, 0, 0)
	if fi, err := os.Stat(path); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Fatalf("socket file: %v", err)
	}
	return path
}
