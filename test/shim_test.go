//go:build unix

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
// environment holds the entry kv ("NAME=value"), keepers of hosted
// upstreams (hearthd started with HEARTH_KEEPER set) aside: the daemon's
// death is theirs to act on.
func daemonsWithEnv(kv string) []int { return daemonsOf(bin.hearthd, kv) }

// daemonsOf is daemonsWithEnv for the hearthd at exe (once replaced, the
// kernel names a running image "exe (deleted)").
func daemonsOf(hearthd, kv string) []int {
	var pids []int
	for _, p := range imageProcesses(hearthd) {
		if hasEnv(p.environ, kv) && !hasEnvName(p.environ, "HEARTH_KEEPER") && !forkNotYetExeced(p) {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// imageProcessesWithEnv lists the processes of the image whose environment
// holds kv, keepers aside, forks not yet exec'd included.
func imageProcessesWithEnv(image, kv string) []int {
	var pids []int
	for _, p := range imageProcesses(image) {
		if hasEnv(p.environ, kv) && !hasEnvName(p.environ, "HEARTH_KEEPER") {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// imageProc is a live process as /proc shows it: its pid, its parent's
// and its environment (NUL-separated, as the kernel gives it).
type imageProc struct {
	pid, ppid int
	environ   []byte
}

// imageProcesses lists the live processes running image (or image
// replaced on disk, "image (deleted)"), each with its environment.
func imageProcesses(image string) []imageProc {
	var procs []imageProc
	liveProcesses(func(dir string, stat []string) bool {
		exe, err := os.Readlink(filepath.Join(dir, "exe"))
		if err != nil || exe != image && exe != image+" (deleted)" {
			return false
		}
		pid, _ := strconv.Atoi(filepath.Base(dir))
		ppid, _ := strconv.Atoi(stat[1])
		environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
		procs = append(procs, imageProc{pid, ppid, environ})
		return false
	})
	return procs
}

// hasEnv tells whether environ holds the entry kv ("NAME=value").
func hasEnv(environ []byte, kv string) bool {
	return bytes.Contains(append([]byte{0}, environ...), []byte("\x00"+kv+"\x00"))
}

// hasEnvName tells whether environ sets the variable name, to any value.
func hasEnvName(environ []byte, name string) bool {
	return bytes.Contains(append([]byte{0}, environ...), []byte("\x00"+name+"="))
}

// forkNotYetExeced tells whether p is a child a hearthd has forked and
// not yet replaced by the program it runs (an upstream, a keeper, the
// successor of a restart): until its exec the kernel shows the parent's
// executable and environment, so it reads as one more daemon. A real
// daemon's environment differs from its parent's (a successor carries the
// hand-over's descriptor) or its parent is no hearthd at all.
func forkNotYetExeced(p imageProc) bool {
	parent := filepath.Join("/proc", strconv.Itoa(p.ppid))
	parentExe, _ := os.Readlink(filepath.Join(parent, "exe"))
	childExe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(p.pid), "exe"))
	if parentExe == "" || parentExe != childExe {
		return false
	}
	parentEnv, err := os.ReadFile(filepath.Join(parent, "environ"))
	return err == nil && bytes.Equal(parentEnv, p.environ)
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
	// answered are the ids recv has seen a result or error for.
	answered map[any]bool
}

func startShim(t *testing.T, env []string) *shimProc {
	t.Helper()
	p := &shimProc{t: t, cmd: exec.Command(bin.hearth), lines: make(chan string, 10000), stderr: &lockedBuffer{}, done: make(chan error, 1),
		answered: map[any]bool{}}
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

// recv returns the next frame the client reads. A -32004 for an id already
// answered fails the test: each request is answered once, whenever the
// daemon dies (decision 0020, "Exactly one answer").
func (p *shimProc) recv() map[string]any {
	p.t.Helper()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("shim stdout closed; stderr:\n%s", p.stderr.String())
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				p.t.Fatalf("the client saw a malformed frame: %q", line)
			}
			id, reply := m["id"]
			if reply && id != nil && (m["result"] != nil || m["error"] != nil) {
				if p.answered[id] && isLost(m) {
					p.t.Fatalf("request %v answered twice: a -32004 after its reply (%s)", id, shimTransport())
				}
				p.answered[id] = true
			}
			return m
		case <-time.After(30 * time.Second):
			p.t.Fatalf("no frame from the shim in 30s; stderr:\n%s", p.stderr.String())
		}
	}
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
	log, _ := os.ReadFile(filepath.Join(state, ".local", "state", "hearth", "hearthd.log"))
	if n := strings.Count(string(log), "mcp:ready"); n != 1 {
		t.Fatalf("daemon started %d times:\n%s", n, log)
	}
}

// shimTransport is how this run's shims serve their clients: "relay" when
// HEARTH_SHIM_RELAY or HEARTH_PORTABLE makes them copy frames (the tests
// run both ways; docs/development.md), else "direct", the client's pipes
// handed to the daemon.
func shimTransport() string {
	if os.Getenv("HEARTH_SHIM_RELAY") != "" || portableRun() {
		return "relay"
	}
	return "direct"
}

// recvID skips notifications (progress) up to the reply to id.
func (p *shimProc) recvID(id any) map[string]any {
	p.t.Helper()
	for {
		m := p.recv()
		if _, note := m["method"]; note && m["id"] == nil {
			continue
		}
		if m["id"] != id {
			p.t.Fatalf("want the reply to %v, got %v", id, m)
		}
		return m
	}
}

func isLost(m map[string]any) bool {
	e, _ := m["error"].(map[string]any)
	return e != nil && e["code"] == -32004.0 && strings.Contains(e["message"].(string), "may or may not have been carried out")
}

// TestShimSurvivesDaemonKill: SIGKILL the daemon while two clients are
// attached, one with an index build running in it, the other with a ping
// sent while the daemon was frozen. Both shims reconnect (a new daemon is
// autostarted); the build gets the "lost" error; the frozen daemon's ping
// is lost too when the shim relays, and answered by the new daemon when it
// had the client's pipes (it never read it); the next requests succeed and
// the clients never see a malformed frame.
func TestShimSurvivesDaemonKill(t *testing.T) {
	src := bigTree(t)
	env, runtime, _ := shimEnv(t)
	a, b := startShim(t, env), startShim(t, env)
	a.initialize()
	b.initialize()
	pids := daemonsIn(runtime)
	if len(pids) != 1 {
		t.Fatalf("daemons: %v", pids)
	}
	a.send(`{"jsonrpc":"2.0","id":"st","method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`)
	st := a.recvID("st")["result"].(map[string]any)["structuredContent"].(map[string]any)
	for _, c := range st["clients"].([]any) {
		if got := c.(map[string]any)["transport"]; got != shimTransport() {
			t.Fatalf("a shim's client is served %v, want %s", got, shimTransport())
		}
	}
	a.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"index_build","arguments":{"repo_path":%q,"incremental":false},"_meta":{"progressToken":"t"}}}`, src))
	for m := a.recv(); m["method"] == "notifications/progress"; m = a.recv() {
		if m["params"].(map[string]any)["progress"].(float64) > 0 {
			break // running in the daemon
		}
	}
	// Freeze the daemon, then send b's ping. SIGSTOP is delivered
	// asynchronously: wait until the kernel says it is stopped.
	syscall.Kill(pids[0], syscall.SIGSTOP)
	waitUntil(t, func() bool { return procState(pids[0]) == "T" })
	b.send(`{"jsonrpc":"2.0","id":"b10","method":"ping"}`)
	time.Sleep(100 * time.Millisecond)
	syscall.Kill(pids[0], syscall.SIGKILL)

	if m := a.recvID(10.0); !isLost(m) {
		t.Fatalf("the build in flight: %v", m)
	}
	m := b.recvID("b10")
	if shimTransport() == "relay" && !isLost(m) || shimTransport() == "direct" && m["result"] == nil {
		t.Fatalf("the ping sent to the frozen daemon (%s): %v", shimTransport(), m)
	}
	// The replayed initialize's reply is swallowed; the session just works.
	a.send(`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`)
	if m := a.recvID(11.0); m["result"] == nil {
		t.Fatalf("after reconnect: %v", m)
	}
	b.send(`{"jsonrpc":"2.0","id":"b11","method":"tools/list"}`)
	if m := b.recvID("b11"); m["result"] == nil {
		t.Fatalf("after reconnect (tools/list needs the replayed initialize): %v", m)
	}
	if now := daemonsIn(runtime); len(now) != 1 || now[0] == pids[0] {
		t.Fatalf("want one new daemon, have %v (old %d)", now, pids[0])
	}
}

// TestShimDaemonKilledMidStream: a client pipelines pings and tools/list
// (a reply longer than one atomic write to a pipe) and the daemon is
// killed while the replies stream out. The client reads only whole frames;
// every request gets its reply or the retryable error, once; the session
// goes on.
func TestShimDaemonKilledMidStream(t *testing.T) {
	env, runtime, _ := shimEnv(t)
	p := startShim(t, env)
	p.initialize()
	pid := daemonsIn(runtime)[0]
	const n = 3000
	go func() {
		w := bufio.NewWriter(p.stdin)
		for i := 0; i < n; i++ {
			method := "ping"
			if i%7 == 0 {
				method = "tools/list"
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":%q}`+"\n", i, method)
		}
		w.Flush()
	}()
	results, lost := map[int]int{}, map[int]int{}
	answered := 0
	for answered < n {
		m := p.recv()
		id, ok := m["id"].(float64)
		if !ok {
			t.Fatalf("a reply without a request's id: %v", m)
		}
		i := int(id)
		switch {
		case m["result"] != nil:
			results[i]++
		case isLost(m):
			lost[i]++
		default:
			t.Fatalf("reply %v", m)
		}
		if results[i]+lost[i] == 1 {
			answered++
		}
		if answered == 300 && results[i]+lost[i] == 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	p.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	for {
		m := p.recv()
		if m["id"] == "after" {
			break
		}
		t.Fatalf("after every request was answered: %v", m)
	}
	for i := 0; i < n; i++ {
		if results[i]+lost[i] != 1 {
			t.Fatalf("request %d: %d results, %d lost", i, results[i], lost[i])
		}
	}
	t.Logf("%s: %d answered before the kill or by the new daemon, %d lost", shimTransport(), len(results), len(lost))
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
	log, _ := os.ReadFile(filepath.Join(state, ".local", "state", "hearth", "hearthd.log"))
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

// TestShimRelaysWhatItCannotHandOver: a client whose stdin is a file, not a
// pipe or a socket, is relayed (a daemon is never handed a file's
// position), and says so in daemon_status; every request is answered.
func TestShimRelaysWhatItCannotHandOver(t *testing.T) {
	env, _, _ := shimEnv(t)
	in := filepath.Join(t.TempDir(), "requests")
	os.WriteFile(in, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"from-a-file","version":"1"}}}`+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`+"\n"), 0o600)
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin.hearth)
	cmd.Env, cmd.Stdin = env, f
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err != nil || len(lines) != 2 {
		t.Fatalf("%v: %s", err, out)
	}
	var reply struct {
		Result struct {
			StructuredContent struct {
				Clients []struct{ Name, Transport string }
			}
		}
	}
	json.Unmarshal([]byte(lines[1]), &reply)
	for _, c := range reply.Result.StructuredContent.Clients {
		if c.Name == "from-a-file" && c.Transport == "relay" {
			return
		}
	}
	t.Fatalf("a client reading from a file: %s", lines[1])
}
