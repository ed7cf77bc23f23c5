//go:build unix

package keeper

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// p is a process of a synthetic table: pid, parent, start time.
func p(pid, ppid int, start uint64) proctable.Proc {
	return proctable.Proc{Pid: pid, PPid: ppid, Start: start}
}

func pids(procs []proctable.Proc) string {
	s := ""
	for _, p := range procs {
		s += fmt.Sprintf("%d@%d ", p.Pid, p.Start)
	}
	return s
}

// The tracker, fed one synthetic table after another (the keeper is pid
// 10), records the descendants and nothing else, keeps an orphan, and never
// takes a reused pid for the process it recorded.
func TestTrackerRecordsDescendants(t *testing.T) {
	unrelated := []proctable.Proc{p(1, 0, 1), p(2, 1, 2), p(3, 2, 3), p(9, 1, 5)}
	with := func(procs ...proctable.Proc) []proctable.Proc {
		return append(append([]proctable.Proc{p(10, 9, 10)}, unrelated...), procs...)
	}
	for _, tc := range []struct {
		name   string
		tables [][]proctable.Proc
		want   string // the live recorded processes after the last table
	}{
		{"the upstream", [][]proctable.Proc{with(p(11, 10, 20))}, "11@20 "},
		{"chain of three in one table", [][]proctable.Proc{with(p(11, 10, 20), p(40, 12, 23), p(12, 11, 21), p(30, 40, 24))}, "11@20 12@21 30@24 40@23 "},
		{"reparented orphan kept", [][]proctable.Proc{
			with(p(11, 10, 20), p(12, 11, 21), p(13, 12, 22)),
			with(p(11, 10, 20), p(13, 1, 22)), // 12 exited: 13 went to init
		}, "11@20 13@22 "},
		{"orphan's own child recorded", [][]proctable.Proc{
			with(p(11, 10, 20), p(12, 11, 21)),
			with(p(11, 10, 20), p(12, 1, 21)),
			with(p(11, 10, 20), p(12, 1, 21), p(14, 12, 30)),
		}, "11@20 12@21 14@30 "},
		{"reused pid not killed", [][]proctable.Proc{
			with(p(11, 10, 20), p(12, 11, 21)),
			with(p(11, 10, 20)),               // 12 ended
			with(p(11, 10, 20), p(12, 3, 50)), // and its pid went to an unrelated process
		}, "11@20 "},
		{"reused pid with the old start time forgotten", [][]proctable.Proc{
			with(p(11, 10, 20), p(12, 11, 21)),
			with(p(11, 10, 20), p(12, 3, 50)), // between two reads: 12 ended and its pid was reused
		}, "11@20 "},
		{"reused pid's children not recorded", [][]proctable.Proc{
			with(p(11, 10, 20), p(12, 11, 21)),
			with(p(11, 10, 20), p(12, 3, 50), p(15, 12, 51)),
		}, "11@20 "},
		{"reused pid that is a descendant again", [][]proctable.Proc{
			with(p(11, 10, 20), p(12, 11, 21)),
			with(p(11, 10, 20), p(12, 11, 50)),
		}, "11@20 12@50 "},
		{"child of a parent that ended during the read", [][]proctable.Proc{
			with(p(11, 10, 20), p(12, 11, 21)),
			with(p(11, 10, 20), p(13, 12, 22)), // 13 read before 12 ended, 12 not read
		}, "11@20 13@22 "},
		{"older than the ended parent it names", [][]proctable.Proc{
			with(p(11, 10, 20), p(12, 11, 21)),
			with(p(11, 10, 20), p(13, 12, 5)),
		}, "11@20 "},
		{"unrelated never recorded", [][]proctable.Proc{
			with(p(11, 10, 20), p(20, 9, 30), p(21, 20, 31), p(22, 1, 32)),
			with(p(11, 10, 20), p(20, 1, 30), p(21, 1, 31), p(22, 1, 32)),
		}, "11@20 "},
		{"zombie recorded, not live", [][]proctable.Proc{
			with(p(11, 10, 20), proctable.Proc{Pid: 12, PPid: 11, Start: 21, Zombie: true}),
		}, "11@20 "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTracker(10, nil)
			var live []proctable.Proc
			for _, table := range tc.tables {
				live, _ = tr.observe(table)
			}
			if got := pids(live); got != tc.want {
				t.Fatalf("live %q, want %q", got, tc.want)
			}
		})
	}
}

// end stops the group and every recorded descendant, reads until two reads
// show all stopped and the second adds none, then kills them and reads until
// none is left; a descendant forked before its parent stopped is killed too.
func TestTrackerEndStopsThenKills(t *testing.T) {
	type sent struct {
		pid int
		sig syscall.Signal
	}
	var log []sent
	procs := map[int]*proctable.Proc{
		10: {Pid: 10, PPid: 1, Start: 10},
		11: {Pid: 11, PPid: 10, Start: 20},
		12: {Pid: 12, PPid: 11, Start: 21},
		99: {Pid: 99, PPid: 1, Start: 99},
	}
	reads := 0
	tr := newTracker(10, func() ([]proctable.Proc, error) {
		reads++
		if reads == 3 { // 12 forked 13 before it stopped; 13 is seen now
			procs[13] = &proctable.Proc{Pid: 13, PPid: 12, Start: 22}
		}
		var out []proctable.Proc
		for _, p := range procs {
			out = append(out, *p)
		}
		return out, nil
	})
	tr.kill = func(pid int, sig syscall.Signal) error {
		log = append(log, sent{pid, sig})
		if pid < 0 {
			pid = -pid // the group: 11 leads it
		}
		if p := procs[pid]; p != nil {
			switch sig {
			case syscall.SIGSTOP:
				p.Stopped = true
			case syscall.SIGKILL:
				delete(procs, pid)
			}
		}
		return nil
	}
	tr.scan()
	tr.end(11)
	for _, pid := range []int{11, 12, 13} {
		if procs[pid] != nil {
			t.Errorf("%d alive after end; signals %v", pid, log)
		}
	}
	if procs[99] == nil || procs[10] == nil {
		t.Errorf("end killed the keeper or an unrelated process; signals %v", log)
	}
	killed := false
	for _, s := range log {
		if s.sig == syscall.SIGKILL {
			killed = true
		} else if killed {
			t.Fatalf("a stop after the first kill: %v", log)
		}
	}
}
