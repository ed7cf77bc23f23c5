//go:build linux

package daemon

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

func socketConfig(t *testing.T) Config {
	t.Helper()
	dir, err := os.MkdirTemp("", "hd") // short: sun_path is 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg, err := LoadConfig(ModeSocket, env(map[string]string{"XDG_RUNTIME_DIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestListenPermissions(t *testing.T) {
	cfg := socketConfig(t)
	ln, err := listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.close()
	fi, err := os.Stat(cfg.SocketPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v", fi.Mode())
	}
	di, _ := os.Stat(filepath.Dir(cfg.SocketPath))
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v", di.Mode())
	}
}

func TestListenSocketModeOverride(t *testing.T) {
	cfg := socketConfig(t)
	cfg.SocketMode = 0o660
	ln, err := listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.close()
	if fi, _ := os.Stat(cfg.SocketPath); fi.Mode().Perm() != 0o660 {
		t.Fatalf("mode %v", fi.Mode())
	}
}

func TestListenTightensOurDirectory(t *testing.T) {
	cfg := socketConfig(t)
	dir := filepath.Dir(cfg.SocketPath)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	ln, err := listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.close()
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Fatalf("directory left at %v", di.Mode())
	}
}

func TestListenRefusesForeignDirectory(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown a directory to another user")
	}
	cfg := socketConfig(t)
	dir := filepath.Dir(cfg.SocketPath)
	os.MkdirAll(dir, 0o700)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := listen(cfg)
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Fatalf("want refusal, got %v", err)
	}
}

func TestListenRefusesSymlinkDirectory(t *testing.T) {
	cfg := socketConfig(t)
	dir := filepath.Dir(cfg.SocketPath)
	os.Symlink(t.TempDir(), dir)
	if _, err := listen(cfg); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("want refusal, got %v", err)
	}
}

func TestListenSingleInstance(t *testing.T) {
	cfg := socketConfig(t)
	first, err := listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = listen(cfg)
	if !errors.Is(err, ErrAlreadyRunning) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second listen: %v", err)
	}
	first.close()
	again, err := listen(cfg)
	if err != nil {
		t.Fatalf("after the first closed: %v", err)
	}
	again.close()
}

func TestListenRemovesStaleSocket(t *testing.T) {
	cfg := socketConfig(t)
	os.MkdirAll(filepath.Dir(cfg.SocketPath), 0o700)
	// A socket file nobody serves, as a crashed daemon leaves it.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: cfg.SocketPath, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()
	ln, err := listen(cfg)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	ln.close()
	if _, err := os.Lstat(cfg.SocketPath); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("socket not unlinked on close: %v", err)
	}
}

func TestListenKeepsNonSocket(t *testing.T) {
	cfg := socketConfig(t)
	os.MkdirAll(filepath.Dir(cfg.SocketPath), 0o700)
	os.WriteFile(cfg.SocketPath, []byte("precious"), 0o600)
	if _, err := listen(cfg); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("want refusal, got %v", err)
	}
	if b, _ := os.ReadFile(cfg.SocketPath); string(b) != "precious" {
		t.Fatal("a regular file was replaced")
	}
}

func TestRunRefusesZeroToolsAndTwice(t *testing.T) {
	empty := &Daemon{reg: tool.NewRegistry("x"), log: zap.NewNop()}
	if err := empty.Run(context.Background()); !errors.Is(err, ErrNoTools) {
		t.Fatalf("zero tools: %v", err)
	}
	cfg := socketConfig(t)
	d, err := New(cfg, zap.NewNop(), tool.Env{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitReady(t, cfg.ReadyFile)
	if err := d.Run(context.Background()); !errors.Is(err, ErrRunning) {
		t.Fatalf("second Run: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func waitReady(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not written", path)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestSocketLifecycle(t *testing.T) {
	cfg := socketConfig(t)
	d, err := New(cfg, zap.NewNop(), tool.Env{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitReady(t, cfg.ReadyFile)

	b, _ := os.ReadFile(cfg.ReadyFile)
	fields := strings.Fields(string(b))
	if len(fields) != 2 || fields[0] != strconv.Itoa(os.Getpid()) || !strings.HasSuffix(string(b), "Z\n") {
		t.Fatalf("ready file %q", b)
	}
	if _, err := time.Parse(time.RFC3339, fields[1]); err != nil {
		t.Fatalf("ready time: %v", err)
	}
	conn, err := net.Dial("unix", cfg.SocketPath)
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
	buf := make([]byte, 256)
	n, _ := conn.Read(buf)
	if got := string(buf[:n]); got != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Fatalf("ping: %q", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{cfg.ReadyFile, cfg.SocketPath} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s left behind: %v", p, err)
		}
	}
	// The open connection was closed by the drain.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(buf); err == nil {
		t.Fatal("connection still open after shutdown")
	}
	_ = syscall.Getuid
}

// An explicit MCP_SOCKET_PATH may be in a shared directory only where no
// other user can replace the socket.
func TestListenChecksAnExplicitDirectory(t *testing.T) {
	base := shortDir(t)
	cases := []struct {
		name string
		mode os.FileMode
		uid  int
		want string // "" accepted
	}{
		{"own 0700", 0o700, -1, ""},
		{"sticky and world-writable (like /tmp)", 0o777 | os.ModeSticky, -1, ""},
		{"world-writable, not sticky", 0o777, -1, "writable by others and not sticky"},
		{"group-writable, not sticky", 0o770, -1, "writable by others and not sticky"},
		{"another user's", 0o755, 65534, "belongs to uid 65534"},
	}
	for i, c := range cases {
		if c.uid >= 0 && os.Getuid() != 0 {
			continue // needs root to give a directory away
		}
		dir := filepath.Join(base, strconv.Itoa(i))
		os.Mkdir(dir, 0o700)
		if err := os.Chmod(dir, c.mode); err != nil {
			t.Fatal(err)
		}
		if c.uid >= 0 {
			os.Chown(dir, c.uid, c.uid)
		}
		cfg, err := LoadConfig(ModeSocket, env(map[string]string{"MCP_SOCKET_PATH": filepath.Join(dir, "s.sock")}))
		if err != nil {
			t.Fatal(err)
		}
		ln, err := listen(cfg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
		if ln != nil {
			ln.close()
		}
	}
}

// A daemon whose socket file is removed (or replaced) stops, so that
// clients reach a new one instead of a socket nobody serves.
func TestDaemonStopsWhenItsSocketIsRemoved(t *testing.T) {
	cfg := socketConfig(t)
	d, err := New(cfg, zap.NewNop(), tool.Env{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- d.Run(context.Background()) }()
	waitReady(t, cfg.ReadyFile)
	os.Remove(cfg.SocketPath)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * socketCheckEvery):
		t.Fatal("the daemon kept running without its socket")
	}
}

func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "hd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// Past max_connections a client is told why, in a frame, and closed; the
// connections already served are not disturbed.
func TestConnectionCap(t *testing.T) {
	cfg := socketConfig(t)
	cfg.MaxConnections = 2
	d, err := New(cfg, zap.NewNop(), tool.Env{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitReady(t, cfg.ReadyFile)
	ping := func(c net.Conn) string {
		c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 512)
		n, _ := c.Read(buf)
		return string(buf[:n])
	}
	var open []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("unix", cfg.SocketPath)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if got := ping(c); !strings.Contains(got, `"result":{}`) {
			t.Fatalf("connection %d: %q", i, got)
		}
		open = append(open, c)
	}
	extra, err := net.Dial("unix", cfg.SocketPath)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	extra.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(extra)
	if !strings.Contains(string(b), `"code":-32001`) || !strings.Contains(string(b), "max_connections") || !strings.Contains(string(b), "QUEUE_OVERLOADED") {
		t.Fatalf("the connection past the cap got %q", b)
	}
	if got := ping(open[0]); !strings.Contains(got, `"result":{}`) {
		t.Fatalf("a served connection was disturbed: %q", got)
	}
	open[1].Close() // a place frees up
	waitFor(t, func() bool { return d.conns.Load() < 2 })
	c, err := net.Dial("unix", cfg.SocketPath)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := ping(c); !strings.Contains(got, `"result":{}`) {
		t.Fatalf("after a client left: %q", got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
