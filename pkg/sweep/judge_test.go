package sweep

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// table builds a scan: each process is "pid ppid name args..." with its
// stdin given apart.
type proc struct {
	pid, ppid int
	name      string
	args      string
	stdin     Stream
	sid       int
	notMine   bool
	start     uint64 // 0: the pid (older pids started first)
	env       []string
	zombie    bool
}

func scanOf(ps ...proc) []Process {
	base := []proc{{pid: 1, name: "init", args: "/sbin/init"}}
	var out []Process
	for _, p := range append(base, ps...) {
		start := p.start
		if start == 0 {
			start = uint64(p.pid)
		}
		sid := p.sid
		if sid == 0 {
			sid = p.pid
		}
		out = append(out, Process{
			Proc:    proctable.Proc{Pid: p.pid, PPid: p.ppid, Sid: sid, Name: p.name, Start: start, RSS: 1 << 20, Zombie: p.zombie},
			UID:     1000,
			Mine:    !p.notMine,
			Started: time.Unix(int64(start), 0),
			Args:    strings.Fields(p.args),
			Env:     p.env,
			Stdin:   p.stdin,
		})
	}
	return out
}

func pipe(id uint64, writers ...int) Stream {
	return Stream{Kind: "pipe", ID: id, Writers: writers, WritersKnown: true}
}

func closedSocket(id uint64) Stream { return Stream{Kind: "socket", ID: id, Closed: true} }

// listed is each orphan as "top:member,member" in order.
func listed(os []Orphan) string {
	var parts []string
	for _, o := range os {
		var ms []string
		for _, m := range o.Procs {
			ms = append(ms, fmt.Sprint(m.Pid))
		}
		parts = append(parts, fmt.Sprintf("%d:%s", o.Pid, strings.Join(ms, ",")))
	}
	return strings.Join(parts, " ")
}

func TestJudge(t *testing.T) {
	npx := []proc{
		{pid: 100, ppid: 1, name: "npm exec @model", args: "npm exec @modelcontextprotocol/server-everything", stdin: pipe(7)},
		{pid: 101, ppid: 100, name: "sh", args: "sh -c mcp-server-everything", stdin: pipe(7)},
		{pid: 102, ppid: 101, name: "node", args: "node /x/node_modules/.bin/mcp-server-everything", stdin: pipe(7)},
	}
	for _, tc := range []struct {
		name  string
		procs []proc
		opts  Options
		want  string
	}{
		{"a server through npx, its client gone", npx, Options{}, "100:100,101,102"},
		{"the same, its stdin a socket pair whose peer was released",
			[]proc{{pid: 100, ppid: 1, name: "node", args: "node /srv/server.js", stdin: closedSocket(9)}}, Options{}, "100:100"},
		{"a live client's server", []proc{
			{pid: 200, ppid: 1, name: "claude", args: "claude"},
			{pid: 201, ppid: 200, name: "node", args: "node /srv/server.js", stdin: pipe(8, 200)}}, Options{}, ""},
		{"a live client that closed the server's stdin and waits for it", []proc{
			{pid: 200, ppid: 1, name: "claude", args: "claude"},
			{pid: 201, ppid: 200, name: "node", args: "node /srv/server.js", stdin: pipe(8)}}, Options{}, ""},
		{"hearth's upstream", []proc{
			{pid: 300, ppid: 1, name: "hearthd", args: "hearthd serve"},
			{pid: 301, ppid: 300, name: "hearth-keeper", args: "hearth-keeper"},
			{pid: 302, ppid: 301, name: "node", args: "node /srv/server.js", stdin: pipe(9, 300)}}, Options{}, ""},
		{"hearth's upstream whose keeper's daemon is gone but the keeper lives", []proc{
			{pid: 301, ppid: 1, name: "hearth-keeper", args: "/proc/self/exe"},
			{pid: 302, ppid: 301, name: "node", args: "node /srv/server.js", stdin: pipe(9)}}, Options{}, ""},
		{"an upstream reparented from a dead keeper to init is no orphan while it descends from nothing of hearth's but its stdin is the daemon's",
			[]proc{{pid: 302, ppid: 1, name: "node", args: "node /srv/server.js", stdin: pipe(9, 300)}, {pid: 300, ppid: 1, name: "hearthd", args: "hearthd serve"}}, Options{}, ""},
		{"an unrelated long-running process whose parent is init", []proc{
			{pid: 500, ppid: 1, name: "node", args: "node -e setInterval(()=>{},1e6)"}}, Options{}, ""},
		{"a dead pipe, parent init, not started as servers are", []proc{
			{pid: 600, ppid: 1, name: "sleep", args: "sleep 600", stdin: pipe(10)}}, Options{}, ""},
		{"a binary whose name says mcp", []proc{
			{pid: 610, ppid: 1, name: "github-mcp-serv", args: "/usr/local/bin/github-mcp-server stdio", stdin: pipe(11)}}, Options{}, "610:610"},
		{"a setsid grandchild with its server", []proc{
			{pid: 700, ppid: 1, name: "node", args: "node /srv/detacher.mjs", stdin: closedSocket(12)},
			{pid: 701, ppid: 700, sid: 701, name: "node", args: "node -e setInterval(()=>{},1e6)", stdin: closedSocket(12)}}, Options{}, "700:700,701"},
		{"a setsid grandchild whose server exited", []proc{
			{pid: 701, ppid: 1, sid: 701, name: "node", args: "node -e setInterval(()=>{},1e6)", stdin: closedSocket(12)}}, Options{}, "701:701"},
		{"a grandchild that kept the stdin, its parent gone, beside its server: one tree", []proc{
			{pid: 700, ppid: 1, name: "node", args: "node /srv/a.mjs", stdin: pipe(13)},
			{pid: 705, ppid: 1, sid: 705, name: "node", args: "node /srv/b.mjs", stdin: pipe(13)}}, Options{}, "700:700,705"},
		{"another user's", []proc{
			{pid: 800, ppid: 1, name: "node", args: "node /srv/server.js", stdin: pipe(14), notMine: true}}, Options{}, ""},
		{"a tree with another user's process in it", []proc{
			{pid: 800, ppid: 1, name: "node", args: "node /srv/server.js", stdin: pipe(14)},
			{pid: 801, ppid: 800, name: "sudo", args: "sudo x", notMine: true}}, Options{}, ""},
		{"its write end held only within the tree (a client that leaked it)", []proc{
			{pid: 900, ppid: 1, name: "node", args: "node /srv/server.js", stdin: pipe(15, 900)}}, Options{}, "900:900"},
		{"its write end held by another process", []proc{
			{pid: 900, ppid: 1, name: "node", args: "node /srv/server.js", stdin: pipe(15, 42)},
			{pid: 42, ppid: 1, name: "bash", args: "bash"}}, Options{}, ""},
		{"a parent that no longer exists (Windows keeps the dead parent's pid)", []proc{
			{pid: 950, ppid: 9999, name: "node.exe", args: `C:\node.exe C:\srv\server.js`, stdin: pipe(16)}}, Options{}, "950:950"},
		{"a parent pid given to a later process", []proc{
			{pid: 960, ppid: 961, name: "node", args: "node /srv/server.js", stdin: pipe(17)},
			{pid: 961, ppid: 1, name: "bash", args: "bash", start: 5000}}, Options{}, "960:960"},
		{"adopted by a service manager's subreaper", []proc{
			{pid: 30, ppid: 1, name: "systemd", args: "/lib/systemd/systemd --user"},
			{pid: 970, ppid: 30, name: "node", args: "node /srv/server.js", stdin: pipe(18)}}, Options{}, "970:970"},
		{"a member with a live client of its own", []proc{
			{pid: 1000, ppid: 1, name: "node", args: "node /srv/server.js", stdin: pipe(19)},
			{pid: 1001, ppid: 1000, name: "python3", args: "python3 helper.py", stdin: pipe(20, 42)},
			{pid: 42, ppid: 1, name: "bash", args: "bash"}}, Options{}, ""},
		{"a member whose stdin the tree writes", []proc{
			{pid: 1000, ppid: 1, name: "node", args: "node /srv/server.js", stdin: pipe(19)},
			{pid: 1001, ppid: 1000, name: "python3", args: "python3 helper.py", stdin: pipe(20, 1000)}}, Options{}, "1000:1000,1001"},
		{"a zombie is no member", []proc{
			{pid: 1100, ppid: 1, name: "node", args: "node /srv/server.js", stdin: pipe(21)},
			{pid: 1101, ppid: 1100, name: "node", args: "node x", stdin: pipe(21), zombie: true}}, Options{}, "1100:1100"},
		{"outside the sessions asked for", npx, Options{Sessions: []int{5}}, ""},
		{"inside them", npx, Options{Sessions: []int{5, 100}}, "100:100,101,102"},
		{"a stream it cannot judge (a socket the system says nothing of)", []proc{
			{pid: 1200, ppid: 1, name: "node", args: "node /srv/server.js", stdin: Stream{Kind: "socket", ID: 22}}}, Options{}, ""},
		{"the sweep itself", []proc{
			{pid: 4242, ppid: 1, name: "node", args: "node sweep.js", stdin: pipe(23)}}, Options{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judge(scanOf(tc.procs...), me{pid: 4242}, tc.opts, time.Unix(10000, 0))
			if s := listed(got); s != tc.want {
				t.Fatalf("listed %q, want %q", s, tc.want)
			}
		})
	}
}

// What a listed tree says of itself.
func TestJudgeDescribes(t *testing.T) {
	got := judge(scanOf(
		proc{pid: 100, ppid: 1, name: "npm exec @model", args: "npm exec @modelcontextprotocol/server-everything", stdin: pipe(7), env: []string{"CLAUDECODE=1"}},
		proc{pid: 101, ppid: 100, name: "node", args: "node /x/server.js --api-key=hunter2", stdin: pipe(7)},
	), me{}, Options{}, time.Unix(160, 0))
	if len(got) != 1 {
		t.Fatalf("%+v", got)
	}
	o := got[0]
	if o.Name != "@modelcontextprotocol/server-everything" || o.Client != "Claude Code" || o.AgeSeconds != 60 || o.RSSBytes != 2<<20 ||
		o.Stdin != "pipe:[7]" || o.Command != "npm exec @modelcontextprotocol/server-everything" {
		t.Fatalf("%+v", o)
	}
	if o.Procs[1].Command != "node /x/server.js --api-key=***" {
		t.Fatalf("a secret in a member's command line: %q", o.Procs[1].Command)
	}
}

// Who started a server, from what its client added to its environment.
func TestClientOf(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"PATH=/bin", "CLAUDECODE=1"}, "Claude Code"},
		{[]string{"VSCODE_PID=12"}, "VS Code"},
		{[]string{"VSCODE_PID=12", "CURSOR_TRACE_ID=x"}, "Cursor"},
		{[]string{"CURSOR_TRACE_ID=x"}, "Cursor"},
		{[]string{"PATH=/bin"}, ""},
		{nil, ""},
	} {
		if got := clientOf(tc.env); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.env, got, tc.want)
		}
	}
}

// macOS's descriptor records as proc_info writes them.
func TestDarwinRecords(t *testing.T) {
	put := func(b []byte, at int, v uint64, size int) {
		for i := range size {
			b[at+i] = byte(v >> (8 * i))
		}
	}
	p := make([]byte, 184)
	put(p, darwinPipeHandleAt, 0xabc, 8)
	put(p, darwinPipePeerAt, 0xdef, 8)
	if s, ok := darwinPipe(p); !ok || s.Kind != "pipe" || s.ID != 0xabc || s.Closed {
		t.Fatalf("a pipe with its writer: %+v %v", s, ok)
	}
	put(p, darwinPipeStatusAt, darwinPipeEOF, 4)
	if s, _ := darwinPipe(p); !s.Closed {
		t.Fatal("PIPE_EOF not read")
	}
	put(p, darwinPipeStatusAt, 0, 4)
	put(p, darwinPipePeerAt, 0, 8)
	if s, _ := darwinPipe(p); !s.Closed {
		t.Fatal("no peer not read")
	}
	if _, ok := darwinPipe(p[:100]); ok {
		t.Fatal("a short record read")
	}
	so := make([]byte, 400)
	put(so, darwinInoAt, 77, 8)
	put(so, darwinSockFamilyAt, darwinAFUnix, 4)
	if s, ok := darwinSocket(so); !ok || s.Kind != "socket" || s.ID != 77 || s.Closed {
		t.Fatalf("a socket: %+v %v", s, ok)
	}
	put(so, darwinSockStateAt, darwinSSCantRcvMore|0x2, 2)
	if s, _ := darwinSocket(so); !s.Closed {
		t.Fatal("SS_CANTRCVMORE not read")
	}
	put(so, darwinSockFamilyAt, 2, 4) // AF_INET
	if _, ok := darwinSocket(so); ok {
		t.Fatal("an AF_INET socket taken for a client's")
	}
}
