package shim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/handoff"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc/wire"
)

// directState is the shim's side of descriptor passing (decision 0020):
// the daemon reads and writes the client's pipes itself, and the shim
// waits on the connection, which carries only control messages.
type directState struct {
	// in and out are copies of the client's stdin and stdout, used with
	// plain system calls: in the runtime's poller they would wake the shim
	// for every frame the daemon reads or writes on them.
	in, out *handoff.FD
	inFD    int
	outFD   int
	region  *handoff.Region
	file    *os.File // the region's memory file, passed with every attach
	// stage is the staging pipe (read end, write end), passed with every
	// attach: the daemon's replies go through it on their way to stdout,
	// and what a lost daemon left in it the shim writes on.
	stage    [2]int
	attached bool // a daemon serves the client's stdio now
	told     handoff.Told
	swallow  []byte // id text of the replayed initialize in the journal
	own      int    // journal bytes that are the shim's own (hello, replay)
}

// attachResult is how an attach went.
type attachResult int

const (
	attached attachResult = iota // the daemon serves the client's stdio
	refused                      // it answered no: relay over the connection
	failed                       // the connection failed first
)

// prepareDirect readies descriptor passing: the client's stdin and stdout
// must be pipes or sockets (a daemon cannot be handed a terminal or a
// file's position safely), and the region is made. It reports whether the
// shim can hand them over.
func (s *Shim) prepareDirect() bool {
	stdin, ok1 := s.opts.Stdin.(*os.File)
	stdout, ok2 := s.opts.Stdout.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	inFD, outFD := dupOf(stdin), dupOf(stdout)
	if inFD < 0 || outFD < 0 || !pipeOrSocket(inFD) || !pipeOrSocket(outFD) {
		closeFD(inFD)
		closeFD(outFD)
		return false
	}
	region, file, err := handoff.Create()
	if err != nil {
		closeFD(inFD)
		closeFD(outFD)
		return false
	}
	var stage [2]int
	if err := unix.Pipe2(stage[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		closeFD(inFD)
		closeFD(outFD)
		region.Close()
		return false
	}
	in, err1 := handoff.NewFD(inFD)
	out, err2 := handoff.NewFD(outFD)
	if err1 != nil || err2 != nil {
		closeFD(inFD)
		closeFD(outFD)
		closeFD(stage[0])
		closeFD(stage[1])
		region.Close()
		return false
	}
	s.d = directState{in: in, out: out, inFD: inFD, outFD: outFD, region: region, file: file, stage: stage}
	s.client.in, s.client.raw = s.d.in, s.d.out
	return true
}

// dupOf duplicates f's descriptor without touching its mode (File.Fd
// would make it blocking); -1 on failure.
func dupOf(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(raw uintptr) {
		if d, err := unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 3); err == nil {
			fd = d
		}
	})
	return fd
}

func closeFD(fd int) {
	if fd >= 0 {
		unix.Close(fd)
	}
}

func pipeOrSocket(fd int) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	t := st.Mode & unix.S_IFMT
	return t == unix.S_IFIFO || t == unix.S_IFSOCK
}

// rawFD is f's descriptor, read without touching its mode.
func rawFD(f *os.File) int {
	fd := -1
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(raw uintptr) { fd = int(raw) })
	}
	return fd
}

// attachDirect hands the client's stdio to the daemon on c: the journal
// starts with the hello, the session's replayed opening and the input a
// lost daemon never took in. The requests the lost daemon had in flight
// (*owed) are answered once the new one has accepted, before it starts, and
// *owed is then emptied. s.mu is held.
func (s *Shim) attachDirect(c *conn, owed *[]owedReq) attachResult {
	s.link.set(c)
	s.link.gen++
	gen := s.link.gen
	own := append(s.helloFrame(), '\n')
	open := s.ledger.session()
	var swallow string
	if !open.modern && open.frame != nil {
		var fields map[string]json.RawMessage
		if json.Unmarshal(open.frame, &fields) == nil {
			swallow = s.ledger.replayName()
			fields["id"], _ = json.Marshal(swallow)
			b, _ := json.Marshal(fields)
			own = append(append(own, b...), '\n')
			if open.initialized {
				n, _ := wire.NotificationFrame("notifications/initialized", map[string]any{})
				own = append(append(own, n...), '\n')
			}
		}
	}
	// The client's open listens go to the new daemon again, after the
	// replayed initialize (relisten), as the client's input: they are owed
	// no lost reply, and a daemon that goes away before taking them in
	// leaves them for the next.
	again, lost := s.ledger.listensOf(*owed)
	var input []byte
	for _, f := range again {
		input = append(append(input, f...), '\n')
	}
	input = append(input, s.client.held...)
	if !s.d.region.Reset(append(own, input...)) {
		s.direct = false // more held input than a journal takes: relay it
		return refused
	}
	params, _ := json.Marshal(handoff.AttachParams{Version: handoff.AttachVersion, Swallow: swallow})
	req := append(wire.RequestFrame(wire.RawID([]byte(`"`+handoff.AttachID+`"`)), handoff.AttachMethod, params), '\n')
	if sendFDs(c, req, s.d.inFD, s.d.outFD, rawFD(s.d.file), s.d.stage[0], s.d.stage[1]) != nil {
		s.link.set(nil)
		return failed
	}
	br := bufio.NewReaderSize(c, 4096)
	c.SetReadDeadline(time.Now().Add(probeWait))
	line, err := br.ReadBytes('\n')
	c.SetReadDeadline(time.Time{})
	if err != nil {
		s.link.set(nil)
		return failed
	}
	if env, ok := envelope.Scan(bytes.TrimSpace(line)); !ok || !env.HasResult {
		// An older daemon (-32601), or one that cannot use these
		// descriptors: it serves the connection as an ordinary one.
		s.direct = false
		return refused
	}
	// The daemon now waits for the start: first the replies owed for the
	// daemon lost, while stdout is still the shim's alone.
	s.answerLost(lost, lostMessage)
	*owed = nil
	if handoff.WriteMsg(c, handoff.MsgStart) != nil {
		s.link.set(nil)
		return failed
	}
	s.client.held = nil
	s.d.attached = true
	s.d.told = handoff.Told{Tracked: map[uint64]handoff.Owed{}, Replying: map[uint64]bool{}, Written: map[uint64]bool{}, Listens: map[uint64][]byte{}}
	s.d.swallow = nil
	if swallow != "" {
		s.d.swallow, _ = json.Marshal(swallow)
	}
	s.d.own = len(own)
	go s.control(c, br, gen)
	return attached
}

// sendFDs writes the attach request with the descriptors.
func sendFDs(c *conn, req []byte, fds ...int) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), req, unix.UnixRights(fds...), nil, 0)
		return serr != unix.EAGAIN
	})
	if err != nil {
		return err
	}
	return serr
}

// control follows the daemon's control messages while it serves the
// client's stdio: frames too long for it to write atomically, what the
// region has no room for, the end of the session. The connection ending
// any other way means the daemon is gone.
func (s *Shim) control(c *conn, br *bufio.Reader, gen int) {
	// One buffer for every message: the frames handed over are the big
	// replies (a tools/list, a search), and a shim that allocated each
	// would grow by megabytes before its collector ran.
	buf := make([]byte, 0, 64<<10)
	for {
		kind, p, err := handoff.ReadMsg(br, buf)
		if err != nil {
			s.lost(gen)
			return
		}
		if cap(p) > cap(buf) && cap(p) <= 1<<20 {
			buf = p[:0:cap(p)] // a bigger frame: keep its room, up to 1 MiB
		}
		switch kind {
		case handoff.MsgFrame:
			seq, line, ok := handoff.ParseU64(p)
			if !ok {
				continue
			}
			// Written whole, with its newline, in as few writes as the
			// client takes: nobody else writes to stdout meanwhile.
			if _, werr := s.d.out.Write(append(line, '\n')); werr != nil { // the client stopped reading
				s.finish(0)
				return
			}
			if seq != 0 {
				s.d.told.Written[seq] = true
			}
			handoff.WriteMsg(c, handoff.MsgAck)
		case handoff.MsgTrack:
			seq, rest, ok1 := handoff.ParseU64(p)
			end, id, ok2 := handoff.ParseU64(rest)
			if ok1 && ok2 {
				s.d.told.Tracked[seq] = handoff.Owed{ID: bytes.Clone(id), Seq: seq, End: int64(end)}
			}
		case handoff.MsgReplying:
			if seq, _, ok := handoff.ParseU64(p); ok {
				s.d.told.Replying[seq] = true
			}
		case handoff.MsgUntrack:
			if seq, _, ok := handoff.ParseU64(p); ok {
				delete(s.d.told.Tracked, seq)
				delete(s.d.told.Replying, seq)
			}
		case handoff.MsgListen:
			if seq, line, ok := handoff.ParseU64(p); ok {
				s.d.told.Listens[seq] = bytes.Clone(line)
			}
		case handoff.MsgOpening:
			if end, line, ok := handoff.ParseU64(p); ok {
				s.d.told.Opening, s.d.told.OpenedAt = bytes.Clone(line), int64(end)
			}
		case handoff.MsgEnd:
			s.finish(0)
			return
		}
	}
}

// takeBack takes the client's stdio back from a daemon that is gone: what
// it left in the staging pipe is written on to the client (the rest of a
// batch it was writing: those replies are answered), the requests it had in
// flight become owed, its record of the opening the session's, and the
// input it never took in is held for the next daemon. s.mu is held.
func (s *Shim) takeBack() {
	s.d.attached = false
	staged := handoff.DrainStage(s.d.stage[0])
	st := s.d.region.Recover(s.d.told, staged)
	if len(staged) > 0 {
		// Whole lines, the start of which may already be in stdout: they
		// go first, before any reply the shim makes. A client that stopped
		// reading fails this write, and every later one.
		s.d.out.Write(staged)
	}
	input := st.Input
	if st.Taken < int64(s.d.own) {
		// The shim's own hello and replay: the next attach sends its own.
		input = input[min(len(input), s.d.own-int(st.Taken)):]
	}
	s.ledger.recovered(st, s.d.told.Listens, s.d.swallow)
	if st.InLongLine {
		input = s.skipLongLine(input)
	}
	s.client.held = input
	if len(bytes.TrimSpace(input)) == 0 && s.inputEnded() {
		// The client closed its stdin: answer what was lost and exit, as
		// the relay does, rather than start a daemon for nobody.
		s.end.closing.Store(true)
	}
}

// recovered takes into the ledger what a daemon gone while serving the
// client's stdio left of the session (st): the requests it had in flight
// become owed (but the replay's own, swallow), those that were listens
// (listens, by their seq) sent to the next daemon again, and its record
// of the opening the session's. A listen sent to this daemon again that
// the client has ended since (its cancel and the answer went through the
// daemon, never the shim) is over, and its id may be another request's
// now, owed its -32004.
func (l *ledger) recovered(st handoff.State, listens map[uint64][]byte, swallow []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key := range l.listens {
		if _, owed := l.owed[key]; !owed {
			delete(l.listens, key)
		}
	}
	for _, o := range st.InFlight {
		if swallow != nil && bytes.Equal(o.ID, swallow) {
			continue // the replay's own request
		}
		l.seq++
		key := envelope.Key(o.ID)
		if f, ok := listens[o.Seq]; ok {
			if l.listens == nil {
				l.listens = map[string][]byte{}
			}
			l.listens[key] = f // sent to the next daemon again (relisten)
		}
		r, ok := l.owed[key]
		if !ok {
			r = owedReq{id: o.ID, seq: l.seq}
		}
		r.n++
		l.owed[key] = r
	}
	if st.Opening != nil {
		l.opening.frame = st.Opening
	}
	if st.Opened && !l.opening.opened {
		l.opening.opened, l.opening.modern = true, st.Modern
	}
	l.opening.initialized = l.opening.initialized || st.Initialized
}

// inputEnded reports whether the client's stdin has ended with nothing
// left to read in it.
func (s *Shim) inputEnded() bool {
	fd := s.d.inFD
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
	if n, err := unix.Poll(p, 0); err != nil || n == 0 || p[0].Revents&(unix.POLLHUP|unix.POLLRDHUP) == 0 {
		return false
	}
	left, err := unix.IoctlGetInt(fd, unix.SIOCINQ) // FIONREAD, for pipes and sockets alike
	return err == nil && left == 0
}

// skipLongLine drops the rest of a line longer than frame.MaxLine that a
// lost daemon had begun to discard, and gives its reply; it returns the
// input after that line.
func (s *Shim) skipLongLine(input []byte) []byte {
	defer func() {
		s.client.out.WriteRaw([]byte(wire.TooLargeFrame))
		s.client.out.Flush()
	}()
	if i := bytes.IndexByte(input, '\n'); i >= 0 {
		return input[i+1:]
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := s.client.in.Read(buf)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return append([]byte(nil), buf[i+1:n]...)
		}
		if err != nil {
			return nil
		}
	}
}
