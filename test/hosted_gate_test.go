//go:build unix

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gateOfStatus reads the gate of the hosted instances in hearthd status
// --json: the most holders and waiters any instance shows, and how many
// instances there are.
func gateOfStatus(t *testing.T, env []string) (holders, waiting, instances int) {
	t.Helper()
	var st struct {
		Hosted []struct {
			Gate *struct {
				Holders []string
				Waiting int
			}
		}
	}
	if err := json.Unmarshal(statusJSON(t, env), &st); err != nil {
		t.Fatal(err)
	}
	for _, h := range st.Hosted {
		if h.Gate != nil {
			holders, waiting = max(holders, len(h.Gate.Holders)), max(waiting, h.Gate.Waiting)
		}
	}
	return holders, waiting, len(st.Hosted)
}

// connectLater connects a go-sdk client through cmd in the background (it
// may wait at a gate) and returns where the session comes.
func connectLater(t *testing.T, cmd *exec.Cmd) chan *mcp.ClientSession {
	ch := make(chan *mcp.ClientSession, 1)
	go func() {
		cl := mcp.NewClient(&mcp.Implementation{Name: "gated", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Errorf("connect: %v", err)
			close(ch)
			return
		}
		ch <- cs
	}()
	return ch
}

func waitStatus(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func gatedEcho(t *testing.T, cs *mcp.ClientSession, name string) string {
	t.Helper()
	out, isErr := callText(t, cs, "echo", map[string]any{"text": name})
	f := strings.Fields(out)
	if isErr || len(f) != 2 || f[0] != name {
		t.Fatalf("%s: echo %q", name, out)
	}
	return f[1]
}

// Three go-sdk clients of an exclusive server (hearth run --share
// exclusive): the first is served, the other two wait (status says so),
// each is served in turn as the one before it leaves, by the one server
// process; none is lost (docs/decisions/0074-exclusive-and-capped-servers.md).
func TestHostedExclusiveServerServesOneClientAtATime(t *testing.T) {
	env, _, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	run := func() *exec.Cmd {
		cmd := exec.Command(bin.hearth, "run", "--share", "exclusive", "--", server)
		cmd.Env = env
		return cmd
	}
	first := <-connectLater(t, run())
	if first == nil {
		t.FailNow()
	}
	second := connectLater(t, run())
	waitStatus(t, "one waiting", func() bool { _, w, _ := gateOfStatus(t, env); return w == 1 })
	third := connectLater(t, run())
	waitStatus(t, "two waiting", func() bool { _, w, _ := gateOfStatus(t, env); return w == 2 })
	if h, _, n := gateOfStatus(t, env); h != 1 || n != 1 {
		t.Fatalf("holders %d, instances %d", h, n)
	}
	pids := map[string]bool{gatedEcho(t, first, "first"): true}
	first.Close()
	b := <-second
	if b == nil {
		t.FailNow()
	}
	pids[gatedEcho(t, b, "second")] = true
	b.Close()
	c := <-third
	if c == nil {
		t.FailNow()
	}
	pids[gatedEcho(t, c, "third")] = true
	c.Close()
	if len(pids) != 1 {
		t.Fatalf("server processes %v, want one", pids)
	}
}

// Three go-sdk clients, each with its own instance (sharing client), of a
// server capped at two instances (max_instances = 2 in the config): two
// run, the third waits until one leaves, then runs; never more than two
// server processes.
func TestHostedCappedServerRunsAtMostTwo(t *testing.T) {
	env, _, state := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	cfg := filepath.Join(state, ".config", "hearth", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte(fmt.Sprintf("[servers.capped]\ncommand = %q\nargs = [\"-capped\"]\nsharing = \"client\"\nmax_instances = 2\n", server)), 0o600)
	run := func() *exec.Cmd {
		cmd := exec.Command(bin.hearth, "run", "capped")
		cmd.Env = env
		return cmd
	}
	a, b := <-connectLater(t, run()), <-connectLater(t, run())
	if a == nil || b == nil {
		t.FailNow()
	}
	pa, pb := gatedEcho(t, a, "a"), gatedEcho(t, b, "b")
	if pa == pb {
		t.Fatalf("sharing client gave two clients one process %s", pa)
	}
	third := connectLater(t, run())
	waitStatus(t, "the third waiting", func() bool { _, w, _ := gateOfStatus(t, env); return w == 1 })
	if h, _, n := gateOfStatus(t, env); h != 2 || n != 2 {
		t.Fatalf("holders %d, instances %d; want 2 and 2", h, n)
	}
	a.Close()
	c := <-third
	if c == nil {
		t.FailNow()
	}
	if pc := gatedEcho(t, c, "c"); pc == pb {
		t.Fatalf("c got b's process %s", pc)
	}
	if _, _, n := gateOfStatus(t, env); n > 2 {
		t.Fatalf("%d instances of a server capped at 2", n)
	}
}
