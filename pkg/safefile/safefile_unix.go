//go:build unix

package safefile

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openFlags make the open of a FIFO return at once instead of waiting for a
// writer, and refuse a symbolic link as the last component (os.Root adds
// O_NOFOLLOW to every component itself and follows links only inside its
// root).
const openFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW | syscall.O_CLOEXEC

// clearNonblock puts a regular file opened with O_NONBLOCK back in blocking
// mode. Regular files ignore the flag, and the runtime does not poll them,
// so this only keeps the descriptor honest for whoever reads it.
// dirFlags make the open of a directory fail at once on anything else.
const dirFlags = syscall.O_DIRECTORY | syscall.O_CLOEXEC

func clearNonblock(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}

// permsMean: a file's mode bits are what keeps other users out.
const permsMean = true

// owner says what is wrong with who owns fi ("" when it is this user).
func owner(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Getuid() {
		return ""
	}
	return fmt.Sprintf("belongs to uid %d, not to you (uid %d)", st.Uid, os.Getuid())
}
