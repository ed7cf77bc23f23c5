//go:build unix || windows

package shim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hearth-mcp/hearth/pkg/endpoint"
	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/hello"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc/wire"
	"github.com/hearth-mcp/hearth/pkg/portable"
	"github.com/hearth-mcp/hearth/pkg/version"
)

// Tunables of the relay.
const (
	// maxDaemonLine bounds one frame from the daemon; its replies are far
	// smaller, but a show_file of a 1 MiB file grows when JSON-escaped.
	maxDaemonLine = 64 << 20
	// reconnectAttempts bound how long the shim tries to get a daemon back.
	reconnectAttempts = 6
	// drainWait bounds how long, after the client's stdin ends, the shim
	// waits for the replies still owed.
	drainWait = 30 * time.Second
)

// CodeLost is the JSON-RPC error for a request the daemon never answered.
const CodeLost = wire.CodeLost

// Shim relays one client's session.
type Shim struct {
	opts            Options
	getenv          func(string) string
	socket          string // where this environment says the daemon listens
	socketDirIsOurs bool
	home            string // the data directory: its owner is the daemon to reach
	noAutostart     bool
	out             *frame.Writer
	versionSaid     bool // the version difference was reported (under mu)

	mu   sync.Mutex // conn, gen and wbuf; held while writing to the daemon
	conn *conn
	gen  int
	wbuf []byte
	// live is conn, for finish: closing it ends a write blocked under mu.
	live    atomic.Pointer[conn]
	closing atomic.Bool // the client's stdin has ended
	ended   atomic.Bool
	endOnce sync.Once
	exit    int
	done    chan struct{}

	// The client's stdio for the relay: opts.Stdin and opts.Stdout, or,
	// when they can be handed to the daemon, non-blocking copies of them.
	in  io.Reader
	raw io.Writer
	// direct: the shim hands its client's stdio to each daemon it reaches
	// (direct.go), until one refuses; then it relays frames for good.
	direct bool
	d      directState
	// pending is client input the shim holds for the next daemon (input a
	// lost daemon read but never took in): whole lines, perhaps ending with
	// the start of one.
	pending []byte
	reading bool // the relay's reader of the client's stdin runs

	imu      sync.Mutex         // the client's session state
	inflight map[string]owedReq // requests sent and not yet answered, by id key
	seq      uint64             // orders inflight by when requests were sent
	// anon counts replies owed to frames the daemon answers without the id
	// of a pending request: malformed lines, invalid ids, over-long lines.
	// Without them, a bad last line before EOF would lose its error reply.
	anon int
	// given is the last connection (by gen) whose requests in flight were
	// taken (takeInflight) to be answered -32004 or held for the next
	// daemon: nothing its reader still delivers reaches the client. That
	// reader can hold replies it read ahead from a daemon that has died
	// while lost() ran on a failed write; a reply of those the client
	// would get besides its -32004 (decision 0020, "Exactly one answer").
	given       int
	initFrame   []byte // the client's initialize, replayed after a reconnect
	initialized bool
	// opened: the client has sent a request. modern: that first request was
	// server/discover, so the session is of the stateless era (2026-07-28):
	// a reconnect replays nothing and probes with server/discover.
	opened, modern bool
	replayID       string        // the reconnect probe's id (its envelope.Key): its reply is swallowed
	replayAck      chan struct{} // closed when the probe's reply arrives
	replays        int
	// listens are the client's open subscriptions/listen requests (by id
	// key), as it sent them: a listen is no call that ran, so a reconnect
	// sends it again to the new daemon rather than failing it (relay only:
	// the shim of a client whose stdio the daemon reads never sees them).
	listens map[string][]byte
}

// probeWait bounds how long a reconnect waits for the new daemon to answer
// its probe before trying again.
const probeWait = 5 * time.Second

// Run relays until the client's stdin ends (exit 0) or the daemon cannot be
// reached (exit 1). Only JSON-RPC frames are ever written to Stdout.
func Run(opts Options) int {
	s := &Shim{
		opts:     opts,
		getenv:   opts.Getenv,
		in:       opts.Stdin,
		raw:      opts.Stdout,
		inflight: map[string]owedReq{},
		done:     make(chan struct{}),
	}
	path, ours, err := endpoint.SocketPath(endpoint.Getenv(s.getenv))
	if err != nil {
		s.say("%v", err)
		return 1
	}
	s.socket, s.socketDirIsOurs = path, ours
	if s.home, err = endpoint.Home(endpoint.Getenv(s.getenv)); err != nil {
		s.say("%v", err)
		return 1
	}
	s.noAutostart = s.getenv("HEARTH_NO_AUTOSTART") != ""
	if ignored := ignoredSettings(s.getenv); len(ignored) > 0 {
		s.say("not passing %s to the shared daemon: it serves every client, so its settings come from its config file "+
			"(HEARTH_CONFIG, else ~/.config/hearth/config.toml) or its own environment", strings.Join(ignored, ", "))
	}
	// Thousands of shims may run, each with a live heap of some hundred
	// kilobytes: collect long before the runtime's default 4 MiB heap goal,
	// so that a shim under load stays well under 4 MB resident.
	debug.SetGCPercent(25)
	// Hand the client's stdio to the daemon when it is pipes or sockets,
	// unless told to relay (HEARTH_SHIM_RELAY, or HEARTH_PORTABLE: the
	// relay is what a system without the hand-over's calls runs).
	s.direct = s.getenv("HEARTH_SHIM_RELAY") == "" && !portable.Selected(s.getenv) && s.prepareDirect()
	s.out = frame.NewWriter(s.raw)
	stopSignals := s.handleSignals()
	defer stopSignals()

	conn, err := s.connect()
	if err != nil {
		s.say("cannot reach the hearth daemon: %v", err)
		return 1
	}
	s.mu.Lock()
	how := refused
	if s.direct {
		how = s.attachDirect(conn, new([]owedReq))
	}
	switch how {
	case refused:
		s.attach(conn)
		s.startReader()
		s.mu.Unlock()
	case failed: // as if that daemon had gone at once
		gen := s.gen
		s.mu.Unlock()
		s.lost(gen)
	default:
		s.mu.Unlock()
	}
	// Reading stdin may block after the session has ended (a signal, a
	// client that stopped reading): the shim exits on done, not on EOF.
	<-s.done
	return s.exit
}

// startReader starts relaying the client's stdin, once, after any input
// held for the next daemon; s.mu is held.
func (s *Shim) startReader() {
	if s.reading {
		return
	}
	s.reading = true
	in := s.in
	if len(s.pending) > 0 {
		// Whole lines go now, in order; the start of a line is read again
		// in front of the rest of stdin.
		i := bytes.LastIndexByte(s.pending, '\n')
		for _, line := range bytes.SplitAfter(s.pending[:i+1], []byte("\n")) {
			if line = bytes.TrimSuffix(line, []byte("\n")); len(bytes.TrimSpace(line)) > 0 && !clientInternal(line) {
				s.note(line)
				s.writeDaemonLocked(line)
			}
		}
		in = io.MultiReader(bytes.NewReader(s.pending[i+1:]), in)
		s.pending = nil
	}
	go s.readClient(in)
}

// handleSignals ends the relay promptly when the client's process manager
// stops the shim (SIGTERM, SIGINT, SIGHUP): closing the connection tells the
// daemon the client is gone, so its running calls are cancelled rather than
// left to finish for nobody. SIGPIPE is taken so that a client that stopped
// reading fails a write (a clean exit) instead of killing the shim.
func (s *Shim) handleSignals() (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-sigs:
				if sig != syscall.SIGPIPE {
					s.finish(0)
				}
			case <-quit:
				return
			}
		}
	}()
	return func() { signal.Stop(sigs); close(quit) }
}

func (s *Shim) say(format string, args ...any) {
	fmt.Fprintf(s.opts.Stderr, "hearth: "+format+"\n", args...)
}

// attach makes c the current connection and greets the daemon; s.mu is
// held. The returned channel is closed if the connection ends.
func (s *Shim) attach(c *conn) <-chan struct{} {
	s.setConn(c)
	s.gen++
	s.writeDaemonLocked(s.helloFrame())
	dead := make(chan struct{})
	go s.readDaemon(c, s.gen, dead)
	return dead
}

// helloFrame is the $/hearth/hello that opens every connection.
func (s *Shim) helloFrame() []byte {
	cwd, _ := os.Getwd()
	params := hello.Hello{Cwd: cwd, PID: os.Getppid(), ShimPID: os.Getpid(), Version: version.Tooling(), Home: s.home}
	if s.opts.Run != nil {
		params.Run, _ = json.Marshal(s.opts.Run)
	}
	frame, _ := wire.NotificationFrame(hello.Method, params)
	return frame
}

// setConn makes c the current connection (nil: none); s.mu is held.
func (s *Shim) setConn(c *conn) {
	s.conn = c
	s.live.Store(c)
}

func (s *Shim) writeDaemonLocked(line []byte) error {
	if s.conn == nil {
		return os.ErrClosed
	}
	// One write per frame, from a buffer kept for small ones (no garbage
	// per frame: the shim's heap stays small under load).
	buf := s.wbuf[:0]
	if len(line) >= cap(buf) {
		buf = make([]byte, 0, len(line)+1)
	}
	buf = append(append(buf, line...), '\n')
	if cap(buf) <= 64<<10 {
		s.wbuf = buf
	}
	_, err := s.conn.Write(buf)
	return err
}

// readClient forwards the client's frames, noting what a reconnect needs.
func (s *Shim) readClient(in io.Reader) {
	r := frame.NewReader(in)
	for {
		line, err := r.Read()
		if errors.Is(err, frame.ErrTooLarge) {
			// Discarded here; the daemon answers payload_too_large in order.
			note, _ := wire.NotificationFrame("$/hearth/tooLarge", map[string]any{})
			s.forward(note)
			continue
		}
		if err != nil {
			s.clientEnded()
			return
		}
		if clientInternal(line) {
			continue
		}
		s.forward(line)
	}
}

// clientInternal: the client's frame is a notification of hearth's own
// ($/hearth/hello, $/hearth/tooLarge, ...), which only the shim may send
// and which is never forwarded: the daemon decides what a connection may
// do once, by its opening hello, the shim's, and refuses whatever
// internal method follows (docs/threat-model.md); the shim does not even
// pass it on. A request of that name is forwarded, to be refused by the
// daemon in its place in the session (a plain JSON-RPC client is answered
// in request order, which only the daemon keeps).
func clientInternal(line []byte) bool {
	env, ok := envelope.Scan(line)
	return ok && env.Kind() == envelope.Notification && wire.IsInternal(env.Method)
}

// owedReq is a request the client is owed a reply to: n of them, when a
// client reused an id still in flight (the daemon answers the second with
// an error, so each is owed one reply).
type owedReq struct {
	id  json.RawMessage // as the client wrote it
	seq uint64
	n   int
}

// note records requests in flight and the session's initialize. It runs
// under s.mu together with the write, so a reconnect sees every request
// either as sent to the old daemon (and lost) or not yet sent at all. Only
// the frame's envelope is read (pkg/envelope): its params and results are
// skipped, never decoded.
func (s *Shim) note(line []byte) {
	env, ok := envelope.Scan(line)
	s.imu.Lock()
	defer s.imu.Unlock()
	if !ok {
		s.anon++ // the daemon answers it, with a null id
		return
	}
	switch env.Kind() {
	case envelope.Invalid:
		s.anon++ // answered with an error, whatever its id
	case envelope.Request:
		s.seq++
		key := envelope.Key(env.ID)
		r, ok := s.inflight[key]
		if !ok {
			r = owedReq{id: append(json.RawMessage(nil), env.ID...), seq: s.seq}
		}
		r.n++
		s.inflight[key] = r
		if !s.opened {
			s.opened, s.modern = true, env.Method == "server/discover"
		}
		if env.Method == "initialize" {
			s.initFrame = append([]byte(nil), line...)
		}
		if env.Method == "subscriptions/listen" {
			if s.listens == nil {
				s.listens = map[string][]byte{}
			}
			s.listens[key] = append([]byte(nil), line...)
		}
	case envelope.Notification:
		switch env.Method {
		case "notifications/initialized":
			s.initialized = true
		case "$/hearth/tooLarge":
			s.anon++ // the daemon answers payload_too_large in its place
		case "notifications/cancelled":
			// MCP: no reply will come; the request is no longer owed.
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(env.Params, &p) == nil {
				delete(s.inflight, envelope.Key(p.RequestID))
				delete(s.listens, envelope.Key(p.RequestID))
			}
		}
	}
}

func (s *Shim) forward(line []byte) {
	s.mu.Lock()
	if s.ended.Load() {
		s.mu.Unlock()
		return
	}
	s.note(line)
	err := s.writeDaemonLocked(line)
	gen := s.gen
	s.mu.Unlock()
	if err != nil {
		s.lost(gen)
	}
}

// readDaemon relays the daemon's frames to the client until the connection ends.
func (s *Shim) readDaemon(c *conn, gen int, dead chan struct{}) {
	r := frame.NewReaderSize(c, maxDaemonLine)
	// The daemon ends every frame with a newline: a tail without one is a
	// frame its death cut off, never given to the client (its request is
	// owed, and answered as lost).
	r.WholeLines()
	for {
		line, err := r.Read()
		if errors.Is(err, frame.ErrTooLarge) {
			s.say("dropped a frame over %d bytes from the daemon", maxDaemonLine)
			continue
		}
		if err != nil {
			close(dead)
			s.lost(gen)
			return
		}
		if s.settle(line, gen) {
			continue
		}
		werr := s.out.WriteRaw(line)
		if werr == nil {
			werr = s.out.Flush()
		}
		if werr != nil { // the client stopped reading: nothing left to do
			s.finish(0)
			return
		}
		s.maybeDone()
	}
}

// settle marks a response read from connection gen as delivered; it
// reports whether the client must not see the frame: the reply to a
// replayed initialize, or anything from a connection given up (given).
// Only the envelope is read: a 64 MiB result is skipped, not decoded.
func (s *Shim) settle(line []byte, gen int) (swallow bool) {
	env, ok := envelope.Scan(line)
	s.imu.Lock()
	defer s.imu.Unlock()
	if gen <= s.given {
		return true // its requests are answered as lost, or will be
	}
	if !ok || env.Method != "" || env.HasResult == env.HasError {
		return false // not a response: a notification or request for the client
	}
	key := envelope.Key(env.ID)
	if s.replayID != "" && key == s.replayID {
		s.replayID = ""
		close(s.replayAck)
		return true
	}
	if r, pending := s.inflight[key]; pending && env.ID != nil {
		delete(s.listens, key) // a listen answered is over
		if r.n--; r.n > 0 {
			s.inflight[key] = r
		} else {
			delete(s.inflight, key)
		}
	} else if s.anon > 0 {
		s.anon-- // the reply to a frame the daemon found bad
	}
	return false
}

// clientEnded: stdin is done. Half-close so the daemon answers what it owes,
// then end once every reply is out (bounded by drainWait).
func (s *Shim) clientEnded() {
	s.mu.Lock()
	s.closing.Store(true)
	if s.conn != nil {
		_ = s.conn.CloseWrite()
	}
	s.mu.Unlock()
	s.maybeDone()
	// A client that closed stdin may also have stopped reading: then no
	// reply can be delivered, and the work behind them should stop now.
	go watchReader(s.raw, s.done, func() { s.finish(0) })
	go func() {
		select {
		case <-s.done:
		case <-time.After(drainWait):
			s.say("gave up waiting for the daemon's last replies after %v", drainWait)
			s.mu.Lock()
			owed := s.takeInflight()
			s.mu.Unlock()
			s.answerLost(owed, "the hearth daemon did not answer before the client closed")
			s.finish(0)
		}
	}()
}

func (s *Shim) maybeDone() {
	// Not under s.mu: a forward blocked writing to a daemon that is itself
	// blocked writing replies would never let go of it.
	if !s.closing.Load() {
		return
	}
	s.imu.Lock()
	owed := len(s.inflight) + s.anon
	s.imu.Unlock()
	if owed == 0 {
		s.finish(0)
	}
}

// finish ends the shim with exit code code. It takes no lock: closing the
// connection also ends a write to the daemon blocked under s.mu.
func (s *Shim) finish(code int) {
	s.endOnce.Do(func() {
		s.exit = code
		s.ended.Store(true)
		if c := s.live.Load(); c != nil {
			c.Close()
		}
		close(s.done)
	})
}

// lost handles the end of connection gen: reconnect (replaying the session
// and failing what was in flight), or, after stdin ended, finish. A daemon
// the client's stdio was handed to leaves its record of the session in the
// region, which the shim takes over first.
func (s *Shim) lost(gen int) {
	s.mu.Lock()
	if gen != s.gen || s.ended.Load() {
		s.mu.Unlock()
		return
	}
	if s.conn != nil {
		s.conn.Close()
		s.setConn(nil)
	}
	if s.d.attached {
		s.takeBack()
	}
	if s.closing.Load() {
		owed := s.takeInflight()
		s.mu.Unlock()
		s.answerLost(owed, "the hearth daemon went away before answering; the request may or may not have been carried out")
		s.finish(0)
		return
	}
	var err error
	for attempt := 0; attempt < reconnectAttempts; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(50<<attempt) * time.Millisecond) // 100 ms … 1.6 s
		}
		var c *conn
		if c, err = s.connect(); err != nil {
			if errors.Is(err, errNotOurs) {
				break
			}
			continue
		}
		owed := s.takeInflight() // before anything new can reach the new daemon
		if s.direct {
			switch s.attachDirect(c, &owed) {
			case attached: // and what was lost is answered
				s.mu.Unlock()
				return
			case failed:
				err = errors.New("the new daemon did not take the client's stdio")
				s.restoreInflight(owed)
				c.Close()
				continue
			}
			// Refused: relay over this connection from now on.
		}
		dead := s.attach(c)
		ack := s.replay()
		// The connection counts only once the daemon has answered: a
		// daemon that was dying can still accept from its backlog.
		select {
		case <-ack:
			owed = s.relisten(owed)
			s.startReader()
			s.mu.Unlock()
			s.answerLost(owed, lostMessage)
			return
		case <-dead:
			err = errors.New("the new connection closed before the daemon answered")
		case <-time.After(probeWait):
			err = fmt.Errorf("the daemon did not answer within %v", probeWait)
		}
		s.restoreInflight(owed)
		c.Close()
		s.setConn(nil)
	}
	owed := s.takeInflight()
	s.mu.Unlock()
	// Gone for good (autostart off or refused, another user's socket): the
	// shim answers what was in flight with the reason and exits 1, so the
	// client sees its server end instead of a server that never answers.
	s.say("lost the hearth daemon for %s and could not get it back; exiting: %v", s.home, err)
	s.answerLost(owed, fmt.Sprintf("the hearth daemon went away and could not be restarted: %v", err))
	s.finish(1)
}

// lostMessage is the error a request in flight gets when a new daemon
// serves on. It says only what the shim knows: no reply reached the
// client. Whether the request ran is unknown here: a request is owed
// -32004 from the moment the daemon took it in (docs/decisions/0020), and
// the daemon may have run it by then, or a hosted upstream may have
// answered it after a drain had given the client up (decision 0046).
const lostMessage = "the hearth daemon restarted while this request was in flight and its reply was lost; it may or may not have been carried out"

// replay re-sends the client's initialize (under a private id whose reply is
// swallowed) and initialized, so the new daemon serves the same session. A
// modern (stateless) session has nothing to replay: it gets a
// server/discover, and a client that never initialized a ping. Each is the
// probe whose answer proves the connection; the returned channel closes
// then. s.mu is held.
func (s *Shim) replay() <-chan struct{} {
	s.imu.Lock()
	initFrame, initialized, modern := s.initFrame, s.initialized, s.modern
	s.replays++
	id, _ := json.Marshal("hearth-shim-replay-" + strconv.Itoa(s.replays))
	s.replayID = envelope.Key(id) // compared with each reply's id, by key
	s.replayAck = make(chan struct{})
	ack := s.replayAck
	s.imu.Unlock()

	if modern {
		s.writeDaemonLocked(wire.RequestFrame(wire.RawID(id), "server/discover", []byte(`{"_meta":{`+
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
			`"io.modelcontextprotocol/clientInfo":{"name":"hearth-shim","version":`+strconv.Quote(version.Tooling())+`}}}`)))
		return ack
	}
	var fields map[string]json.RawMessage
	if initFrame == nil || json.Unmarshal(initFrame, &fields) != nil {
		s.writeDaemonLocked(wire.RequestFrame(wire.RawID(id), "ping", nil))
		return ack
	}
	fields["id"] = id
	b, _ := json.Marshal(fields)
	s.writeDaemonLocked(b)
	if initialized {
		n, _ := wire.NotificationFrame("notifications/initialized", map[string]any{})
		s.writeDaemonLocked(n)
	}
	return ack
}

// relisten sends the new daemon the client's open subscriptions/listen
// requests again, under the client's own ids, so that it goes on hearing
// of changes (a hosted upstream handed to the new daemon keeps announcing
// them, docs/decisions/0046-upstream-handover.md); they stay owed. It
// returns the rest of owed, the requests lost; s.mu is held.
func (s *Shim) relisten(owed []owedReq) []owedReq {
	frames, rest := s.listensOf(owed)
	if len(frames) == 0 {
		return owed
	}
	var again []owedReq
	for _, r := range owed {
		if _, ok := s.listenFrame(r); ok {
			again = append(again, r)
		}
	}
	s.restoreInflight(again)
	for _, f := range frames {
		s.writeDaemonLocked(f)
	}
	return rest
}

// listensOf splits requests owed into the frames of the open listens
// among them (sent to the next daemon again) and the rest (lost).
func (s *Shim) listensOf(owed []owedReq) (frames [][]byte, rest []owedReq) {
	for _, r := range owed {
		if f, ok := s.listenFrame(r); ok {
			frames = append(frames, f)
			continue
		}
		rest = append(rest, r)
	}
	return frames, rest
}

// listenFrame is the frame of an open listen the request owed is.
func (s *Shim) listenFrame(r owedReq) ([]byte, bool) {
	s.imu.Lock()
	defer s.imu.Unlock()
	f, ok := s.listens[envelope.Key(r.id)]
	return f, ok && r.n == 1
}

// restoreInflight puts back requests taken for a reconnect that failed.
func (s *Shim) restoreInflight(reqs []owedReq) {
	s.imu.Lock()
	defer s.imu.Unlock()
	for _, r := range reqs {
		key := envelope.Key(r.id)
		if have, ok := s.inflight[key]; ok {
			r.n += have.n
		}
		s.inflight[key] = r
	}
}

// takeInflight empties the set of requests owed to the client, in the order
// they were sent, and gives up the current connection (given): a reply it
// still delivers would be a second answer. s.mu is held. Replies owed to
// bad frames are forgotten: they have no id to answer.
func (s *Shim) takeInflight() []owedReq {
	s.imu.Lock()
	defer s.imu.Unlock()
	s.given = s.gen
	reqs := make([]owedReq, 0, len(s.inflight))
	for k, r := range s.inflight {
		reqs = append(reqs, r)
		delete(s.inflight, k)
	}
	// One reply per request: an id in flight twice is answered twice.
	s.anon = 0
	sort.Slice(reqs, func(i, j int) bool { return reqs[i].seq < reqs[j].seq })
	return reqs
}

// answerLost fails requests the daemon will never answer, in request order.
func (s *Shim) answerLost(reqs []owedReq, why string) {
	for _, r := range reqs {
		for range max(r.n, 1) {
			s.out.WriteRaw(wire.ErrorFrame(wire.RawID(r.id), &wire.Error{Code: CodeLost, Message: why}))
		}
	}
	s.out.Flush()
}
