//go:build unix

package shim

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// startWait bounds how long a shim waits for a daemon it started.
const startWait = 5 * time.Second

// defaultIdleTimeout ends an autostarted daemon that has had no client for
// this long, so it does not outlive the editors that started it.
const defaultIdleTimeout = "10m"

// connect dials the daemon, starting one if nobody serves the socket.
func (s *Shim) connect() (*conn, error) {
	c, err := dial(s.socket)
	if err == nil {
		return c, nil
	}
	if errors.Is(err, errNotOurs) || !absent(err) || s.noAutostart {
		return nil, err
	}
	return s.autostart()
}

// autostart starts `hearthd serve` detached, one starter at a time: shims
// that lose the race for the start lock find the winner's daemon instead of
// starting their own (gopls's -remote=auto handles the same race with a lock).
func (s *Shim) autostart() (*conn, error) {
	dir := filepath.Dir(s.socket)
	if s.socketDirIsOurs {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create socket directory %s: %w", dir, err)
		}
	}
	lockPath := s.socket + ".start.lock"
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open start lock %s: %w", lockPath, err)
	}
	defer lock.Close() // releases the flock
	deadline := time.Now().Add(startWait + 5*time.Second)
	for {
		err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", lockPath, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another hearth has been starting the daemon for too long (lock %s)", lockPath)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Whoever held the lock before us may have started it already.
	if c, err := dial(s.socket); err == nil {
		return c, nil
	}

	bin, err := s.daemonBinary()
	if err != nil {
		return nil, err
	}
	logPath, logFile, err := s.openDaemonLog()
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = daemonEnv(os.Environ(), s.getenv)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logFile, logFile
	cmd.Dir = "/"                                        // never pin the editor's directory
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives this shim and its editor
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	start := time.Now()
	for time.Since(start) < startWait {
		if c, err := dial(s.socket); err == nil {
			return c, nil
		} else if errors.Is(err, errNotOurs) {
			return nil, err
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("%s serve exited at start (%v); its log is %s", bin, err, logPath)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("%s serve did not answer within %v; its log is %s", bin, startWait, logPath)
}

// daemonBinary finds hearthd: $HEARTH_DAEMON if set (an explicit choice wins),
// else beside this binary (the two are installed together), else on PATH.
func (s *Shim) daemonBinary() (string, error) {
	if v := s.getenv("HEARTH_DAEMON"); v != "" {
		return v, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "hearthd")
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := exec.LookPath("hearthd"); err == nil {
		return p, nil
	}
	return "", errors.New("cannot find hearthd: install it beside hearth or on PATH, or set HEARTH_DAEMON")
}

// openDaemonLog opens $XDG_STATE_HOME/hearth/hearthd.log for appending.
func (s *Shim) openDaemonLog() (string, *os.File, error) {
	dir, err := endpoint.StateDir(endpoint.Getenv(s.getenv))
	if err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, "hearthd.log")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("open daemon log %s: %w", path, err)
	}
	return path, f, nil
}

// daemonEnv is the environment of an autostarted daemon: ours, without what
// systemd hands a service (a daemon started by a shim is not that service),
// with an idle timeout unless the user chose one.
func daemonEnv(environ []string, getenv func(string) string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if strings.HasPrefix(kv, "NOTIFY_SOCKET=") || strings.HasPrefix(kv, "LISTEN_") || strings.HasPrefix(kv, "WATCHDOG_") {
			continue
		}
		out = append(out, kv)
	}
	if getenv("HEARTH_IDLE_TIMEOUT") == "" {
		out = append(out, "HEARTH_IDLE_TIMEOUT="+defaultIdleTimeout)
	}
	return out
}
