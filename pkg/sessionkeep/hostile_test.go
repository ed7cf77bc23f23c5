//go:build linux

package sessionkeep

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// The bad-input table of session records: a record that is a FIFO, a
// socket, a device, a link (to a device, a FIFO, a file elsewhere),
// another user's, writable by others, over 1 MiB or a directory is refused
// at once (a FIFO used to hang the request that named its session), and a
// good record beside them still loads.
func TestHostileRecordsAreRefusedAtOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "http-sessions")
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	n := 0
	name := func(class string) string {
		n++
		id := fmt.Sprintf("%032x", n)
		ids[class] = id
		return id + ".json"
	}
	// Each holds a valid record of its own id, so that only its class is
	// wrong (the planted link's target included).
	rec := func(name string) []byte {
		b, _ := json.Marshal(Record{ID: strings.TrimSuffix(name, ".json"), Path: "/mcp", Initialize: json.RawMessage(`{}`), Created: time.Now()})
		return b
	}
	made := safefiletest.Hostile(t, dir, name, rec, maxRecord)
	for _, class := range made {
		id := ids[class]
		safefiletest.Prompt(t, "Load of a "+class, func() {
			if r, err := d.Load(id); err == nil {
				t.Errorf("a record that is a %s loaded: %+v", class, r)
			}
		})
	}
	good := "0123456789abcdef0123456789abcdef"
	if err := d.Save(Record{ID: good, Path: "/mcp", Initialize: json.RawMessage(`{}`), Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Load(good); err != nil {
		t.Fatal(err)
	}
}
