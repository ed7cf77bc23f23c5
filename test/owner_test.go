//go:build unix

package test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cleanEnv is this process's environment without any of hearth's variables
// (locations and settings), with HOME set to home: a user whose clients each
// pass their own subset of it.
func cleanEnv(home string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == portableEnv:
			// Not a location or a setting: the run's choice of mechanisms
			// (docs/development.md), kept for every process a test starts.
		case name == "HOME", strings.HasPrefix(name, "XDG_"), strings.HasPrefix(name, "HEARTH_"),
			strings.HasPrefix(name, "MCP_"), strings.HasPrefix(name, "SYN_"), strings.HasPrefix(name, "PREFLIGHTS_"):
			continue
		}
		out = append(out, kv)
	}
	return append(out, "HOME="+home)
}

// tsRepl is test/ts/repl.mjs: a TypeScript SDK client with the SDK's default
// environment, driven line by line.
type tsRepl struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines *bufio.Scanner
}

func startTSRepl(t *testing.T, env []string, dir string, command ...string) *tsRepl {
	t.Helper()
	node := needNode(t)
	script, _ := filepath.Abs(filepath.Join("ts", "repl.mjs"))
	cmd := exec.Command(node, append([]string{script}, command...)...)
	cmd.Env, cmd.Dir, cmd.Stderr = env, dir, os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &tsRepl{t: t, cmd: cmd, in: in, lines: bufio.NewScanner(out)}
	r.lines.Buffer(make([]byte, 1<<20), 16<<20)
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	if m := r.next(); m["connected"] != true {
		t.Fatalf("TypeScript client did not connect: %v", m)
	}
	return r
}

func (r *tsRepl) next() map[string]any {
	r.t.Helper()
	if !r.lines.Scan() {
		r.t.Fatalf("TypeScript client ended: %v", r.lines.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(r.lines.Bytes(), &m); err != nil {
		r.t.Fatalf("TypeScript client said %q: %v", r.lines.Text(), err)
	}
	return m
}

func (r *tsRepl) send(v any) {
	b, _ := json.Marshal(v)
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		r.t.Fatal(err)
	}
}

// call runs one tool and returns its structured result.
func (r *tsRepl) call(tool string, args map[string]any) map[string]any {
	r.t.Helper()
	r.send(map[string]any{"tool": tool, "args": args})
	m := r.next()
	res, _ := m["result"].(map[string]any)
	if m["isError"] != false || res == nil {
		r.t.Fatalf("%s through the TypeScript client: %v", tool, m)
	}
	return res
}

// processesWithOpen lists the pids that hold path open.
func processesWithOpen(path string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		for _, fd := range fds {
			if target, _ := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name())); target == path {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// TestOneOwnerAcrossClientEnvironments: three real clients, each with its
// own default environment, at the same time against one data directory: the
// Go SDK client through the shim with the full environment (XDG_RUNTIME_DIR
// set), the TypeScript SDK client through the shim with the SDK's default
// environment (no XDG_RUNTIME_DIR, no HEARTH_*), and a Go SDK client of
// `hearthd stdio`. One process opens the stores; every memory is found
// through every client; `hearthd status` shows that daemon and all three.
func TestOneOwnerAcrossClientEnvironments(t *testing.T) {
	needNode(t)
	user := shortTempDir(t)
	runtime := shortTempDir(t)
	t.Cleanup(func() { killDaemonsIn(runtime) })
	base := cleanEnv(user)
	full := append(append([]string(nil), base...), "XDG_RUNTIME_DIR="+runtime)
	dataDir := filepath.Join(user, ".local", "share", "hearth")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(name string, cmd *exec.Cmd) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	shimCmd := exec.Command(bin.hearth)
	shimCmd.Env = full
	goClient := connect("e2e-go-shim", shimCmd)
	ts := startTSRepl(t, base, user, bin.hearth)
	stdioCmd := exec.Command(bin.hearthd, "stdio")
	stdioCmd.Env = base
	stdioClient := connect("e2e-go-stdio", stdioCmd)

	markers := map[string]string{"go": "quokka", "ts": "pangolin", "stdio": "axolotl"}
	add := func(who string) map[string]any {
		return map[string]any{"text": "the " + who + " client remembers the " + markers[who]}
	}
	for who, cs := range map[string]*mcp.ClientSession{"go": goClient, "stdio": stdioClient} {
		if res := callTool(t, cs, "add_memory", add(who)); res.IsError {
			t.Fatalf("add_memory through %s: %+v", who, res)
		}
	}
	ts.call("add_memory", add("ts"))

	for _, word := range markers {
		for who, cs := range map[string]*mcp.ClientSession{"go": goClient, "stdio": stdioClient} {
			st := structured(t, callTool(t, cs, "search_memory", map[string]any{"query": word}))
			if st["count"] != float64(1) {
				t.Fatalf("search_memory %q through %s: %v", word, who, st)
			}
		}
		if st := ts.call("search_memory", map[string]any{"query": word}); st["count"] != float64(1) {
			t.Fatalf("search_memory %q through the TypeScript client: %v", word, st)
		}
	}

	db := filepath.Join(dataDir, "memory.db")
	if owners := processesWithOpen(db); len(owners) != 1 {
		t.Fatalf("%s is open in %d processes (%v); want exactly one", db, len(owners), owners)
	}

	out := statusJSON(t, base) // no XDG_RUNTIME_DIR: found through the data directory
	var st struct {
		PID     int    `json:"pid"`
		Home    string `json:"home"`
		Clients []struct {
			Name        string `json:"name"`
			ShimVersion string `json:"shim_version"`
		} `json:"clients"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("hearthd status --json: %v\n%s", err, out)
	}
	if owners := processesWithOpen(db); st.PID != owners[0] || st.Home != dataDir {
		t.Fatalf("status names pid %d home %s; the store is open in %v under %s", st.PID, st.Home, owners, dataDir)
	}
	names := map[string]bool{}
	for _, c := range st.Clients {
		names[c.Name] = true
	}
	for _, want := range []string{"e2e-go-shim", "hearth-e2e-ts-repl", "e2e-go-stdio"} {
		if !names[want] {
			t.Fatalf("hearthd status lists %v; %s is missing\n%s", names, want, out)
		}
	}
	cmd := exec.Command(bin.hearthd, "status")
	cmd.Env = full
	human, err := cmd.Output()
	if err != nil || !strings.Contains(string(human), "pid "+strconv.Itoa(st.PID)) || !strings.Contains(string(human), "hearth-e2e-ts-repl") {
		t.Fatalf("hearthd status: %v\n%s", err, human)
	}
}

// TestStatusWhenNoneServes: a clear message and exit 1.
func TestStatusWhenNoneServes(t *testing.T) {
	user := shortTempDir(t)
	cmd := exec.Command(bin.hearthd, "status")
	cmd.Env = append(cleanEnv(user), "XDG_RUNTIME_DIR="+shortTempDir(t))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "no hearth daemon serves "+filepath.Join(user, ".local", "share", "hearth")) ||
		strings.Contains(string(out), "connect:") {
		t.Fatalf("hearthd status with no daemon: %v\n%s", err, out)
	}
}

// TestSecondServeNamesTheOwner: `hearthd serve` for a data directory that a
// daemon already serves on another socket does not open it twice: it exits
// naming the owner's pid and socket, and the owner keeps serving.
func TestSecondServeNamesTheOwner(t *testing.T) {
	home := t.TempDir()
	d := startDaemon(t, "HEARTH_HOME="+home)
	cmd := exec.Command(bin.hearthd, "serve")
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+home, "XDG_RUNTIME_DIR="+shortTempDir(t), "MCP_SOCKET_PATH=", "MCP_READY_FILE=")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(string(out), d.socket) ||
		!strings.Contains(string(out), strconv.Itoa(d.cmd.Process.Pid)) || strings.Contains(string(out), "stacktrace") {
		t.Fatalf("second serve: %v\n%s", err, out)
	}
	c := dialRaw(t, d.socket)
	c.initialize()
	d.stop(t)
}

// TestStdioOwnerServesLaterShims: a `hearthd stdio` that finds no daemon
// owns the data directory and listens on a socket of its own; a shim
// started later (the TypeScript SDK's default environment) attaches to it
// through the directory. When the stdio client leaves, the shim reconnects
// to a daemon it starts, and the data is all still there.
func TestStdioOwnerServesLaterShims(t *testing.T) {
	needNode(t)
	user := shortTempDir(t)
	base := cleanEnv(user)
	t.Cleanup(func() { killDaemonsOfHome(user) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stdioCmd := exec.Command(bin.hearthd, "stdio")
	stdioCmd.Env = base
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-stdio-owner", Version: "1"}, nil)
	owner, err := client.Connect(ctx, &mcp.CommandTransport{Command: stdioCmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := callTool(t, owner, "add_memory", map[string]any{"text": "the stdio owner remembers the narwhal"}); res.IsError {
		t.Fatalf("add_memory: %+v", res)
	}
	ts := startTSRepl(t, base, user, bin.hearth)
	st := ts.call("daemon_status", map[string]any{})
	if st["mode"] != "stdio" || int(st["pid"].(float64)) != stdioCmd.Process.Pid {
		t.Fatalf("the shim reached %v (pid %v), not the stdio owner (pid %d)", st["mode"], st["pid"], stdioCmd.Process.Pid)
	}
	if got := ts.call("search_memory", map[string]any{"query": "narwhal"}); got["count"] != float64(1) {
		t.Fatalf("search through the shim: %v", got)
	}
	owner.Close() // the stdio client leaves; its process exits
	// The shim reconnects to a daemon it starts and replays the session.
	var again map[string]any
	deadline := time.Now().Add(20 * time.Second)
	for {
		ts.send(map[string]any{"tool": "search_memory", "args": map[string]any{"query": "narwhal"}})
		m := ts.next()
		if res, ok := m["result"].(map[string]any); ok && m["isError"] == false {
			again = res
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no daemon after the stdio owner left: %v", m)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if again["count"] != float64(1) {
		t.Fatalf("after the owner changed: %v", again)
	}
	if st := ts.call("daemon_status", map[string]any{}); st["mode"] != "socket" {
		t.Fatalf("the new owner: %v", st)
	}
}
