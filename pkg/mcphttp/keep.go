package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/sessionkeep"
)

// A 2025 session outlives its daemon (docs/protocol.md, "Streamable HTTP";
// decision 0027): what it negotiated is kept on disk (Options.Keep) from its
// initialize on, and a daemon that gets a request naming an id it does not
// know looks for the record. Found, and used within SessionIdle, the
// session is opened again under that id and initialized as the client once
// initialized it (its initialize and logging/setLevel replayed, their
// replies dropped), then serves the request: the client carries on with no
// code of its own. What was in flight when the daemon died is lost (its
// connection dropped), as are the streams kept for resumption. A DELETE or
// the idle expiry removes the record; a daemon that drains keeps it, so a
// restart or an upgrade keeps HTTP clients going.

// kept is a session's record on disk, as last written.
type kept struct {
	mu      sync.Mutex
	rec     sessionkeep.Record
	touched time.Time // when its Used was last moved
}

// touchEvery bounds how often a session's use is written down: the idle
// rule counts in tens of minutes.
const touchEvery = time.Minute

// keepNew writes the record of a session just opened by an initialize with
// params.
func (h *Handler) keepNew(s *legacySession, params json.RawMessage) {
	if h.opts.Keep == nil {
		return
	}
	now := time.Now()
	k := &kept{rec: sessionkeep.Record{ID: s.id, Path: s.path, Initialize: append(json.RawMessage(nil), params...), Created: now}, touched: now}
	if err := h.opts.Keep.Save(k.rec); err != nil {
		h.log.Warn("an HTTP session's record could not be kept: it ends with this daemon", zap.String("session", s.id), zap.Error(err))
		return
	}
	s.mu.Lock()
	s.kept = k
	s.mu.Unlock()
}

// keepLevel writes down the level of a logging/setLevel the session was
// sent, so a session taken back logs as it did.
func (h *Handler) keepLevel(s *legacySession, params json.RawMessage) {
	k := s.record()
	if k == nil {
		return
	}
	var p struct {
		Level string `json:"level"`
	}
	if json.Unmarshal(params, &p) != nil || p.Level == "" {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.rec.LogLevel == p.Level {
		return
	}
	k.rec.LogLevel = p.Level
	k.touched = time.Now()
	if err := h.opts.Keep.Save(k.rec); err != nil {
		h.log.Warn("an HTTP session's log level could not be kept", zap.String("session", s.id), zap.Error(err))
	}
}

func (s *legacySession) record() *kept {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kept
}

// keepUsed moves the record's time of use to now, at most every touchEvery
// unless forced.
func (h *Handler) keepUsed(s *legacySession, force bool) {
	k := s.record()
	if k == nil {
		return
	}
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if !force && now.Sub(k.touched) < touchEvery {
		return
	}
	k.touched = now
	_ = h.opts.Keep.Touch(s.id, now)
}

// keepLive, at each expiry tick, writes down that the sessions still open
// were used (a stream followed for hours is use) and removes the records
// nobody took back in time.
func (h *Handler) keepLive(live []*legacySession, now time.Time) {
	if h.opts.Keep == nil {
		return
	}
	for _, s := range live {
		if u := s.idleSince(); u.IsZero() || u.After(now.Add(-h.opts.SessionIdle/4-touchEvery)) {
			h.keepUsed(s, true)
		}
	}
	h.opts.Keep.Sweep(h.opts.SessionIdle, now)
}

// forget removes the record of a session that ended, unless it ended
// because the handler closed (a daemon draining: the next one takes it
// back).
func (h *Handler) forget(s *legacySession) {
	if s.record() == nil || h.base.Err() != nil {
		return
	}
	if err := h.opts.Keep.Remove(s.id); err != nil {
		h.log.Warn("an ended HTTP session's record could not be removed", zap.String("session", s.id), zap.Error(err))
	}
}

// forgetKept removes the record of a session no daemon took back, when it
// was opened at path: a DELETE of it.
func (h *Handler) forgetKept(id, path string) bool {
	if h.opts.Keep == nil || !sessionkeep.ValidID(id) {
		return false
	}
	rec, err := h.opts.Keep.Load(id)
	if err != nil || rec.Path != path {
		return false
	}
	return h.opts.Keep.Remove(id) == nil
}

// takeBackOnce takes back the session id kept at path; concurrent requests
// naming it wait for the one taking it back.
func (h *Handler) takeBackOnce(ctx context.Context, id, path string) *legacySession {
	if h.opts.Keep == nil || !sessionkeep.ValidID(id) {
		return nil
	}
	for {
		h.mu.Lock()
		if s := h.sessions[id]; s != nil {
			h.mu.Unlock()
			return s
		}
		if h.closed {
			h.mu.Unlock()
			return nil
		}
		if wait := h.restoring[id]; wait != nil {
			h.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil
			}
		}
		done := make(chan struct{})
		h.restoring[id] = done
		h.mu.Unlock()
		s := h.takeBack(ctx, id, path)
		h.mu.Lock()
		delete(h.restoring, id)
		h.mu.Unlock()
		close(done)
		return s
	}
}

// takeBack opens the kept session id again and initializes it as its
// client did; nil when there is no such record (or it expired, or is of
// another endpoint, or the session could not be initialized).
func (h *Handler) takeBack(ctx context.Context, id, path string) *legacySession {
	rec, err := h.opts.Keep.Load(id)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			h.log.Warn("an HTTP session's record could not be read", zap.String("session", id), zap.Error(err))
		}
		return nil
	}
	if rec.Path != path {
		return nil // its own endpoint takes it back
	}
	if time.Since(rec.Used) > h.opts.SessionIdle {
		_ = h.opts.Keep.Remove(id)
		return nil
	}
	var run json.RawMessage
	if h.opts.Hosted != nil {
		if run, err = h.opts.Hosted(path); err != nil {
			return nil
		}
	}
	s := newLegacySession()
	s.id, s.path = rec.ID, rec.Path
	// Stream ids unlike any the earlier daemon gave: a client resuming one
	// of those must not be handed another request's events.
	s.nextID = time.Now().UnixNano()
	if e := h.start(s, run, false); e != nil {
		h.log.Info("an HTTP session was not taken back", zap.String("session", id), zap.String("why", e.Message))
		return nil
	}
	ok := h.replay(ctx, s, "initialize", rec.Initialize)
	if ok {
		ok = s.hand(ctx, nil, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	if ok && rec.LogLevel != "" {
		level, _ := json.Marshal(map[string]string{"level": rec.LogLevel})
		ok = h.replay(ctx, s, "logging/setLevel", level)
	}
	if !ok {
		s.hangUp()
		return nil
	}
	s.mu.Lock()
	s.kept = &kept{rec: rec}
	s.mu.Unlock()
	h.mu.Lock()
	h.sessions[s.id] = s
	h.mu.Unlock()
	h.keepUsed(s, true)
	h.log.Info("took back an HTTP session an earlier daemon opened", zap.String("session", id), zap.String("path", path))
	return s
}

// replay sends the session a request of its client's as the client sent it
// once and waits for the reply, which is dropped: false when it was an
// error or never came.
func (h *Handler) replay(ctx context.Context, s *legacySession, method string, params json.RawMessage) bool {
	frame, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "hearth-taken-back-" + method, "method": method, "params": params})
	if err != nil {
		return false
	}
	msg, perr := jsonrpc.Parse(frame)
	if perr != nil {
		return false
	}
	st := s.openStream(msg.ID.Key(), msg.ID, false)
	if st == nil || !s.hand(ctx, msg, frame) {
		return false
	}
	defer func() {
		// The reply was the daemon's own: no client resumes it.
		s.mu.Lock()
		delete(s.open, msg.ID.Key())
		delete(s.streams, st.id)
		for i, id := range s.order {
			if id == st.id {
				s.order = append(s.order[:i], s.order[i+1:]...)
				break
			}
		}
		s.count(-st.forget())
		s.mu.Unlock()
	}()
	for {
		evs, _, done, wake := st.after(0)
		if done {
			if len(evs) == 0 {
				return false
			}
			e, ok := envelope.Scan(evs[len(evs)-1])
			return ok && e.Kind() == envelope.Response && !isError(evs[len(evs)-1])
		}
		select {
		case <-wake:
		case <-s.ended:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func isError(reply []byte) bool {
	m, err := jsonrpc.Parse(reply)
	return err != nil || m.Error != nil
}

// last is the number of the stream's latest event (0: none yet).
func (s *stream) last() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped + int64(len(s.events))
}
