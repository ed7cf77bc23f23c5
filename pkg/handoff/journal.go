//go:build linux

package handoff

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/frame"
)

// Journal reads the client's input through the region (the daemon's side):
// every byte read from the client goes into the journal first, and stays
// there until Took says the frame it belongs to was taken in. Should the
// daemon die, the shim finds there what it had read and not yet used.
//
// The journal is one buffer that starts over at its beginning whenever
// everything read has been taken in, so a session of small frames keeps a
// few pages of it. A line still being read is moved to the start when the
// end is reached; one longer than frame.MaxLine is given up (the session
// discards it and answers it too large) and the journal says so.
//
// Read and Took are called by one goroutine, the session's reader; Close
// may be called from another.
type Journal struct {
	mu     sync.Mutex // held by Read and Took: Close waits for them
	closed bool
	r      *Region
	src    io.Reader
	j      []byte

	base          int64 // stream offset of j[0]
	done, fetched int   // taken in; read from src
	handed        int   // given to the caller of Read
	overflow      bool
	dirty         int // j[fetched:dirty] may hold old bytes; beyond dirty all is zero
	err           error
	readHighWater int // how far reads reached since the pages were last given back
}

// maxRead bounds one read from the client.
const maxRead = 64 << 10

// minRoom is the least free space a read is made with.
const minRoom = 4 << 10

// keepPages is how much of the journal stays backed once everything read
// has been taken in: the pages beyond it are given back after a big frame.
const keepPages = 64 << 10

// NewJournal reads src through r, starting with whatever the shim left in
// the journal (a replay, input a previous daemon never took in).
func NewJournal(r *Region, src io.Reader) *Journal {
	done, fetched, overflow, _ := unpackState(r.load64(offState))
	return &Journal{r: r, src: src, j: r.journal(), base: int64(r.load64(offBase)), done: done, fetched: fetched, handed: done,
		overflow: overflow, dirty: fetched, readHighWater: fetched}
}

func (jr *Journal) publish(reading bool) {
	jr.r.store64(offState, packState(jr.done, jr.fetched, jr.overflow, reading))
}

func (jr *Journal) setBase(b int64) {
	jr.base = b
	jr.r.store64(offBase, uint64(b))
}

// Read gives the caller the client's input, read through the journal.
func (jr *Journal) Read(p []byte) (int, error) {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	if jr.closed {
		return 0, ErrClosed
	}
	if len(p) == 0 {
		return 0, nil
	}
	if jr.handed < jr.fetched {
		n := copy(p, jr.j[jr.handed:jr.fetched])
		jr.handed += n
		return n, nil
	}
	if jr.err != nil {
		return 0, jr.err
	}
	jr.makeRoom()
	n := min(len(p), len(jr.j)-jr.fetched, maxRead)
	if jr.dirty > jr.fetched {
		// The shim scans a read under way up to its first zero byte.
		clear(jr.j[jr.fetched:jr.dirty])
		jr.dirty = jr.fetched
	}
	jr.r.store32(offReadLen, uint32(n))
	jr.publish(true)
	k, err := jr.src.Read(jr.j[jr.fetched : jr.fetched+n])
	if k > 0 {
		jr.fetched += k
		jr.dirty = max(jr.dirty, jr.fetched)
		jr.readHighWater = max(jr.readHighWater, jr.fetched)
	}
	jr.publish(false)
	if err != nil {
		jr.err = err
	}
	m := copy(p, jr.j[jr.handed:jr.fetched])
	jr.handed += m
	if m == 0 {
		return 0, jr.err
	}
	return m, nil
}

// makeRoom frees the journal's end before a read; everything read has
// been handed out.
func (jr *Journal) makeRoom() {
	if jr.done == jr.fetched {
		if jr.fetched > 0 {
			// All taken in: start over. The base moves first, so that at no
			// instant does a taken-in frame look untaken.
			jr.setBase(jr.base + int64(jr.fetched))
			jr.done, jr.fetched, jr.handed = 0, 0, 0
			jr.publish(false)
			jr.giveBackPages()
		}
		return
	}
	if len(jr.j)-jr.fetched >= minRoom {
		return
	}
	// Only the line still being read is left, after any blank lines, which
	// the reader skipped without a frame to take in: they go.
	if i := bytes.LastIndexByte(jr.j[jr.done:jr.fetched], '\n'); i >= 0 {
		jr.done += i + 1
		jr.publish(false)
	}
	rest := jr.fetched - jr.done
	if rest <= frame.MaxLine+1 {
		// Move it to the start; it is shorter than what lies before it
		// (JournalSize), so the copy never overwrites it.
		copy(jr.j[:rest], jr.j[jr.done:jr.fetched])
		jr.setBase(jr.base + int64(jr.done))
		jr.done, jr.fetched, jr.handed = 0, rest, rest
		jr.publish(false)
		return
	}
	// A line over frame.MaxLine: the reader discards it and the session
	// answers payload_too_large once its newline arrives. Its start is
	// dropped; the journal now begins inside it.
	jr.setBase(jr.base + int64(jr.fetched))
	jr.done, jr.fetched, jr.handed, jr.overflow = 0, 0, 0, true
	jr.publish(false)
}

// giveBackPages releases the journal's pages beyond keepPages once a big
// frame has gone through (the region is shared memory: its pages stay
// otherwise, in the daemon's and the shim's footprint).
func (jr *Journal) giveBackPages() {
	if jr.readHighWater <= keepPages {
		return
	}
	end := (jr.readHighWater + pageSize - 1) &^ (pageSize - 1)
	if err := unix.Madvise(jr.j[keepPages:end], unix.MADV_REMOVE); err == nil {
		jr.dirty = min(jr.dirty, keepPages)
	}
	jr.readHighWater = 0
}

const pageSize = 4096

// AtEOF reports whether the client's input has ended.
func (jr *Journal) AtEOF() bool {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	return errors.Is(jr.err, io.EOF)
}

// Close ends the journal's use of the region: it waits for a Read under way
// (interrupt its source first) and no Read or Took touches the region after
// it returns.
func (jr *Journal) Close() {
	jr.mu.Lock()
	jr.closed = true
	jr.mu.Unlock()
}

// Took marks every byte before stream offset end as taken in.
func (jr *Journal) Took(end int64) {
	jr.mu.Lock()
	defer jr.mu.Unlock()
	if jr.closed {
		return
	}
	d := int(end - jr.base)
	if d < jr.done || d > jr.fetched {
		return // not a position in the journal: nothing to mark
	}
	jr.done = d
	jr.overflow = false
	jr.publish(false)
}
