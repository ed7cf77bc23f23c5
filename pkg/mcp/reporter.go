package mcp

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// progressInterval is the least time between two progress notifications of
// one call: at most 4 a second (docs/protocol.md).
const progressInterval = 250 * time.Millisecond

// reporter is a call's tool.Reporter. Progress is coalesced (the latest value
// wins), strictly increasing, and never sent once finish has been called;
// finish is called before the response is written, and sends hold the same
// lock, so no progress can follow the response.
type reporter struct {
	s     *registry
	re    string          // the key of the call's request: its side messages belong to it
	token json.RawMessage // nil: the client asked for no progress
	// meta is a modern call's _meta: its log level, not the session's,
	// decides which log messages are sent (none when it set none).
	meta *reqMeta

	mu      sync.Mutex
	done    bool
	sent    bool
	last    float64
	lastAt  time.Time
	pending *progressParams
	timer   *time.Timer
}

type progressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         float64         `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

func newReporter(s *registry, re string, token json.RawMessage, meta *reqMeta) *reporter {
	if len(token) == 0 || string(token) == "null" {
		token = nil
	}
	return &reporter{s: s, re: re, token: token, meta: meta}
}

func (r *reporter) Progress(progress, total float64, message string) {
	if r == nil || r.token == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || (r.sent && progress <= r.last) || (r.pending != nil && progress <= r.pending.Progress) {
		return
	}
	p := &progressParams{ProgressToken: r.token, Progress: progress, Total: total, Message: message}
	wait := progressInterval - time.Since(r.lastAt)
	if !r.sent || wait <= 0 {
		r.send(p)
		return
	}
	r.pending = p
	if r.timer == nil {
		r.timer = time.AfterFunc(wait, r.fire)
	}
}

func (r *reporter) fire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timer = nil
	if r.done || r.pending == nil {
		return
	}
	p := r.pending
	r.pending = nil
	if r.sent && p.Progress <= r.last {
		return
	}
	r.send(p)
}

// send writes one notification; r.mu is held. Anything pending is older and
// smaller, so it is superseded.
func (r *reporter) send(p *progressParams) {
	r.pending = nil
	r.sent, r.last, r.lastAt = true, p.Progress, time.Now()
	r.s.notifyClient("notifications/progress", p, r.re)
}

func (r *reporter) Log(level tool.Level, logger string, data any) {
	if r == nil {
		return
	}
	if r.meta != nil {
		if !r.meta.logs || level < r.meta.logLevel {
			return // the request asked for no log messages, or not these
		}
	} else if int32(level) < r.s.nego.logLevel.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	params := map[string]any{"level": level.String(), "data": data}
	if logger != "" {
		params["logger"] = logger
	}
	r.s.notifyClient("notifications/message", params, r.re)
}

// finish stops all further side messages; pending progress is dropped.
func (r *reporter) finish() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	r.pending = nil
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}
