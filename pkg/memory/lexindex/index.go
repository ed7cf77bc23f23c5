// Package lexindex is the memory store's lexical ranking: an in-memory
// inverted index over chunks, scored by BM25, that finds the top k without
// scoring every match.
//
// Why not SQLite FTS5's bm25(): it scores every chunk that matches any query
// term before sorting, so a query holding one common word costs time in
// proportion to the store (tens of milliseconds at 100 000 memories, far more
// at a million). Here each term's postings are cut into blocks of blockSize
// that record their largest term frequency and shortest chunk; the search
// (MaxScore with block-max bounds) skips every block and every list that
// cannot lift a chunk above the k-th best score so far, so the work follows k
// and the query's rare terms, not the size of the store.
//
// The index is a cache: the database stays the only durable copy, and the
// store rebuilds the index from it when it opens. Chunks are added in
// ascending key order (the database's row ids); deletes leave tombstones that
// filters skip, and disappear at the next rebuild.
package lexindex

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// blockSize is how many postings share one block-max entry: small enough that
// a block's bound stays close to its real scores, large enough that bounds
// are few next to postings.
const blockSize = 128

// Memory is what filters need to know of a memory.
type Memory struct {
	Key       int64 // the database's row id; ascending across Add calls
	Workspace string
	Source    string
	Tags      []string
	Time      int64 // Unix ms
}

// Chunk is one ranked piece of a memory.
type Chunk struct {
	Key  int64 // the database's row id of the chunk
	Text string
}

// Index is safe for concurrent use: searches share a read lock, adds and
// deletes take the write lock briefly.
type Index struct {
	mu sync.RWMutex

	termIDs map[string]uint32
	lists   []postings // by term id

	// Per chunk (doc), by doc number.
	docLen []uint16 // tokens, capped at 65535
	docMem []uint32 // memory number
	docKey []int64

	// Per memory, by memory number.
	memKey    []int64 // non-decreasing: Delete finds a memory by binary search
	memWS     []uint32
	memSrc    []uint32
	memTime   []int64
	memTagOff []uint32 // tags of memory m: tagIDs[memTagOff[m]:memTagOff[m+1]]
	tagIDs    []uint32
	dead      []uint64 // bitset of deleted memories

	// Interned workspace, source and tag strings.
	strIDs map[string]uint32

	liveDocs int64
	liveLen  int64 // tokens in live docs, for the average length

}

// postings is one term's list: ascending doc numbers with their term
// frequencies, and per block of blockSize postings the bound inputs.
type postings struct {
	docs   []uint32
	tfs    []uint8 // capped at 255
	blocks []blockMax
	max    blockMax // over the whole list
}

// tfBuckets splits postings by term frequency for the bounds: 1..7 each
// exactly, and 8 or more together.
const tfBuckets = 8

// blockMax bounds the BM25 score of a run of postings for any corpus
// statistics: for each term-frequency bucket, the shortest chunk in it. BM25
// grows with tf and shrinks with length, so the best score in the run is at
// one of these (tf, length) corners. One corner (largest tf, shortest chunk)
// would be simpler, but a common word has some chunk with a high tf and
// another that is short in nearly every block, and the bound then prunes
// nothing; the per-bucket corners are close to each block's real best.
type blockMax struct {
	tf     uint8             // largest term frequency
	minLen [tfBuckets]uint16 // 0: no posting in the bucket
}

func bucket(tf uint8) int { return int(min(tf, tfBuckets)) - 1 }

func (b *blockMax) widen(tf uint8, dl uint16) {
	b.tf = max(b.tf, tf)
	if i := bucket(tf); b.minLen[i] == 0 || dl < b.minLen[i] {
		b.minLen[i] = max(dl, 1)
	}
}

// New returns an empty index.
func New() *Index {
	return &Index{termIDs: map[string]uint32{}, strIDs: map[string]uint32{}, memTagOff: []uint32{0}}
}

func (ix *Index) intern(s string) uint32 {
	id, ok := ix.strIDs[s]
	if !ok {
		id = uint32(len(ix.strIDs))
		ix.strIDs[s] = id
	}
	return id
}

// Analyzed is a chunk's text cut into terms and counted: the part of adding
// that needs no lock, so callers can do it in their own goroutines.
type Analyzed struct {
	terms []string // distinct, folded
	tfs   []uint8  // capped at 255
	len   uint16   // tokens, capped at 65535
}

// Analyze cuts text into folded terms and counts them.
func Analyze(text string) Analyzed {
	var toks []string
	terms.Tokens(text, func(f string) { toks = append(toks, strings.Clone(f)) })
	slices.Sort(toks)
	a := Analyzed{len: uint16(min(len(toks), 65535))}
	for i := 0; i < len(toks); {
		j := i + 1
		for j < len(toks) && toks[j] == toks[i] {
			j++
		}
		a.terms = append(a.terms, toks[i])
		a.tfs = append(a.tfs, uint8(min(j-i, 255)))
		i = j
	}
	return a
}

// Add indexes a memory and its chunks. Keys must not be smaller than any
// added before; an equal key is a row id the database reused after a delete.
func (ix *Index) Add(m Memory, chunks []Chunk) {
	keys := make([]int64, len(chunks))
	docs := make([]Analyzed, len(chunks))
	for i, c := range chunks {
		keys[i], docs[i] = c.Key, Analyze(c.Text)
	}
	ix.AddAnalyzed(m, keys, docs)
}

// AddAnalyzed is Add for chunks already analyzed; keys[i] is docs[i]'s key.
func (ix *Index) AddAnalyzed(m Memory, keys []int64, docs []Analyzed) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	mem := uint32(len(ix.memKey))
	ix.memKey = append(ix.memKey, m.Key)
	ix.memWS = append(ix.memWS, ix.intern(m.Workspace))
	ix.memSrc = append(ix.memSrc, ix.intern(m.Source))
	ix.memTime = append(ix.memTime, m.Time)
	for _, t := range m.Tags {
		ix.tagIDs = append(ix.tagIDs, ix.intern(t))
	}
	ix.memTagOff = append(ix.memTagOff, uint32(len(ix.tagIDs)))
	if int(mem)/64 >= len(ix.dead) {
		ix.dead = append(ix.dead, 0)
	}
	for i := range docs {
		ix.addDoc(mem, keys[i], &docs[i])
	}
}

func (ix *Index) addDoc(mem uint32, key int64, a *Analyzed) {
	doc := uint32(len(ix.docKey))
	dl := a.len
	for i, t := range a.terms {
		id, ok := ix.termIDs[t]
		if !ok {
			id = uint32(len(ix.lists))
			ix.termIDs[t] = id
			ix.lists = append(ix.lists, postings{})
		}
		tf := a.tfs[i]
		p := &ix.lists[id]
		if len(p.docs)%blockSize == 0 {
			p.blocks = append(p.blocks, blockMax{})
		}
		p.docs = append(p.docs, doc)
		p.tfs = append(p.tfs, tf)
		p.blocks[len(p.blocks)-1].widen(tf, dl)
		p.max.widen(tf, dl)
	}
	ix.docLen = append(ix.docLen, dl)
	ix.docMem = append(ix.docMem, mem)
	ix.docKey = append(ix.docKey, key)
	ix.liveDocs++
	ix.liveLen += int64(dl)
}

// Delete marks the memory with key as deleted and reports whether a live
// memory had that key. (A reused key belongs to the newest memory holding it:
// the older ones were deleted before the database could reuse it.)
func (ix *Index) Delete(key int64) bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	m := sort.Search(len(ix.memKey), func(i int) bool { return ix.memKey[i] > key }) - 1
	if m < 0 || ix.memKey[m] != key || ix.isDead(uint32(m)) {
		return false
	}
	ix.dead[m/64] |= 1 << (m % 64)
	// Its docs are contiguous: find them from the first doc of the memory.
	first := sort.Search(len(ix.docMem), func(i int) bool { return ix.docMem[i] >= uint32(m) })
	for d := first; d < len(ix.docMem) && ix.docMem[d] == uint32(m); d++ {
		ix.liveDocs--
		ix.liveLen -= int64(ix.docLen[d])
	}
	return true
}

func (ix *Index) isDead(mem uint32) bool { return ix.dead[mem/64]&(1<<(mem%64)) != 0 }
