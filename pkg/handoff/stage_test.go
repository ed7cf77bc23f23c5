//go:build linux

package handoff

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"golang.org/x/sys/unix"
)

// stdoutKinds are the client's stdout as clients make it: a pipe (most
// spawners) or a Unix socket (libuv's, so Node's): the read end and the
// write end.
func stdoutKinds(t *testing.T) map[string][2]int {
	var p, s [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	s = [2]int{fds[0], fds[1]}
	t.Cleanup(func() {
		for _, fd := range []int{p[0], p[1], s[0], s[1]} {
			unix.Close(fd)
		}
	})
	return map[string][2]int{"pipe": p, "socket": s}
}

func stagePipe(t testing.TB, out int) *StagePipe {
	var sp [2]int
	if err := unix.Pipe2(sp[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		t.Fatal(err)
	}
	f, err := NewFD(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Release(); unix.Close(sp[0]); unix.Close(sp[1]) })
	return &StagePipe{R: sp[0], W: sp[1], Out: f}
}

// lines is a batch of n bytes of whole lines.
func lines(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n-80; i++ {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"result":{}}`+"\n", i)
	}
	b.WriteString(string(bytes.Repeat([]byte("x"), n-b.Len()-1)) + "\n")
	return b.Bytes()
}

// A batch moved while the client reads arrives whole and in order, through
// a pipe and through a socket.
func TestStagePipeMovesABatchWhole(t *testing.T) {
	for kind, ends := range stdoutKinds(t) {
		t.Run(kind, func(t *testing.T) {
			s := stagePipe(t, ends[1])
			limit, err := StageCapacity(s.R)
			if err != nil || limit != MaxBatch {
				t.Fatalf("staging pipe holds %d, %v", limit, err)
			}
			got := make(chan []byte)
			go func() {
				b := make([]byte, 3*MaxBatch)
				n, _ := io.ReadFull(fdReader(ends[0]), b)
				got <- b[:n]
			}()
			var want []byte
			for _, n := range []int{200, MaxBatch, 4096, MaxBatch - 1} {
				batch := lines(n)
				want = append(want, batch...)
				if err := s.Stage(batch); err != nil {
					t.Fatal(err)
				}
				if err := s.Move(len(batch)); err != nil {
					t.Fatal(err)
				}
			}
			s.Out.Write(bytes.Repeat([]byte("\n"), 3*MaxBatch-len(want)))
			if b := <-got; !bytes.Equal(b[:len(want)], want) {
				t.Fatal("the client read other bytes than were moved")
			}
		})
	}
}

// A move cut short, as by a kill while the client's stdout is full, leaves
// every byte it did not move in the staging pipe: what the client has and
// what the shim drains from the staging pipe are the batch, once.
func TestStagePipeLeavesWhatItDidNotMove(t *testing.T) {
	for kind, ends := range stdoutKinds(t) {
		t.Run(kind, func(t *testing.T) {
			s := stagePipe(t, ends[1])
			unix.SetNonblock(ends[1], true)
			// Fill stdout but for a little room.
			fill := bytes.Repeat([]byte("\n"), 4096)
			filled := 0
			for {
				n, err := unix.Write(ends[1], fill)
				if err != nil {
					break
				}
				filled += n
			}
			head := make([]byte, 6000)
			if _, err := io.ReadFull(fdReader(ends[0]), head); err != nil {
				t.Fatal(err)
			}
			batch := lines(MaxBatch)
			if err := s.Stage(batch); err != nil {
				t.Fatal(err)
			}
			moved, err := unix.Splice(s.R, nil, ends[1], nil, len(batch), unix.SPLICE_F_NONBLOCK)
			// A pipe takes what its free buffers hold; a socket takes the
			// batch into one buffer past its limit, or none of it.
			if err != nil || moved <= 0 || kind == "pipe" && int(moved) >= len(batch) {
				t.Fatalf("a move into a nearly full stdout moved %d of %d bytes: %v", moved, len(batch), err)
			}
			left := DrainStage(s.R)
			rest := make([]byte, filled-len(head)+int(moved))
			if _, err := io.ReadFull(fdReader(ends[0]), rest); err != nil {
				t.Fatal(err)
			}
			delivered := bytes.TrimLeft(rest, "\n")
			if !bytes.Equal(append(delivered, left...), batch) {
				t.Fatalf("moved %d, left %d: the two are not the batch", moved, len(left))
			}
		})
	}
}

// fdReader reads a descriptor without owning it (an os.File would close it
// when collected).
type fdReader int

func (f fdReader) Read(p []byte) (int, error) {
	n, err := unix.Read(int(f), p)
	if n < 0 {
		n = 0
	}
	return n, err
}
