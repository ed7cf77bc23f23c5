package hosted

import (
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/hosted/catalog"
	"github.com/hearth-mcp/hearth/pkg/hosted/route"
	"github.com/hearth-mcp/hearth/pkg/supervisor"
)

// A planned restart hands the running upstreams to the new daemon
// (docs/decisions/0046-upstream-handover.md).

// Record is what the new daemon needs of one handed instance besides its
// descriptors: it travels as JSON.
type Record struct {
	Key       string           `json:"key"`
	Shape     string           `json:"shape,omitempty"` // its clients' (route.Shape)
	Scope     string           `json:"scope"`
	ClientDir string           `json:"clientDir"`
	Spec      Spec             `json:"spec"`
	KeeperPid int              `json:"keeperPid"`
	Router    route.Carried    `json:"router"`
	Started   time.Time        `json:"started"`
	Restarts  int              `json:"restarts"`
	Identity  catalog.Identity `json:"identity"`
}

// Handed is one instance handed over: its record and its descriptors
// (supervisor.Handed), which the caller sends, then closes.
type Handed struct {
	Record Record
	Files  *supervisor.Handed
}

// HandOver takes every instance whose upstream can outlive this daemon (a
// kept, ready upstream of either era with no client's request in flight: call it
// after the drain) out of the table, without stopping its upstream, and
// returns what the successor adopts. The other instances stay, for Close.
func (t *Table) HandOver() []Handed {
	t.mu.Lock()
	list := make([]*Instance, 0, len(t.inst))
	for _, in := range t.inst {
		list = append(list, in)
	}
	t.mu.Unlock()
	var out []Handed
	for _, in := range list {
		h, err := in.handOver()
		if err != nil {
			t.log.Info("hosted server not handed over; it stops with this daemon", zap.String("server", in.spec.Label()), zap.String("key", in.key), zap.Error(err))
			continue
		}
		out = append(out, h)
	}
	return out
}

func (in *Instance) handOver() (Handed, error) {
	carried, err := in.r.Carry()
	if err != nil {
		return Handed{}, err
	}
	in.t.mu.Lock()
	in.mu.Lock()
	c, isChild := in.proc.(child)
	if in.proc == nil || !in.ready || in.gone || in.stopping || in.killReason != nil {
		in.mu.Unlock()
		in.t.mu.Unlock()
		return Handed{}, errors.New("its upstream is not running and ready")
	}
	if !isChild {
		in.mu.Unlock()
		in.t.mu.Unlock()
		return Handed{}, errors.New("a remote server's connection is not handed over; the new daemon connects again")
	}
	p := c.p
	files, err := p.Release()
	if err != nil {
		in.mu.Unlock()
		in.t.mu.Unlock()
		return Handed{}, err
	}
	// Out of the table and gone for this daemon: watch sees no exit (the
	// supervisor forgot the process), timers stop, Close skips it.
	in.gone = true
	if in.idle != nil {
		in.idle.Stop()
	}
	if in.initTimer != nil {
		in.initTimer.Stop()
	}
	if in.t.inst[in.key] == in {
		delete(in.t.inst, in.key)
	}
	rec := Record{Key: in.key, Shape: in.shape, Scope: in.scope, ClientDir: in.clientDir, Spec: in.spec, KeeperPid: p.Pid,
		Router: carried, Started: in.startedAt, Restarts: in.restarts, Identity: in.identity}
	out := in.out
	in.mu.Unlock()
	in.t.mu.Unlock()
	in.t.forgetModern(in)
	// This daemon reads the upstream's stdout no more: a line it had read
	// and not routed yet would be lost, but nothing is in flight.
	if out != nil {
		out.close()
	}
	in.r.Down(fmt.Errorf("%s was handed to the new daemon", in.spec.Label()), true)
	return Handed{Record: rec, Files: files}, nil
}

// Adopt makes an instance of each record, its upstream running and ready
// as the previous daemon handed it over: it is not started or initialized
// again. The table takes the descriptors.
func (t *Table) Adopt(list []Handed) {
	for _, h := range list {
		r := h.Record
		t.mu.Lock()
		if t.closed || t.inst[r.Key] != nil {
			t.mu.Unlock()
			h.Files.Close() // the keeper then ends its tree: no orphan
			continue
		}
		in := t.newInstance(r.Spec, r.Key, r.Scope, r.ClientDir, r.Shape)
		t.inst[r.Key] = in
		t.mu.Unlock()
		t.ensureLogDir()
		in.slog = openStderrLog(in.logPath, t.logCap)
		in.slog.mark(fmt.Sprintf("%s adopted %s from the previous daemon (keeper pid %d)", time.Now().UTC().Format(time.RFC3339), r.Spec.Label(), r.KeeperPid))
		p := child{t.sup.Adopt(h.Files, in.slog, r.Spec.Grace)}
		in.mu.Lock()
		in.proc, in.ready, in.everRan, in.startedAt, in.restarts, in.identity = p, true, true, r.Started, r.Restarts, r.Identity
		in.idle = time.AfterFunc(in.spec.IdleTimeout, in.idleStop) // until a client attaches
		in.mu.Unlock()
		out := newUpstreamOut(p)
		in.mu.Lock()
		in.out = out
		in.mu.Unlock()
		in.r.Adopt(p.peer(), r.Router)
		if r.Router.Discover != nil {
			in.mu.Lock()
			in.modern = true
			in.mu.Unlock()
			t.speaksModern(in)
		}
		go in.read(out)
		go in.watch(p, out)
		t.log.Info("hosted server adopted from the previous daemon", zap.String("server", r.Spec.Label()), zap.String("key", r.Key), zap.Int("pid", p.pid()))
	}
}
