//go:build linux

package handoff

import (
	"io"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

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
					took(tr, msg, line, fr.Offset())
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

// BenchmarkStagePipe is what the staging pipe costs a batch: a ping's
// reply written to the client's stdout, a pipe, and read from it (as a
// client waiting for each reply does), plainly (one write) and through the
// staging pipe (a write and a splice).
func BenchmarkStagePipe(b *testing.B) {
	reply := []byte(`{"jsonrpc":"2.0","id":12345,"result":{}}` + "\n")
	for _, mode := range []string{"write", "staged"} {
		b.Run(mode, func(b *testing.B) {
			var out [2]int
			if err := unix.Pipe2(out[:], unix.O_CLOEXEC); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { unix.Close(out[0]) })
			s := stagePipe(b, out[1])
			buf := make([]byte, 4096)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if mode == "write" {
					if _, err := s.Out.Write(reply); err != nil {
						b.Fatal(err)
					}
				} else {
					if err := s.Stage(reply); err != nil {
						b.Fatal(err)
					}
					if err := s.Move(len(reply)); err != nil {
						b.Fatal(err)
					}
				}
				if n, err := unix.Read(out[0], buf); n != len(reply) {
					b.Fatal(n, err)
				}
			}
		})
	}
}
