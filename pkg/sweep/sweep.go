// Package sweep finds the stdio MCP servers that their clients left behind
// on this user's account, and ends them: `hearthd sweep` and the status
// page's list (docs/decisions/0062-orphan-sweep.md).
//
// A server a client spawns directly reads its stdin from the client and
// has the client for its parent. When the client dies without ending it
// (kill -9, a crash, a window closed mid-call), the server is reparented to
// init or to the nearest subreaper, and its stdin can never be written
// again: nothing holds the other end. A server that does not exit on the
// end of its input (many keep a timer, or ignore EOF) then lives on,
// together with everything it started. A process tree is listed when all
// of this holds:
//
//   - it is this user's: every process of it runs as the sweep's own user;
//   - its stdin is a pipe or a socket that no process outside the tree can
//     write (on Linux: no write end of the pipe, and no holder of the
//     socket's peer, in any process's /proc/PID/fd; the socket shut down
//     for reading also says so);
//   - its launching client is gone: the parent of each process at its top
//     is init, a known subreaper (a service manager, a container's init),
//     or no longer exists;
//   - it was started the way stdio MCP servers are: through a launcher or
//     an interpreter hearth's naming knows (npx, uvx, docker run, node,
//     python, sh, ...: hosted.Launched), or by a command whose name says
//     mcp;
//   - it is not hearth's: no process of it descends from a hosted
//     upstream's keeper or from hearthd.
//
// The tree is every process whose stdin is that same stream (a `setsid`
// grandchild keeps it, even once its parent is gone) and every descendant
// of those. The tests of the rule are in judge_test.go; each system's way
// of reading the processes and their stdin is a file of its own.
package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// Orphan is one tree left behind.
type Orphan struct {
	// Pid and Start name the process at the tree's top (the oldest, when
	// several share its stdin): its identity for Kill.
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
	// Name is what it runs, as hearth names a hosted server (the npm or
	// PyPI package, the image, the script); Command its command line,
	// secrets redacted.
	Name    string `json:"name"`
	Command string `json:"command"`
	// Started is when its top process started; AgeSeconds how long ago.
	Started    time.Time `json:"started"`
	AgeSeconds float64   `json:"ageSeconds"`
	// RSSBytes is the resident memory of the whole tree.
	RSSBytes int64 `json:"rssBytes"`
	// Client is who started it, where its environment still says (the
	// variables a known client adds: Claude Code, VS Code, Cursor); ""
	// when it does not.
	Client string `json:"client,omitempty"`
	// Stdin says what its stdin was ("pipe" or "socket", and its inode).
	Stdin string `json:"stdin"`
	// Procs are the tree's processes, top first.
	Procs []Member `json:"procs"`
}

// Member is one process of a tree.
type Member struct {
	Pid      int    `json:"pid"`
	Start    uint64 `json:"start"`
	PPid     int    `json:"ppid"`
	Sid      int    `json:"sid"`
	Name     string `json:"name"`
	Command  string `json:"command"`
	RSSBytes int64  `json:"rssBytes"`
}

// Options restrict what Find lists. The zero value lists every tree the
// rule finds on this user's account.
type Options struct {
	// Sessions, when set, keeps only the trees whose top process is in one
	// of these sessions (a terminal's session, or a test's own processes):
	// a narrowing, never a widening, of the rule.
	Sessions []int
}

// Find lists the trees left behind, oldest first.
func Find(opts Options) ([]Orphan, error) {
	procs, err := scan()
	if err != nil {
		return nil, err
	}
	return judge(procs, self(), opts, time.Now()), nil
}

// Stream is what a process's stdin or stdout is.
type Stream struct {
	// Kind is "pipe", "socket", or "" for anything else (a terminal, a
	// file, /dev/null, nothing).
	Kind string
	// ID tells streams apart: an inode on Unix (both ends of a pipe share
	// it; a socket pair's ends do not), a handle value on Windows.
	ID uint64
	// Closed: the system says nothing more can come (a socket shut down
	// for reading, its peer released; a pipe whose writer is gone where
	// the system says so directly).
	Closed bool
	// Writers are the processes holding a way to write it (a pipe's write
	// end, a socket's peer); WritersKnown is false where the system cannot
	// say (then Closed alone tells).
	Writers      []int
	WritersKnown bool
}

func (s Stream) String() string {
	if s.Kind == "" {
		return ""
	}
	return fmt.Sprintf("%s:[%d]", s.Kind, s.ID)
}

// Process is one process as a system's scan saw it.
type Process struct {
	proctable.Proc
	// UID is its real user (-1 unknown); Mine says it is the sweep's own
	// user's (on Windows, by the token's security identifier).
	UID  int
	Mine bool
	// Started is when it started.
	Started time.Time
	Args    []string
	Env     []string
	Stdin   Stream
	Stdout  Stream
}

// me is what the rule knows of the sweep itself.
type me struct {
	pid int
}

// reaperNames are processes that adopt orphans: init and service
// managers, container inits. A subreaper of any other name (a terminal
// multiplexer that is one, say) is taken for a live client: the sweep
// would rather miss an orphan than end a tree a live program may own.
var reaperNames = map[string]bool{
	"init": true, "systemd": true, "launchd": true, "tini": true, "dumb-init": true, "catatonit": true,
	"s6-svscan": true, "runit": true, "docker-init": true, "containerd-shim": true, "containerd-shim-runc-v2": true,
}

// hearthNames are hearth's own processes: a hosted upstream's keeper and
// the daemon (whose children are its tools' and keepers).
var hearthNames = map[string]bool{"hearth-keeper": true, "hearthd": true, "hearthd.exe": true}

// judge applies the rule to a scan.
func judge(procs []Process, self me, opts Options, now time.Time) []Orphan {
	byPid := map[int]*Process{}
	kids := map[int][]*Process{}
	for i := range procs {
		p := &procs[i]
		if p.Zombie {
			continue // dead already: nothing to end, nothing it holds
		}
		byPid[p.Pid] = p
	}
	for _, p := range byPid {
		if parent := byPid[p.PPid]; parent != nil && p.PPid != p.Pid && parent.Proc.Start <= p.Proc.Start {
			kids[p.PPid] = append(kids[p.PPid], p)
		}
	}
	// The processes of this user reading each stream.
	readers := map[string][]*Process{}
	for _, p := range byPid {
		if p.Mine && p.Stdin.Kind != "" {
			readers[p.Stdin.String()] = append(readers[p.Stdin.String()], p)
		}
	}
	scope := map[int]bool{}
	for _, s := range opts.Sessions {
		scope[s] = true
	}
	var out []Orphan
	for key, group := range readers {
		stdin := group[0].Stdin
		tree := descendants(group, kids)
		if !dead(stdin, tree) {
			continue
		}
		var tops []*Process
		for _, p := range tree {
			if _, in := tree[p.PPid]; !in && p.Stdin.String() == key {
				tops = append(tops, p)
			}
		}
		if len(tops) == 0 {
			continue
		}
		sort.Slice(tops, func(i, j int) bool { return tops[i].Proc.Start < tops[j].Proc.Start })
		top := tops[0]
		if !treeQualifies(tree, tops, key, byPid, self, scope) {
			continue
		}
		out = append(out, orphan(top, tree, now))
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.Before(out[j].Started)
		}
		return out[i].Pid < out[j].Pid
	})
	return out
}

// descendants is group and everything descended from it.
func descendants(group []*Process, kids map[int][]*Process) map[int]*Process {
	tree := map[int]*Process{}
	queue := append([]*Process(nil), group...)
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if _, seen := tree[p.Pid]; seen {
			continue
		}
		tree[p.Pid] = p
		queue = append(queue, kids[p.Pid]...)
	}
	return tree
}

// dead: nobody outside the tree can write the stream any more.
func dead(s Stream, tree map[int]*Process) bool {
	if s.Kind != "pipe" && s.Kind != "socket" {
		return false
	}
	if s.Closed {
		return true
	}
	if !s.WritersKnown {
		return false
	}
	for _, w := range s.Writers {
		if _, in := tree[w]; !in {
			return false
		}
	}
	return true
}

// treeQualifies is the rest of the rule, once the stream is dead.
func treeQualifies(tree map[int]*Process, tops []*Process, key string, byPid map[int]*Process, self me, scope map[int]bool) bool {
	for _, p := range tree {
		if !p.Mine || p.Pid == self.pid || hearths(p, byPid) {
			return false // another user's, the sweep itself, or hearth's own
		}
		// A process of the tree with a stdin of its own that something
		// outside the tree still writes has a live client: leave it all
		// (where the system names no writers, a stream the tree itself
		// writes cannot be told from one a live client writes, and the
		// tree is taken as it is).
		if p.Stdin.String() != key && p.Stdin.WritersKnown && !dead(p.Stdin, tree) {
			return false
		}
	}
	recognised := false
	for _, top := range tops {
		if !clientGone(top, byPid) {
			return false // a live parent: its client, or a launcher still waiting on it
		}
		recognised = recognised || serverCommand(top.Args)
	}
	if !recognised {
		return false
	}
	if len(scope) > 0 {
		in := false
		for _, top := range tops {
			in = in || scope[top.Sid]
		}
		if !in {
			return false
		}
	}
	return true
}

// clientGone: p's parent is gone (no such process, or a later one under
// its pid), or is init or a known subreaper that adopted it.
func clientGone(p *Process, byPid map[int]*Process) bool {
	parent := byPid[p.PPid]
	switch {
	case p.PPid <= 0 || parent == nil:
		return true
	case parent.Proc.Start > p.Proc.Start:
		return true
	case parent.Pid == 1:
		return true
	}
	return reaperNames[strings.ToLower(parent.Name)]
}

// hearths: p or an ancestor is hearth's own (a keeper, the daemon).
func hearths(p *Process, byPid map[int]*Process) bool {
	for range 128 {
		if hearthNames[strings.ToLower(p.Name)] || (len(p.Args) > 0 && hearthNames[strings.ToLower(filepath.Base(p.Args[0]))]) {
			return true
		}
		parent := byPid[p.PPid]
		if parent == nil || parent.Pid == p.Pid || parent.Proc.Start > p.Proc.Start {
			return false
		}
		p = parent
	}
	return false
}

// words is a command line: a process that set its title (npm's
// "npm exec @scope/pkg") shows one argument with spaces in it.
func words(args []string) []string {
	if len(args) == 1 && strings.ContainsRune(args[0], ' ') {
		return strings.Fields(args[0])
	}
	return args
}

// serverCommand: started the way stdio MCP servers are.
func serverCommand(args []string) bool {
	args = words(args)
	if len(args) == 0 {
		return false
	}
	if hosted.Launched(args[0], args[1:]) {
		return true
	}
	base := strings.ToLower(args[0][strings.LastIndexAny(args[0], `/\`)+1:])
	return strings.Contains(base, "mcp")
}

// clients are the variables known MCP clients add to the environment of
// every server they start (docs/decisions/0036-entry-environment.md lists
// them), by which a server still says who started it.
var clients = []struct{ name, client string }{
	{"CLAUDECODE=", "Claude Code"},
	{"CLAUDE_CODE_ENTRYPOINT=", "Claude Code"},
	{"CURSOR_TRACE_ID=", "Cursor"},
	{"VSCODE_PID=", "VS Code"},
	{"VSCODE_IPC_HOOK=", "VS Code"},
}

// clientOf names who started a process, from its environment.
func clientOf(env []string) string {
	for _, c := range clients {
		for _, kv := range env {
			if strings.HasPrefix(kv, c.name) {
				if c.client == "VS Code" && slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "CURSOR_") }) {
					return "Cursor"
				}
				return c.client
			}
		}
	}
	return ""
}

func orphan(top *Process, tree map[int]*Process, now time.Time) Orphan {
	args := words(top.Args)
	o := Orphan{Pid: top.Pid, Start: top.Proc.Start, Command: commandLine(top.Args), Started: top.Started, Client: clientOf(top.Env),
		Stdin: top.Stdin.String()}
	if len(args) > 0 {
		o.Name = hosted.RunName(args[0], args[1:])
	}
	if !top.Started.IsZero() {
		o.AgeSeconds = now.Sub(top.Started).Round(time.Second).Seconds()
	}
	members := make([]*Process, 0, len(tree))
	for _, p := range tree {
		members = append(members, p)
	}
	sort.Slice(members, func(i, j int) bool {
		if members[i] == top || members[j] == top {
			return members[i] == top
		}
		return members[i].Proc.Start < members[j].Proc.Start || (members[i].Proc.Start == members[j].Proc.Start && members[i].Pid < members[j].Pid)
	})
	for _, p := range members {
		o.RSSBytes += p.RSS
		o.Procs = append(o.Procs, Member{Pid: p.Pid, Start: p.Proc.Start, PPid: p.PPid, Sid: p.Sid, Name: p.Name, Command: commandLine(p.Args), RSSBytes: p.RSS})
	}
	return o
}

// commandLine is a process's command line for people, what may be secret
// redacted (hosted.RedactArgs: the rule every hosted command line follows).
func commandLine(args []string) string {
	args = words(args)
	if len(args) == 0 {
		return ""
	}
	return strings.Join(append([]string{args[0]}, hosted.RedactArgs(args[1:])...), " ")
}

// Outcome is what Kill did to one tree.
type Outcome struct {
	Pid int `json:"pid"`
	// Ended counts the processes that ended; Killed those of them that
	// needed SIGKILL after the grace; Left those still there (a process
	// stuck in the kernel).
	Ended  int `json:"ended"`
	Killed int `json:"killed"`
	Left   int `json:"left"`
	// Skipped says why nothing was done: the tree is no longer one left
	// behind (a client took it back, it ended) as a new look shows.
	Skipped string `json:"skipped,omitempty"`
}

// Kill ends each tree of targets: it looks again first and ends only a
// tree still left behind, by the same rule and with the same top process,
// then sends SIGTERM to each of its processes, and SIGKILL after grace to
// what is left and to anything that joined it meanwhile (a process it
// forked, reading the same stdin). Each signal goes to the process the
// look saw (pid and start time), never to a later one given its pid.
func Kill(ctx context.Context, targets []Orphan, opts Options, grace time.Duration) ([]Outcome, error) {
	now, err := Find(opts)
	if err != nil {
		return nil, err
	}
	out := make([]Outcome, len(targets))
	type live struct {
		i     int
		stdin string
		procs map[[2]uint64]bool // pid, start
	}
	var trees []*live
	for i, t := range targets {
		out[i].Pid = t.Pid
		j := slices.IndexFunc(now, func(o Orphan) bool { return o.Pid == t.Pid && o.Start == t.Start })
		if j < 0 {
			out[i].Skipped = "no longer left behind (a look just now did not find it so)"
			continue
		}
		l := &live{i: i, stdin: now[j].Stdin, procs: map[[2]uint64]bool{}}
		for _, m := range now[j].Procs {
			l.procs[[2]uint64{uint64(m.Pid), m.Start}] = true
		}
		trees = append(trees, l)
	}
	for _, l := range trees {
		for id := range l.procs {
			signal(int(id[0]), id[1], false)
		}
	}
	// Wait for the grace, or until every tree is gone.
	alive := func(l *live) int {
		table, err := proctable.List()
		if err != nil {
			return len(l.procs)
		}
		n := 0
		for _, p := range table {
			if !p.Zombie && l.procs[[2]uint64{uint64(p.Pid), p.Start}] {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		left := 0
		for _, l := range trees {
			left += alive(l)
		}
		if left == 0 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	// What is left, and what joined: SIGKILL, looking again until none is
	// left (bounded: a process stuck in the kernel may never go).
	killed := map[[2]uint64]bool{}
	for round := 0; round < 20; round++ {
		procs, err := scan()
		if err != nil {
			break
		}
		pending := 0
		for _, l := range trees {
			for i := range procs {
				p := &procs[i]
				id := [2]uint64{uint64(p.Pid), p.Proc.Start}
				if p.Zombie || !(l.procs[id] || (p.Mine && joined(p, l.stdin, l.procs))) {
					continue
				}
				l.procs[id] = true
				if !killed[id] {
					killed[id] = true
					out[l.i].Killed++
				}
				signal(p.Pid, p.Proc.Start, true)
				pending++
			}
		}
		if pending == 0 {
			break
		}
		time.Sleep(time.Duration(10*(round+1)) * time.Millisecond)
	}
	for _, l := range trees {
		left := alive(l)
		out[l.i].Left = left
		out[l.i].Ended = len(l.procs) - left
	}
	return out, nil
}

// joined: p came into the tree while it was being ended: it reads the
// tree's stdin, or its parent is of the tree, and it is no older than the
// tree (a process that was there before it began is no part of it).
func joined(p *Process, stdin string, procs map[[2]uint64]bool) bool {
	var oldest uint64
	parent := false
	for id := range procs {
		if oldest == 0 || id[1] < oldest {
			oldest = id[1]
		}
		parent = parent || (int(id[0]) == p.PPid && id[1] <= p.Proc.Start)
	}
	return p.Proc.Start >= oldest && (parent || p.Stdin.String() == stdin)
}
