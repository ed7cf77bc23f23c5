//go:build unix

package localsock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// listener is a listening Unix socket in the runtime's poller.
type listener struct {
	f *os.File
}

// backlog is what listen(2) is asked for; the kernel caps it at its
// somaxconn.
const backlog = 4096

func (l listener) accept() (*Conn, error) {
	rc, err := l.f.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd, aerr := -1, error(nil)
	if err := rc.Read(func(s uintptr) bool {
		fd, aerr = acceptFD(int(s))
		// ECONNABORTED: the client left before we took it; wait for the next.
		return !errors.Is(aerr, unix.EAGAIN) && !errors.Is(aerr, unix.ECONNABORTED)
	}); err != nil {
		return nil, err
	}
	if aerr != nil {
		return nil, os.NewSyscallError("accept", aerr)
	}
	p, err := peerOf(fd)
	if err != nil {
		// Refusing is the safe failure; the caller logs why.
		unix.Close(fd)
		return nil, &PeerError{Err: err}
	}
	return newConn(fd, "accepted", p)
}

func (l listener) close() error { return l.f.Close() }

// Inherit takes a listening Unix stream socket a service manager passed
// (systemd's LISTEN_FDS): served as Listen's, but never unlinked, its file
// being the manager's. f is closed; the listener keeps its own descriptor.
func Inherit(f *os.File) (*Listener, error) {
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var derr error
	var sa unix.Sockaddr
	var typ int
	rc.Control(func(s uintptr) {
		if typ, derr = unix.GetsockoptInt(int(s), unix.SOL_SOCKET, unix.SO_TYPE); derr != nil {
			return
		}
		if sa, derr = unix.Getsockname(int(s)); derr != nil {
			return
		}
		fd, derr = unix.Dup(int(s))
	})
	if derr != nil {
		return nil, derr
	}
	ua, ok := sa.(*unix.SockaddrUnix)
	if !ok || typ != unix.SOCK_STREAM {
		unix.Close(fd)
		return nil, fmt.Errorf("descriptor %s is not a Unix stream socket", f.Name())
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("setnonblock", err)
	}
	return &Listener{listener: listener{f: os.NewFile(uintptr(fd), ua.Name)}, path: ua.Name, inherited: true}, nil
}

// lockSocket opens the lock file beside the socket and takes its flock
// without waiting; busy: another daemon holds it.
func lockSocket(path string) (f *os.File, busy bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, err
	}
	return f, false, nil
}

// bind binds the socket with a mode never wider than asked, not even for an
// instant.
func bind(path string, mode uint32) (listener, error) {
	fd, err := socketFD()
	if err != nil {
		return listener{}, os.NewSyscallError("socket", err)
	}
	// umask is process-wide; the daemon binds before it starts serving
	// anything, so no other file is being created meanwhile.
	old := syscall.Umask(0o177)
	err = unix.Bind(fd, &unix.SockaddrUnix{Name: path})
	syscall.Umask(old)
	if err == nil {
		err = unix.Listen(fd, backlog)
	}
	if err != nil {
		unix.Close(fd)
		return listener{}, fmt.Errorf("bind %s: %w", path, err)
	}
	if mode != 0o600 {
		if err := os.Chmod(path, fs.FileMode(mode)); err != nil {
			unix.Close(fd)
			return listener{}, fmt.Errorf("chmod %s to %#o: %w", path, mode, err)
		}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return listener{}, os.NewSyscallError("setnonblock", err)
	}
	return listener{f: os.NewFile(uintptr(fd), path)}, nil
}

// prepareDir makes sure the socket's directory exists. hearth's own default
// directory must be a real directory owned by us with no access for others:
// in a shared /tmp another user could create it first and receive every
// editor's traffic.
func prepareDir(dir string, ours bool) error {
	if ours {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create socket directory %s: %w", dir, err)
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return fmt.Errorf("socket directory %s: %w", dir, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("socket directory %s is not a directory (a symlink?); refusing to use it", dir)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if ok && int(st.Uid) != os.Getuid() {
			return fmt.Errorf("socket directory %s belongs to uid %d, not to you (uid %d); refusing to use it", dir, st.Uid, os.Getuid())
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(dir, 0o700); err != nil {
				return fmt.Errorf("restrict socket directory %s to 0700: %w", dir, err)
			}
		}
		return nil
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create socket directory %s: %w", dir, err)
		}
	}
	// A path the user chose may be in a shared directory such as /tmp, but
	// only one where no other user can remove or replace the socket: owned
	// by the user or by root, and not writable by others unless sticky.
	// Otherwise another user could unlink it and bind their own, and every
	// editor would talk to them.
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("socket directory %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := int(st.Uid); uid != os.Getuid() && uid != 0 {
		return fmt.Errorf("socket directory %s belongs to uid %d, not to you (uid %d) or root; another user could replace the socket: choose a directory of yours", dir, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("socket directory %s is writable by others and not sticky (mode %v); another user could replace the socket: choose a directory of yours", dir, fi.Mode().Perm())
	}
	return nil
}

// removeStale deletes a leftover socket file (we hold the lock, so nobody is
// serving it). Anything that is not a socket is left alone: it is not ours.
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
	// Stale means nobody accepts on it. Something that answers holds no
	// lock of ours: systemd listening for a socket-activated daemon, or a
	// daemon whose lock file was deleted. Replacing it would cut its clients
	// off, so leave it.
	if pid, answers := Answers(path); answers {
		who := "another process"
		if pid > 0 {
			who = fmt.Sprintf("another process (pid %d)", pid)
		}
		return fmt.Errorf("%w: %s answers on %s (systemd's socket unit?); stop it first or set MCP_SOCKET_PATH to serve elsewhere", ErrAlreadyRunning, who, path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

// Answers says whether anything listens on the socket at path, and its pid
// when the system says: a look only, nothing is sent and no owner checked,
// and it never waits (a listener whose backlog is full answers too).
func Answers(path string) (pid int, answers bool) {
	fd, err := socketFD()
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	if unix.SetNonblock(fd, true) != nil {
		return 0, false
	}
	switch err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); {
	case errors.Is(err, unix.EAGAIN):
		return 0, true
	case err != nil:
		return 0, false
	}
	if p, err := peerOf(fd); err == nil {
		return p.PID, true
	}
	return 0, true
}
