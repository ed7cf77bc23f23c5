package mcp

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// lifecycle is the session's part that ends it: a drain (the daemon stops:
// stop reading, refuse what has not started, let running calls finish) or a
// hang-up (the peer is gone: cancel everything, write nothing more). It
// owns the context every call derives from.
type lifecycle struct {
	draining atomic.Bool
	hangOnce sync.Once
	hungUp   chan struct{} // closed when the peer is gone
	goneWhy  error         // set before hungUp is closed

	base      context.Context // parent of every call; cancelled when the session gives up
	cancelAll context.CancelFunc
}

func (l *lifecycle) init() {
	l.base, l.cancelAll = context.WithCancel(context.Background())
	l.hungUp = make(chan struct{})
}

// gone returns why the peer is gone, nil while it is not.
func (l *lifecycle) gone() error {
	select {
	case <-l.hungUp:
		return l.goneWhy
	default:
		return nil
	}
}

// watch turns ctx cancellation into a drain and Conn.Gone into a hang-up.
func (s *session) watch(ctx context.Context, end <-chan struct{}) {
	select {
	case <-end:
		return
	case <-s.life.hungUp:
		return
	case <-s.conn.Gone:
		s.clientGone()
		return
	case <-ctx.Done():
	}
	s.drain()
	t := time.NewTimer(s.srv.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-end:
	case <-s.life.hungUp:
	case <-s.conn.Gone:
		s.clientGone()
	case <-t.C:
		s.log.Warn("drain timeout: cancelling the calls still running")
		s.life.cancelAll()
	}
}

// shuttingDownMessage is what a request refused by a drain is told.
const shuttingDownMessage = "the daemon is shutting down; the request was not run and may be retried"

func (s *session) shuttingDown(id jsonrpc.ID) []byte {
	s.srv.errors.Add(1)
	return jsonrpc.ErrorFrame(id, &jsonrpc.Error{Code: jsonrpc.CodeShuttingDown, Message: shuttingDownMessage})
}

// drain stops reading: each dispatcher stops taking new work (the
// registry refuses calls waiting for a slot now and lets running ones
// finish; watch bounds them).
func (s *session) drain() {
	s.life.draining.Store(true)
	for _, d := range s.dispatchers() {
		d.Drain()
	}
	s.stopReading()
}

// clientGone ends the session because the transport says the peer has gone
// away completely.
func (s *session) clientGone() {
	s.log.Info("the client went away; cancelling its calls")
	s.hangUp(ErrClientGone)
}

// hangUp ends the session because the peer is gone: nothing more is written,
// every call is cancelled (waiting ones never start, running ones see their
// context cancelled), reading stops and the dispatchers are told.
func (s *session) hangUp(why error) {
	s.life.hangOnce.Do(func() {
		s.out.silence()
		s.life.goneWhy = why
		close(s.life.hungUp)
		s.life.cancelAll()
		s.stopReading()
		for _, d := range s.dispatchers() {
			d.HangUp()
		}
	})
}

func (s *session) stopReading() {
	if s.conn.CloseRead != nil {
		_ = s.conn.CloseRead()
	}
}
