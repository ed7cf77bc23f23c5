package daemon

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"testing"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

var update = flag.Bool("update", false, "rewrite testdata/tools.snapshot.json from the current definitions")

const snapshotPath = "testdata/tools.snapshot.json"

// pinned is one tool's definition as the snapshot keeps it: everything a
// client relies on, without the build-specific toolingVersion.
type pinned struct {
	SchemaVersion int             `json:"schemaVersion"`
	Definition    json.RawMessage `json:"definition"`
}

func currentDefinitions(t *testing.T) map[string]pinned {
	t.Helper()
	home := t.TempDir()
	vars := map[string]string{"HEARTH_HOME": home}
	env := tool.Env{Home: home, Getenv: func(k string) string { return vars[k] }, Log: zap.NewNop(), Version: "snapshot"}
	// Every tool a daemon can offer is pinned, those the config must turn
	// on (hosted_servers: hosted_control) included: a tool a user has turned
	// on keeps its contract like any other.
	d, err := New(Options{Config: Config{Mode: ModeStdio, HostedControl: true}, Log: zap.NewNop(), Env: env, Openers: Families(nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.closeFamilies()
	out := map[string]pinned{}
	for _, e := range d.Registry().List() {
		def := e.Definition()
		b, err := json.Marshal(def)
		if err != nil {
			t.Fatal(err)
		}
		// toolingVersion (and its _meta copy) names the build, not the contract.
		var fields map[string]json.RawMessage
		json.Unmarshal(b, &fields)
		delete(fields, "toolingVersion")
		delete(fields, "_meta")
		b, _ = json.Marshal(fields)
		var canon bytes.Buffer
		json.Indent(&canon, b, "", "  ")
		out[def.Name] = pinned{SchemaVersion: def.SchemaVersion, Definition: canon.Bytes()}
	}
	return out
}

// TestToolDefinitionsPinned enforces the tool contract's versioning rule
// (docs/architecture.md): a tool's definition may not change without a
// schemaVersion bump, versions never go down, and tool names never disappear. After a deliberate change and bump, re-pin with
//
//	go test ./daemon -run TestToolDefinitionsPinned -update
func TestToolDefinitionsPinned(t *testing.T) {
	current := currentDefinitions(t)
	if *update {
		names := make([]string, 0, len(current))
		for n := range current {
			names = append(names, n)
		}
		sort.Strings(names)
		b, _ := json.MarshalIndent(current, "", "  ")
		if err := os.WriteFile(snapshotPath, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("pinned %d tools: %v", len(names), names)
		return
	}
	raw, err := os.ReadFile(snapshotPath)
	if err != nil {
		t.Fatalf("read %s: %v (create it with -update)", snapshotPath, err)
	}
	var golden map[string]pinned
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatalf("%s: %v", snapshotPath, err)
	}
	for _, problem := range compareSnapshots(golden, current) {
		t.Error(problem)
	}
}

// compareSnapshots lists every way current breaks the pinned contract.
func compareSnapshots(golden, current map[string]pinned) []string {
	var problems []string
	for name, g := range golden {
		c, ok := current[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("tool %s was removed: tool names are stable (docs/protocol.md)", name))
		case c.SchemaVersion < g.SchemaVersion:
			problems = append(problems, fmt.Sprintf("tool %s: schemaVersion went down from %d to %d", name, g.SchemaVersion, c.SchemaVersion))
		case !jsonEqual(c.Definition, g.Definition) && c.SchemaVersion == g.SchemaVersion:
			problems = append(problems, fmt.Sprintf("tool %s: definition changed without a schemaVersion bump (still %d); bump it, then re-pin with -update", name, c.SchemaVersion))
		case !jsonEqual(c.Definition, g.Definition) || c.SchemaVersion != g.SchemaVersion:
			problems = append(problems, fmt.Sprintf("tool %s: schemaVersion bumped to %d; re-pin with -update", name, c.SchemaVersion))
		}
	}
	for name := range current {
		if _, ok := golden[name]; !ok {
			problems = append(problems, fmt.Sprintf("tool %s is new: pin it with -update", name))
		}
	}
	sort.Strings(problems)
	return problems
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// TestSnapshotComparison proves the check catches each kind of drift.
func TestSnapshotComparison(t *testing.T) {
	def := func(desc string) json.RawMessage { return json.RawMessage(`{"name":"t","description":"` + desc + `"}`) }
	golden := map[string]pinned{"t": {1, def("a")}, "gone": {1, def("x")}}
	cases := []struct {
		name    string
		current map[string]pinned
		want    []string
	}{
		{"unchanged", map[string]pinned{"t": {1, def("a")}, "gone": {1, def("x")}}, nil},
		{"changed without bump", map[string]pinned{"t": {1, def("b")}, "gone": {1, def("x")}}, []string{"tool t: definition changed without a schemaVersion bump (still 1); bump it, then re-pin with -update"}},
		{"bumped, not re-pinned", map[string]pinned{"t": {2, def("b")}, "gone": {1, def("x")}}, []string{"tool t: schemaVersion bumped to 2; re-pin with -update"}},
		{"version down", map[string]pinned{"t": {0, def("a")}, "gone": {1, def("x")}}, []string{"tool t: schemaVersion went down from 1 to 0"}},
		{"removed and added", map[string]pinned{"t": {1, def("a")}, "new": {1, def("n")}}, []string{"tool gone was removed: tool names are stable (docs/protocol.md)", "tool new is new: pin it with -update"}},
		{"whitespace is not a change", map[string]pinned{"t": {1, json.RawMessage(`{ "description":"a", "name":"t" }`)}, "gone": {1, def("x")}}, nil},
	}
	for _, c := range cases {
		got := compareSnapshots(golden, c.current)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}
