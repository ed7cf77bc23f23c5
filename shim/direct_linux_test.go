//go:build linux

package shim

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/handoff"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// A listen the shim once sent to a new daemon (relisten) that the client
// has since ended is not sent again in place of a later request of the
// same id: with the client's stdio handed over, the shim sees neither the
// cancel nor the new request, and only what the lost daemon had in flight
// says what is owed. The later request is owed its -32004.
func TestEndedListenIsNotSentAgainForItsID(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	s, _ := newTestShim(nil)
	s.opts = Options{Stdin: r, Stdout: w}
	if !s.prepareDirect() {
		t.Fatal("pipes can be handed over")
	}
	// daemon serves the client's stdio as a daemon does: it takes frames
	// in (the tracker tells the shim about listens, as MsgListen does), then
	// dies with whatever it had not answered; the shim takes the stdio back
	// and says what it would send the next daemon and what it owes -32004.
	daemon := func(frames ...string) (again, lost []string) {
		t.Helper()
		s.d.region.Reset(nil)
		s.d.told = handoff.Told{Tracked: map[uint64]handoff.Owed{}, Replying: map[uint64]bool{}, Written: map[uint64]bool{}, Listens: map[uint64][]byte{}}
		s.d.own, s.d.swallow, s.d.attached = 0, nil, true
		j := handoff.NewJournal(s.d.region, strings.NewReader(strings.Join(frames, "\n")+"\n"))
		fr := frame.NewReader(j)
		tr := handoff.NewTracker(s.d.region, j, func(kind byte, parts ...[]byte) error {
			p := bytes.Join(parts, nil)
			switch kind {
			case handoff.MsgListen:
				seq, line, _ := handoff.ParseU64(p)
				s.d.told.Listens[seq] = bytes.Clone(line)
			case handoff.MsgTrack:
				seq, rest, _ := handoff.ParseU64(p)
				end, id, _ := handoff.ParseU64(rest)
				s.d.told.Tracked[seq] = handoff.Owed{ID: bytes.Clone(id), Seq: seq, End: int64(end)}
			}
			return nil
		})
		for range frames {
			line, err := fr.Read()
			if err != nil {
				t.Fatal(err)
			}
			msg, perr := jsonrpc.Parse(line)
			if perr != nil {
				t.Fatal(perr)
			}
			tr.Took(msg.Kind, msg.ID, msg.Method, msg.Params, line, fr.Offset())
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.takeBack()
		frames2, rest := s.ledger.listensOf(s.ledger.take(s.link.gen))
		for _, f := range frames2 {
			again = append(again, string(f))
		}
		for _, o := range rest {
			lost = append(lost, string(o.id))
		}
		return again, lost
	}
	const listen = `{"jsonrpc":"2.0","id":"sub","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`
	again, lost := daemon(listen)
	if len(again) != 1 || again[0] != listen || len(lost) != 0 {
		t.Fatalf("an open listen: sent again %q, lost %q", again, lost)
	}
	// The next daemon takes the listen in again; the client ends it, and
	// then sends a call under the same id, which that daemon had not
	// answered when it went.
	again, lost = daemon(listen,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"sub"}}`,
		`{"jsonrpc":"2.0","id":"sub","method":"tools/call","params":{"name":"daemon_status","arguments":{}}}`)
	if len(again) != 0 || len(lost) != 1 || lost[0] != `"sub"` {
		t.Fatalf("a call under an ended listen's id: sent again %q, lost %q", again, lost)
	}
}
