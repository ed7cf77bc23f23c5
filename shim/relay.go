//go:build unix || windows

package shim

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc/wire"
	"github.com/hearth-mcp/hearth/pkg/version"
)

// The relay: where the client's stdio cannot be handed to the daemon (a
// terminal, a file, an older daemon, HEARTH_SHIM_RELAY), the shim copies
// newline-delimited frames both ways, noting in its ledger what each
// means for what the client is owed, and replays the session to each new
// daemon it reaches.

// startReader starts relaying the client's stdin, once, after any input
// held for the next daemon; s.mu is held.
func (s *Shim) startReader() {
	if s.client.reading {
		return
	}
	s.client.reading = true
	in := s.client.in
	if held := s.client.held; len(held) > 0 {
		// Whole lines go now, in order; the start of a line is read again
		// in front of the rest of stdin.
		i := bytes.LastIndexByte(held, '\n')
		for _, line := range bytes.SplitAfter(held[:i+1], []byte("\n")) {
			if line = bytes.TrimSuffix(line, []byte("\n")); len(bytes.TrimSpace(line)) > 0 && !clientInternal(line) {
				s.ledger.note(line)
				s.link.write(line)
			}
		}
		in = io.MultiReader(bytes.NewReader(held[i+1:]), in)
		s.client.held = nil
	}
	go s.readClient(in)
}

// readClient forwards the client's frames, noting what a reconnect needs.
func (s *Shim) readClient(in io.Reader) {
	r := frame.NewReader(in)
	for {
		line, err := r.Read()
		if errors.Is(err, frame.ErrTooLarge) {
			// Discarded here; the daemon answers payload_too_large in order.
			note, _ := wire.NotificationFrame("$/hearth/tooLarge", map[string]any{})
			s.forward(note)
			continue
		}
		if err != nil {
			s.clientEnded()
			return
		}
		if clientInternal(line) {
			continue
		}
		s.forward(line)
	}
}

// clientInternal: the client's frame is a notification of hearth's own
// ($/hearth/hello, $/hearth/tooLarge, ...), which only the shim may send
// and which is never forwarded: the daemon decides what a connection may
// do once, by its opening hello, the shim's, and refuses whatever
// internal method follows (docs/threat-model.md); the shim does not even
// pass it on. A request of that name is forwarded, to be refused by the
// daemon in its place in the session (a plain JSON-RPC client is answered
// in request order, which only the daemon keeps).
func clientInternal(line []byte) bool {
	env, ok := envelope.Scan(line)
	return ok && env.Kind() == envelope.Notification && wire.IsInternal(env.Method)
}

// forward sends a client frame to the daemon. It is noted in the ledger
// under s.mu together with the write, so a reconnect sees every request
// either as sent to the old daemon (and lost) or not yet sent at all.
func (s *Shim) forward(line []byte) {
	s.mu.Lock()
	if s.end.ended.Load() {
		s.mu.Unlock()
		return
	}
	s.ledger.note(line)
	err := s.link.write(line)
	gen := s.link.gen
	s.mu.Unlock()
	if err != nil {
		s.lost(gen)
	}
}

// readDaemon relays the daemon's frames to the client until the connection ends.
func (s *Shim) readDaemon(c *conn, gen int, dead chan struct{}) {
	r := frame.NewReaderSize(c, maxDaemonLine)
	// The daemon ends every frame with a newline: a tail without one is a
	// frame its death cut off, never given to the client (its request is
	// owed, and answered as lost).
	r.WholeLines()
	for {
		line, err := r.Read()
		if errors.Is(err, frame.ErrTooLarge) {
			s.say("dropped a frame over %d bytes from the daemon", maxDaemonLine)
			continue
		}
		if err != nil {
			close(dead)
			s.lost(gen)
			return
		}
		if s.ledger.settle(line, gen) {
			continue
		}
		werr := s.client.out.WriteRaw(line)
		if werr == nil {
			werr = s.client.out.Flush()
		}
		if werr != nil { // the client stopped reading: nothing left to do
			s.finish(0)
			return
		}
		s.maybeDone()
	}
}

// replay re-sends the client's initialize (under a private id whose reply is
// swallowed) and initialized, so the new daemon serves the same session. A
// modern (stateless) session has nothing to replay: it gets a
// server/discover, and a client that never initialized a ping. Each is the
// probe whose answer proves the connection; the returned channel closes
// then. s.mu is held.
func (s *Shim) replay() <-chan struct{} {
	open := s.ledger.session()
	id, _ := json.Marshal(s.ledger.replayName())
	ack := s.ledger.expect(id)
	if open.modern {
		s.link.write(wire.RequestFrame(wire.RawID(id), "server/discover", []byte(`{"_meta":{`+
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},`+
			`"io.modelcontextprotocol/clientInfo":{"name":"hearth-shim","version":`+quoteString(version.Tooling())+`}}}`)))
		return ack
	}
	var fields map[string]json.RawMessage
	if open.frame == nil || json.Unmarshal(open.frame, &fields) != nil {
		s.link.write(wire.RequestFrame(wire.RawID(id), "ping", nil))
		return ack
	}
	fields["id"] = id
	b, _ := json.Marshal(fields)
	s.link.write(b)
	if open.initialized {
		n, _ := wire.NotificationFrame("notifications/initialized", map[string]any{})
		s.link.write(n)
	}
	return ack
}

// quoteString is s as a JSON string.
func quoteString(s string) string { return string(wire.AppendString(nil, s)) }

// relisten sends the new daemon the client's open subscriptions/listen
// requests again, under the client's own ids, so that it goes on hearing
// of changes (a hosted upstream handed to the new daemon keeps announcing
// them, docs/decisions/0046-upstream-handover.md); they stay owed. It
// returns the rest of owed, the requests lost; s.mu is held.
func (s *Shim) relisten(owed []owedReq) []owedReq {
	frames, rest := s.ledger.listensOf(owed)
	if len(frames) == 0 {
		return owed
	}
	var again []owedReq
	for _, r := range owed {
		if _, ok := s.ledger.listenFrame(r); ok {
			again = append(again, r)
		}
	}
	s.ledger.restore(again)
	for _, f := range frames {
		s.link.write(f)
	}
	return rest
}
