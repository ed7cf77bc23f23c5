//go:build unix

package test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestShimAnswersEachRequestOnceAcrossKills: four shims pipeline pings,
// search_memory calls and now and then a tools/list or a diff_assets whose
// reply is longer than a batch, as fast as the daemon answers, while the daemon is SIGKILLed again and again at random
// instants. Every request gets exactly one reply, its result or the
// retryable -32004: none is answered twice, none is left unanswered. Both
// ways a shim serves its client: handing its pipes to the daemon, where a
// daemon killed between writing a reply and recording it must not leave the
// shim to answer it again (decision 0020, "Exactly one answer"), and
// relaying. The -32004 counts and the kills are logged.
//
// The direct mode runs twice: with the shims' stdio pipes (as most clients
// spawn a server) and Unix sockets (as Node's child_process does).
func TestShimAnswersEachRequestOnceAcrossKills(t *testing.T) {
	for _, mode := range []string{"direct", "direct-sockets", "relay"} {
		t.Run(mode, func(t *testing.T) {
			relay := ""
			if mode == "relay" {
				relay = "1"
			}
			exactlyOnceAcrossKills(t, mode, relay, 10)
		})
	}
}

// startShimOnSockets starts a shim whose stdin and stdout are Unix stream
// sockets, each one end of a socketpair.
func startShimOnSockets(t *testing.T, env []string) *shimProc {
	t.Helper()
	pair := func() (ours, theirs *os.File) {
		// SOCK_CLOEXEC is Linux's; ForkLock and CloseOnExec are what the
		// standard library does where it is missing (macOS).
		syscall.ForkLock.RLock()
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err == nil {
			syscall.CloseOnExec(fds[0])
			syscall.CloseOnExec(fds[1])
		}
		syscall.ForkLock.RUnlock()
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "server")
	}
	inOurs, inTheirs := pair()
	outOurs, outTheirs := pair()
	p := &shimProc{t: t, cmd: exec.Command(bin.hearth), lines: make(chan string, 10000), stderr: &lockedBuffer{}, done: make(chan error, 1),
		answered: map[any]bool{}, stdin: inOurs, stdout: outOurs}
	p.cmd.Env = env
	p.cmd.Stderr = p.stderr
	p.cmd.Stdin, p.cmd.Stdout = inTheirs, outTheirs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inTheirs.Close()
	outTheirs.Close()
	go func() {
		sc := bufio.NewScanner(outOurs)
		sc.Buffer(make([]byte, 4<<20), 4<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		inOurs.Close()
		p.cmd.Process.Kill()
	})
	return p
}

// pipeliner is one client of the kill test: it keeps up to window requests
// in flight through its shim and counts the replies to each.
type pipeliner struct {
	p       *shimProc
	mu      sync.Mutex
	sent    int
	results map[int]int
	lost    map[int]int // -32004
	other   map[int]int // any other error
	free    chan struct{}
	stop    chan struct{}
	wrote   chan struct{}
	last    chan struct{} // the reply to the closing ping came
}

const window = 64

func (c *pipeliner) replies(id int) int { return c.results[id] + c.lost[id] + c.other[id] }

func (c *pipeliner) write() {
	defer close(c.wrote)
	w := bufio.NewWriter(c.p.stdin)
	for i := 0; ; i++ {
		select {
		case <-c.stop:
			w.Flush()
			return
		case <-c.free:
		}
		var line string
		switch {
		case i%211 == 0:
			// A reply over a batch (64 KiB): the shim writes it for the
			// daemon.
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"diff_assets","arguments":{"base":{"v":%q},"new":{"v":%q}}}}`,
				i, strings.Repeat("a", 70000), strings.Repeat("b", 70000))
		case i%97 == 0:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i)
		case i%3 == 0:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":"port %d"}}}`, i, i%10)
		default:
			line = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)
		}
		c.mu.Lock()
		c.sent = i + 1
		c.mu.Unlock()
		w.WriteString(line + "\n")
		// Flush when nothing more may be sent, so that requests go out in
		// bursts but never wait.
		if len(c.free) == 0 {
			if w.Flush() != nil {
				return
			}
		}
	}
}

func (c *pipeliner) read(t *testing.T) {
	for line := range c.p.lines {
		var m struct {
			ID     any             `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("the client saw a malformed frame: %.200q", line)
			continue
		}
		if m.Method != "" {
			continue // a notification for the client
		}
		if m.ID == "last" {
			close(c.last)
			continue
		}
		f, ok := m.ID.(float64)
		if !ok {
			t.Errorf("a reply without a request's id: %.200s", line)
			continue
		}
		id := int(f)
		c.mu.Lock()
		switch {
		case m.Error != nil && m.Error.Code == -32004:
			c.lost[id]++
		case m.Error != nil:
			c.other[id]++
		default:
			c.results[id]++
		}
		first := c.replies(id) == 1
		c.mu.Unlock()
		if first {
			c.free <- struct{}{}
		}
	}
}

func exactlyOnceAcrossKills(t *testing.T, mode, relay string, kills int) {
	env, runtime, _ := shimEnv(t, "HEARTH_SHIM_RELAY="+relay)
	var clients []*pipeliner
	for range 4 {
		var p *shimProc
		if mode == "direct-sockets" {
			p = startShimOnSockets(t, env)
		} else {
			p = startShim(t, env)
		}
		p.initialize()
		c := &pipeliner{p: p, results: map[int]int{}, lost: map[int]int{}, other: map[int]int{},
			free: make(chan struct{}, window), stop: make(chan struct{}), wrote: make(chan struct{}), last: make(chan struct{})}
		for range window {
			c.free <- struct{}{}
		}
		clients = append(clients, c)
		go c.read(t)
		go c.write()
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	killed := 0
	for killed < kills {
		time.Sleep(time.Duration(400+rng.Intn(800)) * time.Millisecond)
		pids := daemonsIn(runtime)
		if len(pids) == 0 {
			continue // the shims are still starting the next one
		}
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		killed++
	}
	for _, c := range clients {
		close(c.stop)
		<-c.wrote
	}
	// Every request answered; then a last ping, after which no reply to an
	// earlier request may come (a second answer would come before it).
	deadline := time.Now().Add(60 * time.Second)
	for i, c := range clients {
		for {
			c.mu.Lock()
			var missing []int
			for id := 0; id < c.sent; id++ {
				if c.replies(id) == 0 {
					missing = append(missing, id)
				}
			}
			c.mu.Unlock()
			if len(missing) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("shim %d: %d requests never answered (%v ...); stderr:\n%s", i, len(missing), missing[:min(len(missing), 10)], c.p.stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		c.p.send(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)
		select {
		case <-c.last:
		case <-time.After(30 * time.Second):
			t.Fatalf("shim %d: no reply to the last ping", i)
		}
	}
	requests, lost, other := 0, 0, 0
	for i, c := range clients {
		c.mu.Lock()
		var twice []string
		for id := 0; id < c.sent; id++ {
			if n := c.replies(id); n != 1 {
				twice = append(twice, fmt.Sprintf("%d (%d results, %d -32004, %d other errors)", id, c.results[id], c.lost[id], c.other[id]))
			}
			lost += c.lost[id]
			other += c.other[id]
		}
		requests += c.sent
		c.mu.Unlock()
		sort.Strings(twice)
		if len(twice) > 0 {
			t.Errorf("shim %d: %d requests answered more than once: %s", i, len(twice), strings.Join(twice[:min(len(twice), 10)], ", "))
		}
	}
	t.Logf("%s: %d kills, %d requests from 4 shims, each answered once: %d with -32004, %d with another error", mode, killed, requests, lost, other)
}
