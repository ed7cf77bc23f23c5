package proctable

import (
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// stat lines as proc(5) writes them, with the comm's spaces and parentheses
// that make a naive split miscount, and malformed ones.
func TestParseStat(t *testing.T) {
	// fields 6 (session) to 13, utime and stime (14, 15), 16 to 21,
	// starttime (22), vsize, rss (24), more
	tail := " 5 0 0 0 0 0 0 0 250 50 0 0 0 0 0 0 4242 1 3 9"
	for _, tc := range []struct {
		line string
		want Proc
		bad  bool
	}{
		{line: "12 (sleep) S 7 12" + tail, want: Proc{Pid: 12, PPid: 7, Pgid: 12, Sid: 5, Name: "sleep", Start: 4242, RSS: 3 * pageSize, CPU: 3 * time.Second}},
		{line: "12 (a b) c) T 7 12" + tail, want: Proc{Pid: 12, PPid: 7, Pgid: 12, Sid: 5, Name: "a b) c", Start: 4242, Stopped: true, RSS: 3 * pageSize, CPU: 3 * time.Second}},
		{line: "12 ((sd-pam)) Z 1 12" + tail, want: Proc{Pid: 12, PPid: 1, Pgid: 12, Sid: 5, Name: "(sd-pam)", Start: 4242, Zombie: true, RSS: 3 * pageSize, CPU: 3 * time.Second}},
		{line: "12 (npm exec @model) S 1 12" + tail, want: Proc{Pid: 12, PPid: 1, Pgid: 12, Sid: 5, Name: "npm exec @model", Start: 4242, RSS: 3 * pageSize, CPU: 3 * time.Second}},
		{line: "12 (x) S 7", bad: true},
		{line: "12 x S 7 12" + tail, bad: true},
		{line: "(x) S 7 12" + tail, bad: true},
		{line: "12 (x) S seven 12" + tail, bad: true},
		{line: "12 (x) S 7 twelve" + tail, bad: true},
		{line: "12 (x) S 7 12 5 0 0 0 0 0 0 0 250 50 0 0 0 0 0 0 -1 1 3", bad: true},
		{line: "12 (x) S 7 12 5 0 0 0 0 0 0 0 250 50 0 0 0 0 0 0 4242 1", bad: true},
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

// A child's table entry names it and its session, shows its memory, and
// its start is a time a moment ago; its command line and environment are
// what it was started with, and its uid is ours.
func TestListDescribesAChild(t *testing.T) {
	c := exec.Command("/bin/sleep", "30")
	c.Env = []string{"HEARTH_PROCTABLE_TEST=1"}
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Wait()
	defer c.Process.Kill()
	var procs []Proc
	var p *Proc
	for range 200 { // until it has exec'd and touched its pages
		var err error
		if procs, err = List(); err != nil {
			t.Fatal(err)
		}
		if p = ByPid(procs)[c.Process.Pid]; p != nil && p.Name == "sleep" && p.RSS > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if p == nil || p.Name != "sleep" || p.Sid != c.Process.Pid || p.RSS <= 0 {
		t.Fatalf("child %+v", p)
	}
	if age := time.Since(Started(*p)); age < -2*time.Second || age > 10*time.Second {
		t.Fatalf("started %v ago", age)
	}
	if tree := Tree(procs, os.Getpid()); len(tree) < 2 || tree[0].Pid != os.Getpid() || !slices.ContainsFunc(tree, func(q Proc) bool { return q.Pid == c.Process.Pid }) {
		t.Fatalf("tree of this process: %+v", tree)
	}
	args, err := Args(c.Process.Pid)
	if err != nil || !slices.Equal(args, []string{"/bin/sleep", "30"}) {
		t.Fatalf("args %q %v", args, err)
	}
	env, err := Env(c.Process.Pid)
	if err != nil || !slices.Equal(env, []string{"HEARTH_PROCTABLE_TEST=1"}) {
		t.Fatalf("env %q %v", env, err)
	}
	if uid, err := UID(c.Process.Pid); err != nil || uid != os.Getuid() {
		t.Fatalf("uid %d %v", uid, err)
	}
}

// /proc/PID/status's Uid line: real uid first; a status without one, or
// with a garbled one, is an error.
func TestParseStatusUID(t *testing.T) {
	for s, want := range map[string]int{
		"Name:\tsleep\nUid:\t1000\t1001\t1000\t1000\nGid:\t1\n": 1000,
		"Uid:\t0\t0\t0\t0":   0,
		"Name:\tx\n":         -1,
		"Uid:\n":             -1,
		"Uid:\tone\t1\t1\t1": -1,
		"":                   -1,
	} {
		got, err := parseStatusUID(s)
		if (err != nil) != (want < 0) || (want >= 0 && got != want) {
			t.Errorf("%q: %d %v, want %d", s, got, err, want)
		}
	}
}
