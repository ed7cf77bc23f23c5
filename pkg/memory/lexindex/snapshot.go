package lexindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// The index's own encoding, for snapshots (package rank adds the stamp, the
// checksum and the file). Every array is written as its raw little-endian
// bytes, padded to 8, so Decode can use the bytes it is given in place: a
// snapshot of 39 MB at 100 000 memories is decoded without copying its
// postings. Only the two string tables are rebuilt as maps.
//
// A section is a uint64 element count followed by the elements.

// Encodable reports whether this machine can write and read the encoding:
// it is little-endian memory, so a big-endian machine rebuilds instead.
var Encodable = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// ErrEncoding: the bytes are not an index this build encoded.
var ErrEncoding = errors.New("not an encoded index")

// Encode writes the index to w. It holds the read lock while it writes:
// searches go on, adds and deletes wait.
func (ix *Index) Encode(w io.Writer) error {
	if !Encodable {
		return errors.New("index encoding needs a little-endian machine")
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	e := &encoder{w: w}
	e.strings(inverse(ix.termIDs))
	e.strings(inverse(ix.strIDs))

	// Postings: per list its length and whole-list bound, then every list's
	// docs, tfs and block bounds one after another.
	lens := make([]uint32, len(ix.lists))
	nblocks := 0
	for i := range ix.lists {
		lens[i] = uint32(len(ix.lists[i].docs))
		nblocks += len(ix.lists[i].blocks)
	}
	section(e, lens)
	maxes := make([]blockMax, len(ix.lists))
	for i := range ix.lists {
		maxes[i] = ix.lists[i].max
	}
	section(e, maxes)
	e.count(sumLens(lens))
	for i := range ix.lists {
		e.raw(bytesOf(ix.lists[i].docs))
	}
	e.pad(sumLens(lens) * 4)
	e.count(sumLens(lens))
	for i := range ix.lists {
		e.raw(bytesOf(ix.lists[i].tfs))
	}
	e.pad(sumLens(lens))
	e.count(uint64(nblocks))
	for i := range ix.lists {
		e.raw(bytesOf(ix.lists[i].blocks))
	}
	e.pad(uint64(nblocks) * uint64(unsafe.Sizeof(blockMax{})))

	section(e, ix.docLen)
	section(e, ix.docMem)
	section(e, ix.docKey)
	section(e, ix.memKey)
	section(e, ix.memWS)
	section(e, ix.memSrc)
	section(e, ix.memTime)
	section(e, ix.memTagOff)
	section(e, ix.tagIDs)
	section(e, ix.dead)
	section(e, []int64{ix.liveDocs, ix.liveLen})
	return e.err
}

// Decode reads an index that Encode wrote. The index keeps using b (its
// arrays point into it), so b must not change afterwards; b must be 8-byte
// aligned, as a fresh allocation is. Any inconsistency is ErrEncoding: a
// decoded index is safe to search and to extend.
func Decode(b []byte) (*Index, error) {
	if !Encodable {
		return nil, errors.New("index encoding needs a little-endian machine")
	}
	if len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%8 != 0 {
		return nil, errors.New("decode index: buffer not 8-byte aligned")
	}
	d := &decoder{b: b}
	ix := &Index{}
	terms := d.strings()
	strs := d.strings()
	lens := take[uint32](d)
	maxes := take[blockMax](d)
	docs := take[uint32](d)
	tfs := take[uint8](d)
	blocks := take[blockMax](d)
	ix.docLen = take[uint16](d)
	ix.docMem = take[uint32](d)
	ix.docKey = take[int64](d)
	ix.memKey = take[int64](d)
	ix.memWS = take[uint32](d)
	ix.memSrc = take[uint32](d)
	ix.memTime = take[int64](d)
	ix.memTagOff = take[uint32](d)
	ix.tagIDs = take[uint32](d)
	ix.dead = take[uint64](d)
	live := take[int64](d)
	if d.err != nil {
		return nil, d.err
	}
	bad := func(why string, args ...any) (*Index, error) {
		return nil, fmt.Errorf("%w: %s", ErrEncoding, fmt.Sprintf(why, args...))
	}
	if d.off != len(b) {
		return bad("%d bytes left over", len(b)-d.off)
	}
	nterms := len(terms)
	if len(lens) != nterms || len(maxes) != nterms || len(live) != 2 {
		return bad("section sizes disagree")
	}
	ndocs, nmems := len(ix.docKey), len(ix.memKey)
	if len(ix.docLen) != ndocs || len(ix.docMem) != ndocs || len(ix.memWS) != nmems || len(ix.memSrc) != nmems ||
		len(ix.memTime) != nmems || len(ix.memTagOff) != nmems+1 || len(ix.dead) != (nmems+63)/64 {
		return bad("per-chunk or per-memory arrays disagree")
	}
	if uint64(ndocs) > math.MaxUint32 || uint64(nmems) > math.MaxUint32 { // uint64: an int is 32 bits on some systems
		return bad("too many chunks")
	}
	// Everything a search or an add indexes with must be in range.
	for _, m := range ix.docMem {
		if int(m) >= nmems {
			return bad("chunk of memory %d out of range", m)
		}
	}
	for i := 1; i < nmems; i++ {
		if ix.memKey[i] < ix.memKey[i-1] {
			return bad("memory keys out of order")
		}
	}
	for i := 1; i < len(ix.docMem); i++ {
		if ix.docMem[i] < ix.docMem[i-1] {
			return bad("chunks out of memory order")
		}
	}
	if ix.memTagOff[0] != 0 || int(ix.memTagOff[nmems]) != len(ix.tagIDs) {
		return bad("tag offsets")
	}
	for i := 1; i <= nmems; i++ {
		if ix.memTagOff[i] < ix.memTagOff[i-1] {
			return bad("tag offsets out of order")
		}
	}
	nstr := uint32(len(strs))
	for _, ids := range [][]uint32{ix.memWS, ix.memSrc, ix.tagIDs} {
		for _, id := range ids {
			if id >= nstr {
				return bad("string %d out of range", id)
			}
		}
	}
	if uint64(len(docs)) != sumLens(lens) || len(tfs) != len(docs) {
		return bad("postings sizes disagree")
	}
	ix.lists = make([]postings, nterms)
	var at, bat int
	for i, n := range lens {
		nb := (int(n) + blockSize - 1) / blockSize
		if bat+nb > len(blocks) {
			return bad("block bounds short")
		}
		// Full slice expressions: appending to one list must never write
		// into the next one's bytes.
		p := postings{docs: docs[at : at+int(n) : at+int(n)], tfs: tfs[at : at+int(n) : at+int(n)],
			blocks: blocks[bat : bat+nb : bat+nb], max: maxes[i]}
		for j, doc := range p.docs {
			if int(doc) >= ndocs || (j > 0 && doc <= p.docs[j-1]) {
				return bad("postings of term %d", i)
			}
		}
		ix.lists[i] = p
		at += int(n)
		bat += nb
	}
	if bat != len(blocks) {
		return bad("block bounds left over")
	}
	ix.termIDs = make(map[string]uint32, nterms)
	for i, t := range terms {
		ix.termIDs[t] = uint32(i)
	}
	ix.strIDs = make(map[string]uint32, len(strs))
	for i, s := range strs {
		ix.strIDs[s] = uint32(i)
	}
	if len(ix.termIDs) != nterms || len(ix.strIDs) != len(strs) {
		return bad("repeated strings")
	}
	ix.liveDocs, ix.liveLen = live[0], live[1]
	// Extending the arrays must copy them out of b, never write into it.
	clip(&ix.docLen)
	clip(&ix.docMem)
	clip(&ix.docKey)
	clip(&ix.memKey)
	clip(&ix.memWS)
	clip(&ix.memSrc)
	clip(&ix.memTime)
	clip(&ix.memTagOff)
	clip(&ix.tagIDs)
	// dead is changed in place by Delete: it gets its own copy.
	ix.dead = append([]uint64(nil), ix.dead...)
	return ix, nil
}

func clip[T any](s *[]T) { *s = (*s)[:len(*s):len(*s)] }

// Memories reports how many memories the index holds, deleted ones included.
func (ix *Index) Memories() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.memKey)
}

func sumLens(lens []uint32) uint64 {
	var n uint64
	for _, l := range lens {
		n += uint64(l)
	}
	return n
}

func inverse(m map[string]uint32) []string {
	out := make([]string, len(m))
	for s, id := range m {
		out[id] = s
	}
	return out
}

func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

type encoder struct {
	w   io.Writer
	err error
}

func (e *encoder) raw(b []byte) {
	if e.err == nil && len(b) > 0 {
		_, e.err = e.w.Write(b)
	}
}

func (e *encoder) count(n uint64) { e.raw(binary.LittleEndian.AppendUint64(nil, n)) }

var zeros [8]byte

func (e *encoder) pad(n uint64) { e.raw(zeros[:(8-n%8)%8]) }

func section[T any](e *encoder, s []T) {
	e.count(uint64(len(s)))
	b := bytesOf(s)
	e.raw(b)
	e.pad(uint64(len(b)))
}

// strings writes a table of strings as their end offsets and their bytes.
func (e *encoder) strings(ss []string) {
	ends := make([]uint64, len(ss))
	var n uint64
	for i, s := range ss {
		n += uint64(len(s))
		ends[i] = n
	}
	section(e, ends)
	e.count(n)
	for _, s := range ss {
		e.raw([]byte(s))
	}
	e.pad(n)
}

type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) next(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.err = fmt.Errorf("%w: truncated", ErrEncoding)
		return nil
	}
	b := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return b
}

func (d *decoder) count() uint64 {
	b := d.next(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

func (d *decoder) skipPad(n uint64) { d.next((8 - n%8) % 8) }

func take[T any](d *decoder) []T {
	n := d.count()
	var zero T
	size := uint64(unsafe.Sizeof(zero))
	if d.err != nil || n > uint64(len(d.b))/size {
		if d.err == nil {
			d.err = fmt.Errorf("%w: truncated", ErrEncoding)
		}
		return nil
	}
	b := d.next(n * size)
	d.skipPad(n * size)
	if d.err != nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

func (d *decoder) strings() []string {
	ends := take[uint64](d)
	n := d.count()
	blob := d.next(n)
	d.skipPad(n)
	if d.err != nil {
		return nil
	}
	all := string(blob) // one copy, shared by every string of the table
	out := make([]string, len(ends))
	var start uint64
	for i, end := range ends {
		if end < start || end > n {
			d.err = fmt.Errorf("%w: string table", ErrEncoding)
			return nil
		}
		out[i] = all[start:end]
		start = end
	}
	return out
}
