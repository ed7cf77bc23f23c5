//go:build unix

package test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countReply parses the hosted server's count tool: calls=N inits=M pid=P.
func countReply(t *testing.T, s string) (calls, inits, pid int) {
	t.Helper()
	if _, err := fmt.Sscanf(s, "calls=%d inits=%d pid=%d", &calls, &inits, &pid); err != nil {
		t.Fatalf("count said %q", s)
	}
	return calls, inits, pid
}

// parentOf is a process's parent pid (0 when it is gone).
func parentOf(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// `hearthd restart` while three clients call a hosted server that counts
// its calls in memory: the new daemon serves the same upstream process,
// the count goes on and the server was initialized once, every call
// returns once (a result, or an error the client may retry) and the
// server ran each call at most once; a kill -9 of the new daemon then
// still ends the upstream and its keeper.
func TestHostedUpstreamOutlivesRestart(t *testing.T) {
	env, runtime, _ := shimEnv(t)
	server := filepath.Join(bin.dir, "hostedserver")
	clients := make([]*mcp.ClientSession, 3)
	for i := range clients {
		clients[i] = hostedClient(t, env, nil, "2025-11-25")
	}
	pid := oneUpstreamCounting(t, clients, "before the restart")
	keeper := parentOf(pid)
	before := daemonsIn(runtime)
	if len(before) != 1 || keeper <= 1 {
		t.Fatalf("daemons %v, keeper %d", before, keeper)
	}

	load := startCountLoad(t, clients, pid)
	out, code := runHearthdCmd(t, env, "restart")
	if code != 0 || !strings.Contains(out, "restarted hearthd") {
		load.stop()
		t.Fatalf("hearthd restart: %d %s", code, out)
	}
	load.answeredAfter(30)
	load.stop()

	after := oneDaemonIn(t, runtime)
	if after == before[0] {
		t.Fatalf("the daemon before the restart, %d, still serves", after)
	}
	last, _ := callText(t, clients[0], "count", nil)
	calls, inits, p := countReply(t, last)
	if p != pid || inits != 1 {
		t.Fatalf("after the restart: %q, want pid %d and still one initialize", last, pid)
	}
	if now := processesOf(server); len(now) != 1 || now[0] != pid {
		t.Fatalf("upstreams after the restart: %v", now)
	}
	// Each call ran at most once: the server counted no more calls than
	// were made (3 before, the loops', the last), and at least those
	// answered.
	load.check(calls-3-1, 30)

	// A crash still ends the upstream and its keeper: no orphan.
	killLeavesNoOrphan(t, after, server, keeper)
}

// oneUpstreamCounting has each client call the counting server once: all
// reach one upstream, initialized once. It returns that upstream's pid.
func oneUpstreamCounting(t *testing.T, clients []*mcp.ClientSession, when string) int {
	t.Helper()
	var pid int
	for _, c := range clients {
		out, _ := callText(t, c, "count", nil)
		_, inits, p := countReply(t, out)
		if pid != 0 && p != pid || inits != 1 {
			t.Fatalf("%s: %q (first pid %d)", when, out, pid)
		}
		pid = p
	}
	return pid
}

// killLeavesNoOrphan kills the daemon with SIGKILL and waits until the
// hosted server's processes and its keeper are gone.
func killLeavesNoOrphan(t *testing.T, daemon int, server string, keeper int) {
	t.Helper()
	syscall.Kill(daemon, syscall.SIGKILL)
	deadline := time.Now().Add(10 * time.Second)
	for len(processesOf(server)) > 0 || parentOf(keeper) != 0 && !gone(keeper) {
		if time.Now().After(deadline) {
			t.Fatalf("10s after kill -9 of the new daemon: upstreams %v, keeper %d alive", processesOf(server), keeper)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gone says whether pid is no live process (absent, or a zombie).
func gone(pid int) bool {
	return len(liveProcesses(func(dir string, _ []string) bool { return dir == filepath.Join("/proc", strconv.Itoa(pid)) })) == 0
}

// A client that subscribed to a resource before `hearthd restart` hears
// of its updates after it, without subscribing again (its shim replays
// only its initialize), and the upstream, still subscribed, got exactly
// one resources/subscribe for the URI: none from the successor as the
// client came back, none for a second client that subscribes after.
func TestHostedSubscriptionOutlivesRestart(t *testing.T) {
	env, runtime, _ := shimEnv(t)
	const uri = "test://counter"
	updated := make(chan string, 16)
	sub := runClient(t, env, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		updated <- r.Params.URI
	}}, "2025-11-25", filepath.Join(bin.dir, "hostedserver"), "-subscribe")
	other := runClient(t, env, nil, "2025-11-25", filepath.Join(bin.dir, "hostedserver"), "-subscribe")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := sub.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	touched := func(when string) {
		t.Helper()
		if out, isErr := callText(t, other, "touch", map[string]any{"text": uri}); isErr {
			t.Fatalf("touch %s: %s", when, out)
		}
		select {
		case got := <-updated:
			if got != uri {
				t.Fatalf("%s: updated %q, want %q", when, got, uri)
			}
		case <-ctx.Done():
			t.Fatalf("%s: no notifications/resources/updated reached the subscriber", when)
		}
	}
	touched("before the restart")
	before := oneDaemonIn(t, runtime)
	if out, code := runHearthdCmd(t, env, "restart"); code != 0 {
		t.Fatalf("hearthd restart: %d %s", code, out)
	}
	if after := oneDaemonIn(t, runtime); after == before {
		t.Fatalf("the daemon before the restart, %d, still serves", after)
	}
	// An update sent before the subscriber's shim is back reaches nobody
	// (decision 0046): a call of its own shows it attached again.
	if err := sub.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	touched("after the restart")
	// A client that subscribes after the hand-over is the upstream's
	// second subscriber: hearth sends it no subscribe either.
	late := runClient(t, env, nil, "2025-11-25", filepath.Join(bin.dir, "hostedserver"), "-subscribe")
	if err := late.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if n, _ := callText(t, other, "subscribes", map[string]any{"text": uri}); n != "1" {
		t.Fatalf("the upstream got %s resources/subscribe for %s, want 1", n, uri)
	}
	touched("after a later client subscribed")
}

// countLoad is clients calling the hosted server's count in a loop, each
// call checked to return once: with a result (a count no other call got,
// from the upstream pid), or with the documented retryable error.
type countLoad struct {
	t        *testing.T
	pid      int
	mu       sync.Mutex
	seen     map[int]bool
	issued   int
	answered int
	mark     int // answered when the hand-over was done (answeredAfter)
	failed   []string
	codes    []int64
	done     chan struct{}
	wg       sync.WaitGroup
}

func startCountLoad(t *testing.T, clients []*mcp.ClientSession, pid int) *countLoad {
	l := &countLoad{t: t, pid: pid, seen: map[int]bool{}, done: make(chan struct{})}
	for _, c := range clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.done:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				l.mu.Lock()
				l.issued++
				l.mu.Unlock()
				res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "count"})
				cancel()
				l.mu.Lock()
				switch {
				case err != nil:
					l.failed = append(l.failed, err.Error())
					var we *jsonrpc.Error
					if errors.As(err, &we) {
						l.codes = append(l.codes, we.Code)
					} else {
						l.codes = append(l.codes, 0)
					}
				case res.IsError:
					l.failed = append(l.failed, fmt.Sprint(res.Content))
					l.codes = append(l.codes, 0)
				default:
					n, _, p := countReply(t, res.Content[0].(*mcp.TextContent).Text)
					if l.seen[n] || p != l.pid {
						t.Errorf("count %d answered twice, or by pid %d (want %d)", n, p, l.pid)
					}
					l.seen[n] = true
					l.answered++
				}
				l.mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	// Some calls answered before whatever comes next.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l.mu.Lock()
		n := l.answered
		l.mu.Unlock()
		if n >= 3*len(clients) {
			break
		}
	}
	return l
}

// answeredAfter marks the hand-over done and waits (up to 30s) for n more
// calls answered.
func (l *countLoad) answeredAfter(n int) {
	l.mu.Lock()
	l.mark = l.answered
	l.mu.Unlock()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l.mu.Lock()
		got := l.answered
		l.mu.Unlock()
		if got >= l.mark+n {
			return
		}
	}
}

func (l *countLoad) stop() {
	close(l.done)
	l.wg.Wait()
}

// check, once stopped, holds the calls to account: each failed one with
// the shim's -32004 or the daemon's -32005, nothing else; the upstream ran
// (ran: the calls it counted for the loop) no fewer than were answered and
// no more than were issued; at least after were answered after the
// hand-over.
func (l *countLoad) check(ran, after int) {
	t := l.t
	t.Helper()
	// The Go SDK's error keeps the shim's message, not its code: the
	// message of -32004 (docs/protocol.md) identifies it.
	for i, f := range l.failed {
		if l.codes[i] != -32004 && l.codes[i] != -32005 && !strings.HasSuffix(f, lostMessage) {
			t.Errorf("a call in flight failed with an error that is not the documented retryable one: %d %s", l.codes[i], f)
		}
	}
	t.Logf("issued %d, answered %d (%d after the hand-over), failed %d, ran %d", l.issued, l.answered, l.answered-l.mark, len(l.failed), ran)
	if ran < l.answered || ran > l.issued {
		t.Fatalf("the server ran %d calls; %d were answered of %d issued", ran, l.answered, l.issued)
	}
	if l.answered < l.mark+after {
		t.Fatalf("only %d calls answered after the hand-over", l.answered-l.mark)
	}
}

// lostMessage is the shim's -32004 message (docs/protocol.md).
const lostMessage = "the hearth daemon restarted while this request was in flight and its reply was lost; it may or may not have been carried out"

// oneDaemonIn waits until exactly one hearthd serves runtime and returns
// its pid. A shim that reconnects while the successor takes over may start
// a `hearthd serve` of its own, which finds the data directory owned and
// exits at once: under load it can still be there when the restart
// command returns. Two that stay are a failure, named with what they run.
func oneDaemonIn(t *testing.T, runtime string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := daemonsIn(runtime)
		if len(pids) == 1 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			var what []string
			for _, pid := range pids {
				cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				what = append(what, fmt.Sprintf("%d (parent %d): %s", pid, parentOf(pid), bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
			}
			t.Fatalf("not one daemon serving %s after 10 s: %v", runtime, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
