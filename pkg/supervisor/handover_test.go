//go:build linux

package supervisor

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// A kept upstream released by one supervisor and adopted by another keeps
// running with the same pipes once the first one's descriptors are closed,
// and ends, with every descendant, when the adopting daemon's end of the
// death socket closes (its crash), with either way of learning of a
// daemon's death.
func TestReleasedUpstreamLivesOnAndEndsWithItsNewDaemon(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range keeperModes {
		t.Run(mode.name, func(t *testing.T) {
			script, marks := escaping(t)
			script = script[:len(script)-len("exec sleep 300")] + "exec cat"
			old := New(Options{KeeperPath: exe, PortableKeeper: mode.portable})
			p, err := old.Start(ProcessSpec{Path: "/bin/sh", Args: []string{"-c", script}, Keeper: true, Stderr: os.Stderr})
			if err != nil {
				t.Fatal(err)
			}
			out := bufio.NewReader(p.Stdout)
			if line, _ := out.ReadString('\n'); line != "started\n" {
				t.Fatalf("read %q", line)
			}
			awaitEscapees(t, marks)
			h, err := p.Release()
			if err != nil {
				t.Fatal(err)
			}
			if old.Live() != 0 {
				t.Fatalf("the releasing supervisor still counts %d children", old.Live())
			}
			// The old daemon's copies go, as they do when it exits.
			p.death.Close()
			p.Stdin.Close()
			p.Stdout.Close()
			p.stderr.Close()
			s := New(Options{KeeperPath: exe, PortableKeeper: mode.portable})
			a := s.Adopt(h, os.Stderr, 0)
			a.Stdin.Write([]byte("still here\n"))
			if line, _ := bufio.NewReader(a.Stdout).ReadString('\n'); line != "still here\n" {
				t.Fatalf("the adopted upstream answered %q", line)
			}
			if len(sleepers(marks[0])) == 0 {
				t.Fatal("a descendant ended with the hand-over")
			}
			h.Death.Close() // the adopting daemon dies
			select {
			case <-a.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the adopted keeper never ended")
			}
			awaitEnd(t, marks, mode.portable, "the adopting daemon's death")
			if syscall.Kill(h.KeeperPid, 0) == nil {
				// A zombie until this process (its parent) reaps it.
				var ws syscall.WaitStatus
				syscall.Wait4(h.KeeperPid, &ws, 0, nil)
			}
		})
	}
}

// A daemon that handed its upstream over and exited leaves it running,
// with every descendant, whichever way its keeper learns of a daemon's
// death (the parent-death signal is disarmed); the upstream ends once the
// successor holding the death socket dies.
func TestHandedOverUpstreamOutlivesItsDaemon(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range keeperModes {
		t.Run(mode.name, func(t *testing.T) {
			script, marks := escaping(t)
			d := exec.Command(exe)
			d.Env = daemonEnv(mode.env, testDaemonEnv+"="+script, testHandOverEnv+"=1")
			out, err := d.Output()
			if err != nil {
				t.Fatalf("the test daemon: %v (%s)", err, out)
			}
			var heir int
			if _, err := fmt.Sscanf(string(out), "%d started\n", &heir); err != nil {
				t.Fatalf("the test daemon said %q", out)
			}
			awaitEscapees(t, marks)
			// The daemon is gone; were the parent-death signal armed, the
			// keeper would be ending the tree by now. The heir's death
			// socket keeps it: the descendants stay up while it lives.
			for range 20 {
				for _, m := range marks {
					if len(sleepers(m)) == 0 {
						syscall.Kill(heir, syscall.SIGKILL)
						t.Fatalf("a descendant ended with the daemon that handed it over")
					}
				}
				time.Sleep(10 * time.Millisecond)
			}
			syscall.Kill(heir, syscall.SIGKILL)
			awaitEnd(t, marks, mode.portable, "the heir's death")
		})
	}
}
