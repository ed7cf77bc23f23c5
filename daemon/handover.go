package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/mcp"
)

// A planned restart (`hearthd restart`) hands the running hosted upstreams
// to the new daemon (docs/decisions/0046-upstream-handover.md): this
// daemon starts its successor with one end of a private socket pair,
// drains as on SIGTERM, sends each ready upstream's record and
// descriptors there, and exits; the successor adopts them once this daemon
// is gone, then takes the data directory and the socket.

// HandOverMethod is the control request of `hearthd restart`: params {}
// or {"exe": PATH}, the hearthd that asks, which must be this daemon's own
// executable (Options.Executable); result {"pid"}, the successor's pid.
// This daemon then stops as on SIGTERM. The successor is always the file
// at the daemon's own executable's path, the hearthd installed there now:
// a request never names the program the daemon runs
// (docs/decisions/0053-surfaces-decided-once.md).
const HandOverMethod = "$/hearth/handover"

// Successor starts the new daemon from exe with its end of the hand-over
// socket and returns this daemon's end and its pid (set by hearthd's main:
// the daemon package starts no program of its own). exe is always the
// daemon's own executable's path, which the Successor judges as an
// upgrade's file is judged (pkg/upgrade.Runnable) before it runs it.
type Successor func(exe string) (conn *os.File, pid int, err error)

type handOverArgs struct {
	Exe string `json:"exe"`
}

type handOverState struct {
	mu   sync.Mutex
	conn *os.File // set once a successor runs
	exe  string   // the successor's executable and pid
	pid  int
	now  chan struct{} // closed: stop serving, for the hand-over
	// stopOnce closes now.
	stopOnce sync.Once
	// stopped: the daemon has stopped serving (for whatever reason); no
	// successor starts after that, though a check for an upgrade or a
	// hearthd restart begun before may still ask for one (upgrade.go).
	stopped bool
}

// handOverControl answers $/hearth/handover.
func (d *Daemon) handOverControl(_ context.Context, params json.RawMessage) (any, error) {
	var a handOverArgs
	if len(params) > 0 && json.Unmarshal(params, &a) != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: HandOverMethod + ` takes {} or {"exe":PATH}, PATH this daemon's own executable`}
	}
	if d.opts.Executable == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "this daemon does not know its own executable, so it cannot start a successor; stop it (hearthd stop) and start hearthd again"}
	}
	if a.Exe != "" && !sameExecutable(a.Exe, d.opts.Executable) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(
			"this daemon (pid %d) hands over only to its own executable, %s, never to another program; this hearthd is %s: install it at %s, or stop the daemon (hearthd stop) and start this one",
			os.Getpid(), d.opts.Executable, a.Exe, d.opts.Executable)}
	}
	pid, stop, err := d.handOver(d.opts.Executable, "hearthd restart")
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
	}
	// The daemon stops serving once the answer is out: stopping first could
	// close this connection before `hearthd restart` reads which successor
	// to wait for.
	return mcp.ThenReply{Result: map[string]int{"pid": pid}, After: stop}, nil
}

// sameExecutable: a and b name one file (the same path, or two names of
// one file).
func sameExecutable(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ai, err := os.Stat(a)
	if err != nil {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && os.SameFile(ai, bi)
}

// refusesHandOver says why this daemon cannot hand over ("" when it can);
// d.handover.mu is held.
func (d *Daemon) refusesHandOver() string {
	switch {
	case d.opts.StartSuccessor == nil:
		return "this daemon cannot start a successor"
	case d.cfg.Mode != ModeSocket:
		return "only a socket daemon (hearthd serve) hands over; a stdio daemon ends with its client"
	case d.activated:
		return "systemd started this daemon: restart it with systemctl --user restart hearthd"
	case d.handover.conn != nil:
		return "a hand-over is under way"
	case d.handover.stopped:
		return "this daemon is stopping"
	}
	return ""
}

// handOver starts exe as this daemon's successor, to hand it the hosted
// upstreams once drained; why names what asked (`hearthd restart`, or an
// upgrade installed: upgrade.go). It returns the successor's pid and stop,
// which has this daemon stop serving (at once for an upgrade; once its
// answer is written for `hearthd restart`), or why it did not start.
func (d *Daemon) handOver(exe, why string) (int, func(), error) {
	d.handover.mu.Lock()
	defer d.handover.mu.Unlock()
	if d.handover.conn != nil && d.handover.exe == exe {
		// `hearthd restart` of the executable an upgrade is handing over
		// to already: that successor is the one asked for.
		return d.handover.pid, d.stopForHandOver, nil
	}
	if msg := d.refusesHandOver(); msg != "" {
		return 0, nil, errors.New(msg)
	}
	conn, pid, err := d.opts.StartSuccessor(exe)
	if err != nil {
		return 0, nil, fmt.Errorf("could not start %s: %v", exe, err)
	}
	d.handover.conn, d.handover.exe, d.handover.pid = conn, exe, pid
	d.log.Info("handing over to a new daemon", zap.String("exe", exe), zap.Int("successor_pid", pid), zap.String("why", why))
	return pid, d.stopForHandOver, nil
}

// stopForHandOver has the daemon stop serving for the hand-over (once).
func (d *Daemon) stopForHandOver() { d.handover.stopOnce.Do(func() { close(d.handover.now) }) }

// handingOver is closed once a hand-over was asked for.
func (d *Daemon) handingOver() <-chan struct{} { return d.handover.now }

// closeHosted ends the hosted servers as the daemon stops: those it can
// hand to a successor are sent there, the others stopped.
func (d *Daemon) closeHosted() {
	d.handover.mu.Lock()
	conn := d.handover.conn
	d.handover.mu.Unlock()
	if conn != nil {
		list := d.hosted.HandOver()
		n, err := SendHanded(conn, list, d.opts.OwnerLock)
		if err != nil {
			d.log.Warn("the hand-over broke off; the upstreams not sent end with this daemon", zap.Error(err))
		}
		d.log.Info("hosted servers handed over", zap.Int("handed", n), zap.Int("ready", len(list)))
		// conn stays open until this process exits: its end tells the
		// successor this daemon is gone.
	}
	d.hosted.Close()
}

// AwaitPredecessor waits until the daemon that handed over is gone: its
// end of conn closes when it exits, which its own drain bounds.
func AwaitPredecessor(conn *os.File) error {
	var b [16]byte
	for {
		_, err := conn.Read(b[:])
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
