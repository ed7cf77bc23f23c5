package hosted

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/hosted/route"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
)

// maxUpstreamLine bounds one frame from an upstream (a resource read can be
// large). A variable so that tests can lower it.
var maxUpstreamLine = 64 << 20

// Instance is one upstream server process (when running) and its router.
//
// Lock order: Table.mu, then Instance.mu; the router calls the instance
// (Wake, Ready, Trouble) holding its own lock, so the instance never calls
// the router while holding mu.
type Instance struct {
	t         *Table
	key       string
	scope     string
	clientDir string
	spec      Spec
	logPath   string
	slog      *stderrLog
	r         *route.Router
	created   time.Time

	mu         sync.Mutex
	clients    int
	proc       *supervisor.Process
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
}

func (t *Table) newInstance(spec Spec, key, scope, clientDir string) *Instance {
	if spec.IdleTimeout <= 0 {
		spec.IdleTimeout = DefaultIdleTimeout
	}
	if spec.InitTimeout <= 0 {
		spec.InitTimeout = DefaultInitTimeout
	}
	in := &Instance{t: t, key: key, scope: scope, clientDir: clientDir, spec: spec, created: time.Now()}
	in.logPath = t.logPath(spec, key)
	mode, rootDir := route.Shared, ""
	switch spec.Sharing {
	case PerClient:
		mode = route.Single
	case Directory:
		rootDir = scope
	}
	in.r = route.New(route.Options{
		Name: spec.Label(), LogPath: in.logPath, Mode: mode, RootDir: rootDir,
		AnswerTimeout: spec.AnswerTimeout,
		Wake:          func() { go in.start() },
		Ready:         in.onReady,
		Trouble:       func(err error) { go in.kill(err) },
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

// env is the daemon's environment with the spec's variables over it.
func (in *Instance) env() []string {
	if len(in.spec.Env) == 0 {
		return nil
	}
	set := map[string]bool{}
	for _, kv := range in.spec.Env {
		name, _, _ := strings.Cut(kv, "=")
		set[name] = true
	}
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !set[name] {
			out = append(out, kv)
		}
	}
	return append(out, in.spec.Env...)
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
	in.slog.mark(fmt.Sprintf("%s starting %s (sharing %s, key %s)", time.Now().UTC().Format(time.RFC3339), in.spec.Label(), in.spec.Sharing, in.key))
	p, err := in.t.sup.Start(supervisor.ProcessSpec{
		Path: in.spec.Command, Args: in.spec.Args, Dir: in.workDir(), Env: in.env(),
		Stderr: in.slog, Grace: in.spec.Grace, Keeper: true,
	})
	in.mu.Lock()
	in.starting = false
	if in.gone {
		in.mu.Unlock()
		if p != nil {
			p.Stop()
		}
		return
	}
	if err != nil {
		why := in.r.UpstreamError("%s could not be started: %v", in.spec.Label(), err)
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
	in.proc, in.ready, in.killReason, in.startedAt = p, false, nil, time.Now()
	in.initTimer = time.AfterFunc(in.spec.InitTimeout, func() {
		in.kill(fmt.Errorf("%s never answered %s within %s", in.spec.Label(), in.r.Awaiting(), in.spec.InitTimeout))
	})
	in.mu.Unlock()
	in.t.log.Info("hosted server started", zap.String("server", in.spec.Label()), zap.String("key", in.key), zap.Int("pid", p.Pid))
	in.r.Up(newStdinPeer(p.Stdin))
	go in.read(p)
	go in.watch(p)
}

// read hands the upstream's stdout to the router, line by line. Output that
// is not JSON-RPC before initialize is answered is fatal (nothing that
// follows can be trusted); later it is logged and skipped.
func (in *Instance) read(p *supervisor.Process) {
	limit := maxUpstreamLine
	r := frame.NewReaderSize(upstreamStdout(p.Stdout), limit)
	defer r.Close()
	for {
		line, err := r.Read()
		if errors.Is(err, frame.ErrTooLarge) {
			in.slog.mark(in.r.TooLarge(r.Head(), limit).Error())
			continue
		}
		if err != nil {
			return
		}
		if err := in.r.FromUpstream(line); errors.Is(err, route.ErrInvalidResponse) {
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

// watch waits for the upstream to exit and tells the router why.
func (in *Instance) watch(p *supervisor.Process) {
	<-p.Done()
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
			cause = fmt.Errorf("%s exited (%s)", in.spec.Label(), p.ExitString())
		}
		msg := cause.Error()
		if tail := in.slog.tail(); len(tail) > 0 {
			msg += "; its last stderr lines: " + strings.Join(tail, " | ")
		}
		if in.spec.Restart == RestartNever {
			failed = true
			msg += "; restart = \"never\": it stays stopped until hearthd servers restart"
		} else if in.fails >= crashLoop {
			failed = true
			msg = fmt.Sprintf("%s failed %d times in a row and is marked failed until hearthd servers restart; last: %s", in.spec.Label(), in.fails, msg)
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
	in.mu.Unlock()
	in.slog.mark(fmt.Sprintf("%s exited (%s)", time.Now().UTC().Format(time.RFC3339), p.ExitString()))
	if !intended && !gone {
		in.t.log.Warn("hosted server exited", zap.String("server", in.spec.Label()), zap.String("key", in.key), zap.String("exit", p.ExitString()))
	}
	in.r.Down(why, failed)
	if failed && clients == 0 {
		in.stopForGood(why)
	}
}

func (in *Instance) failedOr(err error) error {
	if in.failed != nil {
		return in.failed
	}
	return err
}

// onReady: the upstream answered initialize (the router's lock is held).
func (in *Instance) onReady() {
	in.mu.Lock()
	in.ready = true
	if in.initTimer != nil {
		in.initTimer.Stop()
	}
	in.mu.Unlock()
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
	p.Stop()
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

// detached: a client left. The last one starts the idle timer; a client
// instance, or a failed one, stops at once.
func (in *Instance) detached() {
	in.mu.Lock()
	in.clients--
	last := in.clients == 0
	now := last && (in.spec.Sharing == PerClient || in.failed != nil)
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
	if p != nil {
		p.Stop() // watch tells the router
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
	p := in.proc
	if p != nil {
		in.stopping = true
	}
	in.mu.Unlock()
	in.r.ClearFailure()
	if p != nil {
		p.Stop()
	}
}
