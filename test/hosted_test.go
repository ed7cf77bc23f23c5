//go:build unix

package test

//lint:file-ignore SA1019 hosted servers of the 2025 era ask for roots, sampling and logging, which 2026-07-28 deprecates; hearth must route them

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// liveProcesses lists the pids of the processes that are not zombies and
// that keep accepts; keep gets the process's /proc directory and the fields
// of its stat after the command name (state, ppid, pgrp, ...).
func liveProcesses(keep func(dir string, stat []string) bool) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		b, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if keep(dir, f) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processesOf lists the pids of live processes running the program at path.
func processesOf(path string) []int {
	return liveProcesses(func(dir string, _ []string) bool {
		exe, err := os.Readlink(filepath.Join(dir, "exe"))
		return err == nil && exe == path
	})
}

// hostedClient connects a go-sdk client through `hearth run -- hostedserver`.
func hostedClient(t *testing.T, env []string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	return runClient(t, env, opts, version, filepath.Join(bin.dir, "hostedserver"))
}

// runClient connects a go-sdk client through `hearth run -- command...`,
// asking for protocol version (the SDK's default when empty).
func runClient(t *testing.T, env []string, opts *mcp.ClientOptions, version string, command ...string) *mcp.ClientSession {
	t.Helper()
	return runClientWith(t, env, opts, version, append([]string{"--"}, command...))
}

// runClientWith is runClient with all of `hearth run`'s arguments given
// (options such as --share, then -- and the command).
func runClientWith(t *testing.T, env []string, opts *mcp.ClientOptions, version string, runArgs []string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin.hearth, append([]string{"run"}, runArgs...)...)
	cmd.Env = env
	return connectCommand(t, cmd, opts, version)
}

// connectCommand connects the tests' Go SDK client, with opts and the
// protocol version given (the SDK's own when empty), to cmd over stdio.
func connectCommand(t *testing.T, cmd *exec.Cmd, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "hosted-e2e", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, so)
	if err != nil {
		t.Fatalf("connect to %s: %v", strings.Join(cmd.Args, " "), err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// Three clients of one inline entry and one shape share one upstream: each
// gets its own answers under the same ids (every go-sdk client numbers from
// 1); a client that probes with server/discover (and speaks 2026-07-28
// through the era bridge) and a 2025-11-25 client are
// served by the same instance; sampling during the only client's call
// reaches it, and with another client's call in flight it is refused and
// nobody sees it. A client that declares no sampling has an upstream of its
// own, initialized as it declares (docs/decisions/0056-client-shape.md).
func TestHostedGoSDKClientsShareOneUpstream(t *testing.T) {
	env, _, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	asked := make(chan string, 4)
	sampler := func(name string) *mcp.ClientOptions {
		return &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			asked <- name
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "from " + name}}, nil
		}}
	}
	a := hostedClient(t, env, sampler("a"), "")           // probes with server/discover: 2026-07-28 through the bridge
	b := hostedClient(t, env, sampler("b"), "2025-11-25") // initialize at once
	c := hostedClient(t, env, sampler("c"), "2025-11-25")
	pids := map[string]bool{}
	for name, cs := range map[string]*mcp.ClientSession{"a": a, "b": b, "c": c} {
		out, _ := callText(t, cs, "echo", map[string]any{"text": name})
		f := strings.Fields(out)
		if len(f) != 2 || f[0] != name {
			t.Fatalf("%s got %q", name, out)
		}
		pids[f[1]] = true
	}
	if len(pids) != 1 || len(processesOf(server)) != 1 {
		t.Fatalf("upstreams: %v, processes %v", pids, processesOf(server))
	}
	plain := hostedClient(t, env, nil, "2025-11-25")
	if out, _ := callText(t, plain, "echo", map[string]any{"text": "plain"}); pids[strings.TrimPrefix(out, "plain ")] || len(processesOf(server)) != 2 {
		t.Fatalf("a client of another shape: %q, processes %v", out, processesOf(server))
	}
	if out, isErr := callText(t, a, "sample", map[string]any{"text": "q"}); isErr || out != "sampled: from a" {
		t.Fatalf("sampling with one client in flight: %q", out)
	}
	if who := <-asked; who != "a" {
		t.Fatalf("sampling went to %s", who)
	}
	done := make(chan struct{})
	go func() { defer close(done); callText(t, b, "sleep", map[string]any{"ms": 1500}) }()
	time.Sleep(300 * time.Millisecond)
	out, isErr := callText(t, a, "sample", map[string]any{"text": "q"})
	if !isErr || !strings.Contains(out, "shared") {
		t.Fatalf("sampling with two clients in flight: %q", out)
	}
	select {
	case who := <-asked:
		t.Fatalf("client %s was asked to sample", who)
	default:
	}
	<-done
}

// kill -9 of the upstream mid-call answers the caller within a second and
// the next call works; kill -9 of the daemon leaves no upstream behind.
func TestHostedUpstreamAndDaemonKilled(t *testing.T) {
	env, runtime, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	a := hostedClient(t, env, nil, "2025-11-25")
	callText(t, a, "echo", map[string]any{"text": "warm"})
	up := processesOf(server)
	if len(up) != 1 {
		t.Fatalf("upstreams %v", up)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60000}})
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(up[0], syscall.SIGKILL)
	killed := time.Now()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "hostedserver") || !strings.Contains(err.Error(), ".log") {
			t.Fatalf("the call in flight got %v", err)
		}
		if took := time.Since(killed); took > time.Second {
			t.Fatalf("answered after %v", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight was never answered")
	}
	if out, _ := callText(t, a, "echo", map[string]any{"text": "again"}); !strings.HasPrefix(out, "again") {
		t.Fatalf("after the crash: %q", out)
	}
	if now := processesOf(server); len(now) != 1 || now[0] == up[0] {
		t.Fatalf("upstreams after restart: %v", now)
	}
	// A server started through a wrapper, as npx starts one: the server is
	// a grandchild, and it ignores its stdin closing and SIGTERM. The
	// wrapper also starts a descendant that leaves the process group
	// (setsid), which the keeper ends too: as the subreaper, or with its
	// tracker (checkMechanisms says which runs).
	mark := fmt.Sprint(950000 + os.Getpid()%10000) // apart from TestHostedDescendantsEndWithTheUpstream's
	wrapped := runClient(t, env, nil, "2025-11-25", "/bin/sh", "-c", "setsid sleep "+mark+" >/dev/null 2>&1 </dev/null & "+server+" -stubborn; true")
	callText(t, wrapped, "echo", map[string]any{"text": "wrapped"})
	if n := len(processesOf(server)); n != 2 {
		t.Fatalf("%d upstreams with the wrapped one", n)
	}
	awaitSleepers(t, []string{mark}, true, "")
	checkMechanisms(t, env, runtime, false)
	killDaemonsIn(runtime)
	deadline := time.Now().Add(5 * time.Second)
	for len(processesOf(server)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := processesOf(server); len(left) > 0 {
		t.Fatalf("upstreams alive 5s after kill -9 of the daemon: %v", left)
	}
	awaitSleepers(t, []string{mark}, false, "kill -9 of the daemon")
}

// A hosted server that cannot start gives the client an error naming it and
// its log, and a named server the config lacks is refused clearly.
func TestHostedBadCommands(t *testing.T) {
	env, _, state := shimEnv(t)
	cfg := filepath.Join(state, ".config", "hearth", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte(fmt.Sprintf("[servers.echo]\ncommand = %q\n", filepath.Join(bin.dir, "hostedserver"))), 0o600)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--", "/no/such/mcp-server"}, []string{"could not be started", "mcp-server", ".log"}},
		{[]string{"run", "--", "/bin/sh", "-c", "echo boom >&2; exit 7"}, []string{"exit status 7", "boom"}},
		{[]string{"run", "nosuch"}, []string{`"nosuch" is neither a server of the config file`, "nor a command on your PATH"}},
		{[]string{"run", "nosuch", "--stdio"}, []string{`"nosuch" is neither a server of the config file`}},
		// A configured name given arguments: the user says which with --.
		{[]string{"run", "echo", "x"}, []string{`"echo" is a server of the config file`, "hearth run -- echo ARGS"}},
	} {
		cmd := exec.Command(bin.hearth, tc.args...)
		cmd.Env = env
		cl := mcp.NewClient(&mcp.Implementation{Name: "bad", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		cancel()
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: got %v, want %q in it", tc.args, err, w)
			}
		}
	}
	// The daemon still serves.
	out, _ := callText(t, hostedClient(t, env, nil, "2025-11-25"), "echo", map[string]any{"text": "ok"})
	if !strings.HasPrefix(out, "ok") {
		t.Fatalf("after the bad ones: %q", out)
	}
}

// hearthd status lists a hosted instance (never an environment value) and
// hearthd servers restarts it; models are not offered to.
func TestHostedStatusAndRestart(t *testing.T) {
	env, _, _ := shimEnv(t)
	env = append(env, "HEARTH_RUN_ENV=HOSTED_TOKEN", "HOSTED_TOKEN=very-secret-value")
	a := hostedClient(t, env, nil, "2025-11-25")
	out1, _ := callText(t, a, "echo", map[string]any{"text": "x"})
	raw := statusJSON(t, env)
	var st struct {
		Clients []struct{ Name, Hosted string }
		Hosted  []struct {
			Server, Sharing, Key, State, Era string
			Pid, Clients                     int
			EnvNames                         []string
		} `json:"hosted"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Hosted) != 1 || st.Hosted[0].Server != "hostedserver" || st.Hosted[0].State != "running" || st.Hosted[0].Clients != 1 ||
		st.Hosted[0].Era != "2025-11-25" || st.Hosted[0].Sharing != "directory" || !slices.Contains(st.Hosted[0].EnvNames, "HOSTED_TOKEN") {
		t.Fatalf("status: %s", raw)
	}
	named := false
	for _, c := range st.Clients {
		named = named || (c.Name == "hosted-e2e" && c.Hosted == "hostedserver")
	}
	if !named {
		t.Fatalf("no client named hosted-e2e attached to hostedserver: %+v", st.Clients)
	}
	if strings.Contains(string(raw), "very-secret-value") {
		t.Fatal("an environment value in the status")
	}
	// Restarting is the user's: a model's client of hearth is not offered
	// hosted_servers (hosted_control is off); hearthd servers sends
	// $/hearth/servers on the socket.
	own := exec.Command(bin.hearth)
	own.Env = env
	tools, err := connectCommand(t, own, nil, "2025-11-25").ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "hosted_servers" }) || len(tools.Tools) == 0 {
		t.Fatalf("a model is offered hosted_servers, or nothing: %d tools", len(tools.Tools))
	}
	cmd := exec.Command(bin.hearthd, "servers", "restart", "hostedserver")
	cmd.Env = env
	if o, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(o), "restarted 1") {
		t.Fatalf("servers restart: %v %s", err, o)
	}
	out2, _ := callText(t, a, "echo", map[string]any{"text": "x"})
	if out1 == out2 {
		t.Fatalf("the same process after a restart: %q", out2)
	}
	cmd = exec.Command(bin.hearthd, "servers", "stop", "nosuch")
	cmd.Env = env
	if o, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(o), `no hosted server named "nosuch"`) {
		t.Fatalf("servers stop of nothing: %v %s", err, o)
	}
}

// Servers of the config file: the idle timeout stops one; a server that
// ignores its stdin closing and SIGTERM is killed within the grace; bad
// servers (garbage on stdout, no answer to initialize) each give a clear
// error naming the server and its log while another keeps serving.
func TestHostedConfigServersLifecycleAndBadInput(t *testing.T) {
	env, _, state := shimEnv(t, "HEARTH_KILL_GRACE=400ms")
	script := func(name, body string) string {
		p := filepath.Join(state, name)
		os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o700)
		return p
	}
	garbage := script("garbage.sh", "echo 'Server listening on port 3000'\nsleep 60")
	silent := script("silent.sh", "cat >/dev/null")
	os.MkdirAll(filepath.Join(state, ".config", "hearth"), 0o700)
	config := fmt.Sprintf(`
[servers.idle]
command = %q
sharing = "global"
idle_timeout = "1s"

[servers.stubborn]
command = %q
args = ["-stubborn"]
sharing = "global"
idle_timeout = "1s"

[servers.garbage]
command = %q

[servers.silent]
command = %q
init_timeout = "1s"
`, filepath.Join(bin.dir, "hostedserver"), filepath.Join(bin.dir, "hostedserver"), garbage, silent)
	os.WriteFile(filepath.Join(state, ".config", "hearth", "config.toml"), []byte(config), 0o600)

	named := func(name string) (*mcp.ClientSession, error) {
		cmd := exec.Command(bin.hearth, "run", name)
		cmd.Env = env
		cl := mcp.NewClient(&mcp.Implementation{Name: "cfg", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	}
	server := filepath.Join(bin.dir, "hostedserver")
	for _, name := range []string{"idle", "stubborn"} {
		cs, err := named(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		callText(t, cs, "echo", map[string]any{"text": "x"})
		if n := len(processesOf(server)); n != 1 {
			t.Fatalf("%s: %d upstreams", name, n)
		}
		cs.Close()
		// 1s idle, then at most the 400ms grace (SIGTERM ignored by the
		// stubborn one; its stdin closing too).
		deadline := time.Now().Add(4 * time.Second)
		for len(processesOf(server)) > 0 && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if n := len(processesOf(server)); n != 0 {
			t.Fatalf("%s: the upstream outlived its idle timeout and grace", name)
		}
	}
	keep, err := named("idle")
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Close()
	for _, tc := range []struct{ name, want string }{
		{"garbage", `wrote something other than JSON-RPC to its stdout: "Server listening on port 3000"`},
		{"silent", "never answered initialize within 1s"},
	} {
		_, err := named(tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), ".log") {
			t.Errorf("%s: got %v, want %q with its log", tc.name, err, tc.want)
		}
		if out, _ := callText(t, keep, "echo", map[string]any{"text": "alive"}); !strings.HasPrefix(out, "alive") {
			t.Fatalf("after %s: %q", tc.name, out)
		}
	}
}

// Clients on a handed-over stdio and on a relaying socket share one
// instance and call it at once with frames below and above a page: every
// answer reaches its own client whole and matching, whichever way it left
// the daemon (written by the goroutine that routed it, or by the peer's
// outbox when too large to go at once; docs/decisions/0040).
func TestHostedSmallAndLargeFramesOnBothTransports(t *testing.T) {
	env, _, _ := shimEnv(t)
	direct := hostedClient(t, env, nil, "2025-11-25")
	relay := hostedClient(t, append(slices.Clone(env), "HEARTH_SHIM_RELAY=1"), nil, "2025-11-25")
	errs := make(chan error, 2)
	for name, cs := range map[string]*mcp.ClientSession{"direct": direct, "relay": relay} {
		go func() {
			for i := range 60 {
				// 10, 3 000, 5 000 and 70 000 bytes: within a page, near
				// it, past it, and past the staging pipe's 64 KiB.
				size := []int{10, 3000, 5000, 70000}[i%4]
				text := name + strings.Repeat(strconv.Itoa(i%10), size)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
				cancel()
				if err != nil {
					errs <- fmt.Errorf("%s call %d: %v", name, i, err)
					return
				}
				got := res.Content[0].(*mcp.TextContent).Text
				if f := strings.Fields(got); len(f) != 2 || f[0] != text {
					errs <- fmt.Errorf("%s call %d (%d bytes): answered %.80q", name, i, len(text), got)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(processesOf(filepath.Join(bin.dir, "hostedserver"))); n != 1 {
		t.Fatalf("%d upstreams for two clients of one entry", n)
	}
}

// A tool added at run time: notifications/tools/list_changed reaches every
// client of the shared instance, and a tools/list after it is fresh, not
// the list hearth cached before (the upstream declares listChanged).
func TestHostedToolListChanged(t *testing.T) {
	env, _, _ := shimEnv(t)
	changed := make(chan string, 8)
	told := func(name string) *mcp.ClientOptions {
		return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- name }}
	}
	a := hostedClient(t, env, told("a"), "2025-11-25")
	b := hostedClient(t, env, told("b"), "2025-11-25")
	has := func(cs *mcp.ClientSession, tool string) bool {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		return slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == tool })
	}
	for range 2 { // the second is answered from hearth's cache
		if has(a, "added_at_run_time") || !has(a, "add_tool") {
			t.Fatal("tools/list before the change")
		}
	}
	if out, isErr := callText(t, b, "add_tool", map[string]any{"text": "added_at_run_time"}); isErr {
		t.Fatalf("add_tool: %s", out)
	}
	got := map[string]bool{}
	timeout := time.After(10 * time.Second)
	for len(got) < 2 {
		select {
		case who := <-changed:
			got[who] = true
		case <-timeout:
			t.Fatalf("tools/list_changed reached only %v", got)
		}
	}
	if !has(a, "added_at_run_time") {
		t.Fatal("tools/list after the change is stale")
	}
	if out, _ := callText(t, a, "added_at_run_time", map[string]any{}); out != "I was added" {
		t.Fatalf("the added tool: %q", out)
	}
}

// Bad frames from a client of a hosted server are answered by hearth, each
// with its error, and the client and the instance go on serving: the frame
// is decoded once, by the session, and the router answers what did not
// decode.
func TestHostedBadClientFrames(t *testing.T) {
	env, _, _ := shimEnv(t)
	cmd := exec.Command(bin.hearth, "run", "--", filepath.Join(bin.dir, "hostedserver"))
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	ask := func(frame string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(in, frame+"\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the connection ended after %s", frame)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s answered with %q", frame, l)
			}
			return m
		case <-time.After(20 * time.Second):
			t.Fatalf("no answer to %s", frame)
			return nil
		}
	}
	if m := ask(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for _, tc := range []struct {
		frame string
		id    any
		code  float64
	}{
		{`not json`, nil, -32700},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"`, nil, -32700},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, nil, -32600},
		{`{"jsonrpc":"2.0","id":4,"method":7}`, 4.0, -32600},
		{"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}", nil, -32700},
	} {
		m := ask(tc.frame)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || m["id"] != tc.id {
			t.Errorf("%q answered %v, want error %v with id %v", tc.frame, m, tc.code, tc.id)
		}
		if m := ask(`{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"echo","arguments":{"text":"still"}}}`); m["result"] == nil {
			t.Fatalf("after %q: %v", tc.frame, m)
		}
	}
}
