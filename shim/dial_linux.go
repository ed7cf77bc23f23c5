//go:build linux

package shim

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// errNotOurs is a socket or daemon that belongs to another user: never
// retried, never autostarted around.
var errNotOurs = errors.New("not ours")

// dial connects to the daemon's socket after checking the file is ours, then
// checks that the process that accepted is ours too (SO_PEERCRED). Another
// user's socket could otherwise receive every frame the editor sends.
func dial(path string) (*net.UnixConn, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, err
	}
	uid := os.Getuid()
	if int(st.Uid) != uid {
		return nil, fmt.Errorf("%w: socket %s belongs to uid %d, not to you (uid %d); refusing to connect", errNotOurs, path, st.Uid, uid)
	}
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return nil, err
	}
	uc := c.(*net.UnixConn)
	raw, err := uc.SyscallConn()
	if err != nil {
		uc.Close()
		return nil, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		uc.Close()
		return nil, err
	}
	if credErr != nil {
		uc.Close()
		return nil, fmt.Errorf("reading the daemon's credentials: %w", credErr)
	}
	if int(cred.Uid) != uid {
		uc.Close()
		return nil, fmt.Errorf("%w: the process serving %s runs as uid %d, not as you (uid %d); refusing to talk to it", errNotOurs, path, cred.Uid, uid)
	}
	return uc, nil
}

// absent reports whether a dial error means "nobody is serving there", the
// case in which starting a daemon is right.
func absent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}
