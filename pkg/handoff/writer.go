//go:build linux

package handoff

import (
	"bytes"

	"github.com/hearth-mcp/hearth/pkg/envelope"
)

// Writer writes the session's frames to the client's stdout (the daemon's
// side) so that, whatever instant the daemon dies at, the client receives
// every byte written exactly once and only whole lines: frames go out in
// batches of whole frames, at most Limit bytes, each put whole into the
// staging pipe and then moved from it into stdout (Outlet); the Tracker
// records each batch's replies before it is staged, and that it was staged
// (decision 0020, "Exactly one answer"). A longer frame is handed to the
// shim (Big), which writes it itself.
type Writer struct {
	Out   Outlet
	Limit int // the largest batch: what the staging pipe holds
	T     *Tracker
	// Big has the shim write one frame (without its newline), answering
	// the registration seq (0: none), and returns once it is written.
	Big func(seq uint64, line []byte) error
	// Swallow is the id text of a replayed initialize: its reply is
	// dropped (nil: none).
	Swallow []byte

	part  []byte // the start of a frame whose newline has not come yet
	batch []byte
	ids   [][2]int // id spans in batch of the replies it holds
	err   error
}

// Outlet is the way a batch reaches the client's stdout: first whole into
// a pipe the shim can read (the staging pipe), then moved from there into
// stdout. A moved byte leaves the staging pipe as it enters stdout, so a
// daemon killed at any instant leaves each byte of the batch in exactly
// one of the two; the shim writes on what is left (StagePipe).
type Outlet interface {
	// Stage puts batch into the empty staging pipe, whole or not at all.
	Stage(batch []byte) error
	// Move moves the n staged bytes into stdout, waiting for room.
	Move(n int) error
}

// MaxBatch bounds a batch (and a frame the daemon writes itself): the
// staging pipe's default capacity.
const MaxBatch = 64 << 10

// Write takes whole or partial frames (the session's buffered writer
// flushes into it) and writes every whole one before it returns.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.part = append(w.part, p...)
			break
		}
		line := p[:i+1]
		if len(w.part) > 0 {
			w.part = append(w.part, line...)
			line = w.part
		}
		if err := w.frame(line); err != nil {
			w.err = err
			return 0, err
		}
		w.part = w.part[:0]
		p = p[i+1:]
	}
	if err := w.flush(); err != nil {
		w.err = err
		return 0, err
	}
	if cap(w.part) > 64<<10 && len(w.part) == 0 {
		w.part = nil // a big frame went through: keep no big buffer
	}
	return n, nil
}

// frame queues one line (newline included), or has the shim write it.
func (w *Writer) frame(line []byte) error {
	from, to, reply := ResponseID(line[:len(line)-1])
	id := line[from:to]
	if reply && w.Swallow != nil && bytes.Equal(id, w.Swallow) {
		w.T.Answered(id)
		w.Swallow = nil
		return nil
	}
	if len(line) > w.Limit {
		if err := w.flush(); err != nil {
			return err
		}
		var seq uint64
		if reply {
			seq = w.T.Seq(id)
		}
		if err := w.Big(seq, line[:len(line)-1]); err != nil {
			return err
		}
		if reply {
			w.T.Answered(id)
		}
		return nil
	}
	if len(w.batch)+len(line) > w.Limit {
		if err := w.flush(); err != nil {
			return err
		}
	}
	start := len(w.batch)
	w.batch = append(w.batch, line...)
	if reply {
		w.ids = append(w.ids, [2]int{start + from, start + to})
	}
	return nil
}

// flush writes the batch and reports its replies: recorded as replying,
// staged, recorded as staged, moved to stdout, recorded as delivered. The
// shim, should the daemon die between any two of these, finds the batch's
// bytes in the staging pipe (it writes them on: the replies are answered),
// or the pipe empty and the record set (moved: answered), or the pipe empty
// and the record clear (never staged: owed).
func (w *Writer) flush() error {
	if len(w.batch) == 0 {
		return nil
	}
	w.T.Replying(w.batch, w.ids)
	if err := w.Out.Stage(w.batch); err != nil {
		return err
	}
	w.T.Staged()
	if err := w.Out.Move(len(w.batch)); err != nil {
		return err
	}
	w.T.Delivered()
	w.batch, w.ids = w.batch[:0], w.ids[:0]
	return nil
}

// replyPrefix begins every reply the session writes (jsonrpc.ResultFrame,
// jsonrpc.ErrorFrame).
const replyPrefix = `{"jsonrpc":"2.0","id":`

// ResponseID finds the id of a response frame: line[from:to] is its text,
// and ok says whether the frame is a response. The session's replies are
// recognised from their first bytes; any other frame is read with
// pkg/envelope.
func ResponseID(line []byte) (from, to int, ok bool) {
	if rest, found := bytes.CutPrefix(line, []byte(replyPrefix)); found {
		if end := idEnd(rest); end > 0 {
			after := rest[end:]
			if bytes.HasPrefix(after, []byte(`,"result":`)) || bytes.HasPrefix(after, []byte(`,"error":`)) {
				return len(replyPrefix), len(replyPrefix) + end, true
			}
		}
	}
	if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","method":`)) {
		return 0, 0, false // a notification
	}
	env, valid := envelope.Scan(line)
	if !valid || env.Kind() != envelope.Response {
		return 0, 0, false
	}
	from = cap(line) - cap(env.ID) // env.ID is a part of line
	return from, from + len(env.ID), true
}

// idEnd is the length of the id token at the start of b: a string or an
// integer; 0 when it is neither.
func idEnd(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[0] == '"' {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0
	}
	i := 0
	if b[0] == '-' {
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == start {
		return 0
	}
	return i
}
