//go:build !unix

package safefile

import "os"

// openFlags: without FIFOs to block on, a plain read-only open does.
const openFlags = 0

const dirFlags = 0

func clearNonblock(*os.File) error { return nil }
