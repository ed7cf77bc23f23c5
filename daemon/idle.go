package daemon

import (
	"sync"
	"time"
)

// idleTimer fires once the daemon has had no connection for its timeout.
// An autostarted daemon uses it so it does not outlive the editors that
// started it; a zero timeout never fires.
type idleTimer struct {
	timeout time.Duration
	mu      sync.Mutex
	active  int
	timer   *time.Timer
	fired   chan struct{}
}

func newIdleTimer(timeout time.Duration) *idleTimer {
	t := &idleTimer{timeout: timeout, fired: make(chan struct{})}
	if timeout > 0 {
		t.timer = time.AfterFunc(timeout, t.fire)
	}
	return t
}

func (t *idleTimer) fire() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.active == 0 {
		select {
		case <-t.fired:
		default:
			close(t.fired)
		}
	}
}

func (t *idleTimer) connected() {
	if t.timeout <= 0 {
		return
	}
	t.mu.Lock()
	t.active++
	t.timer.Stop()
	t.mu.Unlock()
}

func (t *idleTimer) disconnected() {
	if t.timeout <= 0 {
		return
	}
	t.mu.Lock()
	t.active--
	if t.active == 0 {
		t.timer.Reset(t.timeout)
	}
	t.mu.Unlock()
}

// expired is closed when the timeout passes with no connection.
func (t *idleTimer) expired() <-chan struct{} { return t.fired }
