package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/daemon"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/hosted"
)

// startSuccessor starts exe as the daemon a hand-over goes to, and returns
// this daemon's end of their socket and the successor's pid;
// successor_unix.go sets it in its init. Elsewhere (Windows) it refuses: a
// hand-over passes descriptors over a Unix socket pair.
var startSuccessor = func(exe string) (*os.File, int, error) {
	return nil, 0, errors.New("a daemon hands its hosted servers to a successor only on Unix (over a Unix socket pair): stop it with hearthd stop, and the next client's shim starts hearthd again")
}

// closeOnExec keeps an inherited descriptor from the daemon's children
// (successor_unix.go sets it); elsewhere descriptors are not inherited
// this way.
var closeOnExec = func(int) {}

// handOverEnv names the descriptor of a successor's end of the hand-over
// socket (docs/decisions/0046-upstream-handover.md).
const handOverEnv = "HEARTH_HANDOVER_FD"

// restartCmd is `hearthd restart`: the serving daemon starts this hearthd
// (the executable now installed) as its successor, drains, hands it its
// running hosted servers and exits; the successor then serves the data
// directory and the socket, and the shims reconnect to it.
func restartCmd(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: hearthd restart")
		return 2
	}
	home, err := endpoint.Home(getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd restart:", err)
		return 1
	}
	socket, owned, err := statusSocket(home, getenv)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd restart:", err)
		return 1
	}
	raw, err := queryStatus(socket)
	if err != nil {
		fmt.Fprintln(stderr, "hearthd restart:", noneServes(home, socket, owned, err))
		return 1
	}
	st, ok := statusPID(raw)
	if !ok {
		fmt.Fprintln(stderr, "hearthd restart: the daemon's status names no pid")
		return 1
	}
	if runtime.GOOS == "windows" {
		// Said here rather than as the daemon's "could not start" of its
		// successor (startSuccessor's default), which reads as a broken install.
		fmt.Fprintf(stderr, "hearthd restart: on Windows a daemon cannot hand its hosted servers to a new one (they pass over a Unix socket pair); stop it with hearthd stop (pid %d), and the next client's shim starts hearthd again\n", st.PID)
		return 1
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "hearthd restart:", err)
		return 1
	}
	var res struct {
		PID int `json:"pid"`
	}
	raw, err = daemonRequest(socket, statusClientName, daemon.HandOverMethod, map[string]any{"exe": exe}, 30*time.Second)
	if err == nil {
		err = json.Unmarshal(raw, &res)
	}
	old, _ := os.FindProcess(st.PID)
	var refused *replyError
	if err != nil && !errors.As(err, &refused) && alive(old) {
		// The daemon may have begun handing over by itself (an upgrade
		// installed: docs/decisions/0050-upgrade-handover.md) and closed
		// the socket before it read the request: the restart is done
		// once another daemon serves.
		if awaitExit(old, time.Now().Add(stopTimeout)) {
			if raw, qerr := queryStatus(socket); qerr == nil {
				if now, ok := statusPID(raw); ok && now.PID != st.PID {
					fmt.Fprintf(stdout, "restarted hearthd serving %s: pid %d, was %d\n", home, now.PID, st.PID)
					return 0
				}
			}
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "hearthd restart:", err)
		return 1
	}
	deadline := time.Now().Add(stopTimeout)
	if !awaitExit(old, deadline) {
		fmt.Fprintf(stderr, "hearthd restart: hearthd (pid %d) is still draining after %s\n", st.PID, stopTimeout)
		return 1
	}
	// Served once the successor answers on the socket. A successor that
	// has exited never will: said at once, with whoever serves instead (a
	// client's shim starts a daemon when it finds none).
	successor, _ := os.FindProcess(res.PID)
	for {
		raw, err := queryStatus(socket)
		now, ok := statusPID(raw)
		if err == nil && ok && now.PID == res.PID {
			break
		}
		if !alive(successor) {
			msg := fmt.Sprintf("hearthd restart: the new hearthd (pid %d) exited before it served %s, so the hosted servers it was handed ended with it (the old daemon's log has its stderr)", res.PID, socket)
			if err == nil && ok && now.PID != st.PID {
				msg += fmt.Sprintf("; hearthd (pid %d), started when a client found none, serves it now", now.PID)
			}
			fmt.Fprintln(stderr, msg)
			return 1
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(stderr, "hearthd restart: the new hearthd (pid %d) does not serve %s\n", res.PID, socket)
			return 1
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintf(stdout, "restarted hearthd serving %s: pid %d, was %d\n", home, res.PID, st.PID)
	return 0
}

// receiveHandOver, in a successor, reads the upstreams handed over and
// waits for the predecessor to exit; nothing when this daemon is no
// successor.
func receiveHandOver(log *zap.Logger) ([]hosted.Handed, *os.File, error) {
	v := os.Getenv(handOverEnv)
	if v == "" {
		return nil, nil, nil
	}
	os.Unsetenv(handOverEnv)
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, nil, fmt.Errorf("%s=%q", handOverEnv, v)
	}
	closeOnExec(fd)
	conn := os.NewFile(uintptr(fd), "handover")
	defer conn.Close()
	handed, lock, err := daemon.ReceiveHanded(conn)
	if err != nil {
		return nil, nil, err
	}
	if err := daemon.AwaitPredecessor(conn); err != nil {
		for _, h := range handed {
			h.Files.Close()
		}
		if lock != nil {
			lock.Close()
		}
		return nil, nil, fmt.Errorf("the previous daemon did not exit: %w", err)
	}
	log.Info("the previous daemon handed over its hosted servers", zap.Int("handed", len(handed)), zap.Bool("owner_lock", lock != nil))
	return handed, lock, nil
}
