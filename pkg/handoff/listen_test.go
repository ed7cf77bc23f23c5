//go:build linux

package handoff

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// A subscriptions/listen taken in is told to the shim whole, with its seq
// (MsgListen), so that a shim whose daemon goes away with it unanswered
// sends it to the next daemon again; no other request is.
func TestTrackerTellsListens(t *testing.T) {
	r, _, err := Create()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	listens := map[uint64][]byte{}
	var tracked []uint64
	ctl := func(kind byte, parts ...[]byte) error {
		p := bytes.Join(parts, nil)
		if kind == MsgListen {
			seq, line, _ := ParseU64(p)
			listens[seq] = append([]byte(nil), line...)
		}
		return nil
	}
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`,
		`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
	}
	j := NewJournal(r, strings.NewReader(strings.Join(frames, "\n")+"\n"))
	tr := NewTracker(r, j, ctl)
	end := int64(0)
	for _, f := range frames {
		end += int64(len(f)) + 1
		msg, perr := jsonrpc.Parse([]byte(f))
		if perr != nil {
			t.Fatal(perr)
		}
		took(tr, msg, []byte(f), end)
		tracked = append(tracked, tr.seq)
	}
	if len(listens) != 1 || string(listens[tracked[1]]) != frames[1] {
		t.Fatalf("told %v, want the listen under seq %d", listens, tracked[1])
	}
}
