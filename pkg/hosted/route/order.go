package route

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Caching hints and one order (docs/decisions/0073-caching-hints-and-order.md):
// a tools/list page reaches every client with its tools in one order, by
// name, whatever order the upstream wrote them in, so two sessions'
// prompts match byte for byte; a 2025 upstream's lists reach a 2026-07-28
// client with the ttlMs and cacheScope that say what hearth knows of them.

// announcedListTTL is how long a list whose changes the upstream announces
// (listChanged) is said to stay fresh: hearth itself answers it from its
// cache until a change comes, and a client's listen hears of the change
// sooner; a list whose changes are not announced is stale at once.
const announcedListTTL = 5 * time.Minute

// sortedTools writes a tools/list result's tools in order of name (a
// stable sort: tools of one name keep the upstream's order); a result it
// cannot read, or already in order, is returned as it is.
func sortedTools(result json.RawMessage) json.RawMessage {
	o, ok := decodeObject(result)
	if !ok {
		return result
	}
	var tools []json.RawMessage
	if json.Unmarshal(o["tools"], &tools) != nil || len(tools) < 2 {
		return result
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		var n struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(t, &n)
		names[i] = n.Name
	}
	if slices.IsSorted(names) {
		return result
	}
	idx := make([]int, len(tools))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	out := make([]json.RawMessage, len(tools))
	for i, j := range idx {
		out[i] = tools[j]
	}
	o["tools"] = mustJSON(out)
	return o.encode()
}

// withCacheHints sets a 2025 upstream's list result's ttlMs and cacheScope
// for a 2026-07-28 client: fresh for announcedListTTL when the upstream
// announces the list's changes, else stale at once; "private", as a hosted
// server's answers are made with its user's environment (its tokens).
//
// A resources/read result (cacheable too in 2026-07-28) is stale at once:
// a 2025 server tells of a resource's change only to its subscribers.
func (r *Router) withCacheHints(method string, result json.RawMessage) json.RawMessage {
	l := listOf(method)
	if l == nil && method != "resources/read" {
		return result
	}
	o, ok := decodeObject(result)
	if !ok {
		return result
	}
	ttl := int64(0)
	if l != nil && r.era.caps.listChanged(l.capability) {
		ttl = announcedListTTL.Milliseconds()
	}
	o["ttlMs"] = json.RawMessage(strconv.FormatInt(ttl, 10))
	o["cacheScope"] = quote("private")
	return o.encode()
}
