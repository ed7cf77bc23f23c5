//go:build unix

package owner

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestAcquirePublishFindRelease(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if _, st, err := Find(home); err != nil || st != None {
		t.Fatalf("fresh home: %v %v", st, err)
	}
	l, err := Acquire(home)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("home not created 0700: %v %v", fi, err)
	}
	if r, st, err := Find(home); err != nil || st != Starting || r.PID != os.Getpid() {
		t.Fatalf("before Publish: %+v %v %v", r, st, err)
	}
	if err := l.Publish(Record{Mode: "socket", Socket: "/run/x.sock", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	r, st, err := Find(home)
	if err != nil || st != Serving || r.Socket != "/run/x.sock" || r.PID != os.Getpid() || r.Home != home || r.Started.IsZero() {
		t.Fatalf("after Publish: %+v %v %v", r, st, err)
	}
	// A second owner in this process (another open file) is refused.
	_, err = Acquire(home)
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) || held.Record.Socket != "/run/x.sock" {
		t.Fatalf("second Acquire: %v", err)
	}
	l.Release()
	if _, st, _ := Find(home); st != None {
		t.Fatalf("after Release: %v", st)
	}
	if _, err := os.Stat(filepath.Join(home, RecordName)); !os.IsNotExist(err) {
		t.Fatalf("record left after Release: %v", err)
	}
	l2, err := Acquire(home)
	if err != nil {
		t.Fatalf("re-acquire after release: %v", err)
	}
	l2.Release()
}

// A record left by an owner that died (no lock held, dead pid, or a live
// pid that does not hold the lock) is no owner.
func TestStaleRecordsAreNoOwner(t *testing.T) {
	home := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(home, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A pid that no longer exists.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	write(LockName, dead+"\n")
	write(RecordName, `{"pid":`+dead+`,"mode":"socket","socket":"/x"}`)
	if _, st, err := Find(home); err != nil || st != None {
		t.Fatalf("dead pid: %v %v", st, err)
	}
	// A live pid (ours) that holds no lock.
	me := strconv.Itoa(os.Getpid())
	write(LockName, me+"\n")
	write(RecordName, `{"pid":`+me+`,"mode":"socket","socket":"/x"}`)
	if _, st, err := Find(home); err != nil || st != None {
		t.Fatalf("live pid without the lock: %v %v", st, err)
	}
	// Garbage in either file: no owner, and Acquire still works.
	write(LockName, "not a pid")
	write(RecordName, "{")
	if _, st, err := Find(home); err != nil || st != None {
		t.Fatalf("garbage: %v %v", st, err)
	}
	l, err := Acquire(home)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
}

// Another process holding the lock is found, and Acquire names it.
