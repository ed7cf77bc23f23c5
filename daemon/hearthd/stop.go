package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/localsock"
)

// stopTimeout bounds how long `hearthd stop` waits for the daemon to exit:
// its drain (drain_timeout, 10 s by default) and the abandon grace, with
// room to spare.
const stopTimeout = 60 * time.Second

// stopCmd is `hearthd stop`: it asks the daemon serving this data directory
// to stop as SIGTERM does (it stops accepting, answers or drains what is in
// flight, removes its socket and readiness file) and waits for it to exit.
// The asking is the control request $/hearth/stop on the socket (a named
// pipe on Windows), whose server's user localsock.Dial has checked, so it
// works where there are no signals and stops only the daemon that answers;
// a daemon older than the request (method not found) is sent SIGTERM
// instead, as before, at the pid its own daemon_status gave, never one of
// a pid file alone.
func stopCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: hearthd stop")
		return 2
	}
	home, err := endpoint.Home(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd stop:", err)
		return 1
	}
	socket, owned, err := statusSocket(home, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd stop:", err)
		return 1
	}
	raw, err := queryStatus(socket)
	if err != nil {
		// A server of another user's is no "nothing to stop".
		if owned || errors.Is(err, localsock.ErrNotOurs) {
			fmt.Fprintln(stderr, "hearthd stop:", noneServes(home, socket, owned, err))
			return 1
		}
		fmt.Fprintf(stdout, "no hearth daemon serves %s: nothing to stop\n", home)
		return 0
	}
	st, ok := statusPID(raw)
	if !ok {
		fmt.Fprintln(stderr, "hearthd stop: the daemon's status names no pid")
		return 1
	}
	// Found before it is asked, while it certainly runs: on Windows the
	// handle held keeps its pid from being reused once it exits.
	p, err := os.FindProcess(st.PID)
	if err != nil {
		fmt.Fprintf(stderr, "hearthd stop: pid %d: %v\n", st.PID, err)
		return 1
	}
	pid, err := askStop(socket, p)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd stop:", err)
		return 1
	}
	if pid != st.PID {
		// Another daemon answered than the one whose status was read
		// (that one ended in between, a client started this one).
		if p, err = os.FindProcess(pid); err != nil {
			fmt.Fprintf(stderr, "hearthd stop: pid %d: %v\n", pid, err)
			return 1
		}
	}
	if !awaitExit(p, time.Now().Add(stopTimeout)) {
		fmt.Fprintf(stderr, "hearthd stop: hearthd (pid %d) is still draining after %s; it stops once its calls end\n", pid, stopTimeout)
		return 1
	}
	fmt.Fprintf(stdout, "stopped hearthd %s (pid %d) serving %s\n", st.Mode, pid, home)
	return 0
}

// askStop sends $/hearth/stop and returns the pid of the daemon that
// answered, which now stops; a daemon that does not know the request
// (older than it) is signalled SIGTERM at p instead, where there are
// signals.
func askStop(socket string, p *os.Process) (int, error) {
	raw, err := daemonRequest(socket, statusClientName, daemon.StopMethod, map[string]any{}, 30*time.Second)
	var refused *replyError
	if errors.As(err, &refused) && refused.code == jsonrpc.CodeMethodNotFound {
		if err := p.Signal(syscall.SIGTERM); err != nil {
			return 0, fmt.Errorf("this daemon (pid %d) is older than %s and could not be signalled: %v", p.Pid, daemon.StopMethod, err)
		}
		return p.Pid, nil
	}
	if err != nil {
		return 0, err
	}
	var res struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.PID <= 0 {
		return 0, fmt.Errorf("the daemon's answer to %s names no pid: %s", daemon.StopMethod, raw)
	}
	return res.PID, nil
}

// daemonStatus is what stop and restart read of daemon_status.
type daemonStatus struct {
	PID  int    `json:"pid"`
	Mode string `json:"mode"`
}

// statusPID reads daemon_status's pid and mode; false when it names none.
func statusPID(raw []byte) (daemonStatus, bool) {
	var st daemonStatus
	return st, json.Unmarshal(raw, &st) == nil && st.PID > 0
}

// awaitExit waits until p has ended, or deadline; false at the deadline.
func awaitExit(p *os.Process, deadline time.Time) bool {
	for alive(p) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// alive says whether p still runs (signal 0 reaches it). A daemon started by
// this command's parent may linger as a zombie until reaped; that is not
// running. Windows, which has no signal 0, sets its own (alive_windows.go).
var alive = func(p *os.Process) bool {
	err := p.Signal(syscall.Signal(0))
	if err == nil {
		b, rerr := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid))
		if rerr == nil && zombie(b) {
			return false
		}
		return true
	}
	return !errors.Is(err, os.ErrProcessDone) && !errors.Is(err, syscall.ESRCH)
}

// zombie reads a /proc/PID/stat line's state.
func zombie(stat []byte) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && stat[i+2] == 'Z'
		}
	}
	return false
}
