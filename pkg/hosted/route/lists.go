package route

import (
	"encoding/json"
)

// The lists a shared upstream's clients ask for: answered from a cache of
// the running upstream's own answers while it announces their changes
// (listChanged, decision 0034), and from the catalog while no upstream is
// ready (catalog.go).

// listMethod is one list hearth caches and catalogues.
type listMethod struct {
	method     string
	member     string // the array each page holds
	changed    string // the notification that says it changed
	capability string // the server capability that offers it
}

// listMethods are those lists, in the order a catalog is fetched and its
// changes told.
var listMethods = []listMethod{
	{"tools/list", "tools", "notifications/tools/list_changed", "tools"},
	{"prompts/list", "prompts", "notifications/prompts/list_changed", "prompts"},
	{"resources/list", "resources", "notifications/resources/list_changed", "resources"},
	{"resources/templates/list", "resourceTemplates", "notifications/resources/list_changed", "resources"},
}

// listOf is the list method named method (nil: none).
func listOf(method string) *listMethod {
	for i := range listMethods {
		if listMethods[i].method == method {
			return &listMethods[i]
		}
	}
	return nil
}

// listCache holds the running upstream's answers to list requests, by
// method and params, and a generation that every list change bumps: an
// answer to a request sent before a change is not kept (under Router.mu).
type listCache struct {
	answers map[string]json.RawMessage
	gen     int
}

func newListCache() listCache { return listCache{answers: map[string]json.RawMessage{}} }

// get is the answer cached under key.
func (l *listCache) get(key string) (json.RawMessage, bool) {
	res, ok := l.answers[key]
	return res, ok
}

// put keeps result under key if no change came since gen.
func (l *listCache) put(key string, gen int, result json.RawMessage) {
	if gen == l.gen {
		l.answers[key] = result
	}
}

// changed drops every answer: a list changed, or the upstream is gone.
func (l *listCache) changed() {
	l.gen++
	clear(l.answers)
}

// cacheKey keys a cached list by its method and params. On a modern
// upstream a 2025 client's request reaches the upstream with that client's
// own capabilities, and a server may list other things for other
// capabilities, so the key has them too (decision 0038). A modern client's
// params carry its _meta already; on a legacy upstream every client shares
// the capabilities it was initialized with (decision 0034); r.mu is held.
func (c *Client) cacheKey(q *request) string {
	k := q.msg.Method + "\x00" + string(q.msg.Params)
	if c.r.era.kind == eraModern && !q.modern {
		k += "\x00" + string(c.session.capabilities())
	}
	return k
}

// cacheable: a list whose changes the upstream announces (listChanged), so
// a cached copy is dropped when it changes; r.mu is held.
func (r *Router) cacheable(l *listMethod) bool {
	return r.era.caps.listChanged(l.capability)
}

// listFromCache answers a shared router's list request from the cache
// while the upstream that answered it runs (the request's method table
// entry, methods.go); r.mu is held.
func (c *Client) listFromCache(q *request) bool {
	if res, ok := c.r.lists.get(c.cacheKey(q)); ok && c.r.link.state == ready {
		c.answer(q.msg.ID, answerFor(c, c.r, q.msg.Method, res, nil))
		return true
	}
	return false
}
