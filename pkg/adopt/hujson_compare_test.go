package adopt

// The comparison of decision 0037 (revised 2026-11-27): adopt's edits made
// by pkg/jsonc + pkg/textedit and by github.com/tailscale/hujson (Parse, the
// same changes made to its syntax tree, Pack), byte for byte, on adopt's
// cases. A throwaway experiment: run with
//   go test -count=1 -run 'TestHujson' -v ./pkg/adopt/
//   go test -count=1 -run '^$' -bench 'Compare' -benchmem ./pkg/adopt/

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonc"
	"github.com/tailscale/hujson"
)

type cmpCase struct {
	name string
	src  string
	loc  Location
	opt  Options
}

func cmpCases() []cmpCase {
	json := func(key string) Location { return Location{Key: key} }
	jsoncLoc := func(key string) Location { return Location{Key: key, Syntax: jsonc.JSONC} }
	var cs []cmpCase
	for _, e := range []struct{ name, entry string }{
		{"shape: no args, one line", `{"command": "x"}`},
		{"shape: no args, env after", "{\n  \"command\": \"x\",\n  \"env\": {}\n}"},
		{"shape: no args, command last", "{\n  \"env\": {},\n  \"command\": \"x\"\n}"},
		{"shape: null args", `{"command": "x", "args": null}`},
		{"shape: empty args", `{"args": [ ], "command": "x"}`},
		{"shape: one arg", `{"command": "x", "args": ["a"]}`},
		{"shape: tight args", `{"command":"x","args":["a","b"]}`},
		{"shape: escapes kept", `{"command": "C:\\tools\\x.exe", "args": ["\u0041"]}`},
		{"env: env", `{"command": "npx", "args": ["srv"], "env": {"GITHUB_TOKEN": "t", "DEBUG": "1"}}`},
		{"env: empty env", `{"command": "x", "env": {}}`},
		{"env: env null", `{"command": "x", "env": null}`},
		{"env: names left out, repeated once", `{"command": "x", "env": {"A,B": "1", "": "2", "C": "3", "C": "4"}}`},
		{"env: only such names", `{"command": "x", "env": {"A=B": "1"}}`},
	} {
		cs = append(cs, cmpCase{e.name, `{"mcpServers": {"s": ` + e.entry + `}}`, json("mcpServers"), Options{}})
	}
	cs = append(cs, cmpCase{"env: env and a sharing mode, no args", `{"mcpServers": {"s": {"env": {"A": "1"}, "command": "x"}}}`,
		json("mcpServers"), Options{Share: map[string]string{"s": "client"}}})
	cs = append(cs,
		cmpCase{"VS Code user mcp.json (comments, trailing commas, ${input})", vscodeUser, jsoncLoc("servers"), Options{}},
		cmpCase{"~/.claude.json with projects", claudeJSON, Location{Key: "mcpServers", Projects: true}, Options{Share: map[string]string{"db": "client"}}},
	)
	for i, s := range []string{
		`{"mcpServers": {"a": {"command": "npx", "args": ["-y", "x"]}, "b": {"url": "http://h"}}}`,
		"{\n  \"servers\": {\n    // c\n    \"a\": {\n      \"command\": \"x\" /* k */,\n      \"args\": [ /* none */ ],\n    },\n  },\n}",
		`{"servers":{"a":{"env":{},"command":"x"},"b":{"command":"y","args":null}}}`,
		`{"servers":{"a":{"command":"x","args":["1"],"command":"z"}}}`,
		`{"servers":{"a":{"command":42},"b":{"command":""},"c":{"command":"x","args":[1]},"d":"npx"}}`,
	} {
		for _, key := range []string{"servers", "mcpServers"} {
			cs = append(cs, cmpCase{fmt.Sprintf("fuzz seed %d, %s", i, key), s, jsoncLoc(key), Options{}})
		}
	}
	cursor := "{\n  \"mcpServers\": {\n    \"github\": {\n      \"command\": \"docker\",\n      \"args\": [\n        \"run\",\n        \"-i\",\n        \"--rm\",\n        \"ghcr.io/github/github-mcp-server\"\n      ],\n      \"env\": {\n        \"GITHUB_PERSONAL_ACCESS_TOKEN\": \"<token>\"\n      }\n    },\n    \"web\": {\n      \"url\": \"https://example.com/mcp\"\n    }\n  }\n}\n"
	desktop := "{\n  \"mcpServers\": {\n    \"filesystem\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/Users/u/Desktop\"]\n    }\n  },\n  \"globalShortcut\": \"\"\n}\n"
	deep := `{"mcpServers": {"a": {"command": "x"}}, "deep": ` + strings.Repeat("[", 900) + strings.Repeat("]", 900) + "}"
	cs = append(cs,
		cmpCase{"Cursor ~/.cursor/mcp.json", cursor, json("mcpServers"), Options{}},
		cmpCase{"Claude Desktop config", desktop, json("mcpServers"), Options{}},
		cmpCase{"BOM", "\ufeff" + desktop, json("mcpServers"), Options{}},
		cmpCase{"CRLF line endings", strings.ReplaceAll(vscodeUser, "\n", "\r\n"), jsoncLoc("servers"), Options{}},
		cmpCase{"CRLF, JSON", strings.ReplaceAll(cursor, "\n", "\r\n"), json("mcpServers"), Options{}},
		cmpCase{"tabs", strings.ReplaceAll(cursor, "  ", "\t"), json("mcpServers"), Options{}},
		cmpCase{"comments inside the edited value", "{\"servers\": {\"a\": {\n  \"command\": /* the tool */ \"npx\" /* k */ , // why\n  \"args\": [ // first\n    \"-y\", /* pkg */ \"x\" // last\n  ],\n}}}", jsoncLoc("servers"), Options{}},
		cmpCase{"comment after command, command last", "{\"servers\": {\"a\": {\"env\": {\"K\": \"v\"}, \"command\": \"npx\" // the tool\n}}}", jsoncLoc("servers"), Options{}},
		cmpCase{"trailing commas everywhere", "{\"servers\": {\"a\": {\"command\": \"x\", \"args\": [\"1\", \"2\",],},},}", jsoncLoc("servers"), Options{}},
		cmpCase{"trailing comma after command", "{\"servers\": {\"a\": {\n  \"command\": \"x\",\n},},}", jsoncLoc("servers"), Options{}},
		cmpCase{"duplicate server name (last counts)", `{"mcpServers": {"a": {"command": "old"}, "a": {"command": "new", "args": ["n"]}}}`, json("mcpServers"), Options{}},
		cmpCase{"duplicate command and args keys", `{"mcpServers": {"a": {"command": "old", "args": ["o"], "command": "new", "args": ["n"]}}}`, json("mcpServers"), Options{}},
		cmpCase{"duplicate top-level servers key", `{"mcpServers": {"a": {"command": "old"}}, "mcpServers": {"b": {"command": "new"}}}`, json("mcpServers"), Options{}},
		cmpCase{"nested 900 deep beside the servers", deep, json("mcpServers"), Options{}},
		cmpCase{"non-ASCII, escapes and invalid UTF-8 in strings", "{\"mcpServers\": {\"\u00e9\": {\"command\": \"\\u00e9\\/x\", \"args\": [\"\xff\", \"<&>\"]}}}", json("mcpServers"), Options{}},
		cmpCase{"empty file", "  \n", jsoncLoc("servers"), Options{}},
	)
	return cs
}

// The invalid inputs: what each parser says, and where.
var cmpInvalid = []struct {
	name, src string
	loc       Location
}{
	{"trailing comma in JSON (Claude Code)", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}", Location{Key: "mcpServers"}},
	{"comment in JSON (Claude Code)", "// c\n{\"mcpServers\": {}}", Location{Key: "mcpServers"}},
	{"missing comma", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\" \"args\": []}\n  }\n}", Location{Key: "mcpServers"}},
	{"unclosed object", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n", Location{Key: "mcpServers"}},
	{"unclosed string", "{\"mcpServers\": {\"a\": {\"command\": \"x}}}\n", Location{Key: "mcpServers"}},
	{"unclosed block comment", "{\"servers\": {}} /* c", Location{Key: "servers", Syntax: jsonc.JSONC}},
	{"bad escape", `{"mcpServers": {"a": {"command": "C:\tools\x"}}}`, Location{Key: "mcpServers"}},
	{"control character in a string", "{\"mcpServers\": {\"a\": {\"command\": \"a\tb\"}}}", Location{Key: "mcpServers"}},
	{"single quotes", `{'mcpServers': {}}`, Location{Key: "mcpServers"}},
	{"leading zero", `{"mcpServers": {}, "n": 012}`, Location{Key: "mcpServers"}},
	{"two values", `{"mcpServers": {}} {}`, Location{Key: "mcpServers"}},
	{"unquoted key", `{mcpServers: {}}`, Location{Key: "mcpServers"}},
	{"nested 100000 deep", strings.Repeat("[", 100000) + strings.Repeat("]", 100000), Location{Key: "mcpServers"}},
}

// hujsonPlan makes, on hujson's tree, the changes the current plan makes
// (the same servers moved, the same layout rules), and packs the tree.
func hujsonPlan(src []byte, loc Location, moves []Decision, shim string) ([]byte, error) {
	v, err := hujson.Parse(src)
	if err != nil {
		return nil, err
	}
	if loc.Syntax == (jsonc.Options{}) && !v.IsStandard() {
		return nil, fmt.Errorf("not standard JSON (comments or trailing commas)")
	}
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, fmt.Errorf("top level not an object")
	}
	for _, d := range moves {
		obj := root
		if d.Scope != "" {
			obj = memberValue(memberValue(root, "projects").Value.(*hujson.Object), d.Scope).Value.(*hujson.Object)
		}
		servers := memberValue(obj, loc.Key).Value.(*hujson.Object)
		entry := memberValue(servers, d.Name).Value.(*hujson.Object)
		hujsonMove(entry, shim, d.Share)
	}
	return v.Pack(), nil
}

// lastMember is the index of key's last member (the one clients read), or -1.
func lastMember(obj *hujson.Object, key string) int {
	for i := len(obj.Members) - 1; i >= 0; i-- {
		if obj.Members[i].Name.Value.(hujson.Literal).String() == key {
			return i
		}
	}
	return -1
}

func memberValue(obj *hujson.Object, key string) *hujson.Value {
	return &obj.Members[lastMember(obj, key)].Value
}

func isBlank(b []byte) bool { return len(bytes.Trim(b, " \t\r\n")) == 0 }

func hujsonMove(entry *hujson.Object, shim, share string) {
	ci := lastMember(entry, "command")
	cmd := &entry.Members[ci].Value
	run := RunArgs(share)
	var names []string
	if ei := lastMember(entry, "env"); ei >= 0 {
		if env, ok := entry.Members[ei].Value.Value.(*hujson.Object); ok {
			for _, m := range env.Members {
				k := m.Name.Value.(hujson.Literal).String()
				if k == "" || strings.ContainsAny(k, ",= \t") || slices.Contains(names, k) {
					continue
				}
				names = append(names, k)
			}
		}
	}
	if len(names) > 0 {
		run = slices.Insert(run, len(run)-1, "--env", strings.Join(names, ","))
	}
	prefix := make([]hujson.Literal, 0, len(run)+1)
	for _, a := range run {
		prefix = append(prefix, hujson.Literal(quote(a)))
	}
	prefix = append(prefix, slices.Clone(cmd.Value.(hujson.Literal)))
	cmd.Value = hujson.Literal(quote(shim))

	elems := func(first hujson.Extra, sep string) []hujson.Value {
		out := make([]hujson.Value, len(prefix))
		for i, l := range prefix {
			out[i].Value = l
			out[i].BeforeExtra = hujson.Extra(sep)
		}
		out[0].BeforeExtra = first
		return out
	}
	ai := lastMember(entry, "args")
	switch {
	case ai < 0:
		// memberSeparator: after the comma that follows command, else before
		// the first member, else a space.
		sep := " "
		if before := entry.Members[0].Name.BeforeExtra; len(before) > 0 && isBlank(before) {
			sep = string(before)
		}
		if ci+1 < len(entry.Members) && isBlank(cmd.AfterExtra) && isBlank(entry.Members[ci+1].Name.BeforeExtra) {
			sep = string(entry.Members[ci+1].Name.BeforeExtra)
		}
		m := hujson.ObjectMember{
			Name:  hujson.Value{BeforeExtra: hujson.Extra(sep), Value: hujson.Literal(`"args"`)},
			Value: hujson.Value{BeforeExtra: hujson.Extra(" "), Value: &hujson.Array{Elements: elems(nil, " ")}, AfterExtra: cmd.AfterExtra},
		}
		cmd.AfterExtra = nil
		entry.Members = slices.Insert(entry.Members, ci+1, m)
	default:
		args := &entry.Members[ai].Value
		switch arr := args.Value.(type) {
		case hujson.Literal: // null
			args.Value = &hujson.Array{Elements: elems(nil, " ")}
		case *hujson.Array:
			if len(arr.Elements) == 0 {
				arr.Elements = elems(nil, " ")
				break
			}
			sep := " "
			if before := arr.Elements[0].BeforeExtra; len(before) > 0 && isBlank(before) {
				sep = string(before)
			}
			if len(arr.Elements) > 1 && isBlank(arr.Elements[0].AfterExtra) && isBlank(arr.Elements[1].BeforeExtra) {
				sep = string(arr.Elements[1].BeforeExtra)
			}
			first := arr.Elements[0].BeforeExtra
			arr.Elements[0].BeforeExtra = hujson.Extra(sep)
			arr.Elements = append(elems(first, sep), arr.Elements...)
		}
	}
}

func currentPlan(t *testing.T, c cmpCase) (*File, *Plan) {
	loc := c.loc
	loc.Path = write(t, []byte(c.src))
	f := load(t, loc)
	p, err := f.Plan(c.opt)
	if err != nil {
		t.Fatal(err)
	}
	return f, p
}

func TestHujsonComparison(t *testing.T) {
	var table strings.Builder
	fmt.Fprintf(&table, "| case | current (jsonc+textedit) | hujson | same bytes |\n|---|---|---|---|\n")
	for _, c := range cmpCases() {
		f, p := currentPlan(t, c)
		var moves []Decision
		for _, d := range p.Decisions {
			if d.Action == Move {
				moves = append(moves, d)
			}
		}
		cur := "ok"
		switch {
		case f.Err != nil:
			cur = "refused: " + f.Err.Error()
		case !p.Changed():
			cur = "ok, no change"
		default:
			cur = fmt.Sprintf("ok, %d moved", len(moves))
		}
		var hu string
		var same string
		if jsonc.Blank([]byte(c.src), c.loc.Syntax) && f.Err == nil {
			_, err := hujson.Parse([]byte(c.src))
			hu = fmt.Sprintf("Parse: %v", err)
			same = "n/a"
		} else if out, err := hujsonPlan([]byte(c.src), c.loc, moves, "hearth"); err != nil {
			hu = "refused: " + err.Error()
			same = "n/a"
		} else {
			hu = "ok"
			same = "yes"
			if f.Err == nil && !bytes.Equal(out, p.New) {
				same = "NO"
				t.Logf("%s:\ncurrent:\n%s\nhujson:\n%s", c.name, p.New, out)
			}
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %s |\n", c.name, cur, hu, same)
	}
	fmt.Fprintf(&table, "\n| invalid input | current error | hujson error |\n|---|---|---|\n")
	for _, c := range cmpInvalid {
		cur, hu := "(accepted)", "(accepted)"
		if _, err := jsonc.Parse([]byte(c.src), c.loc.Syntax); err != nil {
			cur = err.Error()
		}
		if v, err := hujson.Parse([]byte(c.src)); err != nil {
			hu = err.Error()
		} else if c.loc.Syntax == (jsonc.Options{}) && !v.IsStandard() {
			hu = "(parses; IsStandard() false, no position)"
		}
		fmt.Fprintf(&table, "| %s | %s | %s |\n", c.name, cur, hu)
	}
	t.Logf("\n%s", table.String())
}

// TestHujsonDepth: hujson has no nesting bound; run in a child with a 64 MB
// stack limit, a 2 MB file of '[' ends the process (a fatal error, not a
// panic to recover), where jsonc refuses it at MaxDepth.
func TestHujsonDepth(t *testing.T) {
	src := bytes.Repeat([]byte("["), 2<<20)
	if os.Getenv("HUJSON_DEPTH_CHILD") == "1" {
		debug.SetMaxStack(64 << 20)
		_, err := hujson.Parse(src)
		fmt.Println("hujson returned:", err)
		return
	}
	_, err := jsonc.Parse(src, jsonc.Options{})
	t.Logf("jsonc: %v", err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHujsonDepth$")
	cmd.Env = append(os.Environ(), "HUJSON_DEPTH_CHILD=1")
	out, err := cmd.CombinedOutput()
	first, _, _ := strings.Cut(string(out), "\n\n")
	t.Logf("hujson child: %v\n%s", err, first)
}

func largeClaudeJSON(size int) []byte {
	var sb strings.Builder
	sb.WriteString("{\n  \"mcpServers\": {\"a\": {\"command\": \"npx\", \"args\": [\"x\"]}},\n  \"projects\": {\n")
	for i := 0; sb.Len() < size; i++ {
		fmt.Fprintf(&sb, "    \"/home/u/p%d\": {\"history\": [", i)
		for j := 0; j < 20; j++ {
			fmt.Fprintf(&sb, "{\"display\": \"a prompt of some length, number %d, with \\\"quotes\\\" and more words\"},\n", j)
		}
		sb.WriteString("{}], \"mcpServers\": {}},\n")
	}
	sb.WriteString("    \"/home/u/last\": {\"mcpServers\": {\"b\": {\"command\": \"uvx\", \"args\": [\"y\"]}}}\n  }\n}\n")
	return []byte(sb.String())
}

// The 10 MB ~/.claude.json: parse alone, and parse + the two moves + the
// new text, each way. (The current way's diff is BenchmarkPlanLargeClaudeJSON.)
func BenchmarkCompareParse(b *testing.B) {
	src := largeClaudeJSON(10 << 20)
	b.Run("jsonc", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, err := jsonc.Parse(src, jsonc.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hujson", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, err := hujson.Parse(src); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkCompareEdit(b *testing.B) {
	src := largeClaudeJSON(10 << 20)
	loc := Location{Key: "mcpServers", Projects: true}
	loc.Path = b.TempDir() + "/c.json"
	os.WriteFile(loc.Path, src, 0o600)
	f, _ := Load(loc)
	p, _ := f.Plan(Options{})
	var moves []Decision
	for _, d := range p.Decisions {
		if d.Action == Move {
			moves = append(moves, d)
		}
	}
	b.Run("jsonc+textedit", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			root, err := jsonc.Parse(src, jsonc.Options{})
			if err != nil {
				b.Fatal(err)
			}
			f := &File{Location: loc, Src: src, Root: root}
			f.addServers(root, "", loc.Key)
			for _, m := range root.Get("projects").Visible() {
				f.addServers(m.Value, m.Key, loc.Key)
			}
			if p, _ := f.Plan(Options{}); !bytes.Equal(p.New, p.New) {
				b.Fatal()
			}
		}
	})
	b.Run("hujson", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			out, err := hujsonPlan(src, loc, moves, "hearth")
			if err != nil || !bytes.Equal(out, p.New) {
				b.Fatal(err, "differs")
			}
		}
	})
}

// TestHujsonPatch: the same move as an RFC 6902 patch, hujson's own way to
// change a tree.
func TestHujsonPatch(t *testing.T) {
	for _, c := range []struct{ name, src, patch string }{
		{"no args, env after", "{\"mcpServers\": {\"s\": {\n  \"command\": \"x\",\n  \"env\": {}\n}}}",
			`[{"op": "replace", "path": "/mcpServers/s/command", "value": "hearth"}, {"op": "add", "path": "/mcpServers/s/args", "value": ["run", "--", "x"]}]`},
		{"args before the first", "{\"mcpServers\": {\"s\": {\n  \"command\": \"x\",\n  \"args\": [\n    \"a\"\n  ]\n}}}",
			`[{"op": "replace", "path": "/mcpServers/s/command", "value": "hearth"}, {"op": "add", "path": "/mcpServers/s/args/0", "value": "run"}, {"op": "add", "path": "/mcpServers/s/args/1", "value": "--"}, {"op": "add", "path": "/mcpServers/s/args/2", "value": "x"}]`},
		{"duplicate command", `{"mcpServers": {"s": {"command": "old", "command": "new"}}}`,
			`[{"op": "replace", "path": "/mcpServers/s/command", "value": "hearth"}]`},
		{"escapes", `{"mcpServers": {"s": {"command": "C:\\x\u00e9"}}}`,
			`[{"op": "add", "path": "/mcpServers/s/args", "value": ["run", "--", "C:\\x\u00e9"]}]`},
	} {
		v, err := hujson.Parse([]byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Patch([]byte(c.patch)); err != nil {
			t.Logf("%s: Patch: %v", c.name, err)
			continue
		}
		out := v.Pack()
		v.Format()
		t.Logf("%s:\nsource:    %q\nPatch:     %q\n+Format(): %q", c.name, c.src, out, v.Pack())
	}
}
