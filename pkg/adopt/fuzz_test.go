package adopt

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonc"
)

// FuzzPlan: whatever a config file holds, a plan either changes nothing or
// yields a file that still parses, in which every moved server reads as
// `hearth run -- COMMAND ARGS...` with its old command and arguments and
// every other server reads as before.
func FuzzPlan(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"a": {"command": "npx", "args": ["-y", "x"]}, "b": {"url": "http://h"}}}`,
		"{\n  \"servers\": {\n    // c\n    \"a\": {\n      \"command\": \"x\" /* k */,\n      \"args\": [ /* none */ ],\n    },\n  },\n}",
		`{"servers":{"a":{"env":{},"command":"x"},"b":{"command":"y","args":null}}}`,
		`{"servers":{"a":{"command":"x","args":["1"],"command":"z"}}}`,
		`{"servers":{"a":{"command":42},"b":{"command":""},"c":{"command":"x","args":[1]},"d":"npx"}}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, src []byte) {
		path := filepath.Join(dir, "mcp.json")
		if err := os.WriteFile(path, src, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"servers", "mcpServers"} {
			loc := Location{Path: path, Key: key, Syntax: jsonc.JSONC}
			before, err := Load(loc)
			if err != nil {
				t.Fatal(err)
			}
			p, err := before.Plan(Options{})
			if err != nil {
				t.Fatal(err)
			}
			if before.Err != nil || !p.Changed() {
				continue
			}
			if err := os.WriteFile(path, p.New, 0o600); err != nil {
				t.Fatal(err)
			}
			after, err := Load(loc)
			if err != nil || after.Err != nil || len(after.Servers) != len(before.Servers) {
				t.Fatalf("rewritten file: %v %v\n%s", err, after.Err, p.New)
			}
			for i, d := range p.Decisions {
				a := after.Servers[i]
				want := d.Server
				if d.Action == Move && want.Kind == Remote {
					if u, _, why := remoteOf(want); a.Kind != Hosted || a.Command != "hearth" || why != "" || !slices.Contains(a.Args, "--url") || !slices.Contains(a.Args, u) {
						t.Fatalf("moved %s reads as %+v\n%s", d.Name, a, p.New)
					}
					continue
				}
				if d.Action == Move {
					if a.Kind != Hosted || a.Command != "hearth" || !slices.Equal(a.Args, append(RunArgs("", want.Name, envArgs(want.entry)), append([]string{want.Command}, want.Args...)...)) {
						t.Fatalf("moved %s reads as %+v\n%s", d.Name, a, p.New)
					}
					continue
				}
				if a.Kind != want.Kind || a.Command != want.Command || !slices.Equal(a.Args, want.Args) {
					t.Fatalf("%s changed: %+v -> %+v", d.Name, want, a)
				}
			}
			if err := os.WriteFile(path, src, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	})
}
