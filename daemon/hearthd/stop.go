package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/localsock"
)

// stopTimeout bounds how long `hearthd stop` waits for the daemon to exit:
// its drain (drain_timeout, 10 s by default) and the abandon grace, with
// room to spare.
const stopTimeout = 60 * time.Second

// stopCmd is `hearthd stop`: it asks the daemon serving this data directory
// to stop as SIGTERM does (it stops accepting, answers or drains what is in
// flight, removes its socket and readiness file) and waits for it to exit.
// The daemon is found by asking it (daemon_status gives its pid), never by
// a pid file alone, so a reused pid is never signalled.
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
	p, err := os.FindProcess(st.PID)
	if err == nil {
		err = p.Signal(syscall.SIGTERM)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hearthd stop: pid %d: %v\n", st.PID, err)
		return 1
	}
	if !awaitExit(p, time.Now().Add(stopTimeout)) {
		fmt.Fprintf(stderr, "hearthd stop: hearthd (pid %d) is still draining after %s; it stops once its calls end\n", st.PID, stopTimeout)
		return 1
	}
	fmt.Fprintf(stdout, "stopped hearthd %s (pid %d) serving %s\n", st.Mode, st.PID, home)
	return 0
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
// running.
func alive(p *os.Process) bool {
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
