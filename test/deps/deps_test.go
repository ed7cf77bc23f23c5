// Package deps checks the import graph: packages below the tool contract
// stay free of it and of the JSON Schema validator, so that starting
// children, finding a repository or posting to the backend links neither.
package deps

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	// Linked in so that go test's cache knows them: a change anywhere in
	// their dependencies rebuilds this test and runs it again, instead of
	// replaying a pass from before the change (go list runs outside it).
	_ "github.com/hearth-mcp/hearth/pkg/repo"
	_ "github.com/hearth-mcp/hearth/pkg/schemas/backend"
	_ "github.com/hearth-mcp/hearth/pkg/supervisor"
)

const module = "github.com/hearth-mcp/hearth/"

// low are the packages that must not depend on what banned lists.
var low = []string{"pkg/supervisor", "pkg/repo", "pkg/schemas/backend"}

// banned are import path prefixes: the validator, and the hearth packages
// that bring it (the tool contract, hearth's validation package).
var banned = []string{
	"github.com/santhosh-tekuri/jsonschema",
	module + "pkg/tool",
	module + "pkg/validate",
}

func TestLowPackagesLinkNoValidator(t *testing.T) {
	gobin := goTool(t)
	// The supervisor has Windows files of its own: check that build too.
	for _, goos := range []string{"", "windows"} {
		for _, p := range low {
			cmd := exec.Command(gobin, "list", "-deps", "-f", "{{.ImportPath}}", module+p)
			cmd.Dir = "../.."
			if goos != "" {
				cmd.Env = append(os.Environ(), "GOOS="+goos)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("go list %s (GOOS=%q): %v\n%s", p, goos, err, out)
			}
			deps := strings.Fields(string(out))
			if len(deps) < 2 || deps[len(deps)-1] != module+p {
				t.Fatalf("implausible dependency list of %s (GOOS=%q): %v", p, goos, deps)
			}
			for _, d := range deps {
				for _, b := range banned {
					if d == b || strings.HasPrefix(d, b+"/") {
						t.Errorf("%s depends on %s (GOOS=%q)", p, d, goos)
					}
				}
			}
		}
	}
}

func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if p := "/usr/local/go/bin/go"; fileExists(p) {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("the go command is not available")
	}
	t.Skip("the go command is not available")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
