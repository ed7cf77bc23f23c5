//go:build windows

package localsock

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// Windows has no peer credential: the socket's directory, created with a
// protected access list that lets in the user (and the system) alone, and
// the socket file, which inherits it, are the check
// (docs/decisions/0047-windows-socket.md).

// listener is package net's AF_UNIX listener.
type listener struct {
	ul *net.UnixListener
}

func (l listener) accept() (*Conn, error) {
	c, err := l.ul.AcceptUnix()
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, Peer: peerOf(c)}, nil
}

func (l listener) close() error { return l.ul.Close() }

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
func bind(path string, mode uint32) (listener, error) {
	if mode != 0o600 {
		return listener{}, fmt.Errorf("socket_mode %#o has no meaning on Windows: the socket's directory's access list decides who may connect, and it is the user alone (docs/decisions/0047-windows-socket.md); remove the setting", mode)
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return listener{}, fmt.Errorf("bind %s: %w (AF_UNIX sockets need Windows 10 1803 or later)", path, err)
	}
	ln.SetUnlinkOnClose(false) // Remove unlinks, after the drain
	if err := CheckPrivate(path); err != nil {
		ln.Close()
		return listener{}, fmt.Errorf("the socket just bound: %w", err)
	}
	return listener{ul: ln}, nil
}

// prepareDir makes sure the socket's directory is the user's alone. hearth's
// own directory is created with a protected access list (PrepareDir);
// any directory, ours or one MCP_SOCKET_PATH names, must be owned by the
// user and let nobody else in, or the daemon refuses to serve: it never
// rewrites the list of a directory it did not make.
func prepareDir(dir string, ours bool) error {
	if _, err := os.Stat(dir); ours || errors.Is(err, os.ErrNotExist) {
		if err := PrepareDir(dir); err != nil {
			return fmt.Errorf("socket directory: %w", err)
		}
		return nil
	}
	if err := CheckPrivate(dir); err != nil {
		return fmt.Errorf("socket directory: %w", err)
	}
	return nil
}

// removeStale deletes a leftover socket file (we hold the lock, so nobody is
// serving it): Go reports the AF_UNIX reparse point as a socket. Anything
// else is left alone, and so is a socket something answers on.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket path %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; refusing to replace it", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("%w: another process answers on %s; stop it first or set MCP_SOCKET_PATH to serve elsewhere", ErrAlreadyRunning, path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

// Inherit: no service manager passes sockets on Windows.
func Inherit(f *os.File) (*Listener, error) {
	return nil, errors.New("no service manager passes a socket on Windows")
}
