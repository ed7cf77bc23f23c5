package route

import (
	"encoding/json"
	"testing"
)

func TestSortedTools(t *testing.T) {
	for in, want := range map[string]string{
		`{"tools":[{"name":"b"},{"name":"a"}]}`:                          `{"tools":[{"name":"a"},{"name":"b"}]}`,
		`{"tools":[{"name":"a"},{"name":"b"}]}`:                          `{"tools":[{"name":"a"},{"name":"b"}]}`,
		`{"tools":[{"name":"c","x":1},{"name":"a"},{"name":"c","x":0}]}`: `{"tools":[{"name":"a"},{"name":"c","x":1},{"name":"c","x":0}]}`,
		`{"tools":"no"}`: `{"tools":"no"}`,
		`[]`:             `[]`,
		`{"nextCursor":"n","tools":[{"name":"z"},{"name":"y"}]}`: `{"nextCursor":"n","tools":[{"name":"y"},{"name":"z"}]}`,
	} {
		got := sortedTools(json.RawMessage(in))
		var a, b any
		json.Unmarshal(got, &a)
		json.Unmarshal([]byte(want), &b)
		if ja, jb := mustJSON(a), mustJSON(b); string(ja) != string(jb) {
			t.Errorf("sortedTools(%s) = %s, want %s", in, got, want)
		}
	}
}

// A 2025 upstream's lists reach a 2026-07-28 client with caching hints:
// fresh for announcedListTTL when the upstream announces the list's
// changes, stale at once otherwise; always private.
func TestCacheHintsOfLegacyLists(t *testing.T) {
	ts := newTestServer()
	h := newHarness(t, ts.srv, Options{})
	a := h.raw()
	for _, method := range []string{"tools/list", "resources/list", "resources/read"} {
		a.send(`{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"uri":"test://a","_meta":{` + modernMetaJSON("") + `}}}`)
		m := a.response()
		res, _ := m["result"].(map[string]any)
		want := float64(0)
		if l := listOf(method); l != nil && h.r.era.caps.listChanged(l.capability) {
			want = float64(announcedListTTL.Milliseconds())
		}
		if res == nil || res["resultType"] != "complete" || res["cacheScope"] != "private" || res["ttlMs"] != want {
			t.Fatalf("%s: %s (want ttlMs %v)", method, m["_text"], want)
		}
	}
	// A 2025 client's are the upstream's as they are (the go-sdk fills in
	// its defaults, ttlMs 0 and "public"), but for their order.
	b := h.raw()
	b.initialize()
	b.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if res := b.response()["result"].(map[string]any); res["cacheScope"] == "private" || res["resultType"] != nil {
		t.Fatalf("a 2025 client's list: %v", res)
	}
}
