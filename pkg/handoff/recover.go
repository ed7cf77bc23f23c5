//go:build linux

package handoff

import (
	"bytes"
	"encoding/binary"
	"sort"

	"golang.org/x/sys/unix"
)

// Owed is a request in flight when the daemon went away: the client is owed
// a reply to it.
type Owed struct {
	ID  []byte // the id's JSON text, as the client wrote it
	Seq uint64 // the order requests were taken in
	End int64  // stream offset just past the request's frame
}

// Told is what the daemon said over the control connection about the
// session (the shim keeps it while the daemon serves).
type Told struct {
	Tracked  map[uint64]Owed // MsgTrack, less MsgUntrack
	Replying map[uint64]bool // MsgReplying, less MsgUntrack
	Written  map[uint64]bool // seqs answered by a MsgFrame the shim wrote
	Opening  []byte          // MsgOpening
	OpenedAt int64           // its end
	// Listens are the subscriptions/listen frames taken in, by seq
	// (MsgListen): those of InFlight are sent to the next daemon again.
	Listens map[uint64][]byte
}

// State is what a shim recovers once the daemon is gone.
type State struct {
	// InFlight are the requests taken in and not answered, in the order
	// they were taken in.
	InFlight []Owed
	// Opening is the session's initialize (nil: none was taken in).
	Opening []byte
	// Opened: a request was taken in; Modern: the first was
	// server/discover; Initialized: notifications/initialized was taken in.
	Opened, Modern, Initialized bool
	// Input is what the daemon read from the client and never took in, in
	// order: whole lines, perhaps ending with the start of one.
	Input []byte
	// Taken is the stream offset up to which input was taken in: Input
	// follows it (offset 0 is the journal's first byte after Reset).
	Taken int64
	// InLongLine: Input begins inside a line longer than frame.MaxLine,
	// whose start was dropped. The rest of that line is to be discarded
	// and the client is owed its payload_too_large reply.
	InLongLine bool
}

// Recover reads the session's state from the region once the daemon is gone
// (it must no longer write to it). Records whose frame the journal does not
// show as taken in are ignored: that frame is in Input. staged is what
// DrainStage found in the staging pipe, which the shim writes on to the
// client: the replies of a batch the daemon had begun to write are owed
// only when nothing of it is staged and the region does not say it was
// (it was never staged; else it is in stdout, or staged and written on).
func (r *Region) Recover(told Told, staged []byte) State {
	batchOut := len(staged) > 0 || r.load32(offStaged) != 0
	done, fetched, overflow, reading := unpackState(r.load64(offState))
	j := r.journal()
	fetched = min(fetched, len(j))
	done = min(done, fetched)
	if reading {
		// A read was under way: what it brought is there up to the first
		// zero byte (the journal is cleared ahead of every read, and a
		// frame holds no zero byte).
		n := min(int(r.load32(offReadLen)), len(j)-fetched)
		if k := bytes.IndexByte(j[fetched:fetched+n], 0); k >= 0 {
			n = k
		}
		fetched += n
	}
	taken := int64(r.load64(offBase)) + int64(done)
	st := State{Taken: taken}
	st.Input = append([]byte(nil), j[done:fetched]...)
	st.InLongLine = overflow
	flags := r.load32(offFlags)
	if flags&flagOpened != 0 && int64(r.load64(offOpenedAt)) <= taken {
		st.Opened, st.Modern = true, flags&flagModern != 0
	}
	if flags&flagInitialized != 0 && int64(r.load64(offInitedAt)) <= taken {
		st.Initialized = true
	}
	if n := int(r.load32(offOpenLen)); n > 0 && n <= OpeningMax && int64(r.load64(offOpeningA)) <= taken {
		st.Opening = append([]byte(nil), r.mem[openingAt:openingAt+n]...)
	} else if told.Opening != nil && told.OpenedAt <= taken {
		st.Opening = told.Opening
	}
	for i := 0; i < NumSlots; i++ {
		state := r.load32(slotsAt + i*slotSize + slotState)
		if state != slotInFlight && (state != slotReplying || batchOut) {
			continue
		}
		s := r.slot(i)
		n := int(binary.LittleEndian.Uint32(s[slotIDLen:]))
		o := Owed{Seq: binary.LittleEndian.Uint64(s[slotSeq:]), End: int64(binary.LittleEndian.Uint64(s[slotEnd:]))}
		if n == 0 || n > slotIDMax || o.End > taken || told.Written[o.Seq] {
			continue
		}
		o.ID = append([]byte(nil), s[slotID:slotID+n]...)
		st.InFlight = append(st.InFlight, o)
	}
	for seq, o := range told.Tracked {
		if o.End <= taken && !told.Written[seq] && !(told.Replying[seq] && batchOut) {
			st.InFlight = append(st.InFlight, o)
		}
	}
	sort.Slice(st.InFlight, func(a, b int) bool { return st.InFlight[a].Seq < st.InFlight[b].Seq })
	return st
}

// Reset empties the region for the next daemon (the shim's side) and puts
// input in its journal, to be read before the client's stdin: the frames
// the shim sends ahead (hello, replay) and what the last daemon never took
// in. It reports false when input does not fit.
func (r *Region) Reset(input []byte) bool {
	if len(input) > JournalSize {
		return false
	}
	// Punching the whole file gives every page back and leaves zeros.
	if err := unix.Fallocate(int(r.file.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, Size); err != nil {
		clear(r.mem)
	}
	r.writeHeader()
	copy(r.journal(), input)
	r.store64(offState, packState(0, len(input), false, false))
	return true
}
