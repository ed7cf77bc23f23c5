//go:build linux

package rank

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// The bad-input table of hearth's own files, for the memory index's
// snapshot: LoadSnapshot of any hostile class returns at once with an
// error (the index is then rebuilt from the store), never mapping a
// device or waiting on a FIFO.
func TestLoadSnapshotRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	made := safefiletest.Hostile(t, dir, func(c string) string { return strings.ReplaceAll(c, " ", "-") },
		func(string) []byte { return []byte("not a snapshot") }, 1<<20)
	for name, class := range made {
		safefiletest.Prompt(t, "LoadSnapshot of a "+class, func() {
			if _, _, err := LoadSnapshot(filepath.Join(dir, name)); err == nil {
				t.Errorf("a snapshot of class %q loaded", class)
			}
		})
	}
}
