package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// writeReadyFile writes "<pid> <ISO-8601 UTC>\n" atomically: a reader sees the
// old file or the whole new one, never a torn line.
func writeReadyFile(path string, now time.Time) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".hearthd.ready.*")
	if err != nil {
		return fmt.Errorf("write readiness file %s: %w", path, err)
	}
	line := fmt.Sprintf("%d %s\n", os.Getpid(), now.UTC().Format(time.RFC3339))
	if _, err := tmp.WriteString(line); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write readiness file %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write readiness file %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write readiness file %s: %w", path, err)
	}
	return nil
}
