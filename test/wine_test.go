//go:build linux

package test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Windows serving path under Wine (docs/development.md, "Windows under
// Wine"): hearthd.exe and hearth.exe built for windows/amd64, a daemon on
// its named pipe, two shims relaying for two clients, `hearth run` of a Go
// stdio server built for Windows whose whole tree (a child included) its Job
// Object ends when the daemon is killed, the next call answered once by an
// autostarted daemon, and adopt's --write and --undo of Claude Desktop's
// config at its Windows place, hearthd doctor, and hearthd stop (by a
// request on the pipe) and restart (refused). Wine is not Windows: a pass here is a pass on
// Wine's Win32 (one user, no stored access lists).

// wine is a prepared Wine prefix and the windows/amd64 binaries.
type wine struct {
	wine64, dir, prefix string
	env                 []string
}

// winPath is a Linux path as a Windows program under Wine sees it (drive Z:
// is /).
func winPath(p string) string { return `Z:` + strings.ReplaceAll(p, "/", `\`) }

// linuxPath is a path a Windows program under Wine names, as Linux
// sees it: drive Z: is /, drive C: the prefix's drive_c.
func (w *wine) linuxPath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if rest, ok := strings.CutPrefix(p, "C:"); ok {
		return filepath.Join(w.prefix, "drive_c", rest)
	}
	return strings.TrimPrefix(p, "Z:")
}

// setupWine prepares the prefix (tools/wine/setup.sh: one prefix, reused)
// and builds the binaries; it skips without Wine or mingw-w64, unless in CI.
func setupWine(t *testing.T) *wine {
	t.Helper()
	w := &wine{}
	if p, err := exec.LookPath("wine64"); err == nil {
		w.wine64 = p
	} else if _, err := os.Stat("/usr/lib/wine/wine64"); err == nil {
		w.wine64 = "/usr/lib/wine/wine64"
	}
	_, ccErr := exec.LookPath("x86_64-w64-mingw32-gcc")
	if w.wine64 == "" || ccErr != nil {
		if inCI() {
			t.Fatal("wine64 or x86_64-w64-mingw32-gcc missing under CI=true (apt-get install wine64 gcc-mingw-w64-x86-64)")
		}
		t.Skip("wine64 or x86_64-w64-mingw32-gcc not installed")
	}
	prefix := os.Getenv("WINEPREFIX")
	if prefix == "" {
		prefix = "/tmp/hearth-wine"
	}
	w.prefix = prefix
	base := append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all", "WINEDLLOVERRIDES=mscoree,mshtml=")
	setup := exec.Command("sh", "../tools/wine/setup.sh")
	setup.Env = base
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("tools/wine/setup.sh: %v\n%s", err, out)
	}
	// The release archive's hearthd.exe and hearth.exe when one is named
	// (releaseEnv), else built here; the test's own server beside them.
	build := map[string]string{"hostedserver.exe": "github.com/hearth-mcp/hearth/test/internal/hostedserver"}
	if w.dir = releaseBinaries(t, "windows"); w.dir == "" {
		w.dir = t.TempDir()
		build["hearthd.exe"] = "github.com/hearth-mcp/hearth/daemon/hearthd"
		build["hearth.exe"] = "github.com/hearth-mcp/hearth/shim/hearth"
	}
	for out, pkg := range build {
		cmd := exec.Command("go", "build", "-o", filepath.Join(w.dir, out), pkg)
		cmd.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if o, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building %s for windows: %v\n%s", pkg, err, o)
		}
	}
	home := t.TempDir()
	w.env = append(base,
		"HEARTH_HOME="+winPath(filepath.Join(home, "hearth")),
		"MCP_SOCKET_PATH="+winPath(filepath.Join(home, "sock", "hearthd.sock")),
		"MCP_READY_FILE=", "HEARTH_NO_AUTOSTART=", "HEARTH_DAEMON=", "HEARTH_IDLE_TIMEOUT=", "XDG_RUNTIME_DIR=")
	t.Cleanup(func() {
		// Every Wine process run from this test's directory: the daemon
		// a shim started among them, and whatever a failed test left.
		dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, f := range dirs {
			if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(winPath(w.dir))) || bytes.Contains(b, []byte(w.dir+"/")) {
				if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil && pid != os.Getpid() {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	})
	return w
}

// command runs one of the built programs under Wine.
func (w *wine) command(exe string, args ...string) *exec.Cmd {
	cmd := exec.Command(w.wine64, append([]string{filepath.Join(w.dir, exe)}, args...)...)
	cmd.Env = w.env
	return cmd
}

// waitFor polls ok until it holds, failing with what after a minute.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !ok(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within a minute", what)
		}
	}
}

// sleepers counts the Wine processes that are hostedserver.exe's child.
func sleepers() int {
	n := 0
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		b, _ := os.ReadFile(f)
		if bytes.Contains(b, []byte("hostedserver.exe")) && bytes.Contains(b, []byte("-sleeper")) {
			n++
		}
	}
	return n
}

func TestWineServingPath(t *testing.T) {
	w := setupWine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	daemon := w.command("hearthd.exe", "serve")
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer daemon.Process.Kill()
	waitFor(t, "hearthd.exe status answering over the pipe", func() bool { return w.command("hearthd.exe", "status").Run() == nil })

	// Two shims relay for two clients at once.
	var sessions []*mcp.ClientSession
	for _, name := range []string{"client-a", "client-b"} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: w.command("hearth.exe")}, nil)
		if err != nil {
			t.Fatalf("%s through hearth.exe: %v", name, err)
		}
		defer cs.Close()
		sessions = append(sessions, cs)
	}
	for i, cs := range sessions {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "daemon_status", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("client %d: daemon_status: %v %+v", i, err, res)
		}
		if st, _ := res.StructuredContent.(map[string]any); st["mode"] != "socket" {
			t.Fatalf("client %d: daemon_status %+v, want the daemon's socket mode", i, st)
		}
	}

	// hearth run of a Go stdio server built for Windows, which starts a
	// child, spoken to frame by frame to count its answers.
	record := filepath.Join(t.TempDir(), "block")
	run := w.command("hearth.exe", "run", winPath(filepath.Join(w.dir, "hostedserver.exe")), "-tree")
	stdin, _ := run.StdinPipe()
	stdout, _ := run.StdoutPipe()
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer run.Process.Kill()
	answers := make(chan map[string]any, 16)
	go func() {
		defer close(answers)
		lines := bufio.NewScanner(stdout)
		lines.Buffer(make([]byte, 1<<16), 1<<24)
		for lines.Scan() {
			var m map[string]any
			if json.Unmarshal(lines.Bytes(), &m) == nil && m["id"] != nil {
				answers <- m
			}
		}
	}()
	send := func(frame string) {
		t.Helper()
		if _, err := io.WriteString(stdin, frame+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	count := map[float64]int{}
	await := func(id float64) map[string]any {
		t.Helper()
		for m := range answers {
			count[m["id"].(float64)]++
			if m["id"] == id {
				return m
			}
		}
		t.Fatalf("hearth.exe run ended before answering request %v", id)
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"client-run","version":"1"}}}`)
	if m := await(1); m["result"] == nil {
		t.Fatalf("initialize through hearth.exe run: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := func(id int, tool string, args map[string]any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
		send(string(b))
	}
	call(2, "echo", map[string]any{"text": "before"})
	if m := await(2); !strings.Contains(fmt.Sprint(m["result"]), "before") {
		t.Fatalf("echo before: %v", m)
	}
	waitFor(t, "the hosted server's child running", func() bool { return sleepers() == 1 })
	// A call in flight when the daemon dies.
	call(3, "block", map[string]any{"record": winPath(record)})
	waitFor(t, "the blocking call reaching the server", func() bool {
		b, _ := os.ReadFile(record)
		return strings.Contains(string(b), "started")
	})

	// The daemon dies: its Job Object ends the server's whole tree.
	daemon.Process.Kill()
	daemon.Wait()
	waitFor(t, "the hosted server's child ended with the daemon's Job Object", func() bool { return sleepers() == 0 })

	// The call in flight is answered (with an error), the next one by a
	// daemon the shim starts, each once.
	if m := await(3); m["error"] == nil && m["result"] == nil {
		t.Fatalf("the call in flight: %v", m)
	} else {
		t.Logf("the call in flight when the daemon died was answered: %v", m)
	}
	call(4, "echo", map[string]any{"text": "after"})
	if m := await(4); !strings.Contains(fmt.Sprint(m["result"]), "after") {
		t.Fatalf("echo after the daemon's death: %v", m)
	}
	stdin.Close()
	for m := range answers {
		count[m["id"].(float64)]++
	}
	run.Wait()
	for id := 1.0; id <= 4; id++ {
		if count[id] != 1 {
			t.Errorf("request %v answered %d times, want once", id, count[id])
		}
	}
	res, err := sessions[0].CallTool(ctx, &mcp.CallToolParams{Name: "daemon_status", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("a relaying shim after the daemon's death: %v %+v", err, res)
	}
}

// TestWineStop: a client reaches hearthd.exe over Streamable HTTP too;
// `hearthd.exe stop` stops the daemon on its pipe by asking
// it ($/hearth/stop, Windows having no SIGTERM): a clean exit, its pipe
// file removed, the stop request logged as the reason, and then nothing
// to stop. `hearthd.exe restart` before it is refused with what to do
// instead (a hand-over is Unix only) and leaves the same daemon serving.
func TestWineStop(t *testing.T) {
	w := setupWine(t)
	var log lockedBuffer
	daemon := w.command("hearthd.exe", "serve")
	daemon.Env = append(daemon.Env, "HEARTH_HTTP_LISTEN=127.0.0.1:0")
	daemon.Stderr = &log
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer daemon.Process.Kill()
	exited := make(chan error, 1)
	go func() { exited <- daemon.Wait() }()
	waitFor(t, "hearthd.exe status answering over the pipe", func() bool { return w.command("hearthd.exe", "status").Run() == nil })
	pidOf := func() string {
		out, err := w.command("hearthd.exe", "status", "--json").Output()
		var st struct{ PID int }
		if err != nil || json.Unmarshal(out, &st) != nil || st.PID == 0 {
			t.Fatalf("hearthd.exe status --json: %v %s", err, out)
		}
		return strconv.Itoa(st.PID)
	}
	pid := pidOf()

	// Streamable HTTP from the daemon's loopback port, its token file
	// read as the client's user reads it.
	waitFor(t, "the daemon's mcp:http line", func() bool { return strings.Contains(log.String(), "mcp:http url=") })
	var rec struct {
		URL       string
		TokenFile string `json:"token_file"`
	}
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "mcp:http url=") {
			json.Unmarshal([]byte(line), &rec)
		}
	}
	token, err := os.ReadFile(w.linuxPath(rec.TokenFile))
	if rec.URL == "" || err != nil {
		t.Fatalf("the daemon's HTTP endpoint %q, token file %q: %v", rec.URL, rec.TokenFile, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: rec.URL, HTTPClient: &http.Client{Transport: bearer{strings.TrimSpace(string(token))}}}, nil)
	if err != nil {
		t.Fatalf("a Go SDK client over HTTP to hearthd.exe: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "daemon_status", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("daemon_status over HTTP: %v %+v", err, res)
	}
	cs.Close()

	out, err := w.command("hearthd.exe", "restart").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "hearthd stop") {
		t.Fatalf("hearthd.exe restart: %v %s, want a refusal naming hearthd stop", err, out)
	}
	t.Logf("hearthd.exe restart: %s", out)
	if now := pidOf(); now != pid {
		t.Fatalf("after the refused restart pid %s serves, was %s", now, pid)
	}

	out, err = w.command("hearthd.exe", "stop").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "stopped hearthd socket (pid "+pid+")") {
		t.Fatalf("hearthd.exe stop: %v %s", err, out)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the daemon exited with %v\n%s", err, log.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("hearthd.exe stop returned but the daemon runs on")
	}
	if !strings.Contains(log.String(), `"reason":"hearthd stop"`) {
		t.Fatalf("the daemon's log names no stop request:\n%s", log.String())
	}
	sock := w.linuxPath(envValue(w.env, "MCP_SOCKET_PATH"))
	if _, err := os.Lstat(sock); err == nil {
		t.Fatalf("%s (the file naming the pipe) left behind", sock)
	}
	if out, err := w.command("hearthd.exe", "stop").CombinedOutput(); err != nil || !strings.Contains(string(out), "nothing to stop") {
		t.Fatalf("hearthd.exe stop with none serving: %v %s", err, out)
	}
}

func TestWineAdoptClaudeDesktop(t *testing.T) {
	w := setupWine(t)
	// Wine sets APPDATA itself, from the prefix's profile: the file is at
	// the place Claude Desktop keeps it for this user there.
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	appdata := filepath.Join(w.prefix, "drive_c", "users", me.Username, "AppData", "Roaming")
	t.Cleanup(func() { os.RemoveAll(filepath.Join(appdata, "Claude")) })
	file := filepath.Join(appdata, "Claude", "claude_desktop_config.json")
	if _, err := os.Stat(file); err == nil {
		t.Fatalf("%s exists already: not the test's to change", file)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	orig := []byte(`{"mcpServers":{"hs":{"command":"` + strings.ReplaceAll(winPath(filepath.Join(w.dir, "hostedserver.exe")), `\`, `\\`) + `","args":[]}}}` + "\n")
	if err := os.WriteFile(file, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := w.command("hearthd.exe", "adopt", "--write").CombinedOutput()
	if err != nil {
		t.Fatalf("adopt --write: %v\n%s", err, out)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got, []byte(`hearth.exe`)) || !bytes.Contains(got, []byte(`"run"`)) {
		t.Fatalf("adopt --write left %s:\n%s\nit said:\n%s", file, got, out)
	}
	if out, err := w.command("hearthd.exe", "adopt", "--undo").CombinedOutput(); err != nil {
		t.Fatalf("adopt --undo: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(file); !bytes.Equal(got, orig) {
		t.Fatalf("adopt --undo left:\n%s\nwant:\n%s", got, orig)
	}
}

// hearthd doctor under Wine: every mechanism it exercises works, but the
// two Windows has not: no client environment to read (the documented
// fallback) and no service manager entry.
func TestWineDoctor(t *testing.T) {
	w := setupWine(t)
	checks, code := runDoctor(t, w.command("hearthd.exe", "doctor", "--json"))
	for _, name := range doctorChecks {
		want := map[string]string{"client environment": "fallback", "service entry": "skipped"}[name]
		if want == "" {
			want = "ok"
		}
		if c := checks[name]; c.Status != want {
			t.Errorf("%s: %s (%s), want %s", name, c.Status, c.Detail, want)
		}
	}
	if code != 0 {
		t.Errorf("exit %d", code)
	}
}
