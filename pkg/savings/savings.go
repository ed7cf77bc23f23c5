// Package savings says what sharing hosted servers saves: the processes
// and memory a direct spawn per window would take now (each instance's
// clients times its measured tree) beside what hearth runs for them (each
// tree once, its keeper, and a shim per window), and how that went since
// the daemon started (docs/decisions/0063-status-page.md). It reads the
// hosted servers through their status (hosted.Status, the clients'
// mcp.ClientInfo) and the process table; it changes nothing.
package savings

import (
	"strings"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// Process is one process of an instance, or a shim.
type Process struct {
	Pid      int    `json:"pid"`
	Name     string `json:"name"`
	Command  string `json:"command"`
	RSSBytes int64  `json:"rssBytes"`
	// CPUSeconds is the processor time it used so far; CPUPercent its
	// share of one core since the previous measure (0 at the first).
	CPUSeconds float64 `json:"cpuSeconds"`
	CPUPercent float64 `json:"cpuPercent"`
	// Keeper: hearth's keeper of the upstream (decision 0043), which a
	// direct spawn would not run.
	Keeper bool `json:"keeper,omitempty"`
}

// Instance is one hosted instance measured.
type Instance struct {
	Key     string `json:"key"`
	Name    string `json:"name"`
	Clients int    `json:"clients"`
	// Procs are its keeper, then its upstream's tree (empty while it is
	// not running).
	Procs []Process `json:"procs"`
	// TreeProcs and TreeRSSBytes are the upstream's tree without the
	// keeper: what one direct spawn of the server runs.
	TreeProcs    int   `json:"treeProcs"`
	TreeRSSBytes int64 `json:"treeRssBytes"`
	// KeeperRSSBytes is its keeper's memory; Shims its clients' shims.
	KeeperRSSBytes int64     `json:"keeperRssBytes"`
	Shims          []Process `json:"shims"`
	// DirectProcs and DirectRSSBytes are Clients times the tree.
	DirectProcs    int   `json:"directProcs"`
	DirectRSSBytes int64 `json:"directRssBytes"`
}

// Figures are the sums over every instance.
type Figures struct {
	At      time.Time `json:"at"`
	Servers int       `json:"servers"` // instances with an upstream running
	Clients int       `json:"clients"` // windows attached to hosted servers
	// Direct is what a direct spawn per window would run now.
	DirectProcs    int   `json:"directProcs"`
	DirectRSSBytes int64 `json:"directRssBytes"`
	// Hearth is what hearth runs for them: each tree once, its keeper,
	// and the shims (the daemon itself, which also serves hearth's own
	// tools, is not counted).
	HearthProcs    int   `json:"hearthProcs"`
	HearthRSSBytes int64 `json:"hearthRssBytes"`
	ShimProcs      int   `json:"shimProcs"`
	ShimRSSBytes   int64 `json:"shimRssBytes"`
	// Saved is Direct less Hearth (negative while servers idle warm with
	// no window).
	SavedProcs    int   `json:"savedProcs"`
	SavedRSSBytes int64 `json:"savedRssBytes"`
}

// Line is the savings in one line, as `hearthd status` and the page say it.
func (f Figures) Line() string {
	if f.Clients == 0 && f.HearthProcs == 0 {
		return "no hosted server runs: nothing shared yet"
	}
	return sprintf("sharing saves %d processes and %s now: a direct spawn per window would run %d processes (%s) for %d windows; hearth runs %d (%s, its keepers and %d shims of %s included)",
		f.SavedProcs, mb(f.SavedRSSBytes), f.DirectProcs, mb(f.DirectRSSBytes), f.Clients, f.HearthProcs, mb(f.HearthRSSBytes), f.ShimProcs, mb(f.ShimRSSBytes))
}

// Meter measures, keeping what it needs between measures: each process's
// CPU time (for its share since) and the history of the figures.
type Meter struct {
	mu      sync.Mutex
	cpu     map[[2]uint64]cpuAt
	history History
}

type cpuAt struct {
	at  time.Time
	cpu time.Duration
}

// NewMeter makes a Meter whose history keeps at most points samples.
func NewMeter(points int) *Meter {
	return &Meter{cpu: map[[2]uint64]cpuAt{}, history: History{max: max(points, 4)}}
}

// Measure reads the process table and measures every instance of
// statuses, with the shims of clients attached to each (ClientInfo's
// HostedKey and PID).
func (m *Meter) Measure(statuses []hosted.Status, clients []mcp.ClientInfo) (Figures, []Instance, error) {
	table, err := proctable.List()
	if err != nil {
		return Figures{}, nil, err
	}
	proctable.Details(table)
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	f, insts := m.measure(statuses, clients, table, now)
	return f, insts, nil
}

// Record measures and adds the figures to the history.
func (m *Meter) Record(statuses []hosted.Status, clients []mcp.ClientInfo) (Figures, error) {
	f, _, err := m.Measure(statuses, clients)
	if err != nil {
		return f, err
	}
	m.mu.Lock()
	m.history.add(f)
	m.mu.Unlock()
	return f, nil
}

// History is what Record kept, oldest first, and the most saved.
func (m *Meter) History() ([]Sample, Sample) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Sample(nil), m.history.samples...), m.history.peak
}

// measure is Measure on a table read (m.mu held).
func (m *Meter) measure(statuses []hosted.Status, clients []mcp.ClientInfo, table []proctable.Proc, now time.Time) (Figures, []Instance) {
	byPid := proctable.ByPid(table)
	seen := map[[2]uint64]bool{}
	proc := func(p proctable.Proc) Process {
		id := [2]uint64{uint64(p.Pid), p.Start}
		seen[id] = true
		out := Process{Pid: p.Pid, Name: p.Name, RSSBytes: p.RSS, CPUSeconds: p.CPU.Seconds(), Keeper: p.Name == "hearth-keeper"}
		if args, err := proctable.Args(p.Pid); err == nil && len(args) > 0 {
			out.Command = strings.Join(append([]string{args[0]}, hosted.RedactArgs(args[1:])...), " ")
		}
		if prev, ok := m.cpu[id]; ok && now.After(prev.at) {
			out.CPUPercent = 100 * (p.CPU - prev.cpu).Seconds() / now.Sub(prev.at).Seconds()
		}
		m.cpu[id] = cpuAt{now, p.CPU}
		return out
	}
	shimsOf := map[string][]int{}
	for _, c := range clients {
		if c.HostedKey != "" && c.ShimPID > 0 {
			shimsOf[c.HostedKey] = append(shimsOf[c.HostedKey], c.ShimPID)
		}
	}
	f := Figures{At: now}
	var insts []Instance
	for _, st := range statuses {
		in := Instance{Key: st.Key, Name: st.Name, Clients: st.Clients, Procs: []Process{}, Shims: []Process{}}
		if st.Pid > 0 {
			for _, p := range proctable.Tree(table, st.Pid) {
				if p.Zombie {
					continue
				}
				pr := proc(p)
				in.Procs = append(in.Procs, pr)
				if pr.Keeper {
					in.KeeperRSSBytes += pr.RSSBytes
					continue
				}
				in.TreeProcs++
				in.TreeRSSBytes += pr.RSSBytes
			}
		}
		for _, pid := range shimsOf[st.Key] {
			if p := byPid[pid]; p != nil {
				in.Shims = append(in.Shims, proc(*p))
			}
		}
		in.DirectProcs, in.DirectRSSBytes = in.Clients*in.TreeProcs, int64(in.Clients)*in.TreeRSSBytes
		if in.TreeProcs > 0 {
			f.Servers++
		}
		f.Clients += in.Clients
		f.DirectProcs += in.DirectProcs
		f.DirectRSSBytes += in.DirectRSSBytes
		f.HearthProcs += len(in.Procs) + len(in.Shims)
		f.ShimProcs += len(in.Shims)
		f.HearthRSSBytes += in.TreeRSSBytes + in.KeeperRSSBytes
		for _, s := range in.Shims {
			f.ShimRSSBytes += s.RSSBytes
			f.HearthRSSBytes += s.RSSBytes
		}
		insts = append(insts, in)
	}
	f.SavedProcs, f.SavedRSSBytes = f.DirectProcs-f.HearthProcs, f.DirectRSSBytes-f.HearthRSSBytes
	for id := range m.cpu {
		if !seen[id] {
			delete(m.cpu, id) // ended: its pid may come back as another process
		}
	}
	return f, insts
}

// Sample is the figures at one time, as the history keeps them.
type Sample struct {
	At             time.Time `json:"at"`
	DirectProcs    int       `json:"directProcs"`
	DirectRSSBytes int64     `json:"directRssBytes"`
	HearthProcs    int       `json:"hearthProcs"`
	HearthRSSBytes int64     `json:"hearthRssBytes"`
}

// History keeps samples since the daemon started in bounded memory: once
// full, every two neighbours become one (the earlier time, the larger
// figures), so the whole time since the start stays, ever coarser.
type History struct {
	max     int
	samples []Sample
	peak    Sample // the sample that saved the most memory
}

func (h *History) add(f Figures) {
	s := Sample{At: f.At, DirectProcs: f.DirectProcs, DirectRSSBytes: f.DirectRSSBytes, HearthProcs: f.HearthProcs, HearthRSSBytes: f.HearthRSSBytes}
	if s.DirectRSSBytes-s.HearthRSSBytes > h.peak.DirectRSSBytes-h.peak.HearthRSSBytes || h.peak.At.IsZero() {
		h.peak = s
	}
	if len(h.samples) >= h.max {
		merged := h.samples[:0]
		for i := 0; i+1 < len(h.samples); i += 2 {
			a, b := h.samples[i], h.samples[i+1]
			merged = append(merged, Sample{At: a.At, DirectProcs: max(a.DirectProcs, b.DirectProcs), DirectRSSBytes: max(a.DirectRSSBytes, b.DirectRSSBytes),
				HearthProcs: max(a.HearthProcs, b.HearthProcs), HearthRSSBytes: max(a.HearthRSSBytes, b.HearthRSSBytes)})
		}
		if len(h.samples)%2 == 1 {
			merged = append(merged, h.samples[len(h.samples)-1])
		}
		h.samples = merged
	}
	h.samples = append(h.samples, s)
}
