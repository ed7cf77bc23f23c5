//go:build unix

package atomicfile

import (
	"io/fs"
	"os"
	"syscall"
)

func init() { sameOwner = chownLike }

// chownLike gives f the owner and group of info where the process may (a
// user's own file: it already has them; root writing another's: it may);
// otherwise f keeps the process's, as a file the user creates would.
func chownLike(f *os.File, info fs.FileInfo) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok || (int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid()) {
		return
	}
	f.Chown(int(st.Uid), int(st.Gid))
}
