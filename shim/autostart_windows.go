//go:build windows

package shim

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/hearth-mcp/hearth/pkg/localsock"
)

// openFlags: Go's handles on Windows are not inherited by children anyway.
const openFlags = 0

// makeSocketDir creates the socket's directory the user's alone, with the
// protected access list the daemon would give it (localsock.PrepareDir);
// one that exists is left for dial and the daemon to check.
func makeSocketDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	return localsock.PrepareDir(dir)
}

// tryLock takes a LockFileEx lock on f without waiting: false when
// another starter holds it. The system releases it when the handle closes.
func tryLock(f *os.File) (bool, error) {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

// detach starts the daemon in a process group of its own with no console
// (CREATE_NEW_PROCESS_GROUP | DETACHED_PROCESS): it outlives the shim and
// its editor, and the editor's Ctrl+C does not reach it. Its directory is
// its own state directory, beside its log, never the editor's.
func detach(cmd *exec.Cmd) {
	if cmd.Stdout != nil {
		if f, ok := cmd.Stdout.(*os.File); ok {
			cmd.Dir = filepath.Dir(f.Name())
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS}
}

// executable: on Windows a regular file is; its name says what it is.
func executable(fs.FileInfo) bool { return true }
