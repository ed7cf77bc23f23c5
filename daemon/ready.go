package daemon

import (
	"fmt"
	"os"
	"time"

	"github.com/hearth-mcp/hearth/pkg/atomicfile"
)

// writeReadyFile writes "<pid> <ISO-8601 UTC>\n" atomically: a reader sees
// the old file or the whole new one, never a torn line.
func writeReadyFile(path string, now time.Time) error {
	line := fmt.Sprintf("%d %s\n", os.Getpid(), now.UTC().Format(time.RFC3339))
	if err := atomicfile.Write(path, []byte(line), 0o600); err != nil {
		return fmt.Errorf("readiness file: %w", err)
	}
	return nil
}
