package mcplocal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/handoff"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/localsock"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/rawio"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// ServeConn serves one accepted connection. A shim whose first frame is the
// attach request, sent with its client's stdin and stdout, a handoff region
// and a staging pipe, has its client served on those descriptors directly
// (decision 0020); everything else is an ordinary connection.
func (t *Transport) ServeConn(ctx context.Context, c *localsock.Conn) {
	first, fds, err := readFirst(ctx, c)
	if err != nil || len(first) == 0 {
		closeAll(fds)
		return
	}
	if len(fds) == handoff.AttachFDs && isAttach(first) {
		if t.serveDirect(ctx, c, first, fds) {
			return
		}
		first = nil // refused and answered: the shim relays over this connection
	} else {
		closeAll(fds)
	}
	t.serveSocket(ctx, c, first)
}

// readFirst reads what the client sends first, with any descriptors that
// came with it. A drain (ctx) interrupts the wait.
func readFirst(ctx context.Context, c *localsock.Conn) ([]byte, []int, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4*(handoff.AttachFDs+1)))
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Now()) })
	n, oobn, flags, err := c.ReadMsg(buf, oob, unix.MSG_CMSG_CLOEXEC)
	if !stop() {
		err = ctx.Err()
	}
	var fds []int
	if oobn > 0 {
		if msgs, perr := unix.ParseSocketControlMessage(oob[:oobn]); perr == nil {
			for i := range msgs {
				if got, rerr := unix.ParseUnixRights(&msgs[i]); rerr == nil {
					fds = append(fds, got...)
				}
			}
		}
	}
	if flags&unix.MSG_CTRUNC != 0 {
		closeAll(fds) // more than an attach sends: none are used
		fds = nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fds, err
	}
	return buf[:n], fds, nil
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// isAttach: first is exactly one frame, the attach request.
func isAttach(first []byte) bool {
	line, rest, ok := bytes.Cut(first, []byte("\n"))
	if !ok || len(rest) != 0 {
		return false
	}
	env, ok := envelope.Scan(line)
	return ok && env.Kind() == envelope.Request && env.Method == handoff.AttachMethod
}

// attachReply answers the attach request.
func attachReply(c *localsock.Conn, err error) error {
	id := jsonrpc.RawID([]byte(`"` + handoff.AttachID + `"`))
	var frame []byte
	if err != nil {
		frame = jsonrpc.ErrorFrame(id, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "cannot serve the client's stdio directly: " + err.Error()})
	} else {
		frame = jsonrpc.ResultFrame(id, []byte(`{"transport":"direct"}`))
	}
	c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, werr := c.Write(append(frame, '\n'))
	c.SetWriteDeadline(time.Time{})
	return werr
}

// errShimGone: the shim's control connection closed.
var errShimGone = errors.New("the shim went away")

// serveDirect serves a shim's client on the descriptors it handed over:
// stdin, stdout, the handoff region and the staging pipe's two ends. It
// reports false when it refused them (after answering so): the connection
// is then an ordinary one.
func (t *Transport) serveDirect(ctx context.Context, c *localsock.Conn, first []byte, fds []int) bool {
	p := c.Peer
	region, limit, swallow, err := takeDescriptors(first, fds[0], fds[1], fds[2], fds[3], fds[4])
	unix.Close(fds[2]) // mapped, or refused
	defer unix.Close(fds[3])
	defer unix.Close(fds[4])
	if err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		t.log.Info("refused a shim's stdio; relaying its frames instead", zap.Int("peer_pid", p.PID), zap.Error(err))
		return attachReply(c, err) != nil // a connection that cannot even be answered is done
	}
	// The client's stdin is read in the runtime's poller, as any
	// descriptor the daemon waits on, with raw reads (package rawio: a
	// wait for each frame, then a handful of short calls, must not start
	// threads). Its stdout stays out of the poller, written with raw calls
	// and waited for in poll(2), since there every read by the client
	// would wake the daemon (handoff.FD). Closing either ends a wait.
	in, err := rawio.DupReader(fds[0], "client-stdin")
	var out *handoff.FD
	if err == nil {
		out, err = handoff.NewFD(fds[1])
	}
	if err != nil {
		if in != nil {
			in.Close()
		}
		unix.Close(fds[0])
		unix.Close(fds[1])
		region.Close()
		return attachReply(c, err) != nil
	}
	defer func() {
		in.Close()
		out.Release()
		unix.Close(fds[0])
		unix.Close(fds[1])
		region.Close()
	}()
	if attachReply(c, nil) != nil {
		return true
	}
	ctl := bufio.NewReader(c)
	// The shim first writes the replies it owes for a daemon it lost, then
	// says start.
	if kind, _, err := handoff.ReadMsg(ctl, nil); err != nil || kind != handoff.MsgStart {
		return true
	}
	gone := make(chan struct{})
	acks := make(chan struct{}, 1)
	go func() {
		defer close(gone)
		for {
			kind, _, err := handoff.ReadMsg(ctl, nil)
			if err != nil {
				return
			}
			if kind == handoff.MsgAck {
				acks <- struct{}{}
			}
		}
	}()
	var ctlMu sync.Mutex
	send := func(kind byte, parts ...[]byte) error {
		ctlMu.Lock()
		defer ctlMu.Unlock()
		return handoff.WriteMsg(c, kind, parts...)
	}
	j := handoff.NewJournal(region, in)
	tr := handoff.NewTracker(region, j, send)
	stage := &handoff.StagePipe{R: fds[3], W: fds[4], Out: out}
	w := &handoff.Writer{Out: stage, Limit: limit, T: tr, Swallow: swallow, Big: func(seq uint64, line []byte) error {
		if err := send(handoff.MsgFrame, handoff.U64(seq), line); err != nil {
			return err
		}
		select {
		case <-acks:
			return nil
		case <-gone:
			return errShimGone
		}
	}}
	// Once the client's input ends, its stdout is watched for the client
	// going away altogether, as a stdio daemon watches its own.
	hup := newHangupWatch(j, fileFD(out))
	defer hup.Close()
	clientGone := make(chan struct{})
	go func() {
		select {
		case <-gone:
		case <-hup.Gone():
		}
		close(clientGone)
	}()
	err = t.serve(ctx, mcp.Conn{Reader: hup, Writer: w, CloseRead: in.Close, Gone: clientGone, Client: tool.Client{PID: p.PID},
		Tracker: tr, Transport: "direct", WriteReady: out.CanTake, Shim: true})
	// Nothing touches the descriptors or the region after this: the shim
	// may take them back as soon as the connection closes. (Serve does not
	// wait for its reader, which may still be in Read: closing in ends
	// that read, and the tracker waits for it.)
	in.Close()
	out.Close()
	tr.Close()
	region.Close()
	select {
	case <-gone: // the shim is gone: nobody to tell
	default:
		switch {
		case err == nil && j.AtEOF():
			send(handoff.MsgEnd, []byte{handoff.EndDone})
		case errors.Is(err, mcp.ErrWriteFailed):
			send(handoff.MsgEnd, []byte{handoff.EndGone})
		default:
			// A drain, or a failure of the daemon's own: the shim takes its
			// client's stdio back and goes on with the next daemon.
			t.log.Debug("handing a client's stdio back to its shim", zap.Error(err))
		}
	}
	return true
}

// takeDescriptors checks the attach request and the descriptors that came
// with it: stdin and stdout must be pipes or sockets, the region one of this
// layout, and the staging pipe's ends the two ends of one pipe. It returns
// the mapped region, the largest batch the staging pipe holds, and the id
// of a replayed initialize whose reply is not the client's; stdin, stdout
// and the staging pipe are left non-blocking.
func takeDescriptors(first []byte, in, out, mem, stageR, stageW int) (*handoff.Region, int, []byte, error) {
	msg, perr := jsonrpc.Parse(bytes.TrimSpace(first))
	if perr != nil {
		return nil, 0, nil, errors.New(perr.Err.Message)
	}
	var params handoff.AttachParams
	if err := json.Unmarshal(msg.Params, &params); err != nil || params.Version != handoff.AttachVersion {
		return nil, 0, nil, fmt.Errorf("attach version %d, this daemon serves %d", params.Version, handoff.AttachVersion)
	}
	var swallow []byte
	if params.Swallow != "" {
		swallow, _ = json.Marshal(params.Swallow)
	}
	for i, fd := range []int{in, out} {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return nil, 0, nil, os.NewSyscallError("fstat", err)
		}
		if kind := st.Mode & unix.S_IFMT; kind != unix.S_IFIFO && kind != unix.S_IFSOCK {
			return nil, 0, nil, fmt.Errorf("the client's %s is neither a pipe nor a socket", [2]string{"stdin", "stdout"}[i])
		}
	}
	var sr, sw unix.Stat_t
	if unix.Fstat(stageR, &sr) != nil || unix.Fstat(stageW, &sw) != nil || sr.Mode&unix.S_IFMT != unix.S_IFIFO || sr.Ino != sw.Ino || sr.Dev != sw.Dev {
		return nil, 0, nil, errors.New("the staging pipe's descriptors are not the two ends of one pipe")
	}
	limit, err := handoff.StageCapacity(stageR)
	if err != nil {
		return nil, 0, nil, err
	}
	region, err := handoff.Open(mem)
	if err != nil {
		return nil, 0, nil, err
	}
	for _, fd := range []int{in, out, stageR, stageW} {
		if err := unix.SetNonblock(fd, true); err != nil {
			region.Close()
			return nil, 0, nil, os.NewSyscallError("fcntl", err)
		}
	}
	return region, limit, swallow, nil
}

// stdioInput is what a stdio daemon reads its client's frames from: its
// stdin, when that is a pipe or a socket, with raw reads waiting in the
// runtime's poller (decision 0041); a terminal or a file as it is.
func stdioInput(in io.ReadCloser) io.ReadCloser {
	f, ok := in.(*os.File)
	if !ok {
		return in
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return in
	}
	fd, isPipe := -1, false
	rc.Control(func(d uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(d), &st) == nil {
			kind := st.Mode & unix.S_IFMT
			fd, isPipe = int(d), kind == unix.S_IFIFO || kind == unix.S_IFSOCK
		}
	})
	if !isPipe {
		return in
	}
	r, err := rawio.DupReader(fd, f.Name())
	if err != nil {
		return in
	}
	return readCloser{r, func() error { r.Close(); return in.Close() }}
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }
