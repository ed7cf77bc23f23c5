//go:build windows

package localsock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows the daemon serves a named pipe whose name holds the user's SID
// (PipeName) and whose security descriptor lets in the user and the system
// alone (PipeSDDL); each client's user is read from the pipe
// (GetNamedPipeClientProcessId, then that process's token) for the daemon
// to check with Ours. The handles are overlapped, read and written through
// os.File on the Go runtime's own completion port: a synchronous duplex
// handle would have Windows serialize a write behind a read that waits
// (docs/decisions/0064-windows-named-pipe.md). The file at the socket's
// path names the pipe: it is what Gone watches and what removeStale clears.

// pipeBuffer is each direction's buffer, as a Unix socket's.
const pipeBuffer = 64 << 10

// listener is the system's part of a Listener: the pipe.
type listener struct{ *pipeServer }

// pipeServer serves one pipe name: one instance always waits for the next
// client, so that a client never finds the name missing between accepts.
type pipeServer struct {
	name      string
	sa        *windows.SecurityAttributes
	mu        sync.Mutex
	next      windows.Handle // the instance ConnectNamedPipe waits on
	accepting bool           // an Accept is between its two locks: it closes next
	closed    bool
}

func (l *pipeServer) create(first bool) (windows.Handle, error) {
	p, err := windows.UTF16PtrFromString(l.name)
	if err != nil {
		return 0, err
	}
	flags := uint32(windows.PIPE_ACCESS_DUPLEX | windows.FILE_FLAG_OVERLAPPED)
	if first {
		// Fails if anyone, of any user, already serves the name.
		flags |= windows.FILE_FLAG_FIRST_PIPE_INSTANCE
	}
	mode := uint32(windows.PIPE_TYPE_BYTE | windows.PIPE_READMODE_BYTE | windows.PIPE_WAIT | windows.PIPE_REJECT_REMOTE_CLIENTS)
	h, err := windows.CreateNamedPipe(p, flags, mode, windows.PIPE_UNLIMITED_INSTANCES, pipeBuffer, pipeBuffer, 0, l.sa)
	if err != nil {
		return 0, err
	}
	return h, nil
}

func (l *pipeServer) accept() (*Conn, error) {
	l.mu.Lock()
	h := l.next
	if l.closed {
		l.mu.Unlock()
		return nil, ErrClosed
	}
	l.accepting = true
	l.mu.Unlock()
	err := connect(h)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepting = false
	if l.closed {
		windows.CloseHandle(h)
		l.next = 0
		return nil, ErrClosed
	}
	next, cerr := l.create(false)
	if cerr != nil {
		// Keep waiting on this instance; the caller sees the error.
		if err == nil {
			windows.DisconnectNamedPipe(h)
		}
		return nil, fmt.Errorf("a new instance of %s: %w", l.name, cerr)
	}
	l.next = next
	if err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("connect %s: %w", l.name, err)
	}
	p, err := clientPeer(h)
	if err != nil {
		windows.DisconnectNamedPipe(h)
		windows.CloseHandle(h)
		return nil, &PeerError{Err: err}
	}
	return newConn(h, l.name, p), nil
}

// connect waits for a client on the instance h: an overlapped
// ConnectNamedPipe, waited for on its event (close cancels it).
func connect(h windows.Handle) error {
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(ev)
	ol := &windows.Overlapped{HEvent: ev}
	err = windows.ConnectNamedPipe(h, ol)
	switch {
	case errors.Is(err, windows.ERROR_PIPE_CONNECTED):
		return nil // a client came between CreateNamedPipe and ConnectNamedPipe
	case errors.Is(err, windows.ERROR_IO_PENDING):
		var n uint32
		return windows.GetOverlappedResult(h, ol, &n, true)
	}
	return err
}

// close ends the waiting instance: itself when no Accept waits on it, else
// it wakes the Accept waiting in ConnectNamedPipe, which closes it, with
// CancelIoEx and, should that come before the wait, a connection of its
// own.
func (l *pipeServer) close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	h := l.next
	if !l.accepting {
		l.next = 0
		l.mu.Unlock()
		if h != 0 {
			windows.CloseHandle(h)
		}
		return nil
	}
	l.mu.Unlock()
	_ = windows.CancelIoEx(h, nil)
	if c, err := openPipe(l.name); err == nil {
		windows.CloseHandle(c)
	}
	return nil
}

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

// bind creates the pipe's first instance, refused if any process already
// serves the name, and writes the pipe's name at path.
func bind(path string, mode uint32) (listener, error) {
	if mode != 0o600 {
		return listener{}, fmt.Errorf("socket_mode %#o has no meaning on Windows: the pipe's access list decides who may connect, and it is the user alone (docs/decisions/0064-windows-named-pipe.md); remove the setting", mode)
	}
	me, err := Me()
	if err != nil {
		return listener{}, err
	}
	sd, err := windows.SecurityDescriptorFromString(PipeSDDL(me))
	if err != nil {
		return listener{}, fmt.Errorf("security descriptor %s: %w", PipeSDDL(me), err)
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	l := &pipeServer{name: PipeName(me, path), sa: sa}
	h, err := l.create(true)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_PIPE_BUSY) {
		return listener{}, fmt.Errorf("%w: another process already serves the pipe %s; stop it first or set MCP_SOCKET_PATH to serve elsewhere", ErrAlreadyRunning, l.name)
	}
	if err != nil {
		return listener{}, fmt.Errorf("create the pipe %s: %w", l.name, err)
	}
	l.next = h
	if err := os.WriteFile(path, []byte(l.name+"\n"), 0o600); err != nil {
		windows.CloseHandle(h)
		return listener{}, fmt.Errorf("write %s: %w", path, err)
	}
	return listener{l}, nil
}

// prepareDir makes sure the socket's directory, where the lock and the
// file naming the pipe live, is the user's alone. hearth's own directory is
// created with a protected access list (PrepareDir); any directory, ours or
// one MCP_SOCKET_PATH names, must be owned by the user and let nobody else
// in, or the daemon refuses to serve: it never rewrites the list of a
// directory it did not make.
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

// removeStale deletes a leftover file at the socket's path (we hold the
// lock, so nobody is serving it): the name of a dead daemon's pipe, or an
// AF_UNIX socket an older hearth bound. Anything else is left alone.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket path %s: %w", path, err)
	}
	if t := fi.Mode().Type(); t != fs.ModeSocket && !(t.IsRegular() && fi.Size() < 1024) {
		return fmt.Errorf("%s exists and is neither a socket nor the name of a pipe; refusing to replace it", path)
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
