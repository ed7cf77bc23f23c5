package adopt

import (
	"testing"
)

// An entry with `env` moves behind hearth naming its variables (`--env`), so
// the shim passes exactly those and the instance key holds what the entry
// declares, not what its client adds per session (decision 0036, revised).
func TestMovedEntryNamesItsEnv(t *testing.T) {
	for _, tc := range []struct{ name, entry, want string }{
		{"env", `{"command": "npx", "args": ["srv"], "env": {"GITHUB_TOKEN": "t", "DEBUG": "1"}}`,
			`{"command": "hearth", "args": ["run", "--env", "GITHUB_TOKEN,DEBUG", "--", "npx", "srv"], "env": {"GITHUB_TOKEN": "t", "DEBUG": "1"}}`},
		{"env and a sharing mode, no args", `{"env": {"A": "1"}, "command": "x"}`,
			`{"env": {"A": "1"}, "command": "hearth", "args": ["run", "--share", "client", "--env", "A", "--", "x"]}`},
		{"empty env", `{"command": "x", "env": {}}`, `{"command": "hearth", "args": ["run", "--", "x"], "env": {}}`},
		{"env not an object", `{"command": "x", "env": null}`, `{"command": "hearth", "args": ["run", "--", "x"], "env": null}`},
		{"names a list cannot carry are left out, a repeated one once", `{"command": "x", "env": {"A,B": "1", "": "2", "C": "3", "C": "4"}}`,
			`{"command": "hearth", "args": ["run", "--env", "C", "--", "x"], "env": {"A,B": "1", "": "2", "C": "3", "C": "4"}}`},
		{"only such names", `{"command": "x", "env": {"A=B": "1"}}`, `{"command": "hearth", "args": ["run", "--", "x"], "env": {"A=B": "1"}}`},
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
