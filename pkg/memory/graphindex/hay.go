package graphindex

import (
	"sort"
	"strings"
)

// haystack is the substring match's text: for each entity, in key order,
// its lowered name, type and observations, each followed by a separator
// no text holds, so that one strings.Index over the whole runs at memory
// speed instead of one call per field.
type haystack struct {
	text  string
	ends  []int     // ends[i]: where entity i's part of text ends
	slots []int     // slots[i]: entity i's slot
	per   []*entity // for a query the separator would falsify
}

// sep ends every field in the haystack. A query holding it is matched field
// by field (contains).
const sep = "\x00"

// haystack returns g's haystack, rebuilding it after a change. Callers hold
// the index's read lock, so no change runs meanwhile; hayMu keeps two
// searches from rebuilding at once.
func (g *graph) haystack() *haystack {
	g.hayMu.Lock()
	defer g.hayMu.Unlock()
	if g.hay != nil && !g.hayDirty {
		return g.hay
	}
	var b strings.Builder
	h := &haystack{}
	for _, e := range g.ents {
		if e == nil {
			continue
		}
		b.WriteString(e.lowName)
		b.WriteString(sep)
		b.WriteString(e.lowType)
		b.WriteString(sep)
		for _, o := range e.obs {
			b.WriteString(o.low)
			b.WriteString(sep)
		}
		h.ends = append(h.ends, b.Len())
		h.slots = append(h.slots, e.slot)
		h.per = append(h.per, e)
	}
	h.text = b.String()
	g.hay, g.hayDirty = h, false
	return h
}

// find marks, by slot, the entities holding low in their name, type or an
// observation (n slots).
func (h *haystack) find(low string, n int) []bool {
	hit := make([]bool, n)
	if strings.Contains(low, sep) {
		for _, e := range h.per {
			hit[e.slot] = e.contains(low)
		}
		return hit
	}
	if low == "" {
		for _, s := range h.slots {
			hit[s] = true
		}
		return hit
	}
	for from := 0; from < len(h.text); {
		i := strings.Index(h.text[from:], low)
		if i < 0 {
			break
		}
		at := from + i
		k := sort.SearchInts(h.ends, at+1) // the entity whose part holds at
		hit[h.slots[k]] = true
		from = h.ends[k]
	}
	return hit
}
