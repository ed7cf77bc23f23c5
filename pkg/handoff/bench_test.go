//go:build linux

package handoff

import (
	"io"
	"strconv"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/frame"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// repeatReader yields frames forever: one ping a read, as a client that
// waits for each reply sends them.
type repeatReader struct{ n int }

func (r *repeatReader) Read(p []byte) (int, error) {
	r.n++
	return copy(p, `{"jsonrpc":"2.0","id":`+strconv.Itoa(r.n)+`,"method":"ping"}`+"\n"), nil
}

// BenchmarkBookkeeping is what the region costs the daemon per request:
// the ping read through the journal, taken in (its slot recorded), and its
// reply written through the Writer (its slot cleared); compared with the
// same frames read and written plainly. Decision 0020's figures.
func BenchmarkBookkeeping(b *testing.B) {
	for _, mode := range []string{"plain", "region"} {
		b.Run(mode, func(b *testing.B) {
			r, _, err := Create()
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			var src io.Reader = &repeatReader{}
			var out io.Writer = io.Discard
			var tr *Tracker
			if mode == "region" {
				j := NewJournal(r, src)
				tr = NewTracker(r, j, func(byte, ...[]byte) error { return nil })
				src, out = j, &Writer{Out: discardOutlet{}, Limit: MaxBatch, T: tr}
			}
			fr := frame.NewReader(src)
			fw := frame.NewWriter(out)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				line, err := fr.Read()
				if err != nil {
					b.Fatal(err)
				}
				msg, _ := jsonrpc.Parse(line)
				if tr != nil {
					tr.Took(msg, line, fr.Offset())
				}
				fw.WriteRaw(jsonrpc.ResultFrame(msg.ID, []byte(`{}`)))
				fw.Flush()
			}
		})
	}
}

// discardOutlet stages and moves nothing: the bookkeeping alone is measured.
type discardOutlet struct{}

func (discardOutlet) Stage([]byte) error { return nil }
func (discardOutlet) Move(int) error     { return nil }
