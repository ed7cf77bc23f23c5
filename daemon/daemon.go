// Package daemon is hearthd: it wires the tool families into one registry and
// serves it over stdio or a Unix socket, with its lifecycle (readiness line
// and file, single instance, graceful drain, final counters; see
// docs/architecture.md).
package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/config"
	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/localsock"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/mcplocal"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
	"github.com/hearth-mcp/hearth/pkg/tool"
	"github.com/hearth-mcp/hearth/pkg/version"
)

const instructions = "hearth is one shared MCP backend for every editor and agent of this user. " +
	"Tools return JSON: content[0].text and structuredContent carry the same object, as each tool's outputSchema says; failures set isError " +
	"and carry a stable code in content[0].text (INVALID_REQUEST, NOT_FOUND, TOOL_TIMEOUT, ...). daemon_status reports the daemon's health."

// Daemon is one hearthd process's server.
type Daemon struct {
	opts      Options
	handover  handOverState
	activated bool // systemd passed the socket
	cfg       Config
	log       *zap.Logger
	reg       *tool.Registry
	srv       *mcp.Server
	local     *mcplocal.Transport
	children  *supervisor.Supervisor
	families  []tool.Family
	// famMu guards families once the daemon runs: a reload (SIGHUP, from
	// its own goroutine) and a status read iterate them under the read
	// lock, and closeFamilies, at the daemon's end, takes the write lock,
	// so no family is closed under a reload or read after it was closed.
	famMu sync.RWMutex
	// preloads are the families' slow parts loading in the background
	// (preload); closeFamilies waits for them.
	preloads sync.WaitGroup
	started  time.Time
	running  atomic.Bool
	// acceptHealthy is false while accept keeps failing; the systemd
	// watchdog is only fed while it is true.
	acceptHealthy atomic.Bool
	// conns counts the socket connections being served (max_connections).
	conns atomic.Int64
	// refusedLogged is when a refused connection was last logged (unix ns).
	refusedLogged atomic.Int64
	// home is the data directory (tool.Env.Home).
	home string
	// hosted holds the hosted servers' instances (hearth run).
	hosted *hosted.Table
	// socketPath is where the daemon listens ("" when it does not), and
	// socketWhy why there.
	socketPath, socketWhy string
	// web is the Streamable HTTP endpoint, when served (http.go).
	web webState
	// reloadMu guards reloadFailed: why the last reload did not apply
	// ("" when it did, or none ran), a problem in daemon_status until a
	// later reload succeeds.
	reloadMu     sync.Mutex
	reloadFailed string
	// ui is the status page and the savings it shows (ui.go).
	ui uiState
	// remote holds the vault and the remote servers' authorizations
	// (remote.go).
	remote remoteState
	// stopper is what $/hearth/stop ends (control.go).
	stopper stopState
}

// New builds the daemon in named steps: its own tools, the families opened
// and their tools registered (schemas compiled later, preload), the state
// directory made private, the hosted servers (adopting what a predecessor
// handed over), the protocol server and its local transports. On error
// every family opened so far is closed again.
func New(o Options) (*Daemon, error) {
	if o.Children == nil {
		o.Children = supervisor.New(supervisor.Options{Grace: o.Config.KillGrace, MaxChildren: o.Config.MaxChildren})
	}
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	d := &Daemon{opts: o, cfg: o.Config, log: o.Log, reg: tool.NewRegistry(version.Tooling()), children: o.Children, home: o.Env.Home,
		handover: handOverState{now: make(chan struct{})}}
	d.acceptHealthy.Store(true)
	if err := d.addOwnTools(); err != nil {
		return nil, err
	}
	if err := d.openFamilies(o.Env, o.Openers); err != nil {
		d.closeFamilies()
		return nil, err
	}
	logDir, catalogDir, err := d.prepareState()
	if err != nil {
		d.closeFamilies()
		return nil, err
	}
	d.hosted = hosted.NewTable(hosted.Options{Supervisor: d.children, LogDir: logDir, Logger: d.log, CatalogDir: catalogDir, DrainWait: d.cfg.DrainTimeout,
		Remote: d.dialRemote, AuthStatus: d.authStatus, ExpandEnv: d.envExpanded})
	d.hosted.Adopt(o.Handed)
	d.srv = d.newServer()
	d.local = mcplocal.New(mcplocal.Options{Serve: d.srv.Serve, Log: d.log})
	return d, nil
}

// addOwnTools registers the daemon's own tools: daemon_status, and the
// hosted servers' control when the settings allow it.
func (d *Daemon) addOwnTools() error {
	if err := d.reg.Add(d.statusTool()); err != nil {
		return err
	}
	if d.cfg.HostedControl {
		// Models restart and stop hosted servers only when the user says so.
		return d.reg.Add(d.hostedControlTool())
	}
	return nil
}

// openFamilies opens every family and registers its resources and tools
// (the schemas compile after the daemon serves: preload).
func (d *Daemon) openFamilies(env tool.Env, openers []tool.Opener) error {
	for _, open := range openers {
		fam, err := open(env)
		if err != nil {
			return err
		}
		d.families = append(d.families, fam)
		if rp, ok := fam.(tool.ResourceProvider); ok {
			d.reg.AddResources(rp)
		}
		for _, t := range fam.Tools() {
			if err := d.reg.AddDeferred(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// prepareState makes the state directory private and names where the
// hosted servers keep their logs and catalog ("" and "" without one).
func (d *Daemon) prepareState() (logDir, catalogDir string, err error) {
	if d.cfg.StateDir == "" {
		return "", "", nil
	}
	was, err := privateState(d.cfg.StateDir)
	if err != nil {
		return "", "", err
	}
	if was != 0 {
		d.log.Warn("the state directory was open to other users; narrowed to 0700", zap.String("dir", d.cfg.StateDir), zap.String("was", fmt.Sprintf("%#o", was)))
	}
	return filepath.Join(d.cfg.StateDir, stateServers), filepath.Join(d.cfg.StateDir, stateCatalog), nil
}

// newServer is the protocol server every transport hands its connections
// to.
func (d *Daemon) newServer() *mcp.Server {
	return mcp.New(mcp.Options{
		Registry:     d.reg,
		Name:         "hearth",
		Version:      version.Version,
		Instructions: instructions,
		Log:          d.log,
		QueueDepth:   d.cfg.QueueDepth,
		DrainTimeout: d.cfg.DrainTimeout,
		// Each tool call of a connection runs on its own, up to this many
		// at once: a slow one never holds up ping or another call.
		MaxConcurrentCalls: d.cfg.MaxCalls,
		MaxHeldBytes:       int64(d.cfg.MaxHeldMB) << 20,
		// A shim that resolved another data directory is told so rather
		// than served this one's data.
		Home: d.home,
		// A shim's hello may ask for a hosted server (hearth run).
		Host: d.host,
		// hearthd servers restarts and stops hosted servers through the
		// socket; no MCP client's connection reaches it (control.go).
		Control: d.controls(),
	})
}

// Registry is the daemon's tool registry.
func (d *Daemon) Registry() *tool.Registry { return d.reg }

// Server is the daemon's protocol server (for its counters).
func (d *Daemon) Server() *mcp.Server { return d.srv }

// preload starts, each in the background, the slow part of every family
// that leaves one for later (tool.Preloader): called once the daemon
// serves, so that the clients that need no such part (a hosted server's, a
// ping, tools/list) are not held up by it, and those that do wait for it
// (docs/architecture.md, "The daemon's start").
func (d *Daemon) preload() {
	d.preloads.Add(1)
	go func() {
		defer d.preloads.Done()
		if err := d.reg.Compile(); err != nil {
			d.log.Error("a tool's schema does not compile, a defect of this build: its calls fail", zap.Error(err))
		}
	}()
	d.eachFamily(func(f tool.Family) {
		if p, ok := f.(tool.Preloader); ok {
			d.preloads.Add(1)
			go func() {
				defer d.preloads.Done()
				p.Preload()
			}()
		}
	})
}

// eachFamily calls fn with every open family, under famMu's read lock.
func (d *Daemon) eachFamily(fn func(tool.Family)) {
	d.famMu.RLock()
	defer d.famMu.RUnlock()
	for _, f := range d.families {
		fn(f)
	}
}

func (d *Daemon) closeFamilies() {
	d.preloads.Wait()
	d.famMu.Lock()
	defer d.famMu.Unlock()
	for i := len(d.families) - 1; i >= 0; i-- {
		if err := d.families[i].Close(); err != nil {
			d.log.Error("closing a tool family failed", zap.Error(err))
		}
	}
	d.families = nil
}

// ErrNoTools and ErrRunning are the daemon's refusals to start: it never
// serves with an empty registry, and one Daemon runs at most once at a time.
var (
	ErrNoTools = errors.New("cannot start the server with zero tools registered")
	ErrRunning = errors.New("the server is already running")
)

// Run serves until ctx is cancelled (a signal) or, in stdio mode, stdin ends
// or stdout breaks. It then drains, cleans up and logs the final counters.
func (d *Daemon) Run(ctx context.Context) error {
	if d.reg.Len() == 0 {
		return ErrNoTools
	}
	if !d.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer d.running.Store(false)
	// A stop request ends ctx as a signal does (control.go).
	ctx, disarm := d.stopper.arm(ctx)
	defer disarm()
	defer d.closeFamilies()
	defer d.stopChildren()
	defer d.closeHosted() // before the supervisor's sweep: each upstream is handed over or stopped politely first
	d.started = time.Now()
	memCtx, stopMem := context.WithCancel(ctx)
	defer stopMem()
	go d.returnMemory(memCtx)
	go d.sampleSavings(memCtx)
	defer d.stopUI()
	switch d.cfg.Mode {
	case ModeSocket:
		return d.runSocket(ctx)
	case ModeStdio:
		return d.runStdio(ctx)
	}
	return fmt.Errorf("unknown mode %q", d.cfg.Mode)
}

func (d *Daemon) runStdio(ctx context.Context) error {
	// The owner of a data directory serves everyone who resolves it: a
	// stdio daemon that owns its home also listens on the socket, so a shim
	// started later attaches here instead of opening the stores a second
	// time (decision 0015). A socket another daemon holds is left to it.
	var ln *localsock.Listener
	if d.opts.StdioListens {
		// Its own socket, named for its pid: clients find it through the
		// data directory's owner record, and it never takes the shared
		// socket path from a daemon of another data directory.
		path := filepath.Join(filepath.Dir(d.cfg.SocketPath), fmt.Sprintf("hearthd-stdio-%d.sock", os.Getpid()))
		l, err := localsock.Listen(path, localsock.Options{Private: d.cfg.SocketDirIsOurs, Mode: uint32(d.cfg.SocketMode), OwnLock: true})
		if err != nil {
			d.log.Info("serving stdio only: the socket is not available", zap.String("path", d.cfg.SocketPath), zap.Error(err))
		} else {
			defer l.Remove()
			ln = l
		}
	}
	socketPath := ""
	if ln != nil {
		socketPath = ln.Path()
	}
	if err := d.serving(ModeStdio, socketPath, "this stdio daemon's own socket; clients find it through the data directory's owner record"); err != nil {
		return err
	}
	// The line, then the file: whoever sees the file finds the line written.
	d.log.Info("mcp:ready mode=stdio"+d.readyFields(), zap.String("mode", "stdio"), zap.String("socket", socketPath), zap.Int("tools", d.reg.Len()))
	if d.cfg.ReadyFile != "" {
		if err := writeReadyFile(d.cfg.ReadyFile, time.Now()); err != nil {
			return err
		}
		defer os.Remove(d.cfg.ReadyFile)
	}
	d.preload()
	// A stdio daemon was started by its one client, so it inherited the
	// client's working directory (decisions/0007); a socket daemon has no such
	// thing and learns each client's directory from the shim's hello.
	client := tool.Client{PID: os.Getppid()}
	if wd, err := os.Getwd(); err == nil {
		client.Cwd = wd
	}
	var conns sync.WaitGroup
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	acceptDone := make(chan struct{})
	if ln != nil {
		go func() {
			defer close(acceptDone)
			d.accept(serveCtx, ln, &conns, newIdleTimer(0), make(chan struct{}, 1))
		}()
	} else {
		close(acceptDone)
	}
	err := d.local.ServeStdio(ctx, d.opts.Stdin, d.opts.Stdout, client)
	if ln != nil {
		// The stdio client was the reason this process runs: when it ends,
		// the clients attached through the socket drain and their shims
		// reconnect to a daemon of their own.
		stopServing()
		ln.Close()
		<-acceptDone
		d.waitConns(&conns)
	}
	reason := "stdin closed"
	switch {
	case errors.Is(err, mcp.ErrWriteFailed):
		reason, err = "stdout closed", nil // the client went away: a clean exit
	case ctx.Err() != nil:
		reason = stopReason(ctx)
	}
	d.logShutdown("stdio", reason)
	return err
}

func (d *Daemon) runSocket(ctx context.Context) error {
	ln, err := d.socket()
	if err != nil {
		return err
	}
	defer ln.Remove()
	d.handover.mu.Lock()
	d.activated = ln.Inherited()
	d.handover.mu.Unlock()
	why := "the default for this data directory; clients find it through the data directory's owner record, whatever XDG_RUNTIME_DIR they have"
	switch {
	case ln.Inherited():
		why = "passed by systemd (socket activation)"
	case !d.cfg.SocketDirIsOurs:
		why = "MCP_SOCKET_PATH"
	}
	if err := d.serving(ModeSocket, ln.Path(), why); err != nil {
		return err
	}
	// HTTP before readiness: whoever sees the daemon ready finds it up.
	if err := d.serveHTTP(d.cfg.HTTPListen, d.cfg.HTTPAuthNone, d.cfg.TokenFile); err != nil {
		return err
	}
	// The line, then the file, then systemd: whoever sees one finds the
	// ones before it done.
	d.log.Info("mcp:ready mode=socket path="+ln.Path()+d.readyFields(),
		zap.String("mode", "socket"), zap.String("path", ln.Path()), zap.Bool("socket_activated", ln.Inherited()),
		zap.Int("tools", d.reg.Len()))
	if d.cfg.ReadyFile != "" {
		if err := writeReadyFile(d.cfg.ReadyFile, time.Now()); err != nil {
			return err
		}
		defer os.Remove(d.cfg.ReadyFile)
	}
	d.notify("READY=1")
	defer d.notify("STOPPING=1")

	var conns sync.WaitGroup
	idle := newIdleTimer(d.cfg.IdleTimeout)
	// serveCtx ends serving on a signal or when the idle timeout passes; every
	// session drains when it is cancelled.
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	acceptDone := make(chan struct{})
	kick := make(chan struct{}, 1)
	go func() {
		defer close(acceptDone)
		d.accept(serveCtx, ln, &conns, idle, kick)
	}()
	d.preload()
	go d.watchUpgrade(serveCtx, kick)
	go d.watchdog(serveCtx, d.acceptHealthy.Load)
	reason := "signal"
	select {
	case <-ctx.Done():
		reason = stopReason(ctx)
	case <-d.handingOver():
		reason = "hand-over to a new daemon"
	case <-idle.expired():
		reason = "idle"
		d.log.Info("no client for the idle timeout; stopping", zap.Duration("idle_timeout", d.cfg.IdleTimeout))
	case <-ln.Gone(serveCtx):
		// Nobody can reach a daemon whose socket file is gone: stop, so
		// that shims start a new one (systemd's socket stays systemd's).
		reason = "socket removed"
		d.log.Error("the socket file was removed or replaced; stopping so that clients reach a new daemon", zap.String("path", ln.Path()))
	}
	// From here no successor starts: one asked for after a signal or the
	// idle timeout would turn the stop into a restart.
	d.handover.mu.Lock()
	d.handover.stopped = true
	d.handover.mu.Unlock()
	stopServing()
	ln.Close() // stop accepting; sessions see ctx and drain
	<-acceptDone
	d.stopHTTP(d.cfg.DrainTimeout + mcp.DefaultAbandonGrace)

	d.waitConns(&conns)
	d.logShutdown("socket", reason)
	return nil
}

// waitConns waits for the socket's sessions to drain, bounded.
func (d *Daemon) waitConns(conns *sync.WaitGroup) {
	waited := make(chan struct{})
	go func() { conns.Wait(); close(waited) }()
	bound := d.cfg.DrainTimeout + mcp.DefaultAbandonGrace + 2*time.Second
	select {
	case <-waited:
	case <-time.After(bound):
		d.log.Warn("some connections did not finish draining", zap.Duration("waited", bound))
	}
}

// serving tells the OnServing hook where clients can now attach.
func (d *Daemon) serving(mode Mode, socket, why string) error {
	d.socketPath, d.socketWhy = socket, why
	if d.opts.OnServing == nil {
		return nil
	}
	return d.opts.OnServing(Serving{Mode: mode, Socket: socket, ReadyFile: d.cfg.ReadyFile})
}

// accept serves every connection whose peer is our own user
// (localsock.Ours). Each one kicks the check for an upgrade (upgrade.go).
func (d *Daemon) accept(ctx context.Context, ln *localsock.Listener, conns *sync.WaitGroup, idle *idleTimer, kick chan<- struct{}) {
	backoff := 5 * time.Millisecond
	for {
		c, err := ln.Accept()
		var unread *localsock.PeerError
		if errors.As(err, &unread) {
			d.log.Warn("refused a connection whose credentials could not be read", zap.Error(err))
			continue
		}
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, localsock.ErrClosed) {
				return
			}
			d.acceptHealthy.Store(false)
			// EMFILE and friends: wait and try again rather than spin or die.
			d.log.Error("accept failed", zap.Error(err), zap.Duration("retry_in", backoff))
			time.Sleep(backoff)
			backoff = min(backoff*2, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		d.acceptHealthy.Store(true)
		p := c.Peer
		if err := localsock.Ours(p, "the client"); err != nil {
			d.log.Warn("refused a connection from another user",
				zap.String("peer_user", p.User), zap.Int("peer_pid", p.PID), zap.Error(err))
			c.Close()
			continue
		}
		if max := d.cfg.MaxConnections; max > 0 && d.conns.Load() >= int64(max) {
			d.refuseConnection(c, p, max)
			continue
		}
		kickUpgrade(kick)
		d.conns.Add(1)
		conns.Add(1)
		idle.connected()
		go func() {
			defer conns.Done()
			defer d.conns.Add(-1)
			defer idle.disconnected()
			defer c.Close()
			d.local.ServeConn(ctx, c)
		}()
	}
}

func (d *Daemon) logShutdown(mode, reason string) {
	c := d.srv.Counters()
	d.log.Info("mcp:shutdown mode="+mode,
		zap.String("mode", mode),
		zap.String("reason", reason),
		zap.Uint64("total_requests", c.Requests),
		zap.Uint64("total_errors", c.Errors),
		zap.Uint64("panics", c.Panics),
		zap.Uint64("connections_total", c.ConnectionsAll),
		zap.Float64("uptime_seconds", time.Since(d.started).Seconds()))
}

// readyFields are the families' additions to the readiness line.
func (d *Daemon) readyFields() string {
	var out string
	d.eachFamily(func(f tool.Family) {
		if desc, ok := f.(tool.Describer); ok {
			for _, kv := range desc.ReadyFields() {
				out += " " + kv
			}
		}
	})
	return out
}

// Reload is `hearthd reload` (and SIGHUP): it re-reads the settings (the
// config file), then asks every family that can to re-read its
// configuration. A config file that cannot be used is logged, naming the
// file and its line or key, and the previous settings keep serving; a good
// one is swapped in at once, except that a setting only a restart applies
// keeps its running value (logged as "changed; takes effect after a
// restart"). A family whose reload fails keeps serving what it had. What
// did not apply is returned, and daemon_status lists it as a problem until
// a later reload succeeds. When the tool list or the resources changed,
// every client is told (docs/protocol.md).
func (d *Daemon) Reload() error {
	before := d.served()
	defer func() {
		after := d.served()
		tools, resources := after.tools != before.tools, after.resources != before.resources
		if tools || resources {
			d.log.Info("what the daemon serves changed; telling its clients", zap.Bool("tools", tools), zap.Bool("resources", resources))
			d.srv.ListChanged(tools, resources)
		}
	}()
	var failed []error
	if err := d.reloadSettings(); err != nil {
		failed = append(failed, err)
	}
	d.reloadHTTP()
	d.eachFamily(func(f tool.Family) {
		if r, ok := f.(tool.Reloader); ok {
			if err := r.Reload(); err != nil {
				d.log.Error("reload failed; the previous state keeps serving", zap.String("family", fmt.Sprintf("%T", f)), zap.Error(err))
				failed = append(failed, fmt.Errorf("%s: %w", familyName(f), err))
			} else {
				d.log.Info("reloaded", zap.String("family", fmt.Sprintf("%T", f)))
			}
		}
	})
	err := errors.Join(failed...)
	d.reloadMu.Lock()
	if err != nil {
		d.reloadFailed = fmt.Sprintf("the reload at %s did not apply, the previous settings keep serving until one succeeds (fix it, then hearthd reload): %v",
			time.Now().Format(time.DateTime), strings.ReplaceAll(err.Error(), "\n", "; "))
	} else {
		d.reloadFailed = ""
	}
	d.reloadMu.Unlock()
	return err
}

// reloadProblem is why the last reload did not apply ("" when it did).
func (d *Daemon) reloadProblem() string {
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	return d.reloadFailed
}

// familyName names a family for a person: its package (schemas, memory).
func familyName(f tool.Family) string {
	name := fmt.Sprintf("%T", f)
	name = strings.TrimPrefix(name, "*")
	if i := strings.IndexByte(name, '.'); i > 0 {
		name = name[:i]
	}
	return name
}

// reloadSettings reads the config file again; an error (the file's, with
// its line) leaves the previous settings serving.
func (d *Daemon) reloadSettings() error {
	live := d.cfg.Settings
	if live == nil {
		return nil
	}
	next, changes, err := live.Settings().Reload()
	if err != nil {
		d.log.Error("config reload failed; the previous settings keep serving", zap.Error(err))
		return err
	}
	live.Store(next)
	for _, c := range changes {
		fields := []zap.Field{zap.String("key", c.Key), zap.String("var", c.Var), zap.String("old", c.Old), zap.String("new", c.New)}
		if c.Restart {
			d.log.Warn(c.Key+" changed; takes effect after a restart", fields...)
		} else {
			d.log.Info(c.Key+" changed", fields...)
		}
	}
	path, read := next.File()
	d.log.Info("config reloaded", zap.String("file", path), zap.Bool("file_read", read), zap.Int("changed", len(changes)))
	return nil
}

// Settings is the settings being served, or nil when the daemon was built
// without any (Config.Settings unset).
func (d *Daemon) Settings() *config.Settings {
	if d.cfg.Settings == nil {
		return nil
	}
	return d.cfg.Settings.Settings()
}

// stopChildren kills every child group still running: after the drain, no
// tool's subprocess outlives the daemon.
func (d *Daemon) stopChildren() {
	if n := d.children.Live(); n > 0 {
		d.log.Info("stopping child processes still running", zap.Int("children", n))
	}
	ctx, cancel := context.WithTimeout(context.Background(), supervisor.DefaultGrace)
	defer cancel()
	d.children.Shutdown(ctx)
}

// refuseConnection tells a client past max_connections why, in a frame it
// can read, and closes it; the log says so at most every 10 s.
func (d *Daemon) refuseConnection(c *localsock.Conn, p localsock.Peer, max int) {
	msg := fmt.Sprintf("hearthd already serves %d connections, its max_connections; close some clients or raise the limit", max)
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(append(jsonrpc.ErrorFrame(jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeOverloaded, Message: msg,
		Data: map[string]string{"code": "QUEUE_OVERLOADED"}}), '\n'))
	c.Close()
	now := time.Now().UnixNano()
	if last := d.refusedLogged.Load(); now-last > int64(10*time.Second) && d.refusedLogged.CompareAndSwap(last, now) {
		d.log.Warn("refused a connection: too many", zap.Int("max_connections", max), zap.Int("peer_pid", p.PID))
	}
}
