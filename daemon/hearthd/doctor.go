package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/deploy/launchd"
	"github.com/hearth-mcp/hearth/deploy/systemd"
	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/localsock"
	"github.com/hearth-mcp/hearth/pkg/owner"
	"github.com/hearth-mcp/hearth/pkg/portable"
	"github.com/hearth-mcp/hearth/pkg/version"
	"github.com/hearth-mcp/hearth/shim"
)

// `hearthd doctor` exercises, for real on this machine, each mechanism of
// the system's own that hearth relies on, and says for each one whether it
// works and, when it does not, what that means for the user
// (docs/platforms.md). It needs no running daemon: it starts one of its
// own on a socket in a temporary directory, and touches none of the user's
// files.

// The hidden commands the doctor runs itself as: an upstream for `hearth
// run` that starts a child in a session of its own, and that child.
const (
	doctorUpstream = "__doctor-upstream"
	doctorSleeper  = "__doctor-sleeper"
)

// check is one mechanism's outcome.
type check struct {
	Name    string `json:"name"`
	Status  string `json:"status"` // ok, fail, fallback, skipped
	Detail  string `json:"detail"`
	Meaning string `json:"meaning,omitempty"` // what a failure means for the user
}

// doctorReport is what --json prints.
type doctorReport struct {
	Version  string  `json:"version"`
	OS       string  `json:"os"`
	Arch     string  `json:"arch"`
	Portable bool    `json:"portable"`
	Checks   []check `json:"checks"`
}

func doctorCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hearthd doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON, for a bug report")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "hearthd doctor: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	r := doctorReport{Version: version.Tooling(), OS: runtime.GOOS, Arch: runtime.GOARCH, Portable: portable.Read(os.Getenv).All}
	tmp, err := os.MkdirTemp("", "hearth-doctor-")
	if err != nil {
		fmt.Fprintln(stderr, "hearthd doctor:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	r.Checks = append(r.Checks, checkSocketDir(), checkSocket(tmp))
	r.Checks = append(r.Checks, checkServing(tmp)...)
	r.Checks = append(r.Checks, checkClientEnv(), checkReplace(tmp), checkService(tmp), checkLock(tmp), checkOwnership())
	failed := false
	for _, c := range r.Checks {
		failed = failed || c.Status == "fail"
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(r)
	} else {
		fmt.Fprintf(stdout, "hearthd doctor: %s on %s/%s%s\n", r.Version, r.OS, r.Arch, map[bool]string{true: " (HEARTH_PORTABLE=1)"}[r.Portable])
		for _, c := range r.Checks {
			fmt.Fprintf(stdout, "%-8s %-20s %s\n", c.Status, c.Name, c.Detail)
			if c.Status == "fail" && c.Meaning != "" {
				fmt.Fprintf(stdout, "%-8s %-20s means: %s\n", "", "", c.Meaning)
			}
		}
		if failed {
			fmt.Fprintln(stdout, "\nSomething hearth relies on failed: please send the output of `hearthd doctor --json` with your report.")
		}
	}
	if failed {
		return 1
	}
	return 0
}

func ok(name, detail string) check { return check{Name: name, Status: "ok", Detail: detail} }
func fail(name, detail, meaning string) check {
	return check{Name: name, Status: "fail", Detail: detail, Meaning: meaning}
}

// checkSocketDir: the directory of the socket (the pipe's lock on Windows)
// is the user's alone.
func checkSocketDir() check {
	const name = "socket directory"
	path, _, err := endpoint.SocketPath(os.Getenv)
	if err != nil {
		return fail(name, err.Error(), "no daemon can serve: set MCP_SOCKET_PATH")
	}
	dir := filepath.Dir(path)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return ok(name, dir+" does not exist yet: the daemon creates it yours alone")
	}
	if err := privateDir(dir); err != nil {
		return fail(name, err.Error(), "another user could reach or replace your daemon's socket; make the directory yours alone (or remove it, and the daemon creates it so)")
	}
	return ok(name, dir+" is yours alone")
}

// checkSocket: a socket (a named pipe on Windows) bound as the daemon binds
// it, dialed as the shim dials it; each end reads the other's user, and a
// frame goes each way.
func checkSocket(tmp string) check {
	const name = "socket peer check"
	meaning := "the daemon cannot serve clients over its socket on this system; use `hearthd stdio`"
	path := filepath.Join(tmp, "s", "doctor.sock")
	l, err := localsock.Listen(path, localsock.Options{Private: true})
	if err != nil {
		return fail(name, "listen: "+err.Error(), meaning)
	}
	defer l.Remove()
	accepted := make(chan *localsock.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	c, err := localsock.Dial(path)
	if err != nil {
		return fail(name, "dial: "+err.Error(), meaning)
	}
	defer c.Close()
	s := <-accepted
	if s == nil {
		return fail(name, "accept failed", meaning)
	}
	defer s.Close()
	if err := localsock.Ours(s.Peer, "the client"); err != nil {
		return fail(name, "the daemon's view of its client: "+err.Error(), meaning)
	}
	if err := localsock.Ours(c.Peer, "the server"); err != nil {
		return fail(name, "the client's view of its server: "+err.Error(), meaning)
	}
	if err := frameBothWays(c, s); err != nil {
		return fail(name, err.Error(), meaning)
	}
	return ok(name, fmt.Sprintf("both ends read user %s (client pid %d); a frame went each way", s.Peer.User, s.Peer.PID))
}

func frameBothWays(a, b io.ReadWriter) error {
	for _, p := range [][2]io.ReadWriter{{a, b}, {b, a}} {
		frame := []byte("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n")
		if _, err := p[0].Write(frame); err != nil {
			return fmt.Errorf("write a frame: %w", err)
		}
		got := make([]byte, len(frame))
		if _, err := io.ReadFull(p[1], got); err != nil || string(got) != string(frame) {
			return fmt.Errorf("read the frame back: %q, %v", got, err)
		}
	}
	return nil
}

// checkServing starts a daemon of its own on a socket in tmp, then: a
// shim carries a frame each way (its hand-over or its relay), and `hearth
// run` of an upstream that starts a child in a session of its own, whose
// whole tree the keeper ends when the daemon is killed.
func checkServing(tmp string) []check {
	const relay, keeper = "shim relay", "keeper ends tree"
	self, err := os.Executable()
	if err != nil {
		return []check{fail(relay, err.Error(), ""), fail(keeper, err.Error(), "")}
	}
	shimPath := filepath.Join(filepath.Dir(self), "hearth"+exeSuffix())
	if _, err := os.Stat(shimPath); err != nil {
		if shimPath, err = exec.LookPath("hearth"); err != nil {
			why := "no hearth" + exeSuffix() + " beside hearthd or on PATH"
			return []check{{Name: relay, Status: "skipped", Detail: why}, {Name: keeper, Status: "skipped", Detail: why}}
		}
	}
	sock := filepath.Join(tmp, "d", "hearthd.sock")
	cfg := filepath.Join(tmp, "config.toml")
	os.WriteFile(cfg, nil, 0o600)
	env := append(os.Environ(), "MCP_SOCKET_PATH="+sock, "HEARTH_HOME="+filepath.Join(tmp, "home"), "HEARTH_CONFIG="+cfg,
		"MCP_READY_FILE=", "HEARTH_NO_AUTOSTART=1", "HEARTH_DAEMON=", "HEARTH_IDLE_TIMEOUT=")
	d := exec.Command(self, "serve")
	d.Env = env
	logf, _ := os.Create(filepath.Join(tmp, "daemon.log"))
	d.Stdout, d.Stderr = logf, logf
	if err := d.Start(); err != nil {
		return []check{fail(relay, "start a daemon: "+err.Error(), ""), fail(keeper, "no daemon", "")}
	}
	defer func() { d.Process.Kill(); d.Wait() }()
	up := false
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if c, err := localsock.Dial(sock); err == nil {
			c.Close()
			up = true
			break
		}
	}
	if !up {
		log, _ := os.ReadFile(filepath.Join(tmp, "daemon.log"))
		why := "a daemon of the doctor's own did not serve within 30 s: " + strings.TrimSpace(string(log))
		return []check{fail(relay, why, "hearthd serve cannot start here"), fail(keeper, "no daemon", "")}
	}

	out := []check{}
	if name, err := shimSession(shimPath, env, nil); err != nil {
		out = append(out, fail(relay, err.Error(), "clients cannot reach the daemon through the shim; use `hearthd stdio` in their configs"))
	} else {
		out = append(out, ok(relay, "initialize went through "+filepath.Base(shimPath)+" to "+name+" and its answer came back"))
	}

	meaning := "a hosted server's processes can outlive a daemon that dies; `hearthd sweep` finds what is left"
	pidFile := filepath.Join(tmp, "child.pid")
	run := exec.Command(shimPath, "run", self, doctorUpstream, pidFile)
	run.Env = env
	stdin, _ := run.StdinPipe()
	stdout, _ := run.StdoutPipe()
	if err := run.Start(); err != nil {
		return append(out, fail(keeper, "hearth run: "+err.Error(), meaning))
	}
	defer func() { run.Process.Kill(); run.Wait() }()
	if name, err := exchange(stdin, stdout); err != nil || name != "hearth-doctor-upstream" {
		return append(out, fail(keeper, fmt.Sprintf("hearth run's initialize: %q, %v", name, err), meaning))
	}
	var child int
	for end := time.Now().Add(10 * time.Second); child == 0 && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if child == 0 || !pidAlive(child) {
		return append(out, fail(keeper, "the hosted server's child did not start", meaning))
	}
	d.Process.Kill()
	d.Wait()
	for end := time.Now().Add(20 * time.Second); pidAlive(child) && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
	}
	if pidAlive(child) {
		killPid(child)
		return append(out, fail(keeper, fmt.Sprintf("the hosted server's child (pid %d, %s) outlived the killed daemon by 20 s", child, childWords), meaning))
	}
	return append(out, ok(keeper, fmt.Sprintf("the hosted server's child (pid %d, %s) ended when the daemon was killed", child, childWords)))
}

// shimSession runs the shim with args and exchanges initialize with
// whatever serves it, returning the server's name.
func shimSession(shimPath string, env, args []string) (string, error) {
	cmd := exec.Command(shimPath, args...)
	cmd.Env = env
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	return exchange(stdin, stdout)
}

// exchange sends initialize and reads the answer, bounded by 30 s.
func exchange(w io.Writer, r io.Reader) (string, error) {
	type result struct {
		name string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadBytes('\n')
		var ans struct {
			Result struct {
				ServerInfo struct{ Name string } `json:"serverInfo"`
			} `json:"result"`
		}
		if err == nil {
			err = json.Unmarshal(line, &ans)
		}
		if err == nil && ans.Result.ServerInfo.Name == "" {
			err = fmt.Errorf("not an initialize result: %s", strings.TrimSpace(string(line)))
		}
		done <- result{ans.Result.ServerInfo.Name, err}
	}()
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hearthd-doctor","version":"1"}}}` + "\n"
	if _, err := io.WriteString(w, init); err != nil {
		return "", err
	}
	select {
	case res := <-done:
		return res.name, res.err
	case <-time.After(30 * time.Second):
		return "", errors.New("no answer to initialize within 30 s")
	}
}

// doctorUpstreamMain is `hearthd __doctor-upstream PIDFILE`: it starts a
// child in a session of its own, writes the child's pid, and answers MCP
// requests on stdio (initialize with its name, anything else with an empty
// result).
func doctorUpstreamMain(args []string) int {
	if len(args) != 1 {
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		return 1
	}
	c := exec.Command(self, doctorSleeper)
	ownSession(c)
	if err := c.Start(); err != nil {
		return 1
	}
	os.WriteFile(args[0], []byte(strconv.Itoa(c.Process.Pid)+"\n"), 0o600)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<24)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || len(req.ID) == 0 {
			continue
		}
		var result any = map[string]any{}
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": req.Params.ProtocolVersion, "capabilities": map[string]any{},
				"serverInfo": map[string]any{"name": "hearth-doctor-upstream", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{}}
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		os.Stdout.Write(append(b, '\n'))
	}
	return 0
}

// checkClientEnv: the shim reads its client's environment (what `hearth
// run` passes its server) as it does for a client: here the doctor's own
// parent's.
func checkClientEnv() check {
	const name = "client environment"
	sw := portable.Read(os.Getenv)
	if sw.NoParentEnv {
		return check{Name: name, Status: "fallback", Detail: "HEARTH_PORTABLE=1: not read; hearth run passes only the variables --env or HEARTH_RUN_ENV names"}
	}
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		return check{Name: name, Status: "fallback", Detail: runtime.GOOS + " gives no way to read another process's environment: hearth run passes only the variables --env or HEARTH_RUN_ENV names"}
	}
	env, readable := shim.ParentEnv(sw.NoParentEnv)
	if !readable {
		return fail(name, fmt.Sprintf("the environment of this process's parent (pid %d) cannot be read on %s", os.Getppid(), runtime.GOOS),
			"hearth run cannot pass your client's variables to its servers: name them with --env or HEARTH_RUN_ENV (docs/hosting.md)")
	}
	return ok(name, fmt.Sprintf("read %d variables of the parent process (pid %d)", len(env), os.Getppid()))
}

// checkReplace: a file replaced as adopt replaces a client's config
// (compared, then exchanged or renamed), and a file changed meanwhile left
// alone.
func checkReplace(tmp string) check {
	const name = "atomic replace"
	meaning := "hearthd adopt cannot rewrite your clients' configs safely here"
	p := filepath.Join(tmp, "client.json")
	if err := os.WriteFile(p, []byte(`{"a":1}`), 0o600); err != nil {
		return fail(name, err.Error(), meaning)
	}
	if err := atomicfile.ReplaceIfUnchanged(p, []byte(`{"a":2}`), []byte(`{"a":1}`), ""); err != nil {
		return fail(name, err.Error(), meaning)
	}
	if b, _ := os.ReadFile(p); string(b) != `{"a":2}` {
		return fail(name, fmt.Sprintf("the replaced file holds %q", b), meaning)
	}
	if err := atomicfile.ReplaceIfUnchanged(p, []byte(`{"a":3}`), []byte(`{"a":1}`), ""); !errors.Is(err, atomicfile.ErrChanged) {
		return fail(name, fmt.Sprintf("a file changed since it was read was replaced (%v)", err), meaning)
	}
	return ok(name, "replaced when unchanged, refused when changed")
}

// checkService: the service manager's entry install-service writes is
// valid, where the system's own checker is present.
func checkService(tmp string) check {
	const name = "service entry"
	self, err := os.Executable()
	if err != nil {
		return fail(name, err.Error(), "")
	}
	meaning := "hearthd install-service would write an entry the service manager rejects; the shim still starts the daemon"
	switch serviceManager(runtime.GOOS) {
	case "systemd":
		analyze, err := exec.LookPath("systemd-analyze")
		if err != nil {
			return check{Name: name, Status: "skipped", Detail: "systemd-analyze not found"}
		}
		units, err := systemd.Render(self)
		if err != nil {
			return fail(name, err.Error(), meaning)
		}
		var paths []string
		for _, u := range units {
			p := filepath.Join(tmp, u.Name)
			os.WriteFile(p, []byte(u.Content), 0o644)
			paths = append(paths, p)
		}
		verify := exec.Command(analyze, append([]string{"verify", "--user"}, paths...)...)
		if rt := os.Getenv("XDG_RUNTIME_DIR"); rt == "" {
			// A user manager needs a runtime directory to start in;
			// without a login session (a container) it has none.
			verify.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+tmp)
		}
		out, err := verify.CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			return fail(name, fmt.Sprintf("systemd-analyze verify: %v %s", err, strings.TrimSpace(string(out))), meaning)
		}
		return ok(name, "systemd-analyze verify accepts the units install-service writes")
	case "launchd":
		plutil, err := exec.LookPath("plutil")
		if err != nil {
			return check{Name: name, Status: "skipped", Detail: "plutil not found"}
		}
		home, _ := endpoint.UserHome(os.Getenv)
		a, err := launchd.Render(self, home)
		if err != nil {
			return fail(name, err.Error(), meaning)
		}
		p := filepath.Join(tmp, launchd.Label+".plist")
		os.WriteFile(p, []byte(a.Content), 0o644)
		if out, err := exec.Command(plutil, "-lint", p).CombinedOutput(); err != nil {
			return fail(name, fmt.Sprintf("plutil -lint: %v %s", err, strings.TrimSpace(string(out))), meaning)
		}
		return ok(name, "plutil -lint accepts the LaunchAgent install-service writes")
	}
	return check{Name: name, Status: "skipped", Detail: "no service on " + runtime.GOOS + ": the shim starts the daemon"}
}

// checkLock: a data directory's owner lock is exclusive.
func checkLock(tmp string) check {
	const name = "data directory lock"
	meaning := "two daemons could open one data directory at once"
	home := filepath.Join(tmp, "lockhome")
	l, err := owner.Acquire(home)
	if err != nil {
		return fail(name, err.Error(), meaning)
	}
	defer l.Release()
	_, err = owner.Acquire(home)
	var held *owner.HeldError
	if !errors.As(err, &held) {
		return fail(name, fmt.Sprintf("a second owner was not refused (%v)", err), meaning)
	}
	return ok(name, "a second owner is refused, naming the first")
}

// checkOwnership: the config file and the HTTP token file, where they
// exist, are the user's and not open to others.
func checkOwnership() check {
	const name = "file ownership"
	place, _, err := endpoint.ConfigPlace(os.Getenv)
	if err != nil {
		return fail(name, err.Error(), "")
	}
	var seen []string
	for _, f := range []struct {
		path   string
		secret bool
	}{{place.Path, false}, {filepath.Join(filepath.Dir(place.Path), "http-token"), true}} {
		if _, err := os.Stat(f.path); errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err := endpoint.OwnFile(f.path, f.secret); err != nil {
			return fail(name, err.Error(), "hearth refuses a config or token file another user could change or read")
		}
		seen = append(seen, f.path)
	}
	if len(seen) == 0 {
		return ok(name, "no config or token file yet ("+place.Path+")")
	}
	return ok(name, strings.Join(seen, ", ")+": yours, closed to others")
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}
