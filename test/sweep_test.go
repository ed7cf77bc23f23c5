//go:build linux

package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/proctable"
	"github.com/hearth-mcp/hearth/pkg/sweep"
)

// sweepScene is the processes one sweep test made, each in a session of its
// own, so that every sweep it runs is told those sessions and no other (the
// machine's other processes, of other tests and other work, are this
// user's too, and a sweep of them all would end theirs).
type sweepScene struct {
	t        *testing.T
	sessions []int
	made     []ident // processes made here outside those sessions, to kill at the end whatever happens
}

// end kills whatever the scene made and is still there: every process of
// its sessions (a server whose client the test killed lingers, by design)
// and those it started or saw elsewhere (a setsid grandchild's own session).
func (s *sweepScene) end() {
	table, _ := proctable.List()
	for _, p := range table {
		if slices.Contains(s.sessions, p.Sid) || slices.Contains(s.made, identOf(p)) {
			syscall.Kill(p.Pid, syscall.SIGKILL)
		}
	}
}

// start runs argv in a new session with stdin (nil: /dev/null) and returns
// it and its stdout.
func (s *sweepScene) start(stdin *os.File, env []string, dir string, argv ...string) (*exec.Cmd, *bufio.Reader) {
	s.t.Helper()
	c := exec.Command(argv[0], argv[1:]...)
	c.Env, c.Dir = env, dir
	if stdin != nil {
		c.Stdin = stdin
	}
	c.Stderr = os.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := c.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.sessions = append(s.sessions, c.Process.Pid)
	return c, bufio.NewReader(out)
}

// client starts an MCP client that prints its server's pid once it listed
// its tools, and returns the client's pid and the server's.
func (s *sweepScene) client(env []string, dir string, argv ...string) (client, server int) {
	s.t.Helper()
	c, out := s.start(nil, env, dir, argv...)
	line := make(chan string, 1)
	go func() { l, _ := out.ReadString('\n'); line <- l }()
	var got struct{ Pid, Tools int }
	select {
	case l := <-line:
		go c.Wait() // reaps it once the test kills it
		if err := json.Unmarshal([]byte(l), &got); err != nil || got.Pid == 0 || got.Tools == 0 {
			s.t.Fatalf("%s printed %q", strings.Join(argv, " "), l)
		}
	case <-time.After(60 * time.Second):
		s.t.Fatalf("%s did not connect in 60s", strings.Join(argv, " "))
	}
	return c.Process.Pid, got.Pid
}

// background runs script in sh, in a session of its own, with stdin, and
// returns the pid the script writes to fd 3 (what it put in the background
// before it exited, reparented to init then).
func (s *sweepScene) background(stdin *os.File, script string) int {
	s.t.Helper()
	r, w, _ := os.Pipe()
	c := exec.Command("/bin/sh", "-c", script)
	c.Stdin = stdin
	c.ExtraFiles = []*os.File{w}
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Run(); err != nil {
		s.t.Fatal(err)
	}
	w.Close()
	b, _ := bufio.NewReader(r).ReadString('\n') // one line: what it started may hold fd 3 still
	r.Close()
	pid, err := strconv.Atoi(strings.TrimSpace(b))
	if err != nil {
		s.t.Fatalf("%s wrote %q", script, b)
	}
	s.sessions = append(s.sessions, c.Process.Pid) // what it put in the background keeps the session
	return pid
}

// sweep runs hearthd sweep on the scene's sessions.
func (s *sweepScene) sweep(extra ...string) (sweepOut, string) {
	s.t.Helper()
	args := []string{"sweep", "--json"}
	for _, sid := range s.sessions {
		args = append(args, "--session", strconv.Itoa(sid))
	}
	out, err := exec.Command(bin.hearthd, append(args, extra...)...).Output()
	var got sweepOut
	if jerr := json.Unmarshal(out, &got); err != nil || jerr != nil {
		s.t.Fatalf("hearthd %s: %v %v\n%s", strings.Join(args, " "), err, jerr, out)
	}
	return got, string(out)
}

type sweepOut struct {
	Orphans  []sweep.Orphan
	Outcomes []sweep.Outcome
}

// ident is a process by pid and start time.
type ident struct {
	pid   int
	start uint64
}

func identOf(p proctable.Proc) ident { return ident{p.Pid, p.Start} }

// alive: the process the table showed then is still there, not a zombie.
func alive(id ident) bool {
	p, err := proctable.Stat(id.pid)
	return err == nil && p.Start == id.start && !p.Zombie
}

// Clients killed with kill -9 while the servers they spawned run: a Node
// server through npx (the TypeScript SDK's client, a socket pair for
// stdin), a server that ignores SIGTERM (the go-sdk's client, pipes), and
// one that started a grandchild in a session of its own. hearthd sweep
// lists exactly those three trees, whole, and nothing else: not a live
// client's server, not hearth's own upstream (whose client was killed
// too), not a Node process with parent 1 and /dev/null for stdin, not a
// recognised server whose stdin pipe something still writes, not a
// `sleep` with parent 1 and a dead stdin pipe (not started as a server is).
// --kill ends the three trees and nothing else.
func TestSweepListsAndEndsWhatClientsLeft(t *testing.T) {
	node := needNode(t)
	dir, _ := filepath.Abs(filepath.Join("ts", "sweep"))
	s := &sweepScene{t: t}
	t.Cleanup(s.end)
	home := shortTempDir(t)
	// What a client passes its server: npm's cache in the test's own place
	// (npx installs the package directory there, without the registry), and
	// the variable Claude Code adds to every server it starts, so that the
	// list can say who started the first tree.
	serverEnv := map[string]string{"PATH": os.Getenv("PATH"), "HOME": home, "npm_config_cache": filepath.Join(home, "npm"),
		"npm_config_update_notifier": "false", "CLAUDECODE": "1"}
	spec := func(command string, args ...string) string {
		b, _ := json.Marshal(map[string]any{"command": command, "args": args, "cwd": dir, "env": serverEnv})
		return string(b)
	}
	env := os.Environ()
	leave := filepath.Join(dir, "leave.mjs")
	server := filepath.Join(dir, "server.mjs")

	// Left behind.
	npxClient, npxServer := s.client(env, dir, node, leave, spec("npx", "--yes", "./lingering"))
	stubbornClient, _ := s.client(env, dir, filepath.Join(bin.dir, "leaver"), node, server, "--ignore-term")
	detachClient, _ := s.client(env, dir, node, leave, spec(node, server, "--detach"))
	// Not left behind: a live client's server.
	_, liveServer := s.client(env, dir, node, leave, spec(node, server))
	// hearth's own upstream, its client killed too.
	daemonEnv, daemonPid := startUserDaemon(t)
	s.sessions = append(s.sessions, daemonPid) // autostarted in a session of its own
	hostedSpec, _ := json.Marshal(map[string]any{"command": bin.hearth, "args": []string{"run", "--", node, server, "--ignore-term"}, "cwd": dir, "env": envMap(daemonEnv)})
	hostedClient, _ := s.client(env, dir, node, leave, string(hostedSpec))
	// A Node process with parent 1, /dev/null for stdin.
	unrelated := s.background(nil, `node -e 'setInterval(() => {}, 1e6)' 3>&- & echo $! >&3`)
	// A recognised server with parent 1 whose stdin this test still writes.
	heldR, heldW, _ := os.Pipe()
	defer heldW.Close()
	held := s.background(heldR, `exec 4<&0; node -e 'setInterval(() => {}, 1e6)' <&4 4<&- 3>&- & echo $! >&3`)
	heldR.Close()
	// A sleep with parent 1 whose stdin pipe nobody writes.
	deadR, deadW, _ := os.Pipe()
	sleeper := s.background(deadR, `exec 4<&0; sleep 600 <&4 4<&- 3>&- & echo $! >&3`)
	deadR.Close()
	deadW.Close()

	table, err := proctable.List()
	if err != nil {
		t.Fatal(err)
	}
	// The trees to be left: what each doomed client descends to, less
	// itself.
	want := map[ident][]ident{} // top -> members
	for _, c := range []int{npxClient, stubbornClient, detachClient} {
		tree := proctable.Tree(table, c)
		if len(tree) < 2 {
			t.Fatalf("client %d has no server: %+v", c, tree)
		}
		var members []ident
		for _, p := range tree[1:] {
			members = append(members, identOf(p))
		}
		sortIdents(members)
		want[identOf(tree[1])] = members
		s.made = append(s.made, members...) // the detached grandchild is in a session of its own
	}
	doomed := map[ident]bool{}
	for _, ms := range want {
		for _, m := range ms {
			doomed[m] = true
		}
	}
	upstreams := 0
	for _, p := range table {
		if p.Name == "hearth-keeper" && p.Sid == daemonPid {
			upstreams += len(proctable.Tree(table, p.Pid)) - 1
		}
	}
	if upstreams == 0 {
		t.Fatal("no hosted upstream under a keeper")
	}

	for _, c := range []int{npxClient, stubbornClient, detachClient, hostedClient} {
		syscall.Kill(c, syscall.SIGKILL)
	}
	// Until the three trees are found (their clients' deaths take a
	// moment to reach them), then a moment more: nothing else comes.
	var got sweepOut
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ = s.sweep()
		if len(got.Orphans) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	got, _ = s.sweep()
	listedTrees := map[ident][]ident{}
	for _, o := range got.Orphans {
		var ms []ident
		for _, m := range o.Procs {
			ms = append(ms, ident{m.Pid, m.Start})
		}
		sortIdents(ms)
		listedTrees[ident{o.Pid, o.Start}] = ms
	}
	if fmt.Sprint(sortedTrees(listedTrees)) != fmt.Sprint(sortedTrees(want)) {
		t.Fatalf("listed %v\nwant   %v\n%+v", sortedTrees(listedTrees), sortedTrees(want), got.Orphans)
	}
	for _, o := range got.Orphans {
		if o.Command == "" || o.Name == "" || o.RSSBytes <= 0 || o.AgeSeconds < 0 || (o.Stdin == "") {
			t.Errorf("a listing without its command, name, memory, age or stdin: %+v", o)
		}
		if o.Pid == npxServer && o.Client != "Claude Code" {
			t.Errorf("the npx tree's client: %q", o.Client)
		}
	}
	text, err := exec.Command(bin.hearthd, append([]string{"sweep"}, sessionArgs(s.sessions)...)...).Output()
	if err != nil || !strings.Contains(string(text), "left behind by their clients (3)") || !strings.Contains(string(text), "--kill") {
		t.Fatalf("hearthd sweep: %v\n%s", err, text)
	}
	t.Logf("hearthd sweep:\n%s", text)

	// Processes that must outlive the sweep: every one of the scene's
	// sessions that is no member of a tree left behind (what ended on its
	// own once its client was killed, the hosted client's shim, is gone
	// by now), hearth's keeper and upstream among them.
	if table, err = proctable.List(); err != nil {
		t.Fatal(err)
	}
	byPid := proctable.ByPid(table)
	var keep []ident
	for _, p := range table {
		if slices.Contains(s.sessions, p.Sid) && !doomed[identOf(p)] && !p.Zombie {
			keep = append(keep, identOf(p))
		}
	}
	for _, pid := range []int{liveServer, unrelated, held, sleeper, daemonPid} {
		if p := byPid[pid]; p == nil || !slices.Contains(keep, identOf(*p)) {
			t.Fatalf("%d is not among the processes to keep", pid)
		}
	}
	for _, p := range table {
		if p.Name == "hearth-keeper" && p.Sid == daemonPid && !slices.Contains(keep, identOf(p)) {
			t.Fatalf("the keeper %d is not among the processes to keep", p.Pid)
		}
	}

	killed, _ := s.sweep("--kill", "--grace", "1s")
	if len(killed.Outcomes) != len(want) {
		t.Fatalf("outcomes %+v", killed.Outcomes)
	}
	for _, o := range killed.Outcomes {
		if o.Left != 0 || o.Skipped != "" || o.Ended == 0 {
			t.Errorf("outcome %+v", o)
		}
	}
	gone := func() []ident {
		var left []ident
		for m := range doomed {
			if alive(m) {
				left = append(left, m)
			}
		}
		return left
	}
	for deadline := time.Now().Add(5 * time.Second); len(gone()) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if left := gone(); len(left) > 0 {
		t.Fatalf("still running after --kill: %v", left)
	}
	for _, k := range keep {
		if !alive(k) {
			t.Errorf("%v ended, and was no tree left behind", k)
		}
	}
	if after, _ := s.sweep(); len(after.Orphans) != 0 {
		t.Fatalf("listed after --kill: %+v", after.Orphans)
	}
}

func sessionArgs(sessions []int) []string {
	var out []string
	for _, s := range sessions {
		out = append(out, "--session", strconv.Itoa(s))
	}
	return out
}

func sortIdents(ids []ident) {
	sort.Slice(ids, func(i, j int) bool { return ids[i].pid < ids[j].pid })
}

func sortedTrees(m map[ident][]ident) []string {
	var out []string
	for top, ms := range m {
		out = append(out, fmt.Sprint(top, ms))
	}
	sort.Strings(out)
	return out
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
