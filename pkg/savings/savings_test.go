package savings

import (
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/hosted"
	"github.com/hearth-mcp/hearth/pkg/mcp"
	"github.com/hearth-mcp/hearth/pkg/proctable"
)

const mib = 1 << 20

// Two instances: one with a keeper over npx's three processes and two
// windows, one without a keeper, one window; and one stopped. Direct is
// each instance's clients times its tree; hearth is each tree once, the
// keeper and the shims.
func TestMeasure(t *testing.T) {
	table := []proctable.Proc{
		{Pid: 1, Name: "init"},
		{Pid: 10, PPid: 1, Name: "hearthd", RSS: 40 * mib},
		{Pid: 11, PPid: 10, Name: "hearth-keeper", RSS: 5 * mib, CPU: time.Second},
		{Pid: 12, PPid: 11, Name: "npm exec @mode", RSS: 50 * mib},
		{Pid: 13, PPid: 12, Name: "sh", RSS: 1 * mib},
		{Pid: 14, PPid: 13, Name: "node", RSS: 80 * mib},
		{Pid: 15, PPid: 14, Name: "node", Zombie: true},
		{Pid: 20, PPid: 10, Name: "python3", RSS: 30 * mib},
		{Pid: 30, PPid: 1, Name: "hearth", RSS: 3 * mib},
		{Pid: 31, PPid: 1, Name: "hearth", RSS: 3 * mib},
		{Pid: 32, PPid: 1, Name: "hearth", RSS: 3 * mib},
	}
	statuses := []hosted.Status{
		{Key: "aaaa", Name: "everything", Pid: 11, Clients: 2},
		{Key: "bbbb", Name: "weather.py", Pid: 20, Clients: 1},
		{Key: "cccc", Name: "stopped", State: "stopped"},
	}
	clients := []mcp.ClientInfo{{PID: 7, ShimPID: 30, HostedKey: "aaaa"}, {PID: 7, ShimPID: 31, HostedKey: "aaaa"}, {PID: 8, ShimPID: 32, HostedKey: "bbbb"}, {PID: 99, HostedKey: ""}}
	m := NewMeter(8)
	f, insts := m.measure(statuses, clients, table, time.Unix(100, 0))
	if len(insts) != 3 || insts[0].TreeProcs != 3 || insts[0].TreeRSSBytes != 131*mib || insts[0].KeeperRSSBytes != 5*mib ||
		insts[0].DirectProcs != 6 || insts[0].DirectRSSBytes != 262*mib || len(insts[0].Shims) != 2 || len(insts[0].Procs) != 4 || !insts[0].Procs[0].Keeper {
		t.Fatalf("the npx instance: %+v", insts[0])
	}
	if insts[1].TreeProcs != 1 || insts[1].KeeperRSSBytes != 0 || insts[1].DirectRSSBytes != 30*mib || len(insts[2].Procs) != 0 {
		t.Fatalf("%+v", insts[1:])
	}
	want := Figures{At: time.Unix(100, 0), Servers: 2, Clients: 3, DirectProcs: 7, DirectRSSBytes: 292 * mib,
		HearthProcs: 8, HearthRSSBytes: (131 + 5 + 30 + 9) * mib, ShimProcs: 3, ShimRSSBytes: 9 * mib}
	want.SavedProcs, want.SavedRSSBytes = want.DirectProcs-want.HearthProcs, want.DirectRSSBytes-want.HearthRSSBytes
	if f != want {
		t.Fatalf("figures %+v\nwant    %+v", f, want)
	}
	if !strings.Contains(f.Line(), "sharing saves -1 processes and 122.7 MB now") {
		t.Fatalf("line %q", f.Line())
	}
	// A second measure a second later: the keeper's CPU share since.
	table[2].CPU = 1500 * time.Millisecond
	_, insts = m.measure(statuses, clients, table, time.Unix(101, 0))
	if p := insts[0].Procs[0]; p.CPUPercent < 49 || p.CPUPercent > 51 {
		t.Fatalf("the keeper's CPU share %v", p.CPUPercent)
	}
	if (Figures{}).Line() != "no hosted server runs: nothing shared yet" {
		t.Fatal((Figures{}).Line())
	}
}

// The history stays within its bound and still begins at the start.
func TestHistory(t *testing.T) {
	h := History{max: 8}
	for i := range 100 {
		h.add(Figures{At: time.Unix(int64(i), 0), DirectRSSBytes: int64(i % 10), HearthRSSBytes: 1})
	}
	if len(h.samples) > 8 || len(h.samples) < 4 {
		t.Fatalf("%d samples", len(h.samples))
	}
	if h.samples[len(h.samples)-1].At != time.Unix(99, 0) || h.samples[0].At != time.Unix(0, 0) {
		t.Fatalf("from %v to %v", h.samples[0].At, h.samples[len(h.samples)-1].At)
	}
	if h.peak.DirectRSSBytes != 9 {
		t.Fatalf("peak %+v", h.peak)
	}
}
