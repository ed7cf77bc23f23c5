package route

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

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

	// A 2026-07-28 upstream's (decision 0038) has Discover, its
	// DiscoverResult, in place of InitResult. Its ttlMs and cacheScope are
	// the server's own: DiscoverTTL is the DiscoverResult's ttlMs, ListTTL
	// each list's (the shortest of its pages'), and a list with a page that
	// is stale at once (ttlMs 0, absent or negative, the 2026-07-28
	// caching rules) is not held. ListCaps are the client capabilities the
	// lists were fetched with (the shared set, decision 0034): a modern
	// upstream may list other things for other capabilities, so only a
	// client declaring the same is answered from them. Fetched is when
	// they were fetched; a router seeded with the catalog answers from each
	// part only while it is fresh.
	Discover    json.RawMessage
	DiscoverTTL time.Duration
	ListTTL     map[string]time.Duration
	ListCaps    json.RawMessage
	Fetched     time.Time
}

// catalogState is the router's catalog: the one it was seeded with, then
// what each started upstream listed (under r.mu).
type catalogState struct {
	lists   map[string][]json.RawMessage // answered from while no upstream is ready
	answers bool                         // lists may be answered from
	// A fetch of a started upstream's lists in progress.
	fetch *catalogFetch
	// A modern upstream's catalog: the capabilities its lists were fetched
	// with (canonical JSON), when each list and the DiscoverResult stop
	// being fresh, and whether r.discover is the catalog's (seeded) rather
	// than a started upstream's.
	caps      string
	until     map[string]time.Time
	discUntil time.Time
	seeded    bool
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
	if r.opts.Mode != Shared || r.link.state != down || r.era.answered() || cat.InitParams == nil {
		return false
	}
	if cat.Discover != nil {
		if checkDiscover(cat.Discover) != nil || !time.Now().Before(cat.Fetched.Add(cat.DiscoverTTL)) {
			return false
		}
		r.era.initParams = cat.InitParams
		r.era.modern(cat.Discover) // its clients are answered as a started one's are
		r.cat.lists, r.cat.answers = cat.Lists, true
		r.cat.caps = canonical(cat.ListCaps)
		r.cat.discUntil = cat.Fetched.Add(cat.DiscoverTTL)
		r.cat.until = map[string]time.Time{}
		for m, ttl := range cat.ListTTL {
			r.cat.until[m] = cat.Fetched.Add(ttl)
		}
		r.cat.seeded = true
		return true
	}
	if cat.InitResult == nil {
		return false
	}
	r.era.initParams = cat.InitParams
	r.era.legacy(cat.InitResult) // a 2025 server: the discover probe is refused at once
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

// expireSeed forgets a modern catalog's DiscoverResult once it is stale
// (its ttlMs ran out) while no upstream has started: the next initialize or
// probe waits for a started upstream's; r.mu is held.
func (r *Router) expireSeed() {
	if !r.cat.seeded || r.link.state != down || time.Now().Before(r.cat.discUntil) {
		return
	}
	r.cat.seeded = false
	r.era.discover, r.era.kind = nil, eraUnknown
	r.cat.lists, r.cat.answers = nil, false
}

// canonical is JSON text in one form (keys sorted, no space), for
// comparing capabilities; "" when it is no JSON object.
func canonical(raw json.RawMessage) string {
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// fromPages answers a list request with the catalog's page it asks for
// (the first, or the one after its cursor's); r.mu is held.
func (c *Client) fromPages(q *request) bool {
	pages, ok := c.r.cat.lists[q.msg.Method]
	if !ok || len(pages) == 0 {
		return false
	}
	for _, k := range q.keys() {
		if k != "cursor" && k != "_meta" {
			return false // a list request hearth does not know the answer to
		}
	}
	cursor := q.str("cursor")
	if cursor == "" {
		c.answer(q.msg.ID, answerFor(c, c.r, q.msg.Method, pages[0], nil))
		return true
	}
	for i, page := range pages[:len(pages)-1] {
		if nextCursor(page) == cursor {
			c.answer(q.msg.ID, answerFor(c, c.r, q.msg.Method, pages[i+1], nil))
			return true
		}
	}
	return false
}

func nextCursor(page json.RawMessage) string {
	o, _ := decodeObject(page)
	return o.str("nextCursor")
}

// fetchCatalog asks a started upstream (of either era, decision 0051) for
// every page of the lists its capabilities offer, then records them
// (Options.Record) and tells clients of each list that differs from what
// they may have been answered from the catalog; r.mu is held.
func (r *Router) fetchCatalog() {
	if r.opts.Record == nil || r.opts.Mode != Shared || r.era.kind == eraUnknown || r.link.out == nil {
		return
	}
	answer := r.era.initResult
	if r.era.kind == eraModern {
		answer = r.era.discover
	}
	var caps map[string]json.RawMessage
	if o, ok := decodeObject(answer); ok {
		_ = json.Unmarshal(o["capabilities"], &caps)
	}
	f := &catalogFetch{up: r.link.out, pages: map[string][]json.RawMessage{}, failed: map[string]bool{}}
	r.cat.fetch = f
	for _, l := range listMethods {
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
	p := object{}
	if cursor != "" {
		p["cursor"] = quote(cursor)
	}
	if r.era.kind == eraModern {
		// With the _meta of the shared capabilities (decision 0034): what
		// a client declaring those is answered from (listFromCatalog).
		p["_meta"] = metaFromInit(r.era.initParams, -1).encode()
	}
	params := p.encode()
	id, _ := r.flight.own(method, func(result, errObj json.RawMessage) {
		if r.cat.fetch != f || r.link.out != f.up {
			return // another upstream's
		}
		if errObj != nil || result == nil || checkPage(method, result) != nil {
			f.failed[method] = true // not catalogued: its clients ask the upstream
		} else {
			if method == "tools/list" {
				result = sortedTools(result) // the order every client gets (order.go)
			}
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
	})
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
	if r.era.kind == eraModern {
		r.modernFetched(lists)
		return
	}
	cat := Catalog{InitParams: r.era.initParams, InitResult: r.era.initResult, Lists: lists}
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
	r.tellChanged(lists)
	r.cat.lists, r.cat.answers = lists, true
	r.opts.Record(cat)
}

// modernFetched: every list of a modern upstream is in. Its ttlMs are the
// server's own (the 2026-07-28 caching rules): a list with a page stale at
// once is not held, and nothing is recorded when the DiscoverResult itself
// is (a client could not be answered initialize from it); r.mu is held.
func (r *Router) modernFetched(lists map[string][]json.RawMessage) {
	now := time.Now()
	discTTL, _ := freshFor(r.era.discover)
	cat := Catalog{InitParams: r.era.initParams, Discover: r.era.discover, DiscoverTTL: discTTL,
		Lists: map[string][]json.RawMessage{}, ListTTL: map[string]time.Duration{},
		ListCaps: metaFromInit(r.era.initParams, -1)[metaCapabilities], Fetched: now}
	for m, pages := range lists {
		ttl := time.Duration(-1)
		for _, page := range pages {
			d, ok := freshFor(page)
			if !ok {
				ttl = 0
				break
			}
			if ttl < 0 || d < ttl {
				ttl = d
			}
		}
		if ttl > 0 {
			cat.Lists[m], cat.ListTTL[m] = pages, ttl
		}
	}
	r.tellChanged(cat.Lists)
	r.cat.lists, r.cat.answers = cat.Lists, true
	r.cat.caps = canonical(cat.ListCaps)
	r.cat.discUntil = now.Add(discTTL)
	r.cat.until = map[string]time.Time{}
	for m, ttl := range cat.ListTTL {
		r.cat.until[m] = now.Add(ttl)
	}
	if discTTL > 0 {
		r.opts.Record(cat)
	}
}

// freshFor is how long a 2026-07-28 cacheable result stays fresh: its
// ttlMs; false when it is stale at once (ttlMs 0, absent or negative).
func freshFor(result json.RawMessage) (time.Duration, bool) {
	o, _ := decodeObject(result)
	ms, err := strconv.ParseInt(string(bytes.TrimSpace(o["ttlMs"])), 10, 64)
	if err != nil || ms <= 0 {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// tellChanged tells every client of each list the catalog answered from
// that differs in lists, and forgets the lists cached meanwhile; r.mu is
// held.
func (r *Router) tellChanged(lists map[string][]json.RawMessage) {
	old := r.cat.lists
	if r.cat.answers {
		sent := map[string]bool{}
		for _, l := range listMethods {
			if _, had := old[l.method]; !had || sent[l.changed] || sameItems(old[l.method], lists[l.method]) {
				continue
			}
			sent[l.changed] = true
			r.lists.changed()
			if r.era.kind == eraModern {
				// Legacy clients as the 2025 notification, modern ones on
				// their listens that asked for it.
				r.listChanged(&jsonrpc.Message{Kind: jsonrpc.Notification, Method: l.changed})
				continue
			}
			f := jsonrpc.RawNotificationFrame(l.changed, nil)
			for c := range r.clients.set {
				c.push(f)
			}
		}
	}
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
