//go:build linux

// Package handoff is what a shim and the daemon share when the shim hands
// its client's stdin and stdout to the daemon (descriptor passing, decision
// 0020 in docs/decisions): the daemon then reads and writes the client's
// pipes itself, and the shim only waits on a small control connection.
//
// The shim must still answer, should the daemon die, every request that was
// in flight, replay the session's opening to a new daemon, and hand it the
// input the dead one had read but not yet taken in. It learns all of that
// without a message per frame: the daemon keeps it in a memory region the
// shim created (a memfd both map), written with plain stores that the shim
// reads only once the daemon is gone.
//
//   - The journal: the daemon reads the client's stdin into the region, not
//     into private memory, and marks how far it has taken frames in. Bytes
//     read but not taken in are still there for the shim.
//   - The slots: each request taken in, by id, until its reply is written,
//     and whether that reply is in the batch being written.
//   - The opening: the session's initialize, and whether it was initialized
//     or opened in the stateless era.
//
// Replies reach the client's stdout through a pipe the shim made (the
// staging pipe, stage.go): should the daemon die while writing a batch, the
// shim finds what it did not move in that pipe and writes it on, and the
// region tells whether a batch found nowhere had been staged (so moved) or
// not: each request is answered exactly once (writer.go).
//
// Every record carries the stream offset of the frame that made it, and a
// record counts only when the journal says that frame was taken in: a
// daemon killed between two stores leaves either the frame (to hand on) or
// its records, never both. What does not fit the region (ids longer than a
// slot, more requests in flight than slots, a huge initialize) goes over the
// control connection instead, and so does a reply longer than a batch: the
// shim writes it, so the client's stdout never holds half a line.
package handoff

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hearth-mcp/hearth/pkg/frame"
)

// The region's layout. Offsets are in bytes from its start; every field
// that is read after a crash is stored atomically, after what it covers.
const (
	magic   = 0x48525448 // "HRTH"
	version = 2

	offMagic    = 0
	offVersion  = 4
	offSlots    = 8  // uint32: number of slots
	offJournal  = 12 // uint32: journal size
	offFlags    = 16 // uint32: flag bits, each valid from its *End offset on
	offOpenLen  = 20 // uint32: length of the opening (0: none)
	offReadLen  = 24 // uint32: length of the read in progress (stateReading)
	offStaged   = 28 // uint32: 1 once the batch being written is in the staging pipe
	offState    = 32 // uint64: the journal's state word
	offBase     = 40 // int64: stream offset of the journal's first byte
	offOpenedAt = 48 // int64: end of the frame that opened the session
	offOpeningA = 56 // int64: end of the initialize kept as the opening
	offInitedAt = 64 // int64: end of notifications/initialized

	headerSize = 4096

	// OpeningMax is the longest initialize kept in the region; a longer one
	// goes over the control connection (MsgOpening).
	OpeningMax = 60 << 10
	slotSize   = 128
	// slotIDMax is the longest id a slot holds; longer ones go over the
	// control connection (MsgTrack).
	slotIDMax = slotSize - 24
	// NumSlots bounds the requests in flight the region records.
	NumSlots = 1024
	// JournalSize holds two lines of frame.MaxLine and some read-ahead: a
	// line still being read always fits, and moving it to the start never
	// overlaps it.
	JournalSize = 2*frame.MaxLine + 128<<10

	openingAt = headerSize
	slotsAt   = openingAt + OpeningMax
	journalAt = slotsAt + NumSlots*slotSize
	// Size is the region's size. Only the pages written are ever backed.
	Size = journalAt + JournalSize
)

// Flag bits (offFlags).
const (
	flagOpened      = 1 << 0 // a request opened the session
	flagModern      = 1 << 1 // ... and it was server/discover
	flagInitialized = 1 << 2 // notifications/initialized was taken in
)

// The journal's state word: what has been taken in (done), what has been
// read (fetched), whether the journal starts inside a line over
// frame.MaxLine whose reply is owed (overflow), and whether a read is under
// way (reading: its bytes may be there before fetched says so).
const (
	stateFieldBits = 31
	stateFieldMask = 1<<stateFieldBits - 1
	stateOverflow  = 1 << 62
	stateReading   = 1 << 63
)

func packState(done, fetched int, overflow, reading bool) uint64 {
	w := uint64(done) | uint64(fetched)<<stateFieldBits
	if overflow {
		w |= stateOverflow
	}
	if reading {
		w |= stateReading
	}
	return w
}

func unpackState(w uint64) (done, fetched int, overflow, reading bool) {
	return int(w & stateFieldMask), int(w >> stateFieldBits & stateFieldMask), w&stateOverflow != 0, w&stateReading != 0
}

// Region is the shared memory of one handed-over session.
type Region struct {
	mem  []byte
	file *os.File // the shim's memfd (nil in the daemon, which needs none)
	// afterStore, in tests, runs after every store a shim may rely on: a
	// crash could come at any of those instants.
	afterStore func()
}

// Create makes a region (the shim's side): an anonymous memory file of
// Size bytes, mapped, with its header written and an empty journal. The
// file is what the shim passes to the daemon.
func Create() (*Region, *os.File, error) {
	fd, err := unix.MemfdCreate("hearth-handoff", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, os.NewSyscallError("memfd_create", err)
	}
	f := os.NewFile(uintptr(fd), "hearth-handoff")
	if err := f.Truncate(Size); err != nil {
		f.Close()
		return nil, nil, err
	}
	mem, err := unix.Mmap(fd, 0, Size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, nil, os.NewSyscallError("mmap", err)
	}
	r := &Region{mem: mem, file: f}
	r.writeHeader()
	return r, f, nil
}

// Open maps a region the shim created (the daemon's side) after checking
// that it is one, of this layout. fd may be closed afterwards.
func Open(fd int) (*Region, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, os.NewSyscallError("fstat", err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != Size {
		return nil, fmt.Errorf("not a handoff region: mode %#o, %d bytes (want a %d-byte memory file)", st.Mode, st.Size, Size)
	}
	mem, err := unix.Mmap(fd, 0, Size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	r := &Region{mem: mem}
	if r.load32(offMagic) != magic || r.load32(offVersion) != version || r.load32(offSlots) != NumSlots || r.load32(offJournal) != JournalSize {
		r.Close()
		return nil, errors.New("not a handoff region of this version")
	}
	return r, nil
}

// Close unmaps the region (and closes the shim's file).
func (r *Region) Close() error {
	var err error
	if r.mem != nil {
		err = unix.Munmap(r.mem)
		r.mem = nil
	}
	if r.file != nil {
		r.file.Close()
	}
	return err
}

func (r *Region) writeHeader() {
	r.store32(offMagic, magic)
	r.store32(offVersion, version)
	r.store32(offSlots, NumSlots)
	r.store32(offJournal, JournalSize)
}

func (r *Region) u32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&r.mem[off])) }
func (r *Region) u64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&r.mem[off])) }

func (r *Region) load32(off int) uint32 { return atomic.LoadUint32(r.u32(off)) }
func (r *Region) store32(off int, v uint32) {
	atomic.StoreUint32(r.u32(off), v)
	if r.afterStore != nil {
		r.afterStore()
	}
}
func (r *Region) load64(off int) uint64 { return atomic.LoadUint64(r.u64(off)) }
func (r *Region) store64(off int, v uint64) {
	atomic.StoreUint64(r.u64(off), v)
	if r.afterStore != nil {
		r.afterStore()
	}
}

func (r *Region) journal() []byte { return r.mem[journalAt : journalAt+JournalSize] }

func (r *Region) slot(i int) []byte { return r.mem[slotsAt+i*slotSize : slotsAt+(i+1)*slotSize] }

// Slot layout: state, id length, seq, end, id.
const (
	slotState = 0 // slotFree, slotInFlight or slotReplying
	slotIDLen = 4
	slotSeq   = 8
	slotEnd   = 16
	slotID    = 24
)

// Slot states.
const (
	slotFree     = 0
	slotInFlight = 1 // taken in, its reply not yet begun
	slotReplying = 2 // its reply is in the batch being written (writer.go)
)

func (r *Region) casFlags(old, new uint32) bool {
	ok := atomic.CompareAndSwapUint32(r.u32(offFlags), old, new)
	if ok && r.afterStore != nil {
		r.afterStore()
	}
	return ok
}
