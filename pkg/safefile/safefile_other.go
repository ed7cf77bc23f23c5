//go:build !unix

package safefile

import (
	"io/fs"
	"os"
)

// openFlags: without FIFOs to block on, a plain read-only open does.
const openFlags = 0

const dirFlags = 0

func clearNonblock(*os.File) error { return nil }

// permsMean: elsewhere than Unix, access is the system's ACLs' (the state
// directory's, decision 0047), not mode bits.
const permsMean = false

// owner: elsewhere than Unix, the directory's access list keeps others out.
func owner(fs.FileInfo) string { return "" }
