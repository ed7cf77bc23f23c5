//go:build !unix

package pgtest

import "io/fs"

// processGone cannot tell off Unix: a leftover server is then never reaped,
// which is the safe side (the memory store's tests run on Linux; this file
// only keeps the package building everywhere).
func processGone(pid int) bool { return false }

// fileOwner: file ownership by uid is a Unix notion.
func fileOwner(fi fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
