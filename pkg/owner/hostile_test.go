//go:build linux

package owner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// The bad-input table of hearth's own files, for the owner record: a
// record of any hostile class (naming a socket of its own) is not believed
// while the lock is held, Find answers at once (a shim looking for its
// daemon never waits on a FIFO), and the owner replaces it when it
// publishes.
func TestHostileOwnerRecordIsNotBelieved(t *testing.T) {
	for _, class := range safefiletest.Classes {
		t.Run(class, func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			l, err := Acquire(home)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Release()
			planted, _ := json.Marshal(Record{PID: os.Getpid(), Home: home, Mode: "socket", Socket: "/tmp/planted.sock"})
			if !safefiletest.HostileAt(t, home, RecordName, class, planted, 64<<10) {
				t.Skipf("no %s made here", class)
			}
			safefiletest.Prompt(t, "Find", func() {
				if r, st, err := Find(home); st == Serving || r.Socket == "/tmp/planted.sock" {
					t.Errorf("a record of class %q was believed: %+v %v %v", class, r, st, err)
				}
			})
			if class == safefiletest.ClassDirectory {
				return // a directory at the name cannot be replaced by a rename
			}
			if err := l.Publish(Record{Mode: "socket", Socket: "/run/ours.sock"}); err != nil {
				t.Fatal(err)
			}
			if r, st, err := Find(home); st != Serving || r.Socket != "/run/ours.sock" {
				t.Fatalf("after Publish over a %s: %+v %v %v", class, r, st, err)
			}
		})
	}
}
