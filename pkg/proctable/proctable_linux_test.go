package proctable

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// stat lines as proc(5) writes them, with the comm's spaces and parentheses
// that make a naive split miscount, and malformed ones.
func TestParseStat(t *testing.T) {
	tail := " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 4242 1 2 3" // fields 7 to 21, starttime (22), more
	for _, tc := range []struct {
		line string
		want Proc
		bad  bool
	}{
		{line: "12 (sleep) S 7 12 12" + tail, want: Proc{Pid: 12, PPid: 7, Pgid: 12, Start: 4242}},
		{line: "12 (a b) c) T 7 12 12" + tail, want: Proc{Pid: 12, PPid: 7, Pgid: 12, Start: 4242, Stopped: true}},
		{line: "12 ((sd-pam)) Z 1 12 12" + tail, want: Proc{Pid: 12, PPid: 1, Pgid: 12, Start: 4242, Zombie: true}},
		{line: "12 (x) S 7", bad: true},
		{line: "12 x S 7 12 12" + tail, bad: true},
		{line: "(x) S 7 12 12" + tail, bad: true},
		{line: "12 (x) S seven 12 12" + tail, bad: true},
		{line: "12 (x) S 7 twelve 12" + tail, bad: true},
		{line: "12 (x) S 7 12 12 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 -1 1", bad: true},
	} {
		got, err := parseStat(tc.line)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: parsed as %+v, want an error", tc.line, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v %v, want %+v", tc.line, got, err, tc.want)
		}
	}
}

// The table holds this process and a child it started, with the child's
// parent, and shows the child stopped once it is.
func TestListSeesAStoppedChild(t *testing.T) {
	c := exec.Command("/bin/sleep", "30")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	defer c.Process.Kill()
	c.Process.Signal(syscall.SIGSTOP)
	for {
		procs, err := List()
		if err != nil {
			t.Fatal(err)
		}
		var self, child *Proc
		for i := range procs {
			switch procs[i].Pid {
			case os.Getpid():
				self = &procs[i]
			case c.Process.Pid:
				child = &procs[i]
			}
		}
		if self == nil || child == nil || child.PPid != os.Getpid() || child.Start < self.Start {
			t.Fatalf("self %+v, child %+v", self, child)
		}
		if child.Stopped {
			return
		}
	}
}
