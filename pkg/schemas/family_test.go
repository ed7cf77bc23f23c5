package schemas

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCatalogLoadsOnFirstNeed: Open leaves the catalog's compile for later
// (the daemon serves before it; docs/architecture.md, "The daemon's
// start"); the readiness fields already name the roots; whatever needs the
// catalog, at once and from many goroutines with the daemon's Preload,
// waits for the one first load and gets the catalog, as if Open had
// loaded it.
func TestCatalogLoadsOnFirstNeed(t *testing.T) {
	fam, reg := openFamily(t, map[string]string{})
	if fam.cat.Load() != nil || fam.loadErr.Load() != nil {
		t.Fatal("Open compiled the catalog")
	}
	if got := strings.Join(fam.ReadyFields(), " "); got != "schemas_dir=embedded examples_dir=embedded" {
		t.Fatalf("ready fields before the load: %s", got)
	}
	var wg sync.WaitGroup
	counts := make([]int, 4)
	for i := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				fam.Preload()
				counts[i] = len(fam.Catalog().Schemas())
				return
			}
			r := call(t, reg, "list_schemas", map[string]any{})
			schemas, _ := r["schemas"].([]any)
			counts[i] = len(schemas)
		}()
	}
	wg.Wait()
	for i, n := range counts {
		if n != 9 {
			t.Errorf("caller %d saw %d schemas", i, n)
		}
	}
	if p := fam.Problems(); len(p) != 0 {
		t.Errorf("problems: %q", p)
	}
}

// TestProblemsWaitForTheFirstLoad: daemon_status asked before the catalog
// loaded says what the load found, not nothing.
func TestProblemsWaitForTheFirstLoad(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	fam, _ := openFamily(t, map[string]string{"SYN_SCHEMAS_DIR": missing})
	if got := strings.Join(fam.ReadyFields(), " "); got != "schemas_dir="+missing+" examples_dir=" {
		t.Fatalf("ready fields: %s", got)
	}
	p := fam.Problems()
	if len(p) != 1 || !strings.Contains(p[0], "the schema catalog did not load") || !strings.Contains(p[0], missing) {
		t.Fatalf("problems before any other use: %q", p)
	}
}
