package mcp

import (
	"sync"
	"sync/atomic"
)

// fifo is the session's part that keeps request order: until the connection
// turns concurrent, the reader pushes every request (and every reply it
// decides itself) here, and one worker answers them in turn.
type fifo struct {
	queue chan *entry
	// outstanding counts entries queued, running, or not yet written. Only
	// the reader raises it, so when the reader sees zero, no reply is ahead
	// of the frame it holds and it may answer that frame itself.
	outstanding atomic.Int64

	stop       chan struct{} // closed to make the worker finish early
	stopOnce   sync.Once
	workerGone chan struct{} // closed when the worker has ended
}

func (f *fifo) init(depth int) {
	f.queue = make(chan *entry, depth)
	f.stop = make(chan struct{})
	f.workerGone = make(chan struct{})
}

// push queues an entry. It blocks only when the client floods far past
// QueueDepth (backpressure), and gives up once the worker is gone.
func (f *fifo) push(e *entry) {
	f.outstanding.Add(1)
	select {
	case f.queue <- e:
	case <-f.workerGone:
	}
}

// stopWork tells the worker to answer what is queued and end.
func (f *fifo) stopWork() { f.stopOnce.Do(func() { close(f.stop) }) }

// work is the FIFO's worker: one entry at a time, replies in order. Replies
// are buffered and flushed when the queue runs dry or before a call that may
// take time, so pipelined requests share system calls but no reply waits on
// work.
func (s *registry) work() {
	defer s.out.flush()
	q := &s.fifo
	for {
		select {
		case e, ok := <-q.queue:
			if !ok {
				return
			}
			s.handle(e)
		case <-q.stop:
			// Draining or the peer is gone: answer what is already queued
			// (execute refuses to start anything new), then end.
			for {
				select {
				case e, ok := <-q.queue:
					if !ok {
						return
					}
					s.handle(e)
				default:
					return
				}
			}
		}
	}
}

func (s *registry) handle(e *entry) {
	if e.answer != nil {
		s.out.write(e.answer, e.key)
	} else {
		s.execute(e)
	}
	// The reply is in the writer's buffer, ahead of anything the reader
	// writes from now on: the reader may answer inline (and, once the
	// connection is initialized, turn concurrent). Counting it down before
	// the flush means a client that has read the reply finds it so.
	s.fifo.outstanding.Add(-1)
	if len(s.fifo.queue) == 0 {
		s.out.flush()
	}
}
