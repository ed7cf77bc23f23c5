package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// daemonsIn lists the pids of hearthd processes serving a runtime directory
// (found through /proc, since autostarted daemons are not our children).
func daemonsIn(runtime string) []int { return daemonsWithEnv("XDG_RUNTIME_DIR=" + runtime) }

// daemonsWithEnv lists the pids of this run's hearthd processes whose
// environment holds the entry kv ("NAME=value").
func daemonsWithEnv(kv string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || exe != bin.hearthd {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if bytes.Contains(append([]byte{0}, environ...), []byte("\x00"+kv+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killDaemonsIn(runtime string) {
	for _, pid := range daemonsIn(runtime) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// shimProc is a running `hearth` with raw access to its stdio.
type shimProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	lines  chan string
	stderr *lockedBuffer
	done   chan error
}

func startShim(t *testing.T, env []string) *shimProc {
	t.Helper()
	p := &shimProc{t: t, cmd: exec.Command(bin.hearth), lines: make(chan string, 10000), stderr: &lockedBuffer{}, done: make(chan error, 1)}
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	p.stdin, _ = p.cmd.StdinPipe()
	stdout, _ := p.cmd.StdoutPipe()
	p.stdout = stdout
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 4<<20), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		p.cmd.Process.Kill()
	})
	return p
}

func (p *shimProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write to shim: %v", err)
	}
}

func (p *shimProc) recv() map[string]any {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("shim stdout closed; stderr:\n%s", p.stderr.String())
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			p.t.Fatalf("the client saw a malformed frame: %q", line)
		}
		return m
	case <-time.After(30 * time.Second):
		p.t.Fatalf("no frame from the shim in 30s; stderr:\n%s", p.stderr.String())
	}
	return nil
}

func (p *shimProc) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"shim-test","version":"1"}}}`)
	if m := p.recv(); m["id"] != "init" || m["result"] == nil {
		p.t.Fatalf("initialize through the shim: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// TestTenShimsOneDaemon: ten shims start at once with no daemon running;
// exactly one daemon starts and all ten sessions work.
func TestTenShimsOneDaemon(t *testing.T) {
	env, runtime, state := shimEnv(t)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := exec.Command(bin.hearth)
			cmd.Env = env
			cmd.Stdin = strings.NewReader(fmt.Sprintf(
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c%d","version":"1"}}}`+"\n"+
					`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
					`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`+"\n", i))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Errorf("shim %d: %v\n%s", i, err, stderr.String())
				return
			}
			if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); len(lines) != 2 || !strings.Contains(lines[1], `"mode\":\"socket\"`) {
				errs <- fmt.Errorf("shim %d output: %s", i, out)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if pids := daemonsIn(runtime); len(pids) != 1 {
		t.Fatalf("want exactly one daemon, found %v", pids)
	}
	log, _ := os.ReadFile(filepath.Join(state, "hearth", "hearthd.log"))
	if n := strings.Count(string(log), "mcp:ready"); n != 1 {
		t.Fatalf("daemon started %d times:\n%s", n, log)
	}
}

// TestShimSurvivesDaemonKill: SIGKILL the daemon while two clients are
// attached with requests in flight. Both shims reconnect (a new daemon is
// autostarted), the in-flight requests get the "lost" error, the next
// request succeeds, and the clients never see a malformed frame.
func TestShimSurvivesDaemonKill(t *testing.T) {
	env, runtime, _ := shimEnv(t)
	a, b := startShim(t, env), startShim(t, env)
	a.initialize()
	b.initialize()
	pids := daemonsIn(runtime)
	if len(pids) != 1 {
		t.Fatalf("daemons: %v", pids)
	}
	// Freeze the daemon so requests stay in flight, then kill it. SIGSTOP is
	// delivered asynchronously: wait until the kernel says it is stopped.
	syscall.Kill(pids[0], syscall.SIGSTOP)
	waitUntil(t, func() bool { return procState(pids[0]) == "T" })
	a.send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`)
	b.send(`{"jsonrpc":"2.0","id":"b10","method":"ping"}`)
	time.Sleep(100 * time.Millisecond)
	syscall.Kill(pids[0], syscall.SIGKILL)

	for _, c := range []struct {
		p  *shimProc
		id any
	}{{a, 10.0}, {b, "b10"}} {
		m := c.p.recv()
		e, _ := m["error"].(map[string]any)
		if m["id"] != c.id || e == nil || e["code"] != -32004.0 || !strings.Contains(e["message"].(string), "may be retried") {
			t.Fatalf("in-flight request: %v", m)
		}
	}
	// The replayed initialize's reply is swallowed; the session just works.
	a.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`)
	if m := a.recv(); m["id"] != 11.0 || m["result"] == nil {
		t.Fatalf("after reconnect: %v", m)
	}
	b.send(`{"jsonrpc":"2.0","id":"b11","method":"tools/list"}`)
	if m := b.recv(); m["id"] != "b11" || m["result"] == nil {
		t.Fatalf("after reconnect (tools/list needs the replayed initialize): %v", m)
	}
	if now := daemonsIn(runtime); len(now) != 1 || now[0] == pids[0] {
		t.Fatalf("want one new daemon, have %v (old %d)", now, pids[0])
	}
}

// TestShimEOFDrainsAndExits: stdin EOF half-closes; every owed reply is
// delivered, then the shim exits 0.
func TestShimEOFDrainsAndExits(t *testing.T) {
	env, _, _ := shimEnv(t)
	var in strings.Builder
	in.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n")
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	cmd := exec.Command(bin.hearth)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 201 || lines[200] != `{"jsonrpc":"2.0","id":200,"result":{}}` {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

// TestShimForwardsOversizeInOrder: a line over 1 MiB is answered with the
// exact payload_too_large reply, in order, through the shim.
func TestShimForwardsOversizeInOrder(t *testing.T) {
	env, _, _ := shimEnv(t)
	p := startShim(t, env)
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	first := p.recv()
	if e, _ := first["error"].(map[string]any); first["id"] != nil || e == nil || e["message"] != "payload_too_large" {
		t.Fatalf("oversize: %v", first)
	}
	if m := p.recv(); m["id"] != 2.0 {
		t.Fatalf("after oversize: %v", m)
	}
}

func TestShimNoAutostart(t *testing.T) {
	env, runtime, _ := shimEnv(t, "HEARTH_NO_AUTOSTART=1")
	cmd := exec.Command(bin.hearth)
	cmd.Env = env
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "cannot reach the hearth daemon") {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if len(daemonsIn(runtime)) != 0 {
		t.Fatal("a daemon was started despite HEARTH_NO_AUTOSTART")
	}
}

// TestShimRefusesForeignSocket: a socket file owned by another uid is
// refused before a byte is sent, with a clear message.
func TestShimRefusesForeignSocket(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to give a socket to another user")
	}
	dir := shortTempDir(t)
	sock := filepath.Join(dir, "foreign.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	received := make(chan int, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		n, _ := c.Read(make([]byte, 64))
		received <- n
	}()
	os.Chown(sock, 65534, 65534)
	env, _, _ := shimEnv(t, "MCP_SOCKET_PATH="+sock, "HEARTH_NO_AUTOSTART=1")
	cmd := exec.Command(bin.hearth)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil || len(out) != 0 || !strings.Contains(stderr.String(), "belongs to uid 65534") {
		t.Fatalf("err %v, stdout %q, stderr %s", err, out, stderr.String())
	}
	select {
	case n := <-received:
		t.Fatalf("the shim sent %d bytes to a foreign socket", n)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestAutostartedDaemonExitsWhenIdle: with idle_timeout in the config
// file, the daemon a shim started goes away once its last client has.
func TestAutostartedDaemonExitsWhenIdle(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(conf, []byte("idle_timeout = \"300ms\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env, runtime, state := shimEnv(t, "HEARTH_CONFIG="+conf)
	cmd := exec.Command(bin.hearth)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), `"result"`) {
		t.Fatalf("%v %s", err, out)
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(daemonsIn(runtime)) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("idle daemon still running")
		}
		time.Sleep(20 * time.Millisecond)
	}
	log, _ := os.ReadFile(filepath.Join(state, "hearth", "hearthd.log"))
	if !strings.Contains(string(log), `"reason":"idle"`) {
		t.Fatalf("log:\n%s", log)
	}
}

// procState is a process's state letter from /proc (R, S, T, Z, ...).
func procState(pid int) string {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return ""
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// TestShimAnswersEveryBadLastLine: whatever the last line before EOF is,
// the client gets the daemon's reply to it before the shim exits.
func TestShimAnswersEveryBadLastLine(t *testing.T) {
	env, _, _ := shimEnv(t)
	rows := []struct{ name, line, want string }{
		{"parse error", `{"jsonrpc":`, `"code":-32700`},
		{"not JSON", `hello`, `"code":-32700`},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}", `"code":-32700`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `"code":-32600`},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `"code":-32600`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `"code":-32600`},
		{"no method, no result", `{"jsonrpc":"2.0","id":7}`, `"code":-32600`},
		{"over 1 MiB", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"p":"` + strings.Repeat("x", 1<<20) + `"}}`, `payload_too_large`},
	}
	for _, row := range rows {
		for round := 0; round < 5; round++ { // it used to depend on a race
			cmd := exec.Command(bin.hearth)
			cmd.Env = env
			cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":"p","method":"ping"}` + "\n" + row.line + "\n")
			out, err := cmd.Output()
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if err != nil || len(lines) != 2 || !strings.Contains(lines[1], row.want) {
				t.Fatalf("%s (round %d): exit %v, replies:\n%s", row.name, round, err, out)
			}
		}
	}
}

// TestShimExitsWhenItsDaemonCannotReturn: with autostart off, a shim whose
// daemon dies answers what was in flight with the reason and exits 1,
// rather than staying up and ignoring every later request.
func TestShimExitsWhenItsDaemonCannotReturn(t *testing.T) {
	d := startDaemon(t)
	runtime := filepath.Dir(filepath.Dir(d.socket))
	p := startShim(t, append(os.Environ(), "XDG_RUNTIME_DIR="+runtime, "HEARTH_HOME="+filepath.Join(runtime, "home"),
		"MCP_SOCKET_PATH=", "HEARTH_NO_AUTOSTART=1"))
	p.initialize()
	d.cmd.Process.Kill()
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(p.stderr.String(), "could not get it back") ||
			!strings.Contains(p.stderr.String(), "HEARTH_NO_AUTOSTART") {
			t.Fatalf("shim: %v\n%s", err, p.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the shim stayed up without a daemon:\n%s", p.stderr.String())
	}
}

// TestShimSaysWhyTheDaemonCannotStart: autostart of a daemon the version
// guard refuses ends the shim with the guard's own message.
func TestShimSaysWhyTheDaemonCannotStart(t *testing.T) {
	env, _, state := shimEnv(t)
	home := filepath.Join(state, "home")
	os.MkdirAll(home, 0o700)
	os.WriteFile(filepath.Join(home, ".format_version"), []byte("9.0\n9.0.0+future\n"), 0o600)
	cmd := exec.Command(bin.hearth)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "format 9.0") || !strings.Contains(stderr.String(), "exit status 78") {
		t.Fatalf("%v: %s", err, stderr.String())
	}
}
