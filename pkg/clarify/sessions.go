package clarify

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"
)

// SessionTTL is how long a session lives without activity; a later turn gets
// SESSION_EXPIRED.
const SessionTTL = 30 * time.Minute

// Tombstones of expired or completed sessions are kept this long (and at
// most maxTombstones of them), so a late turn hears SESSION_EXPIRED rather
// than SESSION_NOT_FOUND.
const (
	tombstoneTTL  = 24 * time.Hour
	maxTombstones = 10000
)

// session is one clarification in progress, in daemon memory only: it is
// lost when the daemon restarts. Any connection holding its
// id may continue it.
type session struct {
	mu        sync.Mutex
	id        string
	root      string
	intention string
	context   string
	forceADR  bool
	plan      Plan
	asked     []string       // ids of the questions shown, in order
	answers   map[string]any // normalised answers by question id
	fallback  bool           // the LLM failed and the deterministic planner took over
	lastUsed  time.Time      // guarded by sessions.mu
}

type tombstone struct {
	at        time.Time
	completed bool
}

type sessions struct {
	mu    sync.Mutex
	now   func() time.Time
	live  map[string]*session
	tombs map[string]tombstone
}

func newSessions(now func() time.Time) *sessions {
	return &sessions{now: now, live: map[string]*session{}, tombs: map[string]tombstone{}}
}

func (s *sessions) add(sess *session) {
	var b [12]byte
	rand.Read(b[:])
	sess.id = "sess-" + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	sess.lastUsed = s.now()
	s.live[sess.id] = sess
}

// get returns a live session and marks it used, or the Preflights error for an
// expired, completed or unknown id.
func (s *sessions) get(id string) (*session, *envelopeError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked()
	if sess := s.live[id]; sess != nil {
		sess.lastUsed = s.now()
		return sess, nil
	}
	if t, ok := s.tombs[id]; ok {
		if t.completed {
			return nil, &envelopeError{code: codeSessionNotFound, message: "Session " + id + " is already completed",
				details: map[string]any{"session_id": id}, recoveryHint: "Start new session"}
		}
		return nil, &envelopeError{code: codeSessionExpired, message: "Session " + id + " expired after 30 minutes without activity",
			details: map[string]any{"session_id": id}, recoveryHint: "Restart clarification"}
	}
	return nil, &envelopeError{code: codeSessionNotFound, message: "Unknown session_id " + id + " (sessions live in the daemon's memory and end when it restarts)",
		details: map[string]any{"session_id": id}, recoveryHint: "Start new session"}
}

// finish ends a completed session.
func (s *sessions) finish(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
	s.tombs[id] = tombstone{at: s.now(), completed: true}
}

// sweepLocked moves sessions idle past the TTL to tombstones and forgets old
// tombstones.
func (s *sessions) sweepLocked() {
	now := s.now()
	for id, sess := range s.live {
		if now.Sub(sess.lastUsed) > SessionTTL {
			delete(s.live, id)
			s.tombs[id] = tombstone{at: now}
		}
	}
	for id, t := range s.tombs {
		if now.Sub(t.at) > tombstoneTTL || len(s.tombs) > maxTombstones {
			delete(s.tombs, id)
		}
	}
}
