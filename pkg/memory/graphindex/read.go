package graphindex

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// MaxPageBytes bounds a page of ReadGraph by the size of its names, types
// and observations (a page always holds at least one item), so one reply
// stays far below what clients read in one line.
const MaxPageBytes = 1 << 20

// A cursor is "<workspace>\x00<e|r>\x00<key>" in URL-safe base64: the last
// entity or relation a page held. Keys only grow, so a page after it holds
// what was created since and nothing twice.
func cursor(ws string, kind byte, key int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(ws + "\x00" + string(kind) + "\x00" + strconv.FormatInt(key, 10)))
}

func parseCursor(ws, c string) (kind byte, key int64, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, 0, store.ErrBadCursor
	}
	parts := strings.Split(string(b), "\x00")
	if len(parts) != 3 || parts[0] != ws || (parts[1] != "e" && parts[1] != "r") {
		return 0, 0, store.ErrBadCursor
	}
	key, err = strconv.ParseInt(parts[2], 10, 64)
	if err != nil || key < -1 {
		return 0, 0, store.ErrBadCursor
	}
	return parts[1][0], key, nil
}

func (e *entity) size() int {
	n := 64 + len(e.node.name) + len(e.typ)
	for _, o := range e.obs {
		n += 4 + len(o.text)
	}
	return n
}

func (r *relation) size() int { return 64 + len(r.from.name) + len(r.to.name) + len(r.typ) }

// Page returns up to limit items of ws's graph after cur: entities in key
// order, then relations in key order.
func (ix *Index) Page(ws, cur string, limit int) (store.GraphPage, error) {
	var kind byte = 'e'
	var after int64 = -1
	if cur != "" {
		var err error
		if kind, after, err = parseCursor(ws, cur); err != nil {
			return store.GraphPage{}, err
		}
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var page store.GraphPage
	g := ix.ws[ws]
	if g == nil || limit <= 0 {
		return page, nil
	}
	n, bytes := 0, 0
	lastKind, lastKey := kind, after
	full := func(size int) bool { return n == limit || (n > 0 && bytes+size > MaxPageBytes) }
	if kind == 'e' {
		for i := sort.Search(len(g.entKeys), func(i int) bool { return g.entKeys[i] > after }); i < len(g.ents); i++ {
			e := g.ents[i]
			if e == nil {
				continue
			}
			if full(e.size()) {
				page.Next = cursor(ws, lastKind, lastKey)
				return page, nil
			}
			page.Entities = append(page.Entities, e.export())
			n, bytes, lastKind, lastKey = n+1, bytes+e.size(), 'e', e.key
		}
		after = -1
	}
	for i := sort.Search(len(g.relKeys), func(i int) bool { return g.relKeys[i] > after }); i < len(g.rels); i++ {
		r := g.rels[i]
		if r == nil {
			continue
		}
		if full(r.size()) {
			if lastKind == 'e' { // the page ended with the entities: the next starts at the relations
				lastKind, lastKey = 'r', -1
			}
			page.Next = cursor(ws, lastKind, lastKey)
			return page, nil
		}
		page.Relations = append(page.Relations, r.export())
		n, bytes, lastKind, lastKey = n+1, bytes+r.size(), 'r', r.key
	}
	return page, nil
}

// BM25 parameters, as the memory search uses them.
const (
	k1 = 1.2
	b  = 0.75
)

// contains reports whether e's name, type or an observation holds low (a
// query lowered with Lower): the official server's match.
func (e *entity) contains(low string) bool {
	if strings.Contains(e.lowName, low) || strings.Contains(e.lowType, low) {
		return true
	}
	for _, o := range e.obs {
		if strings.Contains(o.low, low) {
			return true
		}
	}
	return false
}

// Extra is how many entities that do not hold the query as a substring,
// but do hold some of its words, a search without a limit adds to those
// that do: the best by BM25.
const Extra = 20

// Search ranks ws's entities for query: BM25 over their names (counted
// twice), types and observations, plus, for an entity that holds the whole
// query as a substring (the official server's match, case-insensitive), a
// bonus of the query words' summed IDF (at least 1), so those rank first.
// With limit <= 0 it returns every substring match and the Extra best
// entities that only share words with the query: a superset of the
// official server's answer. With limit > 0, the limit best of either kind.
// Ties keep creation order.
func (ix *Index) Search(ws, query string, limit int) store.SearchResult {
	low := Lower(query)
	words := terms.Split(query)
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	g := ix.ws[ws]
	if g == nil {
		return store.SearchResult{}
	}
	n := float64(g.liveEntities())
	avg := 1.0
	if n > 0 {
		avg = max(float64(g.totDL)/n, 1)
	}
	score := make([]float64, len(g.slots)) // by slot; 0: no word matched
	bonus := 0.0
	for _, w := range words {
		p := g.post[terms.Fold(w)]
		if p == nil {
			bonus += math.Log(1 + (n+0.5)/0.5)
			continue
		}
		df := float64(len(p.ents))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		bonus += idf
		for i, e := range p.ents {
			t := float64(p.tfs[i])
			score[e.slot] += idf * t * (k1 + 1) / (t + k1*(1-b+b*float64(e.dl)/avg))
		}
	}
	bonus = max(bonus, 1)
	isMatch := g.haystack().find(low, len(g.slots))
	var matched, extra []*entity
	for _, e := range g.ents {
		if e == nil {
			continue
		}
		if isMatch[e.slot] {
			score[e.slot] += bonus
			matched = append(matched, e)
		} else if score[e.slot] > 0 {
			extra = append(extra, e)
		}
	}
	better := func(x, y *entity) int { // higher score first, then creation order
		if c := cmp.Compare(score[y.slot], score[x.slot]); c != 0 {
			return c
		}
		return cmp.Compare(x.key, y.key)
	}
	k := limit
	if k <= 0 {
		k = len(matched) + Extra
	}
	// The best k: all of matched may be needed, of extra at most k (kept
	// sorted by insertion, which is cheap for the few Extra asks for).
	keep := min(k, len(extra))
	best := make([]*entity, 0, keep)
	if keep > 64 {
		slices.SortFunc(extra, better)
		extra = extra[:keep]
	}
	for _, e := range extra {
		if len(best) == keep && (keep == 0 || better(e, best[keep-1]) >= 0) {
			continue
		}
		i, _ := slices.BinarySearchFunc(best, e, better)
		if len(best) < keep {
			best = append(best, nil)
		}
		copy(best[i+1:], best[i:])
		best[i] = e
	}
	hits := append(matched, best...)
	slices.SortFunc(hits, better)
	hits = hits[:min(k, len(hits))]
	out := store.SearchResult{Entities: make([]store.ScoredEntity, len(hits))}
	for i, e := range hits {
		out.Entities[i] = store.ScoredEntity{Entity: e.export(), Score: score[e.slot]}
	}
	out.Relations = touching(hits)
	return out
}

// MaxWalk bounds the relations one Related call looks at, so that a walk
// through a hub of millions of relations stays in milliseconds; a walk that
// reaches it ranks what it found so far.
const MaxWalk = 200_000

// Related walks from q.Name up to q.Depth relations away, following
// q.Direction and, when given, only q.Types. Each reached name is scored by
// spreading activation: the start holds 1, and every name passes its score,
// split evenly over the relations it follows, to the names first reached
// through them, so that close names and names linked many times rank high
// and a hub dilutes what it passes on. A name is found at its shortest
// distance; Via is the relation (lowest key) that reached it first. Results
// are ordered by score, then depth, then name. ok is false when no entity
// or relation has that name.
func (ix *Index) Related(q store.RelatedQuery) (out []store.Related, truncated, ok bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	g := ix.ws[q.Workspace]
	if g == nil {
		return nil, false, false
	}
	start := g.nodes[q.Name]
	if start == nil {
		return nil, false, false
	}
	follow := func(r *relation) bool { return len(q.Types) == 0 || slices.Contains(q.Types, r.typ) }
	type reached struct {
		depth int
		score float64
		via   *relation
	}
	seen := map[*node]*reached{start: {score: 1}}
	frontier := []*node{start}
	walked := 0
	var edges []*relation
	for d := 1; d <= q.Depth && len(frontier) > 0 && !truncated; d++ {
		var next []*node
		for _, u := range frontier {
			edges = edges[:0]
			if q.Direction != store.Incoming {
				for _, r := range u.out {
					if follow(r) {
						edges = append(edges, r)
					}
				}
			}
			if q.Direction != store.Outgoing {
				for _, r := range u.in {
					if follow(r) {
						edges = append(edges, r)
					}
				}
			}
			if len(edges) == 0 {
				continue
			}
			share := seen[u].score / float64(len(edges))
			for _, r := range edges {
				v := r.to
				if v == u {
					v = r.from
				}
				rv := seen[v]
				switch {
				case rv == nil:
					rv = &reached{depth: d, via: r}
					seen[v] = rv
					next = append(next, v)
				case rv.depth != d:
					continue // reached earlier, closer
				case r.key < rv.via.key:
					rv.via = r
				}
				rv.score += share
			}
			if walked += len(edges); walked >= MaxWalk {
				truncated = true
				break
			}
		}
		frontier = next
	}
	type hit struct {
		n *node
		r *reached
	}
	hits := make([]hit, 0, len(seen)-1)
	for n, r := range seen {
		if n != start {
			hits = append(hits, hit{n, r})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		switch {
		case a.r.score > b.r.score:
			return -1
		case a.r.score < b.r.score:
			return 1
		case a.r.depth != b.r.depth:
			return a.r.depth - b.r.depth
		}
		return strings.Compare(a.n.name, b.n.name)
	})
	if q.Limit > 0 && len(hits) > q.Limit {
		hits = hits[:q.Limit]
	}
	out = make([]store.Related, len(hits))
	for i, h := range hits {
		rel := store.Related{Entity: store.Entity{Name: h.n.name}, Depth: h.r.depth, Score: h.r.score, Via: h.r.via.export()}
		if h.n.ent != nil {
			rel.Entity, rel.Exists = h.n.ent.export(), true
		}
		out[i] = rel
	}
	return out, truncated, true
}

// String describes the index's size, for logs.
func (ix *Index) String() string {
	c := ix.Counts("")
	return fmt.Sprintf("%d entities, %d relations, %d observations", c.Entities, c.Relations, c.Observations)
}
