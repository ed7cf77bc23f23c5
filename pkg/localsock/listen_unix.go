//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

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
func bind(cfg Config) (*net.UnixListener, error) {
	// umask is process-wide; the daemon binds before it starts serving
	// anything, so no other file is being created meanwhile.
	old := syscall.Umask(0o177)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: cfg.SocketPath, Net: "unix"})
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", cfg.SocketPath, err)
	}
	if cfg.SocketMode != 0o600 {
		if err := os.Chmod(cfg.SocketPath, cfg.SocketMode); err != nil {
			ln.Close()
			return nil, fmt.Errorf("chmod %s to %#o: %w", cfg.SocketPath, cfg.SocketMode, err)
		}
	}
	return ln, nil
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
