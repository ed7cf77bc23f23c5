//go:build windows

package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/windows"

	"github.com/hearth-mcp/hearth/pkg/sockdir"
)

// Windows has no peer credential: the socket's directory, created with a
// protected access list that lets in the user (and the system) alone, and
// the socket file, which inherits it, are the check
// (docs/decisions/0047-windows-socket.md).

// lockOffset: the lock's byte lies far past the pid the file holds, since
// a Windows byte-range lock is mandatory and would keep the pid unread.
const lockOffset = 1 << 32

// lockSocket opens the lock file beside the socket and takes a LockFileEx
// lock on it without waiting, the counterpart of Unix's flock: the system
// releases it when the handle closes or the process ends. busy: another
// daemon holds it.
func lockSocket(path string) (f *os.File, busy bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	ol := windows.Overlapped{Offset: lockOffset & 0xffffffff, OffsetHigh: lockOffset >> 32}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if err != nil {
		f.Close()
		if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return f, false, nil
}

// bind binds the socket in the private directory and checks that the file
// it made is private too: it inherits the directory's list, and is refused
// (unbound) if anything gave it a wider one.
func bind(cfg Config) (*net.UnixListener, error) {
	if cfg.SocketMode != 0o600 {
		return nil, fmt.Errorf("socket_mode %#o has no meaning on Windows: the socket's directory's access list decides who may connect, and it is the user alone (docs/decisions/0047-windows-socket.md); remove the setting", cfg.SocketMode)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: cfg.SocketPath, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w (AF_UNIX sockets need Windows 10 1803 or later)", cfg.SocketPath, err)
	}
	if err := sockdir.Check(cfg.SocketPath); err != nil {
		ln.Close()
		return nil, fmt.Errorf("the socket just bound: %w", err)
	}
	return ln, nil
}

// prepareDir makes sure the socket's directory is the user's alone. hearth's
// own directory is created with a protected access list (sockdir.Prepare);
// any directory, ours or one MCP_SOCKET_PATH names, must be owned by the
// user and let nobody else in, or the daemon refuses to serve: it never
// rewrites the list of a directory it did not make.
func prepareDir(dir string, ours bool) error {
	if ours {
		if err := sockdir.Prepare(dir); err != nil {
			return fmt.Errorf("socket directory: %w", err)
		}
		return nil
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := sockdir.Prepare(dir); err != nil {
			return fmt.Errorf("socket directory: %w", err)
		}
		return nil
	}
	if err := sockdir.Check(dir); err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	return nil
}
