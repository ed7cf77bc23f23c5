//go:build linux

package index

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// The bad-input table of hearth's own files, for an index file in the
// data directory: Open of any hostile class returns at once with an
// error, never a FIFO waited on, a device mapped or a planted file's
// index served.
func TestOpenRefusesHostileIndexFiles(t *testing.T) {
	dir := t.TempDir()
	made := safefiletest.Hostile(t, dir, func(c string) string { return strings.ReplaceAll(c, " ", "-") + ".idx" },
		func(string) []byte { return []byte("not an index, and hostile anyway") }, maxIndexFile)
	for name, class := range made {
		if class == safefiletest.ClassTooLarge {
			continue // a sparse file past the bound: not worth the disk's time
		}
		safefiletest.Prompt(t, "Open of a "+class, func() {
			ix, err := Open(filepath.Join(dir, name))
			if err == nil {
				ix.Close()
				t.Errorf("an index of class %q opened", class)
			} else if !strings.Contains(err.Error(), name) {
				t.Errorf("class %q: the error names no file: %v", class, err)
			}
		})
	}
}
