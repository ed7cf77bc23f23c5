package route

import (
	"encoding/json"
	"testing"
)

// An answer is cached only if no list changed since its request was sent;
// a change drops every answer.
func TestListCacheGenerations(t *testing.T) {
	l := newListCache()
	gen := l.gen
	l.put("tools/list", gen, json.RawMessage(`{"tools":[]}`))
	if _, ok := l.get("tools/list"); !ok {
		t.Fatal("not cached")
	}
	sent := l.gen
	l.changed()
	if _, ok := l.get("tools/list"); ok {
		t.Fatal("a change kept the answer")
	}
	l.put("prompts/list", sent, json.RawMessage(`{"prompts":[]}`))
	if _, ok := l.get("prompts/list"); ok {
		t.Fatal("an answer to a request sent before a change was cached")
	}
}

// Each list is known with its array, its change notification and its
// capability; only a list whose changes the upstream announces is cached.
func TestListMethods(t *testing.T) {
	for _, m := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		l := listOf(m)
		if l == nil || l.member == "" || l.changed == "" || l.capability == "" {
			t.Fatalf("%s: %+v", m, l)
		}
	}
	if listOf("tools/call") != nil {
		t.Fatal("tools/call is no list")
	}
	r := New(Options{})
	r.era.caps = parseUpstreamCaps(json.RawMessage(`{"capabilities":{"tools":{"listChanged":true},"resources":{}}}`))
	if !r.cacheable(listOf("tools/list")) || r.cacheable(listOf("resources/list")) || r.cacheable(listOf("prompts/list")) {
		t.Fatal("cacheable follows listChanged")
	}
}
