package localsock

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hearth-mcp/hearth/pkg/safefile"
)

// Listener is a bound socket, and the single-instance lock that made
// binding it safe.
type Listener struct {
	listener  // the system's part: the listening descriptor or pipe
	path      string
	lock      *os.File // nil when inherited
	inherited bool     // a service manager owns the socket file
	ownLock   bool
	closed    atomic.Bool
}

// Listen takes the single-instance lock beside the socket at path, removes a
// stale socket, and binds a new one that nobody else may reach, not even
// for an instant (listen_unix.go, listen_windows.go). Another daemon holding
// the lock is ErrAlreadyRunning, naming its pid.
//
// The lock comes first, before the socket file is touched: whoever holds it
// may unlink and bind unconditionally, and an old instance can never unlink a
// newer one's socket.
func Listen(path string, o Options) (*Listener, error) {
	if err := prepareDir(filepath.Dir(path), o.Private); err != nil {
		return nil, err
	}
	lockPath := path + ".lock"
	lock, busy, err := lockSocket(lockPath)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	if busy {
		holder, _ := safefile.ReadOwn(lockPath, 4096) // hearth's own: never waited on
		pid := strings.TrimSpace(string(holder))
		if pid == "" {
			pid = "unknown"
		}
		return nil, fmt.Errorf("%w (socket %s, pid %s); stop it first or set MCP_SOCKET_PATH to serve elsewhere", ErrAlreadyRunning, path, pid)
	}
	_ = lock.Truncate(0)
	_, _ = lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)

	if err := removeStale(path); err != nil {
		lock.Close()
		return nil, err
	}
	ln, err := bind(path, o.mode())
	if err != nil {
		lock.Close()
		return nil, err
	}
	return &Listener{listener: ln, path: path, lock: lock, ownLock: o.OwnLock}, nil
}

// Path is where the listener serves.
func (l *Listener) Path() string { return l.path }

// Inherited: the socket was handed over by a service manager (systemd's
// socket activation), which owns its file.
func (l *Listener) Inherited() bool { return l.inherited }

// Accept waits for the next connection and reads who made it. It returns
// ErrClosed once Close was called.
func (l *Listener) Accept() (*Conn, error) {
	c, err := l.accept()
	if err != nil && l.closed.Load() {
		return nil, ErrClosed
	}
	return c, err
}

// Close stops accepting; the socket file stays, for Remove.
func (l *Listener) Close() error {
	l.closed.Store(true)
	return l.listener.close()
}

// Remove stops accepting, unlinks the socket and releases the lock, in that
// order, so a successor can never find our socket file without our lock. An
// inherited socket stays for the next activation.
func (l *Listener) Remove() {
	l.Close()
	if l.inherited {
		return
	}
	_ = os.Remove(l.path)
	if l.ownLock {
		_ = os.Remove(l.lock.Name())
	}
	l.lock.Close()
}

// CheckEvery is how often Gone checks that the socket file is still the
// one bound.
const CheckEvery = 2 * time.Second

// Gone is closed when the socket file at the listener's path is no longer
// the one bound (removed, or replaced by another); never for an inherited
// socket, which its service manager owns.
func (l *Listener) Gone(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{})
	if l.inherited {
		return ch
	}
	bound, err := os.Lstat(l.path)
	if err != nil {
		close(ch)
		return ch
	}
	// Windows reads a file's identity only when first compared: read it
	// now, while the file is the one bound.
	os.SameFile(bound, bound)
	go func() {
		t := time.NewTicker(CheckEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if now, err := os.Lstat(l.path); err != nil || !os.SameFile(bound, now) {
				close(ch)
				return
			}
		}
	}()
	return ch
}
