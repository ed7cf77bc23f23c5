//go:build linux

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// procStatus reads a field of /proc/PID/status as a number (kB for sizes).
func procStatus(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestHostedInstancesLeaveNoThreads: while many hosted instances run at
// once, and after they stopped, the daemon has about the threads it had
// before: waiting for each upstream's exit must hold no OS thread (a
// goroutine blocked in waitid did, and the runtime keeps every thread it
// made). HEARTH_TEST_INSTANCES sets how many (40 by default; 300 for the
// figures in docs/decisions/0041-raw-nonblocking-io.md).
// The daemon's RSS is logged, not judged: its free heap goes back to the
// system within returnMemoryEvery, which this test does not wait for.
func TestHostedInstancesLeaveNoThreads(t *testing.T) {
	n := 40
	if v, err := strconv.Atoi(os.Getenv("HEARTH_TEST_INSTANCES")); err == nil && v > 0 {
		n = v
	}
	env, runtime, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	open := func() *mcp.ClientSession {
		cs := runClientWith(t, env, nil, "", []string{"--share", "client", "--", server})
		if out, isErr := callText(t, cs, "echo", map[string]any{"text": "x"}); isErr {
			t.Errorf("echo: %s", out)
		}
		return cs
	}
	gone := func() {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for len(processesOf(server)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("upstreams still run: %v", processesOf(server))
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond) // what ends with them has ended
	}
	open().Close()
	gone()
	daemons := daemonsIn(runtime)
	if len(daemons) != 1 {
		t.Fatalf("daemons %v", daemons)
	}
	pid := daemons[0]
	baseThreads, baseRSS := procStatus(t, pid, "Threads"), procStatus(t, pid, "VmRSS")

	// One at a time: starting many at once may make the runtime start
	// threads for the starts themselves (each fork and exec holds one), and
	// it keeps every thread it made, so a burst would read as held threads.
	// Started in turn, each running upstream that held a thread adds one.
	sessions := make([]*mcp.ClientSession, n)
	for i := range sessions {
		sessions[i] = open()
	}
	peak := procStatus(t, pid, "Threads")
	for _, cs := range sessions {
		if cs != nil {
			cs.Close()
		}
	}
	gone()
	threads, rss := procStatus(t, pid, "Threads"), procStatus(t, pid, "VmRSS")
	report := fmt.Sprintf("%d instances: threads %d before, %d while they ran, %d after; RSS %d kB before, %d kB after",
		n, baseThreads, peak, threads, baseRSS, rss)
	t.Log(report)
	if peak > baseThreads+8 || threads > baseThreads+8 {
		t.Fatalf("the daemon kept its threads: %s", report)
	}
}
