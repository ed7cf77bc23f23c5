package adopt

import (
	"testing"
)

// A moved entry names its variables (`--env`, an empty list included), so
// the shim passes exactly those and the instance key holds what the entry
// declares, not what its client adds per session whatever its version
// (docs/decisions/0057-client-variables.md), and carries its own name
// (`--name`).
func TestMovedEntryNamesItsEnv(t *testing.T) {
	for _, tc := range []struct{ name, entry, want string }{
		{"env", `{"command": "npx", "args": ["srv"], "env": {"GITHUB_TOKEN": "t", "DEBUG": "1"}}`,
			`{"command": "hearth", "args": ["run", "--name", "s", "--env", "GITHUB_TOKEN,DEBUG", "--", "npx", "srv"], "env": {"GITHUB_TOKEN": "t", "DEBUG": "1"}}`},
		{"env and a sharing mode, no args", `{"env": {"A": "1"}, "command": "x"}`,
			`{"env": {"A": "1"}, "command": "hearth", "args": ["run", "--share", "client", "--name", "s", "--env", "A", "--", "x"]}`},
		{"empty env: an empty list", `{"command": "x", "env": {}}`, `{"command": "hearth", "args": ["run", "--name", "s", "--env=", "--", "x"], "env": {}}`},
		{"env not an object", `{"command": "x", "env": null}`, `{"command": "hearth", "args": ["run", "--name", "s", "--env=", "--", "x"], "env": null}`},
		{"no env: an empty list", `{"command": "x"}`, `{"command": "hearth", "args": ["run", "--name", "s", "--env=", "--", "x"]}`},
		{"names a list cannot carry are left out, a repeated one once", `{"command": "x", "env": {"A,B": "1", "": "2", "C": "3", "C": "4"}}`,
			`{"command": "hearth", "args": ["run", "--name", "s", "--env", "C", "--", "x"], "env": {"A,B": "1", "": "2", "C": "3", "C": "4"}}`},
		{"only such names", `{"command": "x", "env": {"A=B": "1"}}`, `{"command": "hearth", "args": ["run", "--name", "s", "--env=", "--", "x"], "env": {"A=B": "1"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := `{"mcpServers": {"s": ` + tc.entry + `}}`
			f := load(t, Location{Path: write(t, []byte(src)), Key: "mcpServers"})
			opt := Options{}
			if tc.name == "env and a sharing mode, no args" {
				opt.Share = map[string]string{"s": "client"}
			}
			p, err := f.Plan(opt)
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"mcpServers": {"s": ` + tc.want + `}}`; string(p.New) != want {
				t.Fatalf("got  %s\nwant %s", p.New, want)
			}
			again := load(t, Location{Path: write(t, p.New), Key: "mcpServers"})
			if again.Err != nil || again.Servers[0].Kind != Hosted {
				t.Fatalf("rewritten entry reads as %+v (%v)", again.Servers[0], again.Err)
			}
			if p2, _ := again.Plan(opt); p2.Changed() {
				t.Fatalf("a second plan changes it again: %s", p2.New)
			}
		})
	}
}
