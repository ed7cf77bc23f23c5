package route

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hearth-mcp/hearth/pkg/envelope"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// Catalog is what a shared instance's upstream answered the last time it
// ran: what it was initialized with and its answer, and every page of its
// lists. A router seeded with one (Seed) answers initialize, the
// server/discover probe and the first page and later pages of each list
// from it while no upstream runs, and starts one only for a request that
// needs it (docs/decisions/0045-hosted-catalog.md).
type Catalog struct {
	InitParams json.RawMessage
	InitResult json.RawMessage
	// Lists holds each list method's pages, in order (each page a whole
	// result, nextCursor and all).
	Lists map[string][]json.RawMessage
	// TTL is the shortest positive ttlMs of a page (0: none said): the
	// lists are answered from for that long after they were fetched.
	TTL time.Duration
}

// catalogLists are the lists a catalog holds, and the notification that
// says each changed.
var catalogLists = []struct{ method, changed, capability string }{
	{"tools/list", "notifications/tools/list_changed", "tools"},
	{"prompts/list", "notifications/prompts/list_changed", "prompts"},
	{"resources/list", "notifications/resources/list_changed", "resources"},
	{"resources/templates/list", "notifications/resources/list_changed", "resources"},
}

// catalogState is the router's catalog: the one it was seeded with, then
// what each started upstream listed (under r.mu).
type catalogState struct {
	lists   map[string][]json.RawMessage // answered from while no upstream is ready
	answers bool                         // lists may be answered from
	// A fetch of a started upstream's lists in progress.
	fetch *catalogFetch
}

type catalogFetch struct {
	up      *outbox // the upstream it is of
	pages   map[string][]json.RawMessage
	waiting int
	failed  map[string]bool
}

// Seed gives a router with no upstream and no client yet a catalog to
// answer from. It reports whether it took it: only a shared router that
// has not initialized an upstream does.
func (r *Router) Seed(cat Catalog) bool {
	r.mu.Lock()
	defer r.unlock()
	if r.opts.Mode != Shared || r.state != down || r.initResult != nil || r.discover != nil || cat.InitResult == nil || cat.InitParams == nil {
		return false
	}
	r.initParams, r.initResult = cat.InitParams, cat.InitResult
	r.upCaps = parseUpstreamCaps(cat.InitResult)
	r.era = eraLegacy // a 2025 server: the discover probe is refused at once
	r.cat.lists, r.cat.answers = cat.Lists, true
	return true
}

// ForgetCatalog stops answering from the catalog: the next list request
// reaches an upstream.
func (r *Router) ForgetCatalog() {
	r.mu.Lock()
	r.cat.lists, r.cat.answers = nil, false
	r.unlock()
}

// fromCatalog answers a client's list request from the catalog while no
// upstream is ready, and a logging/setLevel (its level is kept and set on
// the upstream when one starts). It reports whether it answered; r.mu is
// held.
func (c *Client) fromCatalog(msg *jsonrpc.Message) bool {
	r := c.r
	if !r.cat.answers || r.state == ready || r.failure != nil || r.opts.Mode != Shared || modernMeta(msg.Params) != nil {
		return false
	}
	if msg.Method == "logging/setLevel" {
		if c.level < 0 || r.state != down {
			return false
		}
		c.answer(msg.ID, json.RawMessage(`{}`))
		return true
	}
	pages, ok := r.cat.lists[msg.Method]
	if !ok || len(pages) == 0 {
		return false
	}
	p, _ := decodeObject(msg.Params)
	for k := range p {
		if k != "cursor" && k != "_meta" {
			return false // a list request hearth does not know the answer to
		}
	}
	cursor := p.str("cursor")
	if cursor == "" {
		c.answer(msg.ID, pages[0])
		return true
	}
	for i, page := range pages[:len(pages)-1] {
		if nextCursor(page) == cursor {
			c.answer(msg.ID, pages[i+1])
			return true
		}
	}
	return false
}

func nextCursor(page json.RawMessage) string {
	o, _ := decodeObject(page)
	return o.str("nextCursor")
}

// fetchCatalog asks a started 2025 upstream for every page of the lists
// its capabilities offer, then records them (Options.Record) and tells
// clients of each list that differs from what they may have been answered
// from the catalog; r.mu is held.
func (r *Router) fetchCatalog() {
	if r.opts.Record == nil || r.opts.Mode != Shared || r.era != eraLegacy || r.up == nil {
		return
	}
	var caps map[string]json.RawMessage
	if o, ok := decodeObject(r.initResult); ok {
		_ = json.Unmarshal(o["capabilities"], &caps)
	}
	f := &catalogFetch{up: r.up, pages: map[string][]json.RawMessage{}, failed: map[string]bool{}}
	r.cat.fetch = f
	for _, l := range catalogLists {
		if _, ok := caps[l.capability]; ok {
			f.waiting++
			r.fetchPage(f, l.method, "")
		}
	}
	if f.waiting == 0 {
		r.catalogFetched(f)
	}
}

// fetchPage asks for one page; r.mu is held.
func (r *Router) fetchPage(f *catalogFetch, method, cursor string) {
	params := json.RawMessage(`{}`)
	if cursor != "" {
		params = mustJSON(map[string]string{"cursor": cursor})
	}
	r.nextID++
	id := strconv.AppendInt(nil, r.nextID, 10)
	r.pending[envelope.Key(id)] = &pend{method: method, internal: func(result, errObj json.RawMessage) {
		if r.cat.fetch != f || r.up != f.up {
			return // another upstream's
		}
		if errObj != nil || result == nil {
			f.failed[method] = true
		} else {
			f.pages[method] = append(f.pages[method], result)
			if next := nextCursor(result); next != "" && next != cursor && len(f.pages[method]) < maxCatalogPages {
				r.fetchPage(f, method, next)
				return
			}
		}
		f.waiting--
		if f.waiting == 0 {
			r.catalogFetched(f)
		}
	}}
	r.sendUp(jsonrpc.RequestFrame(jsonrpc.RawID(id), method, params))
}

// maxCatalogPages bounds the pages of one list a catalog holds (a server
// whose cursors never end is not followed for ever).
const maxCatalogPages = 100

// catalogFetched: every list is in; r.mu is held.
func (r *Router) catalogFetched(f *catalogFetch) {
	r.cat.fetch = nil
	lists := map[string][]json.RawMessage{}
	for m, pages := range f.pages {
		if !f.failed[m] {
			lists[m] = pages
		}
	}
	cat := Catalog{InitParams: r.initParams, InitResult: r.initResult, Lists: lists}
	// ttlMs and cacheScope are 2026-07-28 fields, and the SDKs put them in
	// a 2025 session's list results too with their defaults (the Go SDK:
	// ttlMs 0, cacheScope "public"), which no server chose: a 0 there is
	// no declaration. A positive ttlMs is one (no SDK's default), and
	// bounds how long the lists are answered from. cacheScope "private" is
	// kept to one authorization context already: an instance key has the
	// entry's environment, its tokens, in it (decision 0045).
	for _, pages := range lists {
		for _, page := range pages {
			o, _ := decodeObject(page)
			ms, err := strconv.ParseInt(string(bytes.TrimSpace(o["ttlMs"])), 10, 64)
			if err == nil && ms > 0 && (cat.TTL == 0 || time.Duration(ms)*time.Millisecond < cat.TTL) {
				cat.TTL = time.Duration(ms) * time.Millisecond
			}
		}
	}
	old := r.cat.lists
	if r.cat.answers {
		sent := map[string]bool{}
		for _, l := range catalogLists {
			if _, had := old[l.method]; !had || sent[l.changed] || sameItems(old[l.method], lists[l.method]) {
				continue
			}
			sent[l.changed] = true
			r.cacheGen++
			clear(r.cache)
			f := jsonrpc.RawNotificationFrame(l.changed, nil)
			for c := range r.clients {
				c.push(f)
			}
		}
	}
	r.cat.lists, r.cat.answers = lists, true
	r.opts.Record(cat)
}

// sameItems: two lists' pages hold the same items in the same order
// (cursors aside).
func sameItems(a, b []json.RawMessage) bool {
	items := func(pages []json.RawMessage) []byte {
		var buf bytes.Buffer
		for _, page := range pages {
			o, _ := decodeObject(page)
			for _, k := range slices.Sorted(maps.Keys(o)) {
				if k == "nextCursor" || k == "_meta" || k == "ttlMs" || k == "cacheScope" {
					continue
				}
				buf.WriteString(k)
				_ = json.Compact(&buf, o[k])
			}
		}
		return buf.Bytes()
	}
	return bytes.Equal(items(a), items(b))
}
