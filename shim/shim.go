//go:build unix || windows

package shim

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/hello"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc/wire"
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

// Shim relays one client's session. Its parts: where the daemon is
// (autostart.go), the client's stdio, the connection to the daemon
// (link.go), the ledger of what the client is owed (ledger.go), the two
// ways of serving it (the hand-over, direct_linux.go, and the relay,
// relay.go) and how it ends.
type Shim struct {
	opts   Options
	place  place
	client stdio
	// mu is held while the shim changes its connection or writes to the
	// daemon: it guards link, client's held input and reader, and the
	// hand-over's state.
	mu   sync.Mutex
	link link
	// direct: the shim hands its client's stdio to each daemon it reaches
	// (direct_linux.go, d), until one refuses; then it relays frames for
	// good.
	direct bool
	d      directState
	ledger ledger
	end    ending
}

// stdio is the client's stdin and stdout as the shim uses them: the
// options' own, or, when they can be handed to the daemon, non-blocking
// copies of them.
type stdio struct {
	in  io.Reader
	raw io.Writer
	out *frame.Writer // frames to the client, over raw
	// held is client input the shim holds for the next daemon (input a
	// lost daemon read but never took in): whole lines, perhaps ending
	// with the start of one. reading: the relay's reader of stdin runs.
	// Both under Shim.mu.
	held    []byte
	reading bool
}

// ending is how the shim ends: once, with an exit code, when the client's
// input has ended and nothing is owed, on a signal, or when the daemon
// cannot be reached.
type ending struct {
	closing atomic.Bool // the client's stdin has ended
	ended   atomic.Bool
	once    sync.Once
	code    int
	done    chan struct{}
}

// probeWait bounds how long a reconnect waits for the new daemon to answer
// its probe before trying again.
const probeWait = 5 * time.Second

// Run relays until the client's stdin ends (exit 0) or the daemon cannot be
// reached (exit 1). Only JSON-RPC frames are ever written to Stdout.
func Run(opts Options) int {
	s := &Shim{
		opts:   opts,
		place:  place{getenv: opts.Getenv},
		client: stdio{in: opts.Stdin, raw: opts.Stdout},
		ledger: newLedger(),
		end:    ending{done: make(chan struct{})},
	}
	if err := s.place.find(); err != nil {
		s.say("%v", err)
		return 1
	}
	if ignored := ignoredSettings(s.place.getenv); len(ignored) > 0 {
		s.say("not passing %s to the shared daemon: it serves every client, so its settings come from its config file "+
			"(HEARTH_CONFIG, else ~/.config/hearth/config.toml) or its own environment", strings.Join(ignored, ", "))
	}
	// Thousands of shims may run, each with a live heap of some hundred
	// kilobytes: collect long before the runtime's default 4 MiB heap goal,
	// so that a shim under load stays well under 4 MB resident.
	debug.SetGCPercent(25)
	// Hand the client's stdio to the daemon when it is pipes or sockets,
	// unless told to relay (Options.Relay: the relay is what a system
	// without the hand-over's calls runs).
	s.direct = !s.opts.Relay && s.prepareDirect()
	s.client.out = frame.NewWriter(s.client.raw)
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
		gen := s.link.gen
		s.mu.Unlock()
		s.lost(gen)
	default:
		s.mu.Unlock()
	}
	// Reading stdin may block after the session has ended (a signal, a
	// client that stopped reading): the shim exits on done, not on EOF.
	<-s.end.done
	return s.end.code
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
	s.link.set(c)
	s.link.gen++
	s.link.write(s.helloFrame())
	dead := make(chan struct{})
	go s.readDaemon(c, s.link.gen, dead)
	return dead
}

// helloFrame is the $/hearth/hello that opens every connection.
func (s *Shim) helloFrame() []byte {
	cwd, _ := os.Getwd()
	params := hello.Hello{Cwd: cwd, PID: os.Getppid(), ShimPID: os.Getpid(), Version: version.Tooling(), Home: s.place.home}
	if s.opts.Run != nil {
		params.Run, _ = json.Marshal(s.opts.Run)
	}
	frame, _ := wire.NotificationFrame(hello.Method, params)
	return frame
}

// clientEnded: stdin is done. Half-close so the daemon answers what it owes,
// then end once every reply is out (bounded by drainWait).
func (s *Shim) clientEnded() {
	s.mu.Lock()
	s.end.closing.Store(true)
	if s.link.conn != nil {
		_ = s.link.conn.CloseWrite()
	}
	s.mu.Unlock()
	s.maybeDone()
	// A client that closed stdin may also have stopped reading: then no
	// reply can be delivered, and the work behind them should stop now.
	go watchReader(s.client.raw, s.end.done, func() { s.finish(0) })
	go func() {
		select {
		case <-s.end.done:
		case <-time.After(drainWait):
			s.say("gave up waiting for the daemon's last replies after %v", drainWait)
			s.mu.Lock()
			owed := s.ledger.take(s.link.gen)
			s.mu.Unlock()
			s.answerLost(owed, "the hearth daemon did not answer before the client closed")
			s.finish(0)
		}
	}()
}

func (s *Shim) maybeDone() {
	// Not under s.mu: a forward blocked writing to a daemon that is itself
	// blocked writing replies would never let go of it.
	if s.end.closing.Load() && s.ledger.owes() == 0 {
		s.finish(0)
	}
}

// finish ends the shim with exit code code. It takes no lock: closing the
// connection also ends a write to the daemon blocked under s.mu.
func (s *Shim) finish(code int) {
	s.end.once.Do(func() {
		s.end.code = code
		s.end.ended.Store(true)
		if c := s.link.live.Load(); c != nil {
			c.Close()
		}
		close(s.end.done)
	})
}

// lost handles the end of connection gen: reconnect (replaying the session
// and failing what was in flight), or, after stdin ended, finish. A daemon
// the client's stdio was handed to leaves its record of the session in the
// region, which the shim takes over first.
func (s *Shim) lost(gen int) {
	s.mu.Lock()
	if gen != s.link.gen || s.end.ended.Load() {
		s.mu.Unlock()
		return
	}
	if s.link.conn != nil {
		s.link.conn.Close()
		s.link.set(nil)
	}
	if s.d.attached {
		s.takeBack()
	}
	if s.end.closing.Load() {
		owed := s.ledger.take(s.link.gen)
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
		owed := s.ledger.take(s.link.gen) // before anything new can reach the new daemon
		if s.direct {
			switch s.attachDirect(c, &owed) {
			case attached: // and what was lost is answered
				s.mu.Unlock()
				return
			case failed:
				err = errors.New("the new daemon did not take the client's stdio")
				s.ledger.restore(owed)
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
		s.ledger.restore(owed)
		c.Close()
		s.link.set(nil)
	}
	owed := s.ledger.take(s.link.gen)
	s.mu.Unlock()
	// Gone for good (autostart off or refused, another user's socket): the
	// shim answers what was in flight with the reason and exits 1, so the
	// client sees its server end instead of a server that never answers.
	s.say("lost the hearth daemon for %s and could not get it back; exiting: %v", s.place.home, err)
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

// answerLost fails requests the daemon will never answer, in request order.
func (s *Shim) answerLost(reqs []owedReq, why string) {
	for _, r := range reqs {
		for range max(r.n, 1) {
			s.client.out.WriteRaw(wire.ErrorFrame(wire.RawID(r.id), &wire.Error{Code: CodeLost, Message: why}))
		}
	}
	s.client.out.Flush()
}

// watchReader calls gone once w (the client's stdout) has no reader left,
// where the system can tell (watchreader_unix.go sets it); elsewhere it
// watches nothing.
var watchReader = func(w io.Writer, done <-chan struct{}, gone func()) {}
