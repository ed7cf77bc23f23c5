package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"runtime/metrics"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/proctable"
	"github.com/hearth-mcp/hearth/pkg/savings"
	"github.com/hearth-mcp/hearth/pkg/statuspage"
	"github.com/hearth-mcp/hearth/pkg/sweep"
	"github.com/hearth-mcp/hearth/pkg/version"
)

// The status page (pkg/statuspage, docs/decisions/0063-status-page.md):
// served on a loopback port of its own, opened when `hearthd ui` first
// asks, whether or not http_listen serves /mcp; the savings it shows are
// measured every savingsEvery from the hosted servers' status.

// UIMethod is the control request of `hearthd ui`: no params; result
// {"url"}, a one-time link to the status page. Like $/hearth/servers, only
// a client of the socket without a shim's hello reaches it.
const UIMethod = "$/hearth/ui"

const (
	savingsEvery  = 10 * time.Second
	savingsPoints = 720 // a sample every 10 s for two hours, then ever coarser
	sweepGrace    = 5 * time.Second
	logTailLines  = 20
)

// uiState is the page's listener, made once.
type uiState struct {
	mu    sync.Mutex
	page  *statuspage.Page
	ln    net.Listener
	srv   *http.Server
	base  string
	meter *savings.Meter
	once  sync.Once
}

// savingsMeter is the daemon's one meter.
func (d *Daemon) savingsMeter() *savings.Meter {
	d.ui.once.Do(func() { d.ui.meter = savings.NewMeter(savingsPoints) })
	return d.ui.meter
}

// sampleSavings records what sharing saves until ctx ends.
func (d *Daemon) sampleSavings(ctx context.Context) {
	every(ctx, savingsEvery, func() bool {
		if _, err := d.savingsMeter().Record(d.hosted.Statuses(), d.srv.Clients()); err != nil {
			d.log.Debug("savings not measured", zap.Error(err))
			return false // no process table on this system
		}
		return true
	})
}

// uiControl answers $/hearth/ui: it starts the page's listener if it is
// not yet, and mints a one-time link.
func (d *Daemon) uiControl(context.Context, json.RawMessage) (any, error) {
	d.ui.mu.Lock()
	defer d.ui.mu.Unlock()
	if d.ui.page == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the status page cannot listen: " + err.Error()}
		}
		d.ui.page = statuspage.New(statuspage.Options{State: d.pageState, Act: d.pageAct, Sweep: d.pageSweep, Kill: d.pageKill})
		d.ui.ln, d.ui.base = ln, "http://"+ln.Addr().String()
		d.ui.srv = &http.Server{Handler: d.ui.page, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
			ErrorLog: zap.NewStdLog(d.log.Named("ui"))}
		go func() {
			if err := d.ui.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error("the status page stopped", zap.Error(err))
			}
		}()
		d.log.Info("the status page listens", zap.String("url", d.ui.base))
	}
	return map[string]string{"url": d.ui.page.OpenURL(d.ui.base)}, nil
}

// stopUI closes the page's listener at the daemon's end.
func (d *Daemon) stopUI() {
	d.ui.mu.Lock()
	defer d.ui.mu.Unlock()
	if d.ui.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = d.ui.srv.Shutdown(ctx)
		d.ui.srv, d.ui.page = nil, nil
	}
}

// pageState gathers what the page shows from the status the daemon keeps.
func (d *Daemon) pageState() (statuspage.State, error) {
	statuses, clients := d.hosted.Statuses(), d.srv.Clients()
	now, insts, err := d.savingsMeter().Measure(statuses, clients)
	if err != nil {
		d.log.Debug("savings not measured", zap.Error(err))
	}
	hist, peak := d.savingsMeter().History()
	c := d.srv.Counters()
	st := statuspage.State{
		Daemon: statuspage.Daemon{Pid: os.Getpid(), Version: version.Tooling(), StartedAt: d.started.UTC(), UptimeSeconds: time.Since(d.started).Seconds(),
			RSSBytes: ownRSS(), HeapBytes: heapInUse(), Connections: c.Connections, Requests: c.Requests, Errors: c.Errors},
		Tools:   d.srv.ToolCounters(),
		Savings: statuspage.Savings{Now: now, Line: now.Line(), History: append(hist, sampleOf(now)), Peak: peak},
	}
	byKey := map[string][]int{}
	for i, ci := range clients {
		byKey[ci.HostedKey] = append(byKey[ci.HostedKey], i)
	}
	for i, s := range statuses {
		srv := statuspage.Server{Status: s, LogTail: statuspage.Tail(s.Log, logTailLines)}
		for _, j := range byKey[s.Key] {
			srv.Clients = append(srv.Clients, clients[j])
		}
		if i < len(insts) {
			srv.Measure = insts[i]
		}
		st.Servers = append(st.Servers, srv)
	}
	return st, nil
}

func sampleOf(f savings.Figures) savings.Sample {
	return savings.Sample{At: f.At, DirectProcs: f.DirectProcs, DirectRSSBytes: f.DirectRSSBytes, HearthProcs: f.HearthProcs, HearthRSSBytes: f.HearthRSSBytes}
}

// pageAct is the page's restart, stop and forget: the rule of `hearthd
// servers` (controlServers), the user's alone.
func (d *Daemon) pageAct(action, name string) (int, error) {
	return d.controlServers(hostedControlArgs{Action: action, Name: name})
}

func (d *Daemon) pageSweep() ([]sweep.Orphan, error) { return sweep.Find(sweep.Options{}) }

func (d *Daemon) pageKill(targets []sweep.Orphan) ([]sweep.Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sweepGrace+10*time.Second)
	defer cancel()
	return sweep.Kill(ctx, targets, sweep.Options{}, sweepGrace)
}

// ownRSS is the daemon's resident memory (0 where the table has none).
func ownRSS() int64 {
	procs, err := proctable.List()
	if err != nil {
		return 0
	}
	p := proctable.ByPid(procs)[os.Getpid()]
	if p == nil {
		return 0
	}
	one := []proctable.Proc{*p}
	proctable.Details(one)
	return one[0].RSS
}

// heapInUse is the Go heap's live and not-yet-swept objects.
func heapInUse() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}
