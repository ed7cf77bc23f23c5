//go:build linux

package daemon

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/localsock"
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

func TestRunRefusesZeroToolsAndTwice(t *testing.T) {
	empty := &Daemon{reg: tool.NewRegistry("x"), log: zap.NewNop()}
	if err := empty.Run(context.Background()); !errors.Is(err, ErrNoTools) {
		t.Fatalf("zero tools: %v", err)
	}
	cfg := socketConfig(t)
	d, err := New(Options{Config: cfg, Log: zap.NewNop()})
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
	d, err := New(Options{Config: cfg, Log: zap.NewNop()})
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

// A daemon whose socket file is removed (or replaced) stops, so that
// clients reach a new one instead of a socket nobody serves.
func TestDaemonStopsWhenItsSocketIsRemoved(t *testing.T) {
	cfg := socketConfig(t)
	d, err := New(Options{Config: cfg, Log: zap.NewNop()})
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
	case <-time.After(5 * localsock.CheckEvery):
		t.Fatal("the daemon kept running without its socket")
	}
}

// Past max_connections a client is told why, in a frame, and closed; the
// connections already served are not disturbed.
func TestConnectionCap(t *testing.T) {
	cfg := socketConfig(t)
	cfg.MaxConnections = 2
	d, err := New(Options{Config: cfg, Log: zap.NewNop()})
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
