package shim

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
	"github.com/hearth-mcp/hearth/pkg/owner"
)

// A shim waiting for a starting daemon is woken by the daemon publishing
// its owner record (written beside and renamed into place), not by the
// poll interval: the wait here is an hour.
func TestOwnerWakeOnRecord(t *testing.T) {
	home := t.TempDir()
	w := ownerWake{home: home}
	defer w.close()
	w.wait(time.Hour) // arms the watch and returns at once
	if w.watch.fd <= 0 {
		t.Fatal("no inotify watch of the data directory")
	}
	woke := make(chan struct{})
	go func() {
		w.wait(time.Hour)
		close(woke)
	}()
	// Another file of the directory changing is not the record.
	if err := os.WriteFile(filepath.Join(home, "memory.db"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(filepath.Join(home, owner.RecordName), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woke:
	case <-time.After(30 * time.Second): // a hang, not a speed: the wait was for an hour
		t.Fatal("publishing the owner record did not wake the waiting shim")
	}
}

// Only events naming the owner record wake a waiting shim: a daemon that
// starts writes its stores in the same directory.
func TestRecordEvent(t *testing.T) {
	home := t.TempDir()
	var o ownerWatch
	if !o.open(home) {
		t.Fatal("no inotify watch")
	}
	defer o.close()
	events := func() []byte {
		var buf [4096]byte
		n, err := unix.Read(o.fd, buf[:])
		if err != nil {
			t.Fatal(err)
		}
		return buf[:n]
	}
	for _, name := range []string{"memory.db", "." + owner.RecordName + ".123", owner.RecordName + "x"} {
		if err := os.WriteFile(filepath.Join(home, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if ev := events(); recordEvent(ev) {
			t.Errorf("creating %s woke the shim", name)
		}
	}
	if err := os.Rename(filepath.Join(home, "."+owner.RecordName+".123"), filepath.Join(home, owner.RecordName)); err != nil {
		t.Fatal(err)
	}
	if !recordEvent(events()) {
		t.Error("renaming the record into place did not wake the shim")
	}
	if err := os.Remove(filepath.Join(home, owner.RecordName)); err != nil {
		t.Fatal(err)
	}
	if !recordEvent(events()) {
		t.Error("removing the record did not wake the shim")
	}
}
