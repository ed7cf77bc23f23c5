//go:build unix || windows

package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// ErrAlreadyRunning reports that another daemon holds the socket's lock.
var ErrAlreadyRunning = errors.New("another hearthd is already serving this socket")

// socketListener is a bound socket and the single-instance lock that makes
// binding it safe.
type socketListener struct {
	*net.UnixListener
	path      string
	lock      *os.File // nil when socket-activated
	activated bool     // systemd owns the socket file
	private   bool     // a per-process path: its lock file goes too
}

// socket returns the listening socket: the one systemd passed, else one we
// bind ourselves under the single-instance lock.
func (d *Daemon) socket() (*socketListener, error) {
	ul, err := activated()
	if err != nil {
		return nil, err
	}
	if ul != nil {
		path := ul.Addr().String()
		if d.cfg.ReadyFileDefault {
			d.cfg.ReadyFile = filepath.Join(filepath.Dir(path), endpoint.ReadyName(path))
		}
		return &socketListener{UnixListener: ul, path: path, activated: true}, nil
	}
	ln, err := listen(d.cfg)
	if err != nil {
		return nil, err
	}
	// The socket file is unlinked by close at the very end, after the drain,
	// not when accepting stops.
	ln.SetUnlinkOnClose(false)
	return ln, nil
}

// listen takes the single-instance lock beside the socket, removes a stale
// socket, and binds a new one that nobody else may reach, not even for an
// instant (listen_unix.go, listen_windows.go).
//
// The lock comes first, before the socket file is touched: whoever holds it
// may unlink and bind unconditionally, and an old instance can never unlink a
// newer one's socket.
func listen(cfg Config) (*socketListener, error) {
	dir := filepath.Dir(cfg.SocketPath)
	if err := prepareDir(dir, cfg.SocketDirIsOurs); err != nil {
		return nil, err
	}
	lockPath := cfg.SocketPath + ".lock"
	lock, busy, err := lockSocket(lockPath)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", lockPath, err)
	}
	if busy {
		holder, _ := os.ReadFile(lockPath)
		pid := strings.TrimSpace(string(holder))
		if pid == "" {
			pid = "unknown"
		}
		return nil, fmt.Errorf("%w (socket %s, pid %s); stop it first or set MCP_SOCKET_PATH to serve elsewhere", ErrAlreadyRunning, cfg.SocketPath, pid)
	}
	_ = lock.Truncate(0)
	_, _ = lock.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)

	if err := removeStale(cfg.SocketPath); err != nil {
		lock.Close()
		return nil, err
	}
	ln, err := bind(cfg)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return &socketListener{UnixListener: ln, path: cfg.SocketPath, lock: lock}, nil
}

// close stops accepting, unlinks the socket and releases the lock, in that
// order, so a successor can never find our socket file without our lock.
func (l *socketListener) close() {
	l.UnixListener.Close()
	if l.activated {
		return // systemd's socket: it stays for the next activation
	}
	_ = os.Remove(l.path)
	if l.private {
		_ = os.Remove(l.lock.Name())
	}
	l.lock.Close()
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
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		who := "another process"
		if uc, ok := c.(*net.UnixConn); ok {
			if p, err := peerOf(uc); err == nil && p.PID > 0 {
				who = fmt.Sprintf("another process (pid %d)", p.PID)
			}
		}
		c.Close()
		return fmt.Errorf("%w: %s answers on %s (systemd's socket unit?); stop it first or set MCP_SOCKET_PATH to serve elsewhere", ErrAlreadyRunning, who, path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

// socketCheckEvery is how often a daemon checks that its socket file is
// still the one it bound.
const socketCheckEvery = 2 * time.Second

// gone is closed when the socket file at the listener's path is no longer
// the one bound (removed, or replaced by another); never for a socket
// systemd passed, which systemd owns.
func (l *socketListener) gone(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{})
	if l.activated {
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
	go every(ctx, socketCheckEvery, func() bool {
		if now, err := os.Lstat(l.path); err != nil || !os.SameFile(bound, now) {
			close(ch)
			return false
		}
		return true
	})
	return ch
}
