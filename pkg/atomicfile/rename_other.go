//go:build !windows

package atomicfile

import "os"

// renameOver renames old over new (rename(2) replaces it in one step).
func renameOver(old, new string) error { return os.Rename(old, new) }
