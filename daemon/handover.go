package daemon

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
)

// A planned restart (`hearthd restart`) hands the running hosted upstreams
// to the new daemon (docs/decisions/0046-upstream-handover.md): this
// daemon starts its successor with one end of a private socket pair,
// drains as on SIGTERM, sends each ready upstream's record and
// descriptors there, and exits; the successor adopts them once this daemon
// is gone, then takes the data directory and the socket.

// HandOverMethod is the control request of `hearthd restart`: params
// {"exe": PATH}, the hearthd to start as the successor; result {"pid"},
// the successor's pid. This daemon then stops as on SIGTERM.
const HandOverMethod = "$/hearth/handover"

// Successor starts the new daemon from exe with its end of the hand-over
// socket and returns this daemon's end and its pid (set by hearthd's main:
// the daemon package starts no program of its own).
type Successor func(exe string) (conn *os.File, pid int, err error)

type handOverArgs struct {
	Exe string `json:"exe"`
}

type handOverState struct {
	mu   sync.Mutex
	conn *os.File      // set once a successor runs
	now  chan struct{} // closed: stop serving, for the hand-over
}

// handOverControl answers $/hearth/handover.
func (d *Daemon) handOverControl(_ context.Context, params json.RawMessage) (any, error) {
	var a handOverArgs
	if err := json.Unmarshal(params, &a); err != nil || a.Exe == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: HandOverMethod + ` takes {"exe":PATH}`}
	}
	refuse := func(msg string) (any, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}
	}
	d.handover.mu.Lock()
	defer d.handover.mu.Unlock()
	switch {
	case d.StartSuccessor == nil:
		return refuse("this daemon cannot start a successor")
	case d.cfg.Mode != ModeSocket:
		return refuse("only a socket daemon (hearthd serve) hands over; a stdio daemon ends with its client")
	case d.activated:
		return refuse("systemd started this daemon: restart it with systemctl --user restart hearthd")
	}
	if d.handover.conn != nil {
		return refuse("a hand-over is under way")
	}
	conn, pid, err := d.StartSuccessor(a.Exe)
	if err != nil {
		return refuse(fmt.Sprintf("could not start %s: %v", a.Exe, err))
	}
	d.handover.conn = conn
	close(d.handover.now)
	d.log.Info("handing over to a new daemon", zap.String("exe", a.Exe), zap.Int("successor_pid", pid))
	return map[string]int{"pid": pid}, nil
}

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
		n, err := SendHanded(conn, list, d.OwnerLock)
		if err != nil {
			d.log.Warn("the hand-over broke off; the upstreams not sent end with this daemon", zap.Error(err))
		}
		d.log.Info("hosted servers handed over", zap.Int("handed", n), zap.Int("ready", len(list)))
		// conn stays open until this process exits: its end tells the
		// successor this daemon is gone.
	}
	d.hosted.Close()
}

// SendHanded writes each handed instance to conn: a 4-byte length and its
// record as JSON, sent with its four descriptors (SCM_RIGHTS), then a zero
// length, sent with the owner lock's file when there is one: the
// successor holds the lock from then on, without a gap. The descriptors are closed here, sent or not (a keeper whose
// every daemon end is closed ends its tree). It returns how many were sent.
func SendHanded(conn *os.File, list []hosted.Handed, lock *os.File) (int, error) {
	defer func() {
		for _, h := range list {
			h.Files.Close()
		}
	}()
	fd := int(conn.Fd())
	sent := 0
	for _, h := range list {
		body, err := json.Marshal(h.Record)
		if err != nil {
			return sent, err
		}
		msg := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
		msg = append(msg, body...)
		f := h.Files
		rights := unix.UnixRights(int(f.Stdin.Fd()), int(f.Stdout.Fd()), int(f.Stderr.Fd()), int(f.Death.Fd()))
		if err := unix.Sendmsg(fd, msg[:4], rights, nil, 0); err != nil {
			return sent, err
		}
		if _, err := conn.Write(msg[4:]); err != nil {
			return sent, err
		}
		sent++
	}
	var rights []byte
	if lock != nil {
		rights = unix.UnixRights(int(lock.Fd()))
	}
	return sent, unix.Sendmsg(fd, []byte{0, 0, 0, 0}, rights, nil, 0)
}

// maxHandedRecord bounds one record (a cached initialize result is small).
const maxHandedRecord = 16 << 20

// ReceiveHanded reads what SendHanded wrote, until its zero length, and
// returns the instances and the owner lock's file (nil: none came).
func ReceiveHanded(conn *os.File) ([]hosted.Handed, *os.File, error) {
	fd := int(conn.Fd())
	var out []hosted.Handed
	fail := func(err error) ([]hosted.Handed, *os.File, error) {
		for _, h := range out {
			h.Files.Close()
		}
		return nil, nil, err
	}
	for {
		head := make([]byte, 4)
		oob := make([]byte, unix.CmsgSpace(4*4))
		n, oobn, _, _, err := unix.Recvmsg(fd, head, oob, 0)
		if err != nil {
			return fail(err)
		}
		if n == 0 {
			return fail(io.ErrUnexpectedEOF)
		}
		if n < 4 {
			if _, err := io.ReadFull(conn, head[n:]); err != nil {
				return fail(err)
			}
		}
		var fds []int
		if oobn > 0 {
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				return fail(err)
			}
			for _, m := range msgs {
				got, err := unix.ParseUnixRights(&m)
				if err == nil {
					for _, f := range got {
						// Close-on-exec at once (MSG_CMSG_CLOEXEC is not
						// everywhere): this daemon starts no child yet.
						unix.CloseOnExec(f)
					}
					fds = append(fds, got...)
				}
			}
		}
		size := binary.BigEndian.Uint32(head)
		if size == 0 {
			var lock *os.File
			for i, f := range fds {
				if i == 0 {
					lock = os.NewFile(uintptr(f), "owner-lock")
				} else {
					unix.Close(f)
				}
			}
			return out, lock, nil
		}
		if len(fds) != 4 || size > maxHandedRecord {
			for _, f := range fds {
				unix.Close(f)
			}
			return fail(fmt.Errorf("a handed record of %d bytes came with %d descriptors, want 4", size, len(fds)))
		}
		files := &supervisor.Handed{Stdin: os.NewFile(uintptr(fds[0]), "upstream-stdin"), Stdout: os.NewFile(uintptr(fds[1]), "upstream-stdout"),
			Stderr: os.NewFile(uintptr(fds[2]), "upstream-stderr"), Death: os.NewFile(uintptr(fds[3]), "keeper-death")}
		body := make([]byte, size)
		if _, err := io.ReadFull(conn, body); err != nil {
			files.Close()
			return fail(err)
		}
		var rec hosted.Record
		if err := json.Unmarshal(body, &rec); err != nil {
			files.Close()
			return fail(err)
		}
		files.KeeperPid = rec.KeeperPid
		out = append(out, hosted.Handed{Record: rec, Files: files})
	}
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
