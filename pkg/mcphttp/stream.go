package mcphttp

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// stream is one SSE stream of a 2025 session: a POST's (the frames of one
// request, ending with its reply) or the session's own (GET). It keeps its
// events so that a client cut off resumes with Last-Event-ID, within the
// bytes its session may keep (legacySession.trim): what was dropped cannot
// be replayed, and a finished stream dropped whole answers its request
// with an error that says so (lost).
type stream struct {
	id  int64
	own bool       // the session's own stream (GET), never finished
	req jsonrpc.ID // the request a POST's stream answers
	// plain: the POST is answered with its reply alone, as JSON (the
	// client takes no SSE); requests about it go on the session's stream.
	plain bool

	mu      sync.Mutex
	events  [][]byte // event n (from 1) is events[n-1-dropped]
	dropped int64    // events dropped from the front
	size    int64    // bytes of events kept
	done    bool     // the reply was sent: nothing follows
	lost    bool     // finished, and its events dropped: its reply is no longer kept
	wake    chan struct{}
	// followers: responses writing this stream now; what they have not
	// written yet is never dropped.
	followers int
	// attached: a GET follows the session's own stream now (one at a time).
	attached bool
	// sent is the last event written to a follower (own stream): a new GET
	// starts after it, so it hears what was sent while none was open.
	sent int64
}

func (s *stream) delivered() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sent
}

func (s *stream) markSent(seq int64) {
	s.mu.Lock()
	if seq > s.sent {
		s.sent = seq
	}
	s.mu.Unlock()
}

// maxKept bounds the events the session's own stream keeps for a client
// that resumes it: list changes and roots/list requests, a handful a day.
const maxKept = 256

func newStream(id int64, own bool) *stream {
	return &stream{id: id, own: own, wake: make(chan struct{})}
}

// add appends an event; final marks the reply that ends a POST's stream.
// It returns by how many bytes what the stream keeps changed.
func (s *stream) add(data []byte, final bool) (delta int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return 0
	}
	s.events = append(s.events, data)
	delta = int64(len(data))
	if s.own && len(s.events) > maxKept {
		delta -= s.dropLocked(int64(len(s.events) - maxKept))
	}
	if final {
		s.done = true
	}
	s.size += delta
	close(s.wake)
	s.wake = make(chan struct{})
	return delta
}

// dropLocked drops the first n events kept and returns their bytes (the
// caller adjusts size).
func (s *stream) dropLocked(n int64) (freed int64) {
	for _, ev := range s.events[:n] {
		freed += int64(len(ev))
	}
	s.events = append([][]byte(nil), s.events[n:]...)
	s.dropped += n
	return freed
}

// shed drops what no follower still has to write: while one follows, the
// events it has written; otherwise all, and a finished stream is lost. It
// returns the bytes freed.
func (s *stream) shed() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := int64(len(s.events))
	if s.followers > 0 {
		n = s.sent - s.dropped
	}
	if n <= 0 {
		return 0
	}
	if n > int64(len(s.events)) {
		n = int64(len(s.events))
	}
	freed := s.dropLocked(n)
	s.size -= freed
	if s.done && len(s.events) == 0 {
		s.lost = true
	}
	return freed
}

// forget is shed for a stream its session no longer keeps at all: it
// returns every byte counted; what a follower still writes is its own.
func (s *stream) forget() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.size
	s.size = 0
	if s.followers == 0 {
		s.events = nil
	}
	return n
}

// following counts a response writing the stream (+1) or done with it (-1).
func (s *stream) following(n int) {
	s.mu.Lock()
	s.followers += n
	s.mu.Unlock()
}

// after returns the events after seq (their first number), whether the
// stream is finished, and a channel closed at the next change. A lost
// stream's last event, its reply, is an error that says it is no longer
// kept (the request was answered, but the answer cannot be replayed).
func (s *stream) after(seq int64) (evs [][]byte, first int64, done bool, wake <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost {
		if seq >= s.dropped {
			return nil, seq + 1, true, s.wake
		}
		return [][]byte{jsonrpc.ErrorFrame(s.req, &jsonrpc.Error{Code: jsonrpc.CodeLost,
			Message: "the reply to this request is no longer kept: a session keeps its latest replies only up to a bound; send the request again",
			Data:    map[string]string{"code": "REPLY_NOT_KEPT"}})}, s.dropped, true, s.wake
	}
	from := seq + 1
	if from <= s.dropped {
		from = s.dropped + 1 // what was dropped cannot be replayed
	}
	i := from - 1 - s.dropped
	if i < int64(len(s.events)) {
		evs = s.events[i:]
	}
	return evs, from, s.done, s.wake
}

// eventID names event seq of the stream: "STREAM-SEQ".
func (s *stream) eventID(seq int64) string {
	return strconv.FormatInt(s.id, 10) + "-" + strconv.FormatInt(seq, 10)
}

// parseEventID reads a Last-Event-ID.
func parseEventID(v string) (streamID, seq int64, ok bool) {
	a, b, found := strings.Cut(strings.TrimSpace(v), "-")
	if !found {
		return 0, 0, false
	}
	streamID, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	return streamID, seq, err1 == nil && err2 == nil && streamID >= 0 && seq >= 0
}

// retryMs is the reconnection delay SSE streams announce.
const retryMs = 1000

// sseWriter writes SSE events to an HTTP response.
type sseWriter struct {
	w  *bufio.Writer
	fl http.Flusher
}

func startSSE(w http.ResponseWriter, header func(http.Header)) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	if header != nil {
		header(h)
	}
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	return &sseWriter{w: bufio.NewWriterSize(w, 8<<10), fl: fl}
}

// event writes one event (id "" for none); data is one JSON frame, which
// never holds a raw newline.
func (s *sseWriter) event(id string, data []byte) {
	if id != "" {
		s.w.WriteString("id: " + id + "\n")
	}
	s.w.WriteString("event: message\ndata: ")
	s.w.Write(data)
	s.w.WriteString("\n\n")
}

// prime writes the event that makes a stream resumable before anything is
// sent on it: an id, the reconnection delay, and no data.
func (s *sseWriter) prime(id string) {
	s.w.WriteString("id: " + id + "\nretry: " + strconv.Itoa(retryMs) + "\ndata: \n\n")
}

func (s *sseWriter) flush() error {
	err := s.w.Flush()
	if s.fl != nil {
		s.fl.Flush()
	}
	return err
}

// follow writes a stream's events after seq until it is finished (true) or
// ctx ends or a write fails (false).
func (s *sseWriter) follow(ctx context.Context, st *stream, seq int64) bool {
	for {
		evs, first, done, wake := st.after(seq)
		for i, ev := range evs {
			s.event(st.eventID(first+int64(i)), ev)
		}
		if len(evs) > 0 {
			seq = first + int64(len(evs)) - 1
			if s.flush() != nil {
				return false
			}
			st.markSent(seq)
		}
		if done {
			return true
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		}
	}
}
