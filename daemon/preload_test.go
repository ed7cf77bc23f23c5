//go:build linux

package daemon

import (
	"bufio"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// slowFamily is a family whose slow part (as the schema catalog's compile)
// is left for later: its load starts when the daemon preloads it or when
// its tool needs it, whichever comes first, and finishes only when the
// test lets it (gate).
type slowFamily struct {
	entered chan struct{} // closed when the load starts
	gate    chan struct{} // closed by the test: the load may finish
	once    sync.Once
	answer  string
}

func (f *slowFamily) loaded() {
	f.once.Do(func() {
		close(f.entered)
		<-f.gate
		f.answer = "the loaded answer"
	})
}

func (f *slowFamily) Preload()     { f.loaded() }
func (f *slowFamily) Close() error { return nil }

type slowAnswer struct {
	Answer string `json:"answer" jsonschema:"What the loaded family says."`
}

func (f *slowFamily) Tools() []tool.Tool {
	return []tool.Tool{tool.For(tool.Tool{
		Name:          "slow_answer",
		Description:   "Answers from the slow part of its family.",
		InputSchema:   tool.Object(),
		SchemaVersion: 1,
	}, func(ctx context.Context, call *tool.Call, _ struct{}) (slowAnswer, error) {
		f.loaded()
		return slowAnswer{Answer: f.answer}, nil
	})}
}

// TestDaemonServesBeforeAFamilysSlowPart: the daemon is ready and answers
// initialize, tools/list and ping while a family's slow part still loads,
// it starts that load itself once it serves (Preload), and a call of the
// family's tool made meanwhile waits for the load and gets the loaded
// answer, not an error (docs/architecture.md, "The daemon's start").
func TestDaemonServesBeforeAFamilysSlowPart(t *testing.T) {
	fam := &slowFamily{entered: make(chan struct{}), gate: make(chan struct{})}
	released := false
	release := func() {
		if !released {
			released = true
			close(fam.gate)
		}
	}
	t.Cleanup(release) // before the daemon's end, which waits for its preloads
	cfg := socketConfig(t)
	d, err := New(Options{Config: cfg, Log: zap.NewNop(), Env: tool.Env{}, Openers: []tool.Opener{func(tool.Env) (tool.Family, error) { return fam, nil }}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() {
		release()
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitReady(t, cfg.ReadyFile)
	// The daemon starts the slow part once it serves, nobody having asked.
	select {
	case <-fam.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the daemon serves but did not start the family's slow part")
	}

	conn, err := net.Dial("unix", cfg.SocketPath)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	in := bufio.NewScanner(conn)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	recv := func() string {
		t.Helper()
		if !in.Scan() {
			t.Fatalf("no reply: %v", in.Err())
		}
		return in.Text()
	}
	send := func(line string) { conn.Write([]byte(line + "\n")) }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := recv(); !strings.Contains(r, `"id":1,"result"`) {
		t.Fatalf("initialize while the family loads: %s", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r := recv(); !strings.Contains(r, `"id":2,"result"`) || !strings.Contains(r, `"slow_answer"`) {
		t.Fatalf("tools/list while the family loads: %s", r)
	}
	// The call waits for the load: the ping sent after it is answered
	// first, and the call's answer is the loaded one.
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow_answer","arguments":{}}}`)
	send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if r := recv(); r != `{"jsonrpc":"2.0","id":4,"result":{}}` {
		t.Fatalf("the ping after the waiting call: %s", r)
	}
	release()
	if r := recv(); !strings.Contains(r, `"id":3,"result"`) || !strings.Contains(r, `the loaded answer`) || strings.Contains(r, `"isError":true`) {
		t.Fatalf("the call made while the family loaded: %s", r)
	}
}
