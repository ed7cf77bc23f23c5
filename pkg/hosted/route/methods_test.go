package route

import "testing"

// The table holds every method the router does more with than forward,
// each with a stage of its own; a method it does not name is passed.
func TestMethodTable(t *testing.T) {
	for name, m := range methods {
		if m.local == nil && m.legacy == nil && m.shared == nil && m.catalog == nil && m.onModern == nil && m.fromModern == nil && m.forwarded == nil {
			t.Errorf("%s: an entry with no stage", name)
		}
	}
	for _, l := range listMethods {
		m := methodOf(l.method)
		if m.shared == nil || m.catalog == nil || m.forwarded == nil {
			t.Errorf("%s: a list is answered from the cache and the catalog, and its answer cached", l.method)
		}
	}
	for _, name := range []string{"tools/call", "prompts/get", "resources/read"} {
		if methodOf(name).forwarded == nil {
			t.Errorf("%s may be answered with an InputRequiredResult", name)
		}
	}
	if methodOf("ping").local == nil || methodOf("initialize").local == nil {
		t.Error("ping and initialize are the router's own")
	}
	if methodOf("sampling/createMessage") != passed || methodOf("") != passed {
		t.Error("a method the table does not name is passed")
	}
	for name, take := range clientNotes {
		if take == nil {
			t.Errorf("client notification %s: nil", name)
		}
	}
	for name, route := range upstreamNotes {
		if route == nil {
			t.Errorf("upstream notification %s: nil", name)
		}
	}
}
