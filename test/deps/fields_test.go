package deps

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// fieldBound is how many fields a struct of the packages that hold the
// most state at once (the hosted router, the shim) may have: a state
// holder that needs more is split into named parts, each with one job
// (docs/architecture.md: the router and the shim), rather than
// grown under one lock.
const fieldBound = 12

var boundedPackages = []string{"pkg/hosted/route", "shim"}

func TestStateHoldersStaySmall(t *testing.T) {
	for _, dir := range boundedPackages {
		fset := token.NewFileSet()
		files, _ := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, name := range files {
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				fields := 0
				for _, fl := range st.Fields.List {
					fields += max(len(fl.Names), 1)
				}
				if fields > fieldBound {
					t.Errorf("%s: struct %s has %d fields, more than %d: give some of them a part of their own", fset.Position(ts.Pos()), ts.Name.Name, fields, fieldBound)
				}
				return true
			})
		}
	}
}
