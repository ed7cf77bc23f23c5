//go:build linux

package statuspage

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/safefile/safefiletest"
)

// The bad-input table of hearth's own files, for a hosted server's log on
// the status page: a log of any hostile class (a FIFO, a link, another
// user's, ...) has no tail, given at once, never waited on.
func TestTailOfHostileLogs(t *testing.T) {
	dir := t.TempDir()
	made := safefiletest.Hostile(t, dir, func(c string) string { return strings.ReplaceAll(c, " ", "-") + ".log" },
		func(string) []byte { return []byte("planted line\n") }, 1<<20)
	for name, class := range made {
		if class == safefiletest.ClassTooLarge {
			continue // a log of one's own may be large: its last lines are read
		}
		safefiletest.Prompt(t, "Tail of a "+class, func() {
			if got := Tail(filepath.Join(dir, name), 5); got != nil {
				t.Errorf("a log of class %q has a tail: %q", class, got)
			}
		})
	}
}
