// Package graphindex is the memory graph as the daemon serves it: every
// workspace's entities, observations and relations held in memory, with an
// adjacency list per name and a BM25 index over entities, so that
// read_graph, search_nodes, open_nodes and get_related never touch the
// database (docs/decisions/0018-memory-graph.md).
//
// It is a cache shared by every store engine, as package rank is for memory
// search: the engine keeps the only durable copy, feeds the index from it
// when it opens, and applies each committed change ([Change]) in commit
// order under its writer's lock, before the write is answered. Keys are the
// engine's row ids: they increase in creation order and are never reused
// (SQLite AUTOINCREMENT, a PostgreSQL sequence).
package graphindex

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// Index holds every workspace's graph. It is safe for concurrent use:
// reads share a lock, Apply takes it alone.
type Index struct {
	mu sync.RWMutex
	ws map[string]*graph
}

// New returns an empty index.
func New() *Index { return &Index{ws: map[string]*graph{}} }

// node is a name: an entity's, or only a relation endpoint's.
type node struct {
	name    string
	ent     *entity // nil: no entity has this name
	out, in []*relation
}

type observation struct {
	key  int64
	text string
	low  string // Lower(text)
}

type entity struct {
	key     int64
	slot    int // its place in graph.slots, for per-search arrays
	node    *node
	typ     string
	obs     []observation
	lowName string
	lowType string
	// The BM25 document: distinct folded terms and their weighted counts.
	terms []termTF
	dl    int
}

type termTF struct {
	term string
	tf   uint32
	pos  int // the entity's place in the term's postings
}

// postings are one term's entities and weighted term frequencies, in no
// order (a removal moves the last into the gap).
type postings struct {
	term string // the map's key, shared by every entity's termTF
	ents []*entity
	tfs  []uint32
}

type relation struct {
	key      int64
	from, to *node
	typ      string
}

type triple struct{ from, to, typ string }

// graph is one workspace's.
type graph struct {
	nodes map[string]*node
	// ents and rels are in key order; a deleted one leaves nil until the
	// slice is compacted (keys stay beside them for the cursor's search).
	ents    []*entity
	entKeys []int64
	entBy   map[int64]*entity
	rels    []*relation
	relKeys []int64
	relBy   map[int64]*relation
	triples map[triple]*relation
	deadE   int
	deadR   int
	nobs    int64
	// slots holds every entity at its slot (nil: free), so a search can
	// score into a slice instead of a map.
	slots []*entity
	free  []int

	// The haystack: every entity's lowered name, type and observations,
	// one after another, for the substring match (hay.go); rebuilt by the
	// first search after a change.
	hayMu    sync.Mutex
	hay      *haystack
	hayDirty bool

	counts map[string]uint32 // reindex's scratch

	post  map[string]*postings
	totDL int64
}

func newGraph() *graph {
	return &graph{nodes: map[string]*node{}, entBy: map[int64]*entity{}, relBy: map[int64]*relation{},
		triples: map[triple]*relation{}, post: map[string]*postings{}}
}

func (ix *Index) graph(ws string, create bool) *graph {
	g := ix.ws[ws]
	if g == nil && create {
		g = newGraph()
		ix.ws[ws] = g
	}
	return g
}

func (g *graph) node(name string) *node {
	n := g.nodes[name]
	if n == nil {
		n = &node{name: name}
		g.nodes[name] = n
	}
	return n
}

// EntityRow is an entity as the engine stores it.
type EntityRow struct {
	Key        int64
	Name, Type string
}

// ObservationRow is one observation of the entity with key Entity.
type ObservationRow struct {
	Entity int64
	Key    int64
	Text   string
}

// RelationRow is a relation as the engine stores it.
type RelationRow struct {
	Key            int64
	From, To, Type string
}

// Change is one committed write to a workspace's graph, as the engine made
// it. Apply takes its parts in this order: relations, observations and
// entities removed, then entities, observations and relations added.
type Change struct {
	Workspace        string
	GoneRelations    []int64
	GoneObservations []ObservationRow // Entity and Key
	GoneEntities     []int64          // their observations and links go with them
	NewEntities      []EntityRow
	NewObservations  []ObservationRow
	NewRelations     []RelationRow
}

// Empty reports whether c changes nothing.
func (c *Change) Empty() bool {
	return len(c.GoneRelations)+len(c.GoneObservations)+len(c.GoneEntities)+
		len(c.NewEntities)+len(c.NewObservations)+len(c.NewRelations) == 0
}

// Apply makes c part of the index.
func (ix *Index) Apply(c *Change) {
	if c.Empty() {
		return
	}
	// Rows are appended in key order (the cursor's search needs it);
	// engines may return a statement's rows in any order.
	slices.SortFunc(c.NewEntities, func(a, b EntityRow) int { return cmp.Compare(a.Key, b.Key) })
	slices.SortFunc(c.NewObservations, func(a, b ObservationRow) int { return cmp.Compare(a.Key, b.Key) })
	slices.SortFunc(c.NewRelations, func(a, b RelationRow) int { return cmp.Compare(a.Key, b.Key) })
	ix.mu.Lock()
	defer ix.mu.Unlock()
	g := ix.graph(c.Workspace, true)
	for _, k := range c.GoneRelations {
		g.removeRelation(k)
	}
	touched := map[*entity]bool{}
	for _, o := range c.GoneObservations {
		if e := g.entBy[o.Entity]; e != nil {
			if i := slices.IndexFunc(e.obs, func(x observation) bool { return x.key == o.Key }); i >= 0 {
				e.obs = slices.Delete(e.obs, i, i+1)
				g.nobs--
				touched[e] = true
			}
		}
	}
	for _, k := range c.GoneEntities {
		if e := g.entBy[k]; e != nil {
			delete(touched, e)
			g.removeEntity(e)
		}
	}
	for _, r := range c.NewEntities {
		touched[g.addEntity(r)] = true
	}
	for _, o := range c.NewObservations {
		if e := g.entBy[o.Entity]; e != nil {
			e.obs = append(e.obs, observation{key: o.Key, text: o.Text, low: Lower(o.Text)})
			g.nobs++
			touched[e] = true
		}
	}
	for e := range touched {
		g.reindex(e)
	}
	for _, r := range c.NewRelations {
		g.addRelation(r)
	}
	g.compact()
}

// Load feeds the index from the engine at open: call it with each
// workspace's rows in key order, entities before their observations.
func (ix *Index) Load(ws string, ents []EntityRow, obs []ObservationRow, rels []RelationRow) {
	ix.Apply(&Change{Workspace: ws, NewEntities: ents, NewObservations: obs, NewRelations: rels})
}

func (g *graph) addEntity(r EntityRow) *entity {
	n := g.node(r.Name)
	e := &entity{key: r.Key, node: n, typ: r.Type, lowName: Lower(r.Name), lowType: Lower(r.Type)}
	if n.ent != nil { // the engine keeps names unique; a stale entry loses
		g.removeEntity(n.ent)
	}
	n.ent = e
	if k := len(g.free); k > 0 {
		e.slot, g.free = g.free[k-1], g.free[:k-1]
		g.slots[e.slot] = e
	} else {
		e.slot = len(g.slots)
		g.slots = append(g.slots, e)
	}
	g.ents = append(g.ents, e)
	g.entKeys = append(g.entKeys, r.Key)
	g.entBy[r.Key] = e
	return e
}

func (g *graph) removeEntity(e *entity) {
	g.unindex(e)
	g.nobs -= int64(len(e.obs))
	if e.node.ent == e {
		e.node.ent = nil
	}
	delete(g.entBy, e.key)
	if g.slots[e.slot] == e {
		g.slots[e.slot] = nil
		g.free = append(g.free, e.slot)
	}
	if i, ok := slices.BinarySearch(g.entKeys, e.key); ok && g.ents[i] == e {
		g.ents[i] = nil
		g.deadE++
	}
	g.forget(e.node)
}

func (g *graph) addRelation(r RelationRow) {
	t := triple{r.From, r.To, r.Type}
	if old := g.triples[t]; old != nil {
		g.removeRelation(old.key)
	}
	rel := &relation{key: r.Key, from: g.node(r.From), to: g.node(r.To), typ: r.Type}
	rel.from.out = append(rel.from.out, rel)
	rel.to.in = append(rel.to.in, rel)
	g.rels = append(g.rels, rel)
	g.relKeys = append(g.relKeys, r.Key)
	g.relBy[r.Key] = rel
	g.triples[t] = rel
}

func (g *graph) removeRelation(key int64) {
	rel := g.relBy[key]
	if rel == nil {
		return
	}
	delete(g.relBy, key)
	delete(g.triples, triple{rel.from.name, rel.to.name, rel.typ})
	rel.from.out = without(rel.from.out, rel)
	rel.to.in = without(rel.to.in, rel)
	if i, ok := slices.BinarySearch(g.relKeys, key); ok && g.rels[i] == rel {
		g.rels[i] = nil
		g.deadR++
	}
	g.forget(rel.from)
	g.forget(rel.to)
}

func without(rs []*relation, r *relation) []*relation {
	if i := slices.Index(rs, r); i >= 0 {
		last := len(rs) - 1
		rs[i] = rs[last]
		rs[last] = nil
		return rs[:last]
	}
	return rs
}

// forget drops a name nothing uses any more.
func (g *graph) forget(n *node) {
	if n.ent == nil && len(n.out) == 0 && len(n.in) == 0 {
		delete(g.nodes, n.name)
	}
}

// compact drops deleted entries once they are most of a slice.
func (g *graph) compact() {
	if g.deadE > 64 && g.deadE*2 > len(g.ents) {
		ents, keys := g.ents[:0], g.entKeys[:0]
		for i, e := range g.ents {
			if e != nil {
				ents, keys = append(ents, e), append(keys, g.entKeys[i])
			}
		}
		clear(g.ents[len(ents):])
		g.ents, g.entKeys, g.deadE = ents, keys, 0
	}
	if g.deadR > 64 && g.deadR*2 > len(g.rels) {
		rels, keys := g.rels[:0], g.relKeys[:0]
		for i, r := range g.rels {
			if r != nil {
				rels, keys = append(rels, r), append(keys, g.relKeys[i])
			}
		}
		clear(g.rels[len(rels):])
		g.rels, g.relKeys, g.deadR = rels, keys, 0
	}
}

// nameWeight is how many times a name's words count in its entity's BM25
// document: a query word in the name says more than one in an observation.
const nameWeight = 2

// reindex replaces e's BM25 document with its current name, type and
// observations.
func (g *graph) reindex(e *entity) {
	g.unindex(e)
	if g.counts == nil {
		g.counts = map[string]uint32{}
	}
	counts := g.counts // Apply holds the write lock: one reindex at a time
	clear(counts)
	dl := 0
	add := func(text string, w uint32) {
		terms.Tokens(text, func(f string) {
			if c, ok := counts[f]; ok {
				counts[f] = c + w
			} else if p := g.post[f]; p != nil {
				counts[p.term] = w // the term's one copy
			} else {
				counts[strings.Clone(f)] = w // f may share a scratch buffer
			}
			dl += int(w)
		})
	}
	add(e.node.name, nameWeight)
	add(e.typ, 1)
	for _, o := range e.obs {
		add(o.text, 1)
	}
	if cap(e.terms) < len(counts) {
		e.terms = make([]termTF, 0, len(counts))
	}
	e.terms = e.terms[:0]
	for t, tf := range counts {
		p := g.post[t]
		if p == nil {
			p = &postings{term: t}
			g.post[t] = p
		}
		e.terms = append(e.terms, termTF{t, tf, len(p.ents)})
		p.ents = append(p.ents, e)
		p.tfs = append(p.tfs, tf)
	}
	g.hayDirty = true
	e.dl = dl
	g.totDL += int64(dl)
}

func (g *graph) unindex(e *entity) {
	for _, t := range e.terms {
		p := g.post[t.term]
		if p == nil || t.pos >= len(p.ents) || p.ents[t.pos] != e {
			continue // cannot happen: the index keeps them in step
		}
		last := len(p.ents) - 1
		if moved := p.ents[last]; moved != e {
			p.ents[t.pos], p.tfs[t.pos] = moved, p.tfs[last]
			for i := range moved.terms {
				if moved.terms[i].term == t.term {
					moved.terms[i].pos = t.pos
					break
				}
			}
		}
		p.ents[last] = nil
		p.ents, p.tfs = p.ents[:last], p.tfs[:last]
		if last == 0 {
			delete(g.post, t.term)
		}
	}
	g.hayDirty = true
	e.terms = e.terms[:0]
	g.totDL -= int64(e.dl)
	e.dl = 0
}

// liveEntities is how many entities the workspace has.
func (g *graph) liveEntities() int { return len(g.entBy) }

func (e *entity) export() store.Entity {
	obs := make([]string, len(e.obs))
	for i, o := range e.obs {
		obs[i] = o.text
	}
	return store.Entity{Name: e.node.name, Type: e.typ, Observations: obs}
}

func (r *relation) export() store.Relation {
	return store.Relation{From: r.from.name, To: r.to.name, Type: r.typ}
}

// touching returns the relations of the given entities' names, in key order.
func touching(ents []*entity) []store.Relation {
	seen := map[*relation]bool{}
	var rs []*relation
	for _, e := range ents {
		for _, list := range [][]*relation{e.node.out, e.node.in} {
			for _, r := range list {
				if !seen[r] {
					seen[r] = true
					rs = append(rs, r)
				}
			}
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].key < rs[j].key })
	out := make([]store.Relation, len(rs))
	for i, r := range rs {
		out[i] = r.export()
	}
	return out
}

// Open returns the entities of ws with the given names, in key order, and
// every relation touching one of them.
func (ix *Index) Open(ws string, names []string) store.Subgraph {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	g := ix.ws[ws]
	if g == nil {
		return store.Subgraph{}
	}
	var found []*entity
	seen := map[*entity]bool{}
	for _, name := range names {
		if n := g.nodes[name]; n != nil && n.ent != nil && !seen[n.ent] {
			seen[n.ent] = true
			found = append(found, n.ent)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].key < found[j].key })
	out := make([]store.Entity, len(found))
	for i, e := range found {
		out[i] = e.export()
	}
	return store.Subgraph{Entities: out, Relations: touching(found)}
}

// Has reports whether ws has an entity called name.
func (ix *Index) Has(ws string, name string) bool {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	g := ix.ws[ws]
	if g == nil {
		return false
	}
	n := g.nodes[name]
	return n != nil && n.ent != nil
}

// Counts are a graph's sizes.
type Counts struct {
	Entities, Relations, Observations int64
}

// Counts sizes the graph of ws, or of every workspace for "".
func (ix *Index) Counts(ws string) Counts {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var c Counts
	for name, g := range ix.ws {
		if ws != "" && name != ws {
			continue
		}
		c.Entities += int64(g.liveEntities())
		c.Relations += int64(len(g.relBy))
		c.Observations += g.nobs
	}
	return c
}
