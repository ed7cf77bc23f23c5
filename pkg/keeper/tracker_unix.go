//go:build unix

package keeper

import (
	"sort"
	"syscall"
	"time"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// tracker is a keeper's record of every process descended from it, where
// it cannot be a child subreaper (docs/decisions/0049-descendant-tracker.md):
// it reads the system's process table now and then and whenever it is about
// to kill, records each process whose parent is the keeper or a recorded
// process, and keeps the record of one whose parent ended (reparented to
// init or another reaper) because it knows it by pid and start time, never
// by its parent. A pid given to a later process is never taken for the
// recorded one: its start time differs.
type tracker struct {
	root  int                              // the keeper: its children are the upstream
	list  func() ([]proctable.Proc, error) // the system's process table
	kill  func(int, syscall.Signal) error  // syscall.Kill, or a test's
	known map[int]uint64                   // a recorded descendant's pid → start time
}

func newTracker(root int, list func() ([]proctable.Proc, error)) *tracker {
	return &tracker{root: root, list: list, kill: syscall.Kill, known: map[int]uint64{}}
}

// scan reads the table and records what it shows (observe). An error
// leaves the record as it was.
func (t *tracker) scan() (live []proctable.Proc, added int, err error) {
	procs, err := t.list()
	if err != nil {
		return nil, 0, err
	}
	live, added = t.observe(procs)
	return live, added, nil
}

// observe records every process of procs below the root or a recorded
// process, forgets the recorded ones procs shows ended (gone, or their pid
// now another process's), and returns the recorded ones alive in procs
// (zombies left out), by pid, and how many it added.
func (t *tracker) observe(procs []proctable.Proc) (live []proctable.Proc, added int) {
	byPid := make(map[int]*proctable.Proc, len(procs))
	kids := map[int][]*proctable.Proc{}
	for i := range procs {
		p := &procs[i]
		byPid[p.Pid] = p
		kids[p.PPid] = append(kids[p.PPid], p)
	}
	// Parents: the root, and each recorded process the table shows with
	// its start time, or no longer shows (it ended while the table was
	// read, and a child read before then still names it).
	parents := []int{t.root}
	for pid, start := range t.known {
		if p, ok := byPid[pid]; !ok || p.Start == start {
			parents = append(parents, pid)
		}
	}
	for len(parents) > 0 {
		pid := parents[0]
		parents = parents[1:]
		_, shown := byPid[pid]
		for _, c := range kids[pid] {
			if c.Pid == t.root {
				continue
			}
			if start, ok := t.known[c.Pid]; ok && start == c.Start {
				continue
			}
			if !shown && pid != t.root && c.Start < t.known[pid] {
				continue // older than the parent it names: not its child
			}
			t.known[c.Pid] = c.Start
			added++
			parents = append(parents, c.Pid)
		}
	}
	for pid, start := range t.known {
		p, ok := byPid[pid]
		switch {
		case !ok || p.Start != start:
			delete(t.known, pid)
		case !p.Zombie:
			live = append(live, *p)
		}
	}
	sort.Slice(live, func(i, j int) bool { return live[i].Pid < live[j].Pid })
	return live, added
}

// How long end may take to stop, then to kill, every descendant: far more
// than a healthy system needs, and within the second Stop leaves a keeper
// after its last word.
const (
	trackerStopBound = 300 * time.Millisecond
	trackerKillBound = 500 * time.Millisecond
)

// end kills the upstream's process group and every recorded descendant.
// It stops them first (SIGSTOP), reading the table until two reads in a row
// show every recorded process stopped and the second adds none: a stopped
// process forks no more, and a child it forked before it stopped is in the
// table by the time it shows stopped, so a descendant not yet recorded is
// not orphaned by its parent's kill before it is seen. Then SIGKILL, and
// reads until none is alive. Both phases are bounded (a process stuck in the
// kernel does not stop).
func (t *tracker) end(group int) {
	t.kill(-group, syscall.SIGSTOP)
	deadline := time.Now().Add(trackerStopBound)
	settled := false
	for time.Now().Before(deadline) {
		live, added, err := t.scan()
		if err != nil {
			break
		}
		all := true
		for _, p := range live {
			if !p.Stopped {
				all = false
				t.kill(p.Pid, syscall.SIGSTOP)
			}
		}
		if all && settled && added == 0 {
			break
		}
		settled = all
		if !all {
			time.Sleep(time.Millisecond)
		}
	}
	t.kill(-group, syscall.SIGKILL)
	deadline = time.Now().Add(trackerKillBound)
	for {
		live, _, err := t.scan()
		if err != nil || len(live) == 0 || time.Now().After(deadline) {
			return
		}
		for _, p := range live {
			t.kill(p.Pid, syscall.SIGKILL)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// scanInterval is how long a keeper waits between two reads of the table
// when its upstream is age old: often while it is young, when launchers
// (npx, a shell) start what they start and exit, less often later. A read
// costs about 15 µs of CPU per process on the system (Linux, /proc);
// docs/decisions/0049-descendant-tracker.md has the keeper's measured CPU.
func scanInterval(age time.Duration) time.Duration {
	switch {
	case age < 2*time.Second:
		return 25 * time.Millisecond
	case age < 30*time.Second:
		return 100 * time.Millisecond
	default:
		return 500 * time.Millisecond
	}
}
