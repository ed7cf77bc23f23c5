package mcp

import "sync"

// callQueue runs a concurrent connection's tool calls: at most max at once,
// the rest waiting in arrival order. A goroutine that finishes a call takes
// the next waiting one, so there is never more than one goroutine per
// running call, and waiting calls cost only their entry (bounded by
// QueueDepth through admit).
type callQueue struct {
	mu      sync.Mutex
	max     int
	running int
	waiting []*entry
	closed  bool          // no more calls are taken
	idle    chan struct{} // closed once closed and nothing runs or waits
	idled   bool
}

// submit hands an admitted call to the queue: it starts now when a slot is
// free and nobody waits, else it waits its turn. False: the queue is closed
// and the call was not taken.
func (s *registry) submit(e *entry) bool {
	q := &s.calls
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if q.running < q.max && len(q.waiting) == 0 {
		q.running++
		q.mu.Unlock()
		go s.runCalls(e)
		return true
	}
	q.waiting = append(q.waiting, e)
	q.mu.Unlock()
	return true
}

// runCalls runs e, then each waiting call in turn, until none waits. Each
// reply is written and flushed as soon as it is ready.
func (s *registry) runCalls(e *entry) {
	for e != nil {
		s.execute(e)
		s.out.flush()
		e = s.calls.next()
	}
}

// next hands the slot just freed to the first waiting call, or gives it up.
func (q *callQueue) next() *entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiting) > 0 {
		e := q.waiting[0]
		q.waiting[0] = nil
		q.waiting = q.waiting[1:]
		return e
	}
	q.running--
	q.checkIdle()
	return nil
}

// remove takes e out of the waiting calls; false when it is not waiting
// (running, done, or on a FIFO connection).
func (q *callQueue) remove(e *entry) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, w := range q.waiting {
		if w == e {
			copy(q.waiting[i:], q.waiting[i+1:])
			q.waiting[len(q.waiting)-1] = nil
			q.waiting = q.waiting[:len(q.waiting)-1]
			q.checkIdle()
			return true
		}
	}
	return false
}

// close stops taking calls; those taken still run.
func (q *callQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.checkIdle()
}

// closeAndTake stops taking calls and returns those still waiting, which
// will not start: the caller answers them (or not) and releases them.
func (q *callQueue) closeAndTake() []*entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	w := q.waiting
	q.waiting = nil
	q.checkIdle()
	return w
}

// counts returns how many calls run and wait.
func (q *callQueue) counts() (running, waiting int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running, len(q.waiting)
}

func (q *callQueue) checkIdle() {
	if q.closed && q.running == 0 && len(q.waiting) == 0 && !q.idled {
		q.idled = true
		close(q.idle)
	}
}
