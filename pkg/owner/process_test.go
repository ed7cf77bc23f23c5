//go:build unix || windows

package owner

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Another process owns the data directory: Find names it, Acquire refuses
// naming its pid, and its end frees the directory (flock on Unix,
// LockFileEx on Windows, decision 0047).
func TestOwnerInAnotherProcess(t *testing.T) {
	if os.Getenv("OWNER_HELPER_HOME") != "" {
		l, err := Acquire(os.Getenv("OWNER_HELPER_HOME"))
		if err != nil {
			os.Exit(3)
		}
		l.Publish(Record{Mode: "stdio", Version: "v2"})
		os.Stdout.Write([]byte("ready\n"))
		buf := make([]byte, 1)
		os.Stdin.Read(buf) // hold until the parent closes stdin
		l.Release()
		os.Exit(0)
	}
	home := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestOwnerInAnotherProcess$")
	cmd.Env = append(os.Environ(), "OWNER_HELPER_HOME="+home)
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	r, st, err := Find(home)
	if err != nil || st != Serving || r.PID != cmd.Process.Pid || r.Mode != "stdio" || r.Socket != "" {
		t.Fatalf("Find: %+v %v %v", r, st, err)
	}
	_, err = Acquire(home)
	var held *HeldError
	if !errors.As(err, &held) || held.Record.PID != cmd.Process.Pid {
		t.Fatalf("Acquire: %v", err)
	}
	if msg := err.Error(); !contains(msg, strconv.Itoa(cmd.Process.Pid)) || !contains(msg, "serves no socket") {
		t.Fatalf("message: %s", msg)
	}
	stdin.Close()
	cmd.Wait()
	if _, st, _ := Find(home); st != None {
		t.Fatalf("after the owner exited: %v", st)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
