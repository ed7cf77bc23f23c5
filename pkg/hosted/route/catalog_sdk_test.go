package route

import (
	"context"
	"testing"
)

// The Go SDK's client (which may probe with server/discover first) is
// answered from the catalog: connect and tools/list start nothing.
func TestCatalogGoSDKClientStartsNothing(t *testing.T) {
	cat := record(t, catalogServer("alpha", "beta"))
	h := newHarness(t, catalogServer("alpha", "beta"), Options{Record: func(Catalog) {}})
	h.r.Seed(cat)
	cs, _ := h.sdkClient(nil, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 || res.NextCursor == "" {
		t.Fatalf("tools %v, %v", res, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.starts != 0 {
		t.Fatalf("%d upstreams started; sent %v", h.starts, h.sent)
	}
}
