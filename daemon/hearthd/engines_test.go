package main

import (
	"go/build"
	"strings"
	"testing"
)

// hearthd reaches the memory store only through pkg/memory's Engine, the one
// place that chooses SQLite or PostgreSQL: it imports neither engine.
func TestHearthdImportsNoMemoryEngine(t *testing.T) {
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkg.Imports) == 0 {
		t.Fatal("no imports read")
	}
	for _, imp := range append(pkg.Imports, pkg.TestImports...) {
		if strings.HasSuffix(imp, "/pkg/memory/pgstore") || strings.HasSuffix(imp, "/pkg/memory/sqlitestore") {
			t.Errorf("hearthd imports %s; open the store through memory.EngineFor", imp)
		}
	}
}
