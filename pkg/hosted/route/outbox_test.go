package route

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// fickle takes some frames at once and refuses others, at random, and
// records the order frames reached it in, whichever way they came.
type fickle struct {
	mu      sync.Mutex
	got     []string
	tried   int
	taken   int
	rng     *rand.Rand
	busy    bool // set while a call is under way: two at once is a bug
	overlap bool
}

func (p *fickle) enter() {
	p.mu.Lock()
	if p.busy {
		p.overlap = true
	}
	p.busy = true
	p.mu.Unlock()
}

func (p *fickle) leave() {
	p.mu.Lock()
	p.busy = false
	p.mu.Unlock()
}

func (p *fickle) Write(f []byte, _ string) error {
	p.enter()
	defer p.leave()
	time.Sleep(time.Duration(p.rand(50)) * time.Microsecond)
	p.mu.Lock()
	p.got = append(p.got, string(f))
	p.mu.Unlock()
	return nil
}

func (p *fickle) TryWrite(f []byte, _ string) (bool, error) {
	p.enter()
	defer p.leave()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tried++
	if p.rng.IntN(3) == 0 {
		return false, nil
	}
	p.taken++
	p.got = append(p.got, string(f))
	return true, nil
}

func (p *fickle) rand(n int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rng.IntN(n)
}

// Frames queued by several goroutines, each under a lock as the router
// queues them, reach the peer exactly once and in the order they were
// queued, whether the queuing goroutine wrote them or the outbox's own did,
// and never two writes at once.
func TestOutboxKeepsOrderAcrossBothWaysOut(t *testing.T) {
	p := &fickle{rng: rand.New(rand.NewPCG(1, 2))}
	o := newOutbox(1<<30, p, func(err error) { t.Errorf("fail: %v", err) })
	var mu sync.Mutex // the router's lock
	var order []string
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				f := fmt.Sprintf("g%d-%d", g, i)
				mu.Lock()
				order = append(order, f)
				mine := o.push([]byte(f), "")
				mu.Unlock()
				if mine {
					o.drain()
				}
			}
		}()
	}
	wg.Wait()
	o.close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		n := len(p.got)
		p.mu.Unlock()
		if n == len(order) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.got) != len(order) {
		t.Fatalf("%d frames reached the peer, %d were queued", len(p.got), len(order))
	}
	for i := range order {
		if p.got[i] != order[i] {
			t.Fatalf("frame %d: got %s, queued %s", i, p.got[i], order[i])
		}
	}
	if p.overlap {
		t.Fatal("two writes ran at once")
	}
	if p.taken == 0 || p.taken == len(order) {
		t.Fatalf("%d of %d frames were taken at once: the test did not take both ways", p.taken, len(order))
	}
}

// stuck never takes a frame at once, and its Write waits until released.
type stuck struct {
	entered chan struct{} // a Write began
	release chan struct{}
	wrote   chan string
}

func (s *stuck) Write(f []byte, _ string) error {
	s.entered <- struct{}{}
	<-s.release
	s.wrote <- string(f)
	return nil
}

func (s *stuck) TryWrite([]byte, string) (bool, error) { return false, nil }

// A peer that does not read never holds up the goroutine that queued its
// frames: push and drain return while its Write waits, and what piles up
// past the limit gives the peer up.
func TestOutboxNeverWaitsOnAStuckPeer(t *testing.T) {
	s := &stuck{entered: make(chan struct{}, 8), release: make(chan struct{}), wrote: make(chan string, 8)}
	failed := make(chan error, 1)
	o := newOutbox(10, s, func(err error) { failed <- err })
	returned := make(chan struct{})
	go func() {
		for _, f := range []string{"one", "two"} {
			if o.push(exact(f), "") {
				o.drain()
			}
		}
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("push and drain waited on a peer that does not read")
	}
	// The outbox's goroutine has taken "one" and waits in Write: it counts
	// against the limit with what is queued.
	select {
	case <-s.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the outbox's goroutine never wrote")
	}
	if o.push(exact("three-and-more"), "") {
		t.Fatal("the caller was given an outbox its goroutine owns")
	}
	select {
	case err := <-failed:
		if !errors.Is(err, errOverflow) {
			t.Fatalf("fail: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a peer past its limit was not given up")
	}
	close(s.release)
	select {
	case got := <-s.wrote:
		if got != "one" {
			t.Fatalf("first frame written %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the frame under way was never written")
	}
}

// exact is s as a frame whose capacity is its length (what the outbox
// counts).
func exact(s string) []byte { return append(make([]byte, 0, len(s)), s...) }

// brokenTry fails its first TryWrite.
type brokenTry struct{ writes int }

func (b *brokenTry) Write([]byte, string) error { b.writes++; return nil }
func (b *brokenTry) TryWrite([]byte, string) (bool, error) {
	return false, errors.New("broken pipe")
}

// A write that fails in the queuing goroutine gives the peer up once, and
// nothing more is written or queued.
func TestOutboxFailedTryGivesThePeerUp(t *testing.T) {
	b := &brokenTry{}
	var fails []error
	o := newOutbox(1<<20, b, func(err error) { fails = append(fails, err) })
	if !o.push([]byte("a"), "") {
		t.Fatal("an idle outbox was not given to the caller")
	}
	o.drain()
	if len(fails) != 1 || fails[0].Error() != "broken pipe" {
		t.Fatalf("fails %v", fails)
	}
	if o.push([]byte("b"), "") {
		t.Fatal("a failed outbox took a frame")
	}
	if b.writes != 0 {
		t.Fatalf("%d writes after the failure", b.writes)
	}
}

// gatedPeer takes nothing at once, and each Write waits for the test to
// let it through; it says when a Write begins.
type gatedPeer struct {
	entered chan struct{}
	gate    chan struct{}
	mu      sync.Mutex
	written int
}

func (p *gatedPeer) Write(f []byte, _ string) error {
	p.entered <- struct{}{}
	<-p.gate
	p.mu.Lock()
	p.written++
	p.mu.Unlock()
	return nil
}

func (*gatedPeer) TryWrite([]byte, string) (bool, error) { return false, nil }

// A peer that stops reading is given up once the frames the outbox really
// holds pass its limit: those queued and those its goroutine has taken to
// write alike, each by its capacity. Counting only the queue let a flood
// pile up to twice the limit behind a batch being written.
func TestOutboxCountsWhatItHolds(t *testing.T) {
	const limit, size = 64 << 10, 1 << 10
	p := &gatedPeer{entered: make(chan struct{}, 1), gate: make(chan struct{})}
	failed := make(chan error, 1)
	o := newOutbox(limit, p, func(err error) { failed <- err })
	t.Cleanup(func() { close(p.gate) })
	pushed := 0
	push := func() bool {
		if o.push(make([]byte, 10, size), "") { // a frame holds its capacity
			o.drain()
		}
		pushed++
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.gaveUp
	}
	// The first frame is taken by the goroutine, whose Write waits; sixty
	// more queue behind it.
	push()
	<-p.entered
	for range 60 {
		push()
	}
	if h := o.held(); h != 61*size {
		t.Fatalf("held %d, want %d: each frame by its capacity", h, 61*size)
	}
	// Let the first through: the goroutine takes the sixty and waits on
	// the first of them. The flood goes on until the peer is given up.
	p.gate <- struct{}{}
	<-p.entered
	for !push() {
		if pushed > 4*limit/size {
			t.Fatalf("%d frames of %d bytes pushed and the peer not given up", pushed, size)
		}
		if h := o.held(); h > limit {
			t.Fatalf("held %d over the limit %d", h, limit)
		}
	}
	p.mu.Lock()
	written := p.written
	p.mu.Unlock()
	if held := (pushed - written) * size; held > limit+size {
		t.Fatalf("given up holding %d bytes (%d frames pushed, %d written), limit %d", held, pushed, written, limit)
	}
	if err := <-failed; !errors.Is(err, errOverflow) {
		t.Fatalf("fail: %v", err)
	}
}
