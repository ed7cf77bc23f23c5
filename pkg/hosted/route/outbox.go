package route

import "sync"

// outbox queues frames for one peer and writes them, in order, from its own
// goroutine: the router never blocks on a slow client or an upstream that
// stops reading its stdin. A peer that lets more than limit bytes pile up
// is given up (fail is called once, and nothing more is written).
type outbox struct {
	mu     sync.Mutex
	q      [][]byte
	bytes  int
	limit  int
	closed bool
	wake   chan struct{}
	write  func([]byte) error
	fail   func(error)
	done   chan struct{}
}

func newOutbox(limit int, write func([]byte) error, fail func(error)) *outbox {
	o := &outbox{limit: limit, write: write, fail: fail, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go o.run()
	return o
}

// push queues a frame; false when the outbox is closed or overflowed.
func (o *outbox) push(frame []byte) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return false
	}
	o.q = append(o.q, frame)
	o.bytes += len(frame)
	over := o.bytes > o.limit
	if over {
		o.closed = true
		o.q = nil
	}
	o.mu.Unlock()
	if over {
		go o.fail(errOverflow)
		return false
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
	return true
}

// close stops the outbox once what is queued is written.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbox) run() {
	defer close(o.done)
	for range o.wake {
		for {
			o.mu.Lock()
			batch := o.q
			o.q = nil
			o.bytes = 0
			closed := o.closed
			o.mu.Unlock()
			if len(batch) == 0 {
				if closed {
					return
				}
				break
			}
			for _, f := range batch {
				if err := o.write(f); err != nil {
					o.mu.Lock()
					o.closed = true
					o.q = nil
					o.mu.Unlock()
					o.fail(err)
					return
				}
			}
		}
	}
}
