package memory

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestStoreOpensAtPreloadOrFirstUse: Open leaves the store closed (the
// daemon serves before it opens; docs/architecture.md, "The daemon's
// start"); the daemon's Preload and a tool called at the same moment share
// the one open, and the tool answers as from a store opened at Open.
func TestStoreOpensAtPreloadOrFirstUse(t *testing.T) {
	env := testEnv(t, nil)
	f := openTest(t, env)
	db := filepath.Join(env.Home, StoreFile)
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("Open opened the store: %v", err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); f.Preload() }()
	var added map[string]any
	var err error
	go func() {
		defer wg.Done()
		added, err = call(t, f, "add_memory", map[string]any{"text": "the staging database is db-2"})
	}()
	wg.Wait()
	if err != nil || added["memory_id"] == nil {
		t.Fatalf("add_memory: %v, %v", added, err)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the store did not open: %v", err)
	}
	res := mustCall(t, f, "search_memory", map[string]any{"query": "staging database"})
	if ids := resultIDs(res); len(ids) != 1 || ids[0] != added["memory_id"] {
		t.Fatalf("search after: %v", res)
	}
}
