package lexindex

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// BM25 parameters, the usual ones (and SQLite FTS5's).
const (
	k1 = 1.2
	b  = 0.75
)

// Filter narrows a search to the memories a query may return.
type Filter struct {
	Workspace string
	Source    string   // "" matches every source
	Tags      []string // a memory must carry every one
	// From and To bound Memory.Time (inclusive) when HasFrom / HasTo.
	From, To       int64
	HasFrom, HasTo bool
}

// Result is one ranked memory and its best chunk.
type Result struct {
	Memory, Chunk int64 // keys
	Score         float64
	doc           uint32
	dl            uint16
}

// Ranking is a search's answer, still open to the phrase bonus (see Rerank).
type Ranking struct {
	Results []Result
	phrase  []string // the query's folded words, in order
	bonus   float64  // Σ idf of the phrase's words
	c0, c1  float64  // length normalization: K(dl) = c0 + c1·dl
}

// compiled is a Filter as numbers; ok is false when no memory can pass.
type compiled struct {
	ws, src        uint32
	anySrc         bool
	tags           []uint32
	from, to       int64
	hasFrom, hasTo bool
}

func (ix *Index) compile(f Filter) (compiled, bool) {
	var c compiled
	var ok bool
	if c.ws, ok = ix.strIDs[f.Workspace]; !ok {
		return c, false
	}
	c.anySrc = f.Source == ""
	if !c.anySrc {
		if c.src, ok = ix.strIDs[f.Source]; !ok {
			return c, false
		}
	}
	for _, t := range f.Tags {
		id, ok := ix.strIDs[t]
		if !ok {
			return c, false
		}
		c.tags = append(c.tags, id)
	}
	c.from, c.to, c.hasFrom, c.hasTo = f.From, f.To, f.HasFrom, f.HasTo
	return c, true
}

func (ix *Index) passes(c *compiled, m uint32) bool {
	if ix.isDead(m) || ix.memWS[m] != c.ws || (!c.anySrc && ix.memSrc[m] != c.src) {
		return false
	}
	if t := ix.memTime[m]; (c.hasFrom && t < c.from) || (c.hasTo && t > c.to) {
		return false
	}
	if len(c.tags) > 0 {
		have := ix.tagIDs[ix.memTagOff[m]:ix.memTagOff[m+1]]
		for _, t := range c.tags {
			if !slices.Contains(have, t) {
				return false
			}
		}
	}
	return true
}

const exhausted = math.MaxUint32

// cursor walks one term's postings.
type cursor struct {
	p   *postings
	n   int // postings visible to this search (adds after the lock are not)
	i   int
	idf float64
	ub  float64 // bound of the term's score over the whole list

	// The bound and last doc of block blk, computed once per block visited.
	blk    int
	blkUB  float64
	blkEnd uint32
}

// block returns the bound and the last doc of the block holding the cursor.
func (c *cursor) block(sc scorer) (float64, uint32) {
	if i := c.i / blockSize; i != c.blk {
		c.blk = i
		c.blkUB = sc.bound(c.idf, &c.p.blocks[i])
		c.blkEnd = c.blockEnd()
	}
	return c.blkUB, c.blkEnd
}

func (c *cursor) doc() uint32 {
	if c.i >= c.n {
		return exhausted
	}
	return c.p.docs[c.i]
}

// blockEnd is the last doc of the block holding the cursor.
func (c *cursor) blockEnd() uint32 {
	return c.p.docs[min((c.i/blockSize+1)*blockSize, c.n)-1]
}

// seek moves to the first posting ≥ d: whole blocks first, then a binary search.
func (c *cursor) seek(d uint32) {
	if c.i >= c.n || c.p.docs[c.i] >= d {
		return
	}
	for c.blockEnd() < d {
		c.i = (c.i/blockSize + 1) * blockSize
		if c.i >= c.n {
			return
		}
	}
	end := min((c.i/blockSize+1)*blockSize, c.n)
	docs := c.p.docs[c.i:end]
	j, _ := slices.BinarySearch(docs, d)
	c.i += j
}

// scorer is BM25 for one search's statistics.
type scorer struct{ c0, c1 float64 }

func (s scorer) score(idf float64, tf uint8, dl uint16) float64 {
	t := float64(tf)
	return idf * t * (k1 + 1) / (t + s.c0 + s.c1*float64(dl))
}

// bound is the best score any posting summarized by m can have.
func (s scorer) bound(idf float64, m *blockMax) float64 {
	best := 0.0
	for i, dl := range m.minLen {
		if dl == 0 {
			continue
		}
		tf := uint8(i + 1)
		if i == tfBuckets-1 {
			tf = m.tf
		}
		best = max(best, s.score(idf, tf, dl))
	}
	return best
}

// Search returns the k best memories for words (any of them may match) that
// pass f, best first, ties to the earlier memory. A memory scores as its best
// chunk. Words are folded as the index folds stored text.
func (ix *Index) Search(words []string, f Filter, k int) *Ranking {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	r := &Ranking{}
	for _, w := range words {
		r.phrase = append(r.phrase, terms.Fold(w))
	}
	if k <= 0 || ix.liveDocs == 0 {
		return r
	}
	filter, ok := ix.compile(f)
	if !ok {
		return r
	}
	n := float64(ix.liveDocs)
	avgdl := float64(ix.liveLen) / n
	sc := scorer{c0: k1 * (1 - b), c1: k1 * b / max(avgdl, 1)}
	r.c0, r.c1 = sc.c0, sc.c1

	var cs []*cursor
	seen := map[uint32]bool{}
	for _, w := range r.phrase {
		id, ok := ix.termIDs[w]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		p := &ix.lists[id]
		df := min(float64(len(p.docs)), n) // tombstoned docs still count: keep idf finite
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		r.bonus += idf
		cs = append(cs, &cursor{p: p, n: len(p.docs), idf: idf, ub: sc.bound(idf, &p.max), blk: -1})
	}
	if len(seen) < len(r.phrase) {
		r.bonus = 0 // a word no chunk holds: no chunk holds the phrase
	}
	if len(cs) == 0 {
		return r
	}
	// MaxScore: lists in ascending order of bound; prefix[j] bounds what
	// lists 0..j-1 can add. Lists whose prefix stays at or under the
	// threshold are non-essential: a doc found only in them cannot enter.
	slices.SortFunc(cs, func(a, b *cursor) int {
		switch {
		case a.ub < b.ub:
			return -1
		case a.ub > b.ub:
			return 1
		}
		return 0
	})
	prefix := make([]float64, len(cs)+1)
	for j, c := range cs {
		prefix[j+1] = prefix[j] + c.ub
	}
	parts := ix.split(cs)
	if len(parts) == 1 {
		top := newTopK(k)
		ix.scan(cs, prefix, 0, exhausted, top, nil, sc, &filter)
		r.Results = top.sorted()
		return r
	}
	// A heavy query scans disjoint doc ranges at once. The ranges end on
	// memory boundaries, so each memory is in one range and the merged top k
	// is exact; the ranges share their thresholds, since a doc no better than
	// another range's k-th best memory cannot be in the top k either.
	var shared sharedThreshold
	tops := make([]*topK, len(parts)-1)
	var wg sync.WaitGroup
	for i := range tops {
		tops[i] = newTopK(k)
		own := make([]*cursor, len(cs))
		for j, c := range cs {
			cc := *c
			own[j] = &cc
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ix.scan(own, prefix, parts[i], parts[i+1], tops[i], &shared, sc, &filter)
		}()
	}
	wg.Wait()
	var all []Result
	for _, t := range tops {
		all = append(all, t.rs...)
	}
	sortResults(all)
	r.Results = all[:min(k, len(all))]
	return r
}

// parallelMin is the number of postings above which a search is split
// across cores: below it, starting goroutines costs more than it saves.
// (A variable so that tests can send small searches down the parallel path.)
var parallelMin = 200_000

// split returns the doc boundaries of the ranges a search scans in parallel
// (first 0, last exhausted), one range when the query is light or there is
// one core. Boundaries fall where a new memory starts.
func (ix *Index) split(cs []*cursor) []uint32 {
	work := 0
	for _, c := range cs {
		work += c.n
	}
	p := min(runtime.GOMAXPROCS(0), 4)
	if work < parallelMin || p < 2 {
		return []uint32{0, exhausted}
	}
	bounds := []uint32{0}
	for i := 1; i < p; i++ {
		d := len(ix.docMem) * i / p
		for d < len(ix.docMem) && d > 0 && ix.docMem[d] == ix.docMem[d-1] {
			d++
		}
		if uint32(d) > bounds[len(bounds)-1] {
			bounds = append(bounds, uint32(d))
		}
	}
	return append(bounds, exhausted)
}

// sharedThreshold is the best k-th score any range has reached.
type sharedThreshold struct{ bits atomic.Uint64 }

func (t *sharedThreshold) raise(v float64) {
	for {
		old := t.bits.Load()
		if math.Float64frombits(old) >= v || t.bits.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

func (t *sharedThreshold) get() float64 { return math.Float64frombits(t.bits.Load()) }

// scan ranks the docs in [lo, hi) into top: MaxScore over the lists cs
// (ascending bounds, prefix their running sums) with block-max skipping.
// shared, when not nil, is read and raised as the threshold of other scans.
func (ix *Index) scan(cs []*cursor, prefix []float64, lo, hi uint32, top *topK, shared *sharedThreshold, sc scorer, filter *compiled) {
	for _, c := range cs {
		c.seek(lo)
	}
	e := 0 // first essential list
	for {
		theta := top.threshold()
		if shared != nil {
			shared.raise(theta)
			theta = max(theta, shared.get())
		}
		for e < len(cs) && prefix[e+1] <= theta {
			e++
		}
		if e == len(cs) {
			break
		}
		d := uint32(exhausted)
		for _, c := range cs[e:] {
			d = min(d, c.doc())
		}
		if d >= hi {
			break
		}
		// Block-max: over docs d..end, a list whose cursor is at d adds at most
		// its block's bound, a list whose cursor is past end adds nothing, and
		// the non-essential lists add at most their whole-list bounds. If that
		// cannot beat the threshold, the whole range is skipped. (Ending the
		// range before the next doc of the lists not at d, rather than at the
		// end of their blocks, skips a run of docs that hold only some of the
		// common words of a query in one step.)
		if theta > 0 {
			bound, end := prefix[e], uint32(exhausted)
			for _, c := range cs[e:] {
				if c.doc() == d {
					ub, last := c.block(sc)
					bound += ub
					end = min(end, last)
				} else {
					end = min(end, c.doc()-1)
				}
			}
			if bound <= theta {
				for _, c := range cs[e:] {
					c.seek(end + 1)
				}
				continue
			}
		}
		dl := ix.docLen[d]
		s := 0.0
		for _, c := range cs[e:] {
			if c.i < c.n && c.p.docs[c.i] == d {
				s += sc.score(c.idf, c.p.tfs[c.i], dl)
				c.i++
			}
		}
		if s+prefix[e] <= theta {
			continue
		}
		mem := ix.docMem[d]
		if !ix.passes(filter, mem) {
			continue
		}
		pruned := false
		for j := e - 1; j >= 0; j-- {
			if s+prefix[j+1] <= theta {
				pruned = true
				break
			}
			c := cs[j]
			c.seek(d)
			if c.i < c.n && c.p.docs[c.i] == d {
				s += sc.score(c.idf, c.p.tfs[c.i], dl)
			}
		}
		if !pruned {
			top.offer(mem, Result{Memory: ix.memKey[mem], Chunk: ix.docKey[d], Score: s, doc: d, dl: dl})
		}
	}
}

// better orders results: higher score first, then the earlier chunk.
func better(a, b Result) bool {
	return a.Score > b.Score || (a.Score == b.Score && a.doc < b.doc)
}

func sortResults(rs []Result) {
	slices.SortFunc(rs, func(a, b Result) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	})
}

// topK keeps the k best memories seen, one entry per memory.
type topK struct {
	k     int
	rs    []Result
	byMem map[uint32]int
	worst int // index of the worst entry once full
}

func newTopK(k int) *topK { return &topK{k: k, byMem: make(map[uint32]int, k)} }

func (t *topK) full() bool { return len(t.rs) == t.k }

// threshold is the score a new memory must beat (0 until full: BM25 scores
// are positive, so anything matching may enter).
func (t *topK) threshold() float64 {
	if !t.full() {
		return 0
	}
	return t.rs[t.worst].Score
}

func (t *topK) offer(mem uint32, r Result) {
	if i, ok := t.byMem[mem]; ok {
		if better(r, t.rs[i]) {
			t.rs[i] = r
			t.findWorst()
		}
		return
	}
	if !t.full() {
		t.byMem[mem] = len(t.rs)
		t.rs = append(t.rs, r)
		if t.full() {
			t.findWorst()
		}
		return
	}
	if !better(r, t.rs[t.worst]) {
		return
	}
	for m, i := range t.byMem {
		if i == t.worst {
			delete(t.byMem, m)
			break
		}
	}
	t.rs[t.worst] = r
	t.byMem[mem] = t.worst
	t.findWorst()
}

func (t *topK) findWorst() {
	if !t.full() {
		return
	}
	w := 0
	for i := range t.rs {
		if better(t.rs[w], t.rs[i]) {
			w = i
		}
	}
	t.worst = w
}

func (t *topK) sorted() []Result {
	sortResults(t.rs)
	return t.rs
}

// Rerank adds the phrase bonus to every result whose chunk text (text by
// chunk key; false when unknown) holds the query's words consecutively, in order, and sorts
// again. The bonus scores the phrase as one more term whose IDF is the sum of
// its words' (a phrase is rarer than any of its words) occurring once, so an
// exact phrase outranks the same words scattered. A one-word query is left
// as it is.
func (r *Ranking) Rerank(text func(chunk int64) (string, bool)) {
	if len(r.phrase) < 2 || r.bonus == 0 {
		return
	}
	for i := range r.Results {
		res := &r.Results[i]
		if t, ok := text(res.Chunk); ok && holdsPhrase(t, r.phrase) {
			res.Score += r.bonus * (k1 + 1) / (1 + r.c0 + r.c1*float64(res.dl))
		}
	}
	sortResults(r.Results)
}

// holdsPhrase reports whether text's folded tokens contain phrase consecutively.
func holdsPhrase(text string, phrase []string) bool {
	var toks []string
	terms.Tokens(text, func(f string) { toks = append(toks, strings.Clone(f)) })
	for i := 0; i+len(phrase) <= len(toks); i++ {
		if slices.Equal(toks[i:i+len(phrase)], phrase) {
			return true
		}
	}
	return false
}
