//go:build unix

package test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keptOpen is a client's stdout it keeps open when the SDK closes it: the
// client's process lives on with its input closed.
type keptOpen struct{ io.Reader }

func (keptOpen) Close() error { return nil }

// TestHostedClientClosingInputCancelsUpstream: a Go SDK stdio client
// through `hearth run` whose stdin closes while a call is in flight (it
// closes it, then cancels the call: no notifications/cancelled can be sent
// any more), its stdout still open, leaves no call running upstream. hearth cancels upstream what
// the client had in flight when its input ended, as a server spawned
// directly would die with its stdin, and answers it with an error while the
// client's stdout is open.
func TestHostedClientClosingInputCancelsUpstream(t *testing.T) {
	// A drain timeout longer than the tool's minute: the session must not
	// end on its own while the call runs.
	env, _, state := shimEnv(t)
	os.MkdirAll(filepath.Join(state, ".config", "hearth"), 0o700)
	if err := os.WriteFile(filepath.Join(state, ".config", "hearth", "config.toml"), []byte("drain_timeout = \"2m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin.hearth, "run", "--", filepath.Join(bin.dir, "hostedserver"))
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hosted-eof", Version: "1"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: keptOpen{stdout}, Writer: stdin}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(shortTempDir(t), "block.log")
	read := func() string { b, _ := os.ReadFile(record); return string(b) }

	callCtx, cancelCall := context.WithCancel(ctx)
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "block", Arguments: map[string]any{"record": record}})
		called <- err
	}()
	waitUntil(t, func() bool { return strings.Contains(read(), "started") })
	stdin.Close()
	cancelCall()
	<-called

	waitUntil(t, func() bool { return strings.Contains(read(), "cancelled") })
	if got := read(); strings.Contains(got, "completed") {
		t.Fatalf("the upstream call ran to completion: %q", got)
	}
	// The server is still there for the next client: only the call ended.
	next := hostedClient(t, env, nil, "2025-11-25")
	if out, isErr := callText(t, next, "echo", map[string]any{"text": "still here"}); isErr || !strings.HasPrefix(out, "still here pid=") {
		t.Fatalf("echo after the cancelled call: %q %v", out, isErr)
	}
}
