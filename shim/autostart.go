//go:build unix || windows

package shim

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/owner"
	"github.com/hearth-mcp/hearth/pkg/portable"
	"github.com/hearth-mcp/hearth/pkg/safefile"
	"github.com/hearth-mcp/hearth/pkg/version"
)

// startWait bounds how long a shim waits for a daemon it started, or for an
// owner that is still starting.
const startWait = 5 * time.Second

// exitOwned is hearthd's exit code when the data directory already has a
// live owner (a race with another starter): that owner is then the daemon.
const exitOwned = 3

// place is where the shim's daemon is: the data directory whose owner it
// is, the socket this environment names (tried when the home has no
// owner), and whether the shim may start one there.
type place struct {
	getenv      func(string) string
	home        string
	socket      string
	noAutostart bool
	versionSaid bool // the version difference was reported (under Shim.mu)
}

// find reads where the daemon is from the shim's environment.
func (p *place) find() error {
	path, _, err := endpoint.SocketPath(endpoint.Getenv(p.getenv))
	if err != nil {
		return err
	}
	p.socket = path
	if p.home, err = endpoint.Home(endpoint.Getenv(p.getenv)); err != nil {
		return err
	}
	p.noAutostart = p.getenv("HEARTH_NO_AUTOSTART") != ""
	return nil
}

// connect finds the daemon and dials it, starting one if nobody serves.
//
// The data directory decides, not this process's socket variables: its
// owner records where it serves, so clients that resolve the same home
// reach the same daemon whatever environment they were given (decision
// 0015). Only when the home has no owner is the socket this environment
// names tried (a systemd socket unit answers there before its daemon
// runs), and only then is a daemon started.
func (s *Shim) connect() (*conn, error) {
	c, err := s.dialOwner(time.Now().Add(startWait))
	if c != nil || err != nil {
		return c, err
	}
	c, err = dial(s.place.socket)
	if err == nil {
		return c, nil
	}
	if errors.Is(err, errNotOurs) || !absent(err) || s.place.noAutostart {
		if s.place.noAutostart && absent(err) {
			return nil, fmt.Errorf("nobody serves %s or the socket %s, and HEARTH_NO_AUTOSTART is set", s.place.home, s.place.socket)
		}
		return nil, fmt.Errorf("%s: %w", s.place.socket, err)
	}
	return s.autostart()
}

// ownerSilent: the data directory's owner did not answer on its socket in
// time.
type ownerSilent struct{ msg string }

func (e *ownerSilent) Error() string { return e.msg }

func isOwnerSilent(err error) bool {
	var silent *ownerSilent
	return errors.As(err, &silent)
}

// dialOwner dials the owner of the shim's data directory, waiting until
// deadline for one that is starting. (nil, nil): the home has no owner.
func (s *Shim) dialOwner(deadline time.Time) (*conn, error) {
	wake := ownerWake{home: s.place.home}
	defer wake.close()
	for {
		rec, state, err := owner.Find(s.place.home)
		if err != nil {
			return nil, nil // an unreadable home: fall back to the socket
		}
		switch state {
		case owner.None:
			return nil, nil
		case owner.Serving:
			if rec.Socket == "" {
				return nil, fmt.Errorf("the data directory %s is owned by hearthd %s (pid %d), which serves no socket: "+
					"close the client that started it, or give this client another HEARTH_HOME", s.place.home, rec.Mode, rec.PID)
			}
			c, err := dial(rec.Socket)
			if err == nil {
				s.noteVersion(rec)
				return c, nil
			}
			if errors.Is(err, errNotOurs) {
				return nil, err
			}
			// The owner is going away or not accepting yet: wait for it,
			// then for whoever follows it.
		}
		if time.Now().After(deadline) {
			return nil, &ownerSilent{fmt.Sprintf("the data directory %s is owned by hearthd (pid %d), which did not answer on %q within %v",
				s.place.home, rec.PID, rec.Socket, startWait)}
		}
		wake.wait(ownerPoll)
	}
}

// noteVersion says once when the daemon runs another hearth version than
// this shim: an upgrade takes effect only when the daemon restarts.
func (s *Shim) noteVersion(rec owner.Record) {
	if rec.Version == "" || rec.Version == version.Tooling() || s.place.versionSaid {
		return
	}
	s.place.versionSaid = true
	s.say("this shim is hearth %s but the daemon (pid %d) runs %s; restart the daemon to use one version (`hearthd status` shows it)",
		version.Tooling(), rec.PID, rec.Version)
}

// autostart starts `hearthd serve` detached, one starter per data directory
// at a time: shims that lose the race for the start lock find the winner's
// daemon instead of starting their own (gopls's -remote=auto handles the
// same race with a lock).
func (s *Shim) autostart() (*conn, error) {
	if err := makeSocketDir(filepath.Dir(s.place.socket)); err != nil {
		return nil, fmt.Errorf("create socket directory %s: %w", filepath.Dir(s.place.socket), err)
	}
	// One starter per data directory. The lock lives in the user's own
	// state directory, beside the daemon's log: the data directory is left
	// to the daemon, whose version guard must find a refused one untouched.
	// (Were two shims to resolve different state directories, both could
	// start a daemon; the owner lock then refuses the second, exitOwned.)
	state, err := endpoint.StateDir(endpoint.Getenv(s.place.getenv))
	if err != nil {
		return nil, err
	}
	if _, err := endpoint.PrivateDir(state); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(s.place.home))
	lockPath := filepath.Join(state, "start-"+hex.EncodeToString(sum[:6])+".lock")
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|openFlags, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open start lock %s: %w", lockPath, err)
	}
	defer lock.Close() // releases the lock
	wake := ownerWake{home: s.place.home}
	defer wake.close()
	deadline := time.Now().Add(startWait + 5*time.Second)
	for {
		got, err := tryLock(lock)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", lockPath, err)
		}
		if got {
			break
		}
		// Another shim is starting the daemon: its daemon serves as soon
		// as it publishes its owner record, and this shim need not wait
		// for the starter to let go of the lock (nor for the other shims
		// waiting with it to take it one at a time) to reach it.
		if c, err := s.dialOwner(time.Now()); c != nil {
			return c, nil
		} else if err != nil && !isOwnerSilent(err) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("another hearth has been starting the daemon for too long (lock %s)", lockPath)
		}
		wake.wait(ownerPoll)
	}
	// Whoever held the lock before us may have started it already.
	if c, err := s.dialOwner(time.Now().Add(startWait)); c != nil || err != nil {
		return c, err
	}
	if c, err := dial(s.place.socket); err == nil {
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
	logStart, _ := logFile.Seek(0, io.SeekEnd)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = daemonEnv(os.Environ())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logFile, logFile
	detach(cmd) // outlives this shim and its editor, and never pins the editor's directory
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	start := time.Now()
	for time.Since(start) < startWait {
		// One look at the owner (no wait: this loop is the wait); one that
		// does not answer yet is the daemon just started, still binding.
		c, err := s.dialOwner(time.Now())
		if c != nil {
			return c, nil
		}
		if err != nil && !isOwnerSilent(err) {
			return nil, err
		}
		wake.wait(ownerPoll)
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == exitOwned {
				// Another starter won: its daemon owns the home now.
				if c, err := s.dialOwner(time.Now().Add(startWait)); c != nil || err != nil {
					return c, err
				}
			}
			why := daemonReason(logPath, logStart)
			if why == "" {
				why = fmt.Sprintf("%v; its log is %s", err, logPath)
			} else {
				why = fmt.Sprintf("%s (%v; its log is %s)", why, err, logPath)
			}
			return nil, fmt.Errorf("%s serve could not start: %s", bin, why)
		default:
		}
	}
	return nil, fmt.Errorf("%s serve did not answer within %v; its log is %s", bin, startWait, logPath)
}

// daemonReason is what a daemon that failed at start said for a person:
// its stderr lines that begin "hearthd: " (the version guard's refusal,
// another owner, a bad setting), written to the log after offset.
func daemonReason(logPath string, offset int64) string {
	f, err := safefile.OpenOwn(logPath) // hearth's own: never a FIFO waited on
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	var lines []string
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "hearthd: ") {
			lines = append(lines, strings.TrimPrefix(line, "hearthd: "))
		}
	}
	return strings.Join(lines, "; ")
}

// daemonBinary finds hearthd: $HEARTH_DAEMON if set (an explicit choice wins),
// else beside this binary (the two are installed together), else on PATH.
func (s *Shim) daemonBinary() (string, error) {
	if v := s.place.getenv("HEARTH_DAEMON"); v != "" {
		return v, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), daemonName(runtime.GOOS))
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && executable(fi) {
			return beside, nil
		}
	}
	if p, err := exec.LookPath("hearthd"); err == nil {
		return p, nil
	}
	return "", errors.New("cannot find hearthd: install it beside hearth or on PATH, or set HEARTH_DAEMON")
}

// openDaemonLog opens ~/.local/state/hearth/hearthd.log for appending.
func (s *Shim) openDaemonLog() (string, *os.File, error) {
	dir, err := endpoint.StateDir(endpoint.Getenv(s.place.getenv))
	if err != nil {
		return "", nil, err
	}
	if _, err := endpoint.PrivateDir(dir); err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "hearthd.log")
	// A file of hearth's own: no link followed, no FIFO waited on, another
	// user's refused (safefile.AppendOwn).
	f, err := safefile.AppendOwn(path)
	if err != nil {
		return "", nil, fmt.Errorf("open daemon log %s: %w", path, err)
	}
	return path, f, nil
}

// daemonEnv is the environment of an autostarted daemon: what the daemon
// itself needs and nothing else of the client's. A daemon serves every
// client and hosts their servers, so a token in the environment of the
// window that happened to start it must not become every other window's
// (docs/decisions/0042-upstream-environment.md). It keeps:
//   - the base every hosted server also gets (daemonBaseVar): HOME, USER,
//     LOGNAME, SHELL, PATH (git and interpreters), the locale, TZ, TMPDIR,
//     the proxies and certificate variables (pkg/hosted.FromDaemon);
//   - the places decision 0029 lets the environment choose (HEARTH_HOME,
//     HEARTH_CONFIG, MCP_SOCKET_PATH, MCP_READY_FILE, XDG_RUNTIME_DIR) and
//     the XDG directories the daemon reports as not followed;
//   - the switches that choose which of the daemon's own mechanisms run
//     (daemonMechanismVar), neither a setting nor a secret: without them a
//     client run over the portable mechanisms autostarts a daemon that
//     runs Linux's own (docs/decisions/0044-platforms.md).
//
// No setting variable passes (its settings come from its config file,
// never from whichever client happened to start it: docs/reference.md's
// Configuration section; the shim says which it did not pass on), nor what
// systemd hands a service. The daemon learns it was autostarted
// (HEARTH_AUTOSTARTED) and then exits after an idle time.
//
// On Windows, whose variable names are case-blind ("Path"), the names are
// compared in capitals, and the base keeps the system's own variables
// (windowsBaseVar): without SystemRoot a process cannot even open a
// socket.
func daemonEnv(environ []string) []string { return daemonEnvOn(runtime.GOOS, environ) }

// daemonEnvOn is daemonEnv as on goos.
func daemonEnvOn(goos string, environ []string) []string {
	out := make([]string, 0, 16)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if goos == "windows" {
			// "=C:=C:\x", cmd.exe's directory per drive, has no name: dropped.
			if up := strings.ToUpper(name); name != "" && (windowsBaseVar(up) || daemonBaseVar(up) || daemonPlaceVar(up) || daemonMechanismVar(up)) {
				out = append(out, kv)
			}
			continue
		}
		if daemonBaseVar(name) || daemonPlaceVar(name) || daemonMechanismVar(name) {
			out = append(out, kv)
		}
	}
	return append(out, "HEARTH_AUTOSTARTED=1")
}

// windowsBaseVar: what every Windows process expects of its environment
// (the system's directories, the profile and its application data, the
// temporary directory, how commands are found), in capitals.
func windowsBaseVar(upper string) bool {
	switch upper {
	case "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT",
		"USERPROFILE", "USERNAME", "USERDOMAIN", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA",
		"TEMP", "TMP", "PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432",
		"COMMONPROGRAMFILES", "COMMONPROGRAMFILES(X86)", "COMMONPROGRAMW6432",
		"NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "OS":
		return true
	}
	return false
}

// daemonName is hearthd's file name on goos.
func daemonName(goos string) string {
	if goos == "windows" {
		return "hearthd.exe"
	}
	return "hearthd"
}

// daemonBaseVar: the variables of the base hosted servers get
// (pkg/hosted.UpstreamEnv takes them from the daemon's environment).
func daemonBaseVar(name string) bool {
	switch name {
	case "HOME", "USER", "LOGNAME", "SHELL", "PATH", "LANG", "LANGUAGE", "TZ", "TMPDIR",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// daemonPlaceVar: the variables that choose or report where the daemon
// keeps its data, config file, socket and readiness file (decision 0029).
func daemonPlaceVar(name string) bool {
	switch name {
	case "HEARTH_HOME", keys.ConfigVar, "MCP_SOCKET_PATH", "MCP_READY_FILE",
		"XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME":
		return true
	}
	return false
}

// ignoredSettings lists the setting variables in the client's environment:
// they configure no daemon the shim reaches (see daemonEnv).
func ignoredSettings(getenv func(string) string) []string {
	var out []string
	for _, name := range keys.SettingVars {
		if getenv(name) != "" {
			out = append(out, name)
		}
	}
	return out
}

// daemonMechanismVar: the switches (pkg/portable) that select the portable
// mechanisms on Linux.
func daemonMechanismVar(name string) bool { return portable.Passed(name) }
