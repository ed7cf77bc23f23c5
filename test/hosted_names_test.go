//go:build unix

package test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The advice of a crash loop works when followed: a server that exits at
// once (`sh crasher.sh`, inline) is marked failed after its fifth failure
// in a row, and its client's error names the command to run; the client
// gives up and goes, the failed instance stays listed under that name;
// the server is fixed, and the real `hearthd servers restart <that>`
// finds it and clears the failure, so the next client is served. The
// launcher's name (`sh`) names it no more.
func TestHostedCrashLoopAdviceWorks(t *testing.T) {
	env, _, _ := shimEnv(t)
	dir := t.TempDir()
	script := "#!/bin/sh\nif [ -e broken ]; then echo 'fatal: the widget config is broken' >&2; exit 3; fi\nexec " + filepath.Join(bin.dir, "hostedserver") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "crasher.sh"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	connect := func() (*mcp.ClientSession, error) {
		cmd := exec.Command(bin.hearth, "run", "--", "sh", "crasher.sh")
		cmd.Env, cmd.Dir = env, dir
		cl := mcp.NewClient(&mcp.Implementation{Name: "names-e2e", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	}
	var msg string
	for i := 0; i < 10 && !strings.Contains(msg, "marked failed"); i++ {
		cs, err := connect()
		if err == nil {
			cs.Close()
			t.Fatal("a client of the broken server was served")
		}
		msg = err.Error()
	}
	if !strings.Contains(msg, "marked failed") || !strings.Contains(msg, "widget config is broken") {
		t.Fatalf("no crash loop: %s", msg)
	}
	advice := regexp.MustCompile("run `(hearthd servers restart [^`]+)`").FindStringSubmatch(msg)
	if advice == nil || advice[1] != "hearthd servers restart crasher.sh" {
		t.Fatalf("the error names no command to run by the server's name: %s", msg)
	}

	type instance struct {
		Name, Server, Key, State string
		Clients                  int
	}
	hosted := func() []instance {
		var st struct{ Hosted []instance }
		if err := json.Unmarshal(statusJSON(t, env), &st); err != nil {
			t.Fatal(err)
		}
		return st.Hosted
	}
	// The client went (its shim exits once the SDK closes it).
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if h := hosted(); len(h) != 1 || h[0].Clients == 0 {
			break
		}
	}
	if h := hosted(); len(h) != 1 || h[0].Clients != 0 || h[0].Name != "crasher.sh" || h[0].Server != "sh crasher.sh" || h[0].State != "failed" {
		t.Fatalf("after its client went: %+v", h)
	}
	// The launcher is no name for it: refused, listing what runs.
	cmd := exec.Command(bin.hearthd, "servers", "restart", "sh")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "crasher.sh") || !strings.Contains(string(out), hosted()[0].Key) {
		t.Fatalf("restart sh: %v %s", err, out)
	}

	if err := os.Remove(filepath.Join(dir, "broken")); err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(advice[1])
	cmd = exec.Command(bin.hearthd, words[1:]...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "restarted 1") {
		t.Fatalf("%s, as the error says: %v %s", advice[1], err, out)
	}
	if h := hosted(); len(h) != 1 || h[0].State == "failed" {
		t.Fatalf("after %s: %+v", advice[1], h)
	}
	cs, err := connect()
	if err != nil {
		t.Fatalf("the fixed server after %s: %v", advice[1], err)
	}
	defer cs.Close()
	if out, _ := callText(t, cs, "echo", map[string]any{"text": "fixed"}); !strings.HasPrefix(out, "fixed") {
		t.Fatalf("echo: %q", out)
	}
}
