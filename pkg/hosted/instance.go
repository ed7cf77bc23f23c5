package hosted

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/hosted/catalog"
	"github.com/hearth-mcp/hearth/pkg/hosted/route"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
)

// maxUpstreamLine bounds one frame from an upstream (a resource read can be
// large). A variable so that tests can lower it.
var maxUpstreamLine = 64 << 20

// drainDead bounds how long the stdout of an upstream that exited, and
// whose pipe has no writer left, is read on for what it wrote before it
// died (the rest of a pipe's buffer takes far less).
const drainDead = time.Second

// upstreamOut is one upstream's stdout as the router sees it: each
// upstream has its own, and once it is shut (the upstream was declared
// dead) nothing more read from that upstream reaches the router, whoever
// still holds the pipe's write end and whatever the router serves by then.
type upstreamOut struct {
	r        io.ReadCloser
	mu       sync.Mutex // held while a frame is delivered, so shut waits for it
	shut     bool
	finished chan struct{} // closed when the reader returned
	told     chan struct{} // closed once the router has been told the upstream is down
}

func newUpstreamOut(u upstream) *upstreamOut {
	return &upstreamOut{r: u.stdout(), finished: make(chan struct{}), told: make(chan struct{})}
}

// deliver hands a frame to the router unless the upstream is dead.
func (o *upstreamOut) deliver(r *route.Router, line []byte) (delivered bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.shut {
		return false, nil
	}
	return true, r.FromUpstream(line)
}

// tooLarge tells the router of a line over the limit while the upstream
// is alive (its request is answered with an error naming the limit).
func (o *upstreamOut) tooLarge(r *route.Router, head []byte, limit int) (delivered bool, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.shut {
		return false, nil
	}
	return true, r.TooLarge(head, limit)
}

// close declares the upstream dead: no frame of it is delivered after
// close returns, and its stdout is closed, which ends a waiting read.
func (o *upstreamOut) close() {
	o.mu.Lock()
	o.shut = true
	o.mu.Unlock()
	o.r.Close()
}

// Instance is one upstream server process (when running) and its router.
//
// Lock order: Table.mu, then Instance.mu; the router calls the instance
// (Wake, Ready, Trouble) holding its own lock, so the instance never calls
// the router while holding mu.
type Instance struct {
	t         *Table
	key       string
	base      string // the key without the shape (Table.modern)
	shape     string // the shape of its clients (route.Shape)
	scope     string
	clientDir string
	spec      Spec
	logPath   string
	slog      *stderrLog
	r         *route.Router
	created   time.Time

	mu         sync.Mutex
	clients    int
	proc       upstream
	out        *upstreamOut // the running upstream's stdout
	starting   bool
	ready      bool
	stopping   bool  // the running process is being stopped on purpose
	killReason error // why hearth killed the running process, if it did
	failed     error // set: failed until restarted by hand
	gone       bool  // stopped for good and out of the table
	fails      int   // failed starts in a row
	restarts   int
	everRan    bool
	lastExit   time.Time
	startedAt  time.Time
	lastErr    string
	idle       *time.Timer
	initTimer  *time.Timer
	// identity is what the running upstream's code was when it started
	// (catalog.go).
	identity catalog.Identity
	// entries are the names its clients' entries gave it (hearth run
	// --name), in the order first seen.
	entries []string
	// modern: its upstream speaks 2026-07-28 (it serves every shape).
	modern bool
}

func (t *Table) newInstance(spec Spec, key, scope, clientDir, shape string) *Instance {
	if spec.IdleTimeout <= 0 {
		spec.IdleTimeout = DefaultIdleTimeout
	}
	if spec.InitTimeout <= 0 {
		spec.InitTimeout = DefaultInitTimeout
	}
	in := &Instance{t: t, key: key, base: spec.Key(scope, ""), shape: shape, scope: scope, clientDir: clientDir, spec: spec, created: time.Now()}
	if spec.Entry != "" {
		in.entries = []string{spec.Entry}
	}
	in.logPath = t.logPath(spec, key)
	mode := route.Shared
	if spec.Sharing == PerClient {
		mode = route.Single
	}
	in.r = route.New(route.Options{
		Name: spec.Label(), LogPath: in.logPath, Mode: mode, Directory: spec.Sharing == Directory,
		AnswerTimeout: spec.AnswerTimeout,
		Wake:          func() { go in.start() },
		Ready:         in.onReady,
		Trouble:       func(err error) { go in.kill(err) },
		Record:        in.recordCatalog,
	})
	return in
}

// backoff is the wait before the n-th start in a row after failures.
func backoff(fails int) time.Duration {
	if fails <= 0 {
		return 0
	}
	d := 250 * time.Millisecond << (fails - 1)
	return min(d, 8*time.Second)
}

// workDir is where the upstream runs (Spec.WorkDir).
func (in *Instance) workDir() string { return in.spec.WorkDir(in.clientDir) }

// env is the upstream's whole environment: the base, then the variables
// its client adds (client sharing only), then the spec's
// (docs/decisions/0042-upstream-environment.md).
func (in *Instance) env() []string {
	var client []string
	if in.spec.Sharing == PerClient {
		client = in.spec.ClientEnv
	}
	return UpstreamEnv(in.spec.Command, client, in.spec.Env)
}

// start starts an upstream (the router woke it): after the backoff its
// failures in a row call for, and unless one runs or starts already.
func (in *Instance) start() {
	in.mu.Lock()
	if in.proc != nil || in.starting || in.gone || in.failed != nil {
		in.mu.Unlock()
		return
	}
	in.starting = true
	delay := backoff(in.fails) - time.Since(in.lastExit)
	in.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	in.t.ensureLogDir()
	in.mu.Lock()
	if in.slog == nil {
		in.slog = openStderrLog(in.logPath, in.t.logCap)
	}
	in.mu.Unlock()
	in.slog.forget()
	identity := in.identify()
	in.slog.mark(fmt.Sprintf("%s starting %s (sharing %s, key %s)", time.Now().UTC().Format(time.RFC3339), in.spec.Label(), in.spec.Sharing, in.key))
	p, err := in.launch()
	advice := ""
	if err != nil {
		advice = in.t.restartAdvice(in)
	}
	in.mu.Lock()
	in.starting = false
	if in.gone {
		in.mu.Unlock()
		if p != nil {
			p.stop()
		}
		return
	}
	if err != nil {
		why := in.r.UpstreamError("%s could not be started: %v; fix it, then run `%s`", in.spec.Label(), err, advice)
		in.failed, in.lastErr = why, why.Error()
		in.mu.Unlock()
		in.slog.mark(why.Error())
		in.t.log.Warn("hosted server failed to start", zap.String("server", in.spec.Label()), zap.String("key", in.key), zap.Error(err))
		in.r.Down(why, true)
		return
	}
	if in.everRan {
		in.restarts++
	}
	in.everRan = true
	in.proc, in.ready, in.killReason, in.startedAt, in.identity = p, false, nil, time.Now(), identity
	in.initTimer = time.AfterFunc(in.spec.InitTimeout, func() {
		in.kill(fmt.Errorf("%s never answered %s within %s", in.spec.Label(), in.r.Awaiting(), in.spec.InitTimeout))
	})
	in.mu.Unlock()
	in.t.log.Info("hosted server started", zap.String("server", in.spec.Label()), zap.String("key", in.key), zap.Int("pid", p.pid()))
	out := newUpstreamOut(p)
	in.mu.Lock()
	in.out = out
	in.mu.Unlock()
	in.r.Up(p.peer())
	go in.read(out)
	go in.watch(p, out)
}

// launch starts the upstream: the child process, or the connection to
// the remote server.
func (in *Instance) launch() (upstream, error) {
	if in.spec.IsRemote() {
		if in.t.remote == nil {
			return nil, errNoRemote
		}
		c, err := in.t.remote(in.spec, in.takesURLElicitation())
		if err != nil {
			return nil, err
		}
		return remoteUp{c}, nil
	}
	env := in.env()
	if in.t.expandEnv != nil {
		var err error
		if env, err = in.t.expandEnv(env); err != nil {
			return nil, err
		}
	}
	p, err := in.t.sup.Start(supervisor.ProcessSpec{
		Path: in.spec.Command, Args: in.spec.Args, Dir: in.workDir(), Env: env,
		Stderr: in.slog, Grace: in.spec.Grace, Keeper: true,
	})
	if err != nil {
		return nil, err
	}
	return child{p}, nil
}

// takesURLElicitation: the instance's clients declare URL-mode
// elicitation (their shape's capabilities.elicitation.url).
func (in *Instance) takesURLElicitation() bool {
	var p struct {
		Capabilities struct {
			Elicitation map[string]json.RawMessage `json:"elicitation"`
		} `json:"capabilities"`
	}
	_ = json.Unmarshal([]byte(in.shape), &p)
	_, ok := p.Capabilities.Elicitation["url"]
	return ok
}

// identify is what the upstream's code is now, for the catalog: the
// files of the command, or the remote server's address.
func (in *Instance) identify() catalog.Identity {
	return catalog.Identify(in.spec.program(), in.spec.Args, in.workDir())
}

// read hands the upstream's stdout to the router, line by line. Output that
// is not JSON-RPC before initialize is answered is fatal (nothing that
// follows can be trusted); later it is logged and skipped.
func (in *Instance) read(out *upstreamOut) {
	defer close(out.finished)
	limit := maxUpstreamLine
	r := frame.NewReaderSize(out.r, limit)
	defer r.Close()
	for {
		line, err := r.Read()
		if errors.Is(err, frame.ErrTooLarge) {
			delivered, terr := out.tooLarge(in.r, r.Head(), limit)
			if !delivered {
				return // the upstream is dead: whoever still writes here is not it
			}
			in.slog.mark(terr.Error())
			continue
		}
		if err != nil {
			return
		}
		delivered, err := out.deliver(in.r, line)
		if !delivered {
			return // the upstream is dead: whoever still writes here is not it
		}
		if errors.Is(err, route.ErrInvalidResponse) {
			in.slog.mark(err.Error())
		} else if err != nil {
			shown := string(line)
			if len(shown) > 80 {
				shown = shown[:80] + "..."
			}
			in.mu.Lock()
			ready := in.ready
			in.mu.Unlock()
			if !ready {
				in.kill(fmt.Errorf("%s wrote something other than JSON-RPC to its stdout: %q", in.spec.Label(), shown))
				return
			}
			in.slog.mark("skipped a line of stdout that is not JSON-RPC: " + shown)
		}
	}
}

// watch waits for the upstream to exit and tells the router why. Once it
// exited it is dead, and its stdout is closed: nothing read from it
// afterwards is routed, so a descendant left holding the pipe can never
// answer for the next upstream. Only when no process holds the pipe's
// write end any more (its keeper ended every descendant before the
// upstream counts as exited) is the rest of it read first, while the
// router still serves this upstream: those replies were written before it
// died, and nothing can follow them.
func (in *Instance) watch(p upstream, out *upstreamOut) {
	<-p.exited()
	if p.drainable() {
		select {
		case <-out.finished:
		case <-time.After(drainDead):
		}
	}
	out.close()
	p.finish()
	advice := in.t.restartAdvice(in) // the command that finds this instance, for the error
	in.mu.Lock()
	if in.proc == p {
		in.proc = nil
	}
	if in.initTimer != nil {
		in.initTimer.Stop()
	}
	in.lastExit = time.Now()
	intended, gone := in.stopping, in.gone
	in.stopping = false
	var why error
	failed := false
	switch {
	case gone:
		why, failed = in.failedOr(ErrClosed), true
	case intended:
		why = fmt.Errorf("%s was restarted", in.spec.Label())
	default:
		if in.ready && time.Since(in.startedAt) >= steadyRun {
			in.fails = 0
		}
		in.fails++
		cause := in.killReason
		if cause == nil {
			cause = fmt.Errorf("%s exited (%s)", in.spec.Label(), p.exitString())
		}
		msg := cause.Error()
		if tail := in.slog.tail(); len(tail) > 0 {
			msg += "; its last stderr lines: " + strings.Join(tail, " | ")
		}
		if in.spec.Restart == RestartNever {
			failed = true
			msg += "; restart = \"never\": it stays stopped until you run `" + advice + "`"
		} else if in.fails >= crashLoop {
			failed = true
			msg = fmt.Sprintf("%s failed %d times in a row and is marked failed: fix it, then run `%s` (until then every request gets this error); last: %s",
				in.spec.Label(), in.fails, advice, msg)
		} else {
			msg += "; the next request restarts it"
		}
		why = in.r.UpstreamError("%s", msg)
		in.lastErr = why.Error()
		if failed {
			in.failed = why
		}
	}
	clients := in.clients
	// A failed instance without clients stays listed, and named by the
	// advice in its error, until restarted, stopped or idle for its idle
	// timeout; a client instance has nobody left to serve.
	dropNow := failed && !gone && clients == 0 && in.spec.Sharing == PerClient
	if failed && !gone && clients == 0 && !dropNow && in.idle == nil {
		in.idle = time.AfterFunc(in.spec.IdleTimeout, in.idleStop)
	}
	in.mu.Unlock()
	in.slog.mark(fmt.Sprintf("%s exited (%s)", time.Now().UTC().Format(time.RFC3339), p.exitString()))
	if in.catalogued() {
		in.t.cat.Touch(in.key, time.Now().UTC()) // when it last ran, for status
	}
	if !intended && !gone {
		in.t.log.Warn("hosted server exited", zap.String("server", in.spec.Label()), zap.String("key", in.key), zap.String("exit", p.exitString()))
	}
	in.r.Down(why, failed)
	close(out.told)
	if dropNow {
		in.stopForGood(why)
	}
}

func (in *Instance) failedOr(err error) error {
	if in.failed != nil {
		return in.failed
	}
	return err
}

// onReady: the upstream answered initialize, or server/discover (the
// router's lock is held). An upstream that speaks 2026-07-28 serves every
// client of its base, whatever their shape (Table.speaksModern).
func (in *Instance) onReady(modern bool) {
	in.mu.Lock()
	in.ready = true
	in.modern = modern
	if in.initTimer != nil {
		in.initTimer.Stop()
	}
	gone := in.gone
	in.mu.Unlock()
	if modern && !gone && in.spec.Sharing != PerClient {
		in.t.speaksModern(in)
	}
}

// named records the name a client's entry gives the instance.
func (in *Instance) named(entry string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, e := range in.entries {
		if e == entry {
			return
		}
	}
	in.entries = append(in.entries, entry)
}

// Entries are the names its clients' entries gave it.
func (in *Instance) Entries() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.entries...)
}

// kill stops the running upstream because it misbehaved; why becomes the
// error its clients get.
func (in *Instance) kill(why error) {
	in.mu.Lock()
	p := in.proc
	if p == nil || in.killReason != nil {
		in.mu.Unlock()
		return
	}
	in.killReason = why
	in.mu.Unlock()
	in.slog.mark(why.Error())
	p.stop()
}

func (in *Instance) attached() {
	in.mu.Lock()
	in.clients++
	if in.idle != nil {
		in.idle.Stop()
		in.idle = nil
	}
	in.mu.Unlock()
}

// detached: a client left. The last one starts the idle timer (a failed
// instance stays findable by `hearthd servers restart` until it fires); a
// client instance stops at once.
func (in *Instance) detached() {
	in.mu.Lock()
	in.clients--
	last := in.clients == 0
	// A capped server's instance stops with its last client, so that
	// the instance a waiting client gets is within the cap
	// (docs/decisions/0074-exclusive-and-capped-servers.md).
	now := last && (in.spec.Sharing == PerClient || in.spec.MaxInstances > 0)
	if last && !now {
		in.idle = time.AfterFunc(in.spec.IdleTimeout, in.idleStop)
	}
	in.mu.Unlock()
	if now {
		in.stopForGood(errors.New(in.spec.Label() + " has no clients"))
	}
}

// idleStop stops an instance nobody used for its idle timeout.
func (in *Instance) idleStop() {
	in.t.mu.Lock()
	in.mu.Lock()
	if in.clients > 0 || in.gone {
		in.mu.Unlock()
		in.t.mu.Unlock()
		return
	}
	in.mu.Unlock()
	in.t.mu.Unlock()
	in.t.log.Info("hosted server idle; stopping it", zap.String("server", in.spec.Label()), zap.String("key", in.key))
	in.stopForGood(fmt.Errorf("%s stopped after %s without clients", in.spec.Label(), in.spec.IdleTimeout))
}

// stopForGood stops the upstream and takes the instance out of the table.
func (in *Instance) stopForGood(why error) {
	in.t.mu.Lock()
	in.mu.Lock()
	if in.gone {
		in.mu.Unlock()
		in.t.mu.Unlock()
		return
	}
	in.gone = true
	if in.failed == nil {
		in.failed = why
	}
	in.stopping = true
	p := in.proc
	if in.idle != nil {
		in.idle.Stop()
	}
	if in.t.inst[in.key] == in {
		delete(in.t.inst, in.key)
	}
	in.mu.Unlock()
	in.t.mu.Unlock()
	in.t.forgetModern(in)
	if p != nil {
		p.stop() // watch tells the router
	} else {
		in.r.Down(why, true)
	}
	if in.slog != nil {
		in.slog.close()
	}
}

// restart stops the upstream (its calls in flight get an error) and clears
// a failure; the next request starts a new one.
func (in *Instance) restart() {
	in.mu.Lock()
	in.failed, in.fails, in.lastErr = nil, 0, ""
	p, out := in.proc, in.out
	if p != nil {
		in.stopping = true
	}
	in.mu.Unlock()
	in.r.ClearFailure()
	if p != nil {
		p.stop()
		// Returned once the router knows: a request sent after the
		// restart then starts the new upstream instead of reaching the
		// old one as it dies.
		if out != nil {
			<-out.told
		}
	}
}
