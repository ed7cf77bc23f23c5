//go:build unix

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listing is what one client saw of one server: each list's items as
// JSON ("error: ..." when the list was refused) and, for
// server-filesystem, what list_allowed_directories answered ("allowed").
type listing map[string]string

// listKinds are the lists compared, and the member holding their items.
var listKinds = []struct{ method, member string }{
	{"tools/list", "tools"}, {"prompts/list", "prompts"}, {"resources/list", "resources"}, {"resources/templates/list", "resourceTemplates"},
}

// matrixProfile is one client the matrix drives: lists gives, for each
// target (a name and the argv that starts the server: the server itself,
// or hearth run and the server), what the client saw of it, started in
// dir with env; it may return before the client is done (the Inspector's
// runs go on beside the other clients'), and the function it returns
// waits for them.
type matrixProfile struct {
	name  string
	lists func(t *testing.T, env []string, dir string, targets [][2][]string) func() []listing
}

// For each client the tests drive (the TypeScript SDK v1 and v2, the Go
// SDK, mcp-go, the Inspector CLI, and Claude Code 2.1.197 and the newest
// CLI, whose handshake is recorded from the real CLI and replayed: it
// lists nothing without an account) and each of server-everything,
// server-filesystem on a directory and server-memory, the lists through
// `hearth run` equal a direct spawn's by the same client (and the
// initialize result, for the clients driven from Go), and so does
// server-filesystem's list_allowed_directories: a client that declares
// roots is asked for its own, one that declares none leaves the server
// its command line's directory. The clients attach in alternation to one
// daemon (the Inspector's runs going on beside the others'), those of the
// Go side staying attached, so instances of every shape serve at once; no two instances of one server serve one shape in
// one directory (docs/decisions/0056-client-shape.md).
func TestHostedListsEqualDirectSpawnForEveryClient(t *testing.T) {
	node := needNode(t)
	everything, filesystem, memory := npmServer(t, "server-everything"), npmServer(t, "server-filesystem"), npmServer(t, "server-memory")
	env, _ := startUserDaemon(t)
	project := filepath.Join(envValue(env, "HOME"), "project")
	shared := filepath.Join(envValue(env, "HOME"), "shared")
	for _, d := range []string{project, shared} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	project, _ = filepath.EvalSymlinks(project)
	shared, _ = filepath.EvalSymlinks(shared)
	servers := []struct {
		name string
		argv []string
	}{
		{"server-everything", []string{node, everything}},
		{"server-filesystem", []string{node, filesystem, shared}},
		{"server-memory", []string{node, memory}},
	}

	profiles := []matrixProfile{
		{"Go SDK", each(goSDKListing)},
		{"TypeScript SDK v1", tsListing("v1")},
	}
	for _, cli := range claudeCLIs(t) {
		rec := recordClaude(t, cli)
		profiles = append(profiles, matrixProfile{"Claude Code " + cli.version, each(func(t *testing.T, env []string, dir string, argv []string) listing {
			return startReplay(t, env, dir, argv, rec.Probe, rec.Init, replayRoots(rec, dir)).listing()
		})})
	}
	profiles = append(profiles,
		matrixProfile{"Inspector CLI", inspectorListings},
		matrixProfile{"mcp-go", each(mcpGoListing)},
		matrixProfile{"TypeScript SDK v2", tsListing("v2")},
	)

	type run struct {
		profile, server string
		wait            func() []listing
	}
	var runs []run
	for _, srv := range servers {
		for _, p := range profiles {
			runs = append(runs, run{p.name, srv.name,
				p.lists(t, env, project, [][2][]string{{{"direct"}, srv.argv}, {{"hosted"}, append([]string{bin.hearth, "run", "--"}, srv.argv...)}})})
		}
	}
	for _, r := range runs {
		got := r.wait()
		direct, hosted := got[0], got[1]
		if !strings.Contains(direct["tools/list"], `"name"`) {
			t.Errorf("%s, %s: the direct spawn lists no tools: %.300s", r.profile, r.server, direct["tools/list"])
		}
		for _, k := range append([]string{"initialize", "allowed"}, methods()...) {
			d, h := direct[k], hosted[k]
			switch k {
			case "initialize":
				// A client that probes with server/discover speaks 2026-07-28
				// through hearth (the era bridge, decision 0072), and falls
				// back to the 2025 handshake with the server spawned
				// directly: what it was told is otherwise the same.
				if v := protocolVersionOf(d); v != "" && protocolVersionOf(h) == "2026-07-28" {
					h = strings.Replace(h, `"protocolVersion":"2026-07-28"`, `"protocolVersion":"`+v+`"`, 1)
					t.Logf("%s, %s: 2026-07-28 through hearth, %s directly", r.profile, r.server, v)
				}
			case "tools/list":
				// hearth lists tools in order of name (decision 0073).
				d, h = byName(t, d, true), byName(t, h, false)
			}
			if d != h {
				t.Errorf("%s, %s: %s through hearth differs from a direct spawn:\nhosted: %.1500s\ndirect: %.1500s", r.profile, r.server, k, hosted[k], direct[k])
			}
		}
		if r.server == "server-filesystem" {
			t.Logf("%s: server-filesystem allows %q", r.profile, direct["allowed"])
			if direct["allowed"] == "" {
				t.Errorf("%s: list_allowed_directories answered nothing", r.profile)
			}
		}
	}

	// Instances: one per shape (and directory) of each server.
	var st struct {
		Hosted []struct {
			Name, Server, Key, Scope, Shape, State string
			EnvNames                               []string
		}
	}
	if err := json.Unmarshal(statusJSON(t, env), &st); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	n := 0
	for _, h := range st.Hosted {
		if h.State == "stopped" {
			continue
		}
		n++
		// The clients driven from Go give the shim the test's environment,
		// which differs from its parent's: variables of the entry's.
		id := h.Server + "|" + h.Scope + "|" + h.Shape + "|" + strings.Join(h.EnvNames, ",")
		if other, ok := seen[id]; ok {
			t.Errorf("two instances of %s serve one shape in %s: %s and %s (%s)", h.Server, h.Scope, other, h.Key, h.Shape)
		}
		seen[id] = h.Key
		t.Logf("instance %s %s in %s: %s; variables %v", h.Name, h.Key, h.Scope, h.Shape, h.EnvNames)
	}
	t.Logf("%d instances for %d clients on %d servers", n, len(profiles), len(servers))
}

func methods() []string {
	var out []string
	for _, k := range listKinds {
		out = append(out, k.method)
	}
	return out
}

// each makes a profile's lists of a function that lists one target.
func each(one func(t *testing.T, env []string, dir string, argv []string) listing) func(*testing.T, []string, string, [][2][]string) func() []listing {
	return func(t *testing.T, env []string, dir string, targets [][2][]string) func() []listing {
		out := make([]listing, len(targets))
		for i, tg := range targets {
			out[i] = one(t, env, dir, tg[1])
		}
		return func() []listing { return out }
	}
}

// tsListing lists with test/ts/lists.mjs: one node process for every
// target, each with the SDK's default environment.
func tsListing(sdk string) func(*testing.T, []string, string, [][2][]string) func() []listing {
	return func(t *testing.T, env []string, dir string, targets [][2][]string) func() []listing {
		args := []string{sdk, dir}
		for _, tg := range targets {
			args = append(args, tg[0][0]+"="+strings.Join(tg[1], "\t"))
		}
		var raw map[string]map[string]json.RawMessage
		out := runNodeScript(t, env, "lists.mjs", args...)
		// Its result is its last line (an SDK may warn on stdout before).
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &raw); err != nil {
			t.Fatalf("lists.mjs %s: %v: %s", sdk, err, out)
		}
		res := make([]listing, len(targets))
		for i, tg := range targets {
			l := listing{}
			r := raw[tg[0][0]]
			for j, k := range listKinds {
				l[k.method] = string(r[[]string{"tools", "prompts", "resources", "templates"}[j]])
			}
			if a, ok := r["allowed"]; ok {
				var s string
				json.Unmarshal(a, &s)
				l["allowed"] = s
			}
			res[i] = l
		}
		return func() []listing { return res }
	}
}

// goSDKListing lists with the Go SDK's client, its default options (it
// declares roots, and lists none), staying attached until the test ends.
func goSDKListing(t *testing.T, env []string, dir string, argv []string) listing {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, dir
	cl := mcp.NewClient(&mcp.Implementation{Name: "hearth-e2e-lists-go", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("go sdk: connect %v: %v", argv, err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cs.Close() })
	l := listing{
		"initialize":               string(mustMarshal(cs.InitializeResult())),
		"tools/list":               seqListing(cs.Tools(ctx, nil)),
		"prompts/list":             seqListing(cs.Prompts(ctx, nil)),
		"resources/list":           seqListing(cs.Resources(ctx, nil)),
		"resources/templates/list": seqListing(cs.ResourceTemplates(ctx, nil)),
	}
	if strings.Contains(l["tools/list"], `"list_allowed_directories"`) {
		l["allowed"] = stableAllowed(func() string {
			out, _ := callText(t, cs, "list_allowed_directories", map[string]any{})
			return out
		})
	}
	return l
}

// seqListing is every item a Go SDK iterator yields, as JSON, or the
// error it ended with.
func seqListing[T any](seq iter.Seq2[T, error]) string {
	var items []T
	for it, err := range seq {
		if err != nil {
			return "error: " + err.Error()
		}
		items = append(items, it)
	}
	return string(mustMarshal(items))
}

// mcpGoListing lists with mark3labs/mcp-go's stdio client, declaring no
// capabilities, staying attached until the test ends.
func mcpGoListing(t *testing.T, env []string, dir string, argv []string) listing {
	t.Helper()
	var started *exec.Cmd
	c, err := mcpgo.NewStdioMCPClientWithOptions(argv[0], env, argv[1:], transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
		cmd := exec.CommandContext(ctx, command, args...)
		cmd.Env, cmd.Dir = env, dir
		started = cmd
		return cmd, nil
	}))
	if err != nil {
		t.Fatalf("mcp-go: start %v: %v", argv, err)
	}
	t.Cleanup(func() {
		if started != nil && started.Process != nil {
			started.Process.Kill()
		}
		c.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init := gomcp.InitializeRequest{}
	init.Params.ProtocolVersion = gomcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = gomcp.Implementation{Name: "hearth-e2e-lists-mcp-go", Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("mcp-go: initialize %v: %v", argv, err)
	}
	l := listing{"initialize": string(mustMarshal(res))}
	keep := func(method string, items any, err error) {
		if err != nil {
			l[method] = "error: " + err.Error()
			return
		}
		var v any
		json.Unmarshal(mustMarshal(items), &v)
		l[method] = string(mustMarshal(v))
	}
	if r, err := c.ListTools(ctx, gomcp.ListToolsRequest{}); err == nil {
		keep("tools/list", r.Tools, nil)
	} else {
		keep("tools/list", nil, err)
	}
	if r, err := c.ListPrompts(ctx, gomcp.ListPromptsRequest{}); err == nil {
		keep("prompts/list", r.Prompts, nil)
	} else {
		keep("prompts/list", nil, err)
	}
	if r, err := c.ListResources(ctx, gomcp.ListResourcesRequest{}); err == nil {
		keep("resources/list", r.Resources, nil)
	} else {
		keep("resources/list", nil, err)
	}
	if r, err := c.ListResourceTemplates(ctx, gomcp.ListResourceTemplatesRequest{}); err == nil {
		keep("resources/templates/list", r.ResourceTemplates, nil)
	} else {
		keep("resources/templates/list", nil, err)
	}
	if strings.Contains(l["tools/list"], `"list_allowed_directories"`) {
		l["allowed"] = stableAllowed(func() string {
			req := gomcp.CallToolRequest{}
			req.Params.Name = "list_allowed_directories"
			res, err := c.CallTool(ctx, req)
			if err != nil {
				return "error: " + err.Error()
			}
			return mcpGoText(res)
		})
	}
	return l
}

// inspectorRunOf is one run of the Inspector CLI: the target and list it
// is for, its arguments, and what it printed.
type inspectorRunOf struct {
	target int
	key    string
	args   []string
	raw    []byte
	err    error
}

// inspectorListings lists with the MCP Inspector CLI, one run per method
// and target (it starts the server each time), all at once: each run
// waits about 2 s for a server that does not exit as its stdin closes. It
// lists tools, prompts and resources, not templates (the other clients
// do).
func inspectorListings(t *testing.T, env []string, dir string, targets [][2][]string) func() []listing {
	t.Helper()
	node, launcher := needInspector(t)
	var runs []*inspectorRunOf
	for i := range targets {
		for _, k := range listKinds[:3] { // tools, prompts, resources: each run costs seconds
			runs = append(runs, &inspectorRunOf{target: i, key: k.method, args: []string{"--method", k.method}})
		}
		if strings.Contains(targets[i][1][len(targets[i][1])-2], "server-filesystem") {
			runs = append(runs, &inspectorRunOf{target: i, key: "allowed", args: []string{"--method", "tools/call", "--tool-name", "list_allowed_directories"}})
		}
	}
	var wg sync.WaitGroup // waited for by inspectorResults
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			argv := append(append([]string{launcher, "--cli", "--format", "json"}, r.args...), "--")
			cmd := exec.CommandContext(ctx, node, append(argv, targets[r.target][1]...)...)
			cmd.Env, cmd.Dir = env, dir
			r.raw, r.err = cmd.Output()
		}()
	}
	return func() []listing { return inspectorResults(&wg, runs, len(targets)) }
}

// inspectorResults are the Inspector's listings, once its runs are done.
func inspectorResults(wg *sync.WaitGroup, runs []*inspectorRunOf, targets int) []listing {
	wg.Wait()
	out := make([]listing, targets)
	for i := range out {
		out[i] = listing{}
	}
	for _, r := range runs {
		var res struct{ Result map[string]json.RawMessage }
		if r.err != nil || json.Unmarshal(r.raw, &res) != nil {
			out[r.target][r.key] = fmt.Sprintf("error: %v: %s", r.err, r.raw)
			continue
		}
		if r.key == "allowed" {
			var v any
			json.Unmarshal(mustMarshal(res.Result), &v)
			out[r.target][r.key] = toolText(v)
			continue
		}
		for _, k := range listKinds {
			if k.method == r.key {
				var v any
				json.Unmarshal(res.Result[k.member], &v)
				out[r.target][r.key] = string(mustMarshal(v))
			}
		}
	}
	return out
}

// Real mixes of clients on one server in one project, and the instances
// they cost (docs/decisions/0056-client-shape.md): six sessions of one
// client (Claude Code, its handshake as recorded) share one instance;
// beside them a Cursor-like and a VS Code-like client (their handshakes as
// those clients send them), an agent on the TypeScript SDK (no
// capabilities) and the Go SDK client, two sessions each, add one instance
// per shape, never one per session.
func TestHostedInstancesForClientMixes(t *testing.T) {
	env, _, state := shimEnv(t)
	project := filepath.Join(state, "project")
	os.MkdirAll(project, 0o755)
	server := copyServer(t, state)
	argv := []string{bin.hearth, "run", "--", server}
	instances := func() int {
		var st struct {
			Hosted []struct{ Command, State string }
		}
		if err := json.Unmarshal(statusJSON(t, env), &st); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range st.Hosted {
			if h.Command == server && h.State != "stopped" {
				n++
			}
		}
		return n
	}
	clis := claudeCLIs(t)
	claude := recordClaude(t, clis[len(clis)-1])
	for range 6 {
		startReplay(t, env, project, argv, claude.Probe, claude.Init, replayRoots(claude, project))
	}
	if n := instances(); n != 1 {
		t.Fatalf("six sessions of Claude Code %s: %d instances, want 1", clis[len(clis)-1].version, n)
	}
	others := []struct{ name, init string }{
		{"Cursor-like", `{"protocolVersion":"2025-06-18","capabilities":{"roots":{},"elicitation":{}},"clientInfo":{"name":"cursor-vscode","version":"1.0.0"}}`},
		{"VS Code-like", `{"protocolVersion":"2025-06-18","capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}},"clientInfo":{"name":"Visual Studio Code","version":"1.105.0"}}`},
		{"an agent on the TypeScript SDK", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"my-agent","version":"0.3.0"}}`},
	}
	for _, o := range others {
		for range 2 {
			startReplay(t, env, project, argv, nil, json.RawMessage(o.init), json.RawMessage(`{"roots":[]}`))
		}
	}
	for range 2 {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env, cmd.Dir = env, project
		connectCommand(t, cmd, nil, "")
	}
	sessions, want := 6+2*len(others)+2, 1+len(others)+1
	if n := instances(); n != want {
		t.Fatalf("%d sessions of %d clients: %d instances, want one per client (%d)", sessions, 2+len(others), n, want)
	}
	t.Logf("%d sessions of %d clients on one server: %d instances (a direct spawn per session: %d processes)", sessions, 2+len(others), want, sessions)
}

// protocolVersion is an initialize result's protocolVersion ("" when it
// has none).
func protocolVersionOf(initialize string) string {
	var r struct{ ProtocolVersion string }
	json.Unmarshal([]byte(initialize), &r)
	return r.ProtocolVersion
}

// byName writes a listing's array of tools again (sorted by name when
// sort is set; a listing that is no array, an error, as it is), so that
// two listings compare in one order and one format.
func byName(t *testing.T, list string, sort bool) string {
	var items []json.RawMessage
	if json.Unmarshal([]byte(list), &items) != nil {
		return list
	}
	name := func(raw json.RawMessage) string {
		var v struct{ Name string }
		json.Unmarshal(raw, &v)
		return v.Name
	}
	if sort {
		slices.SortStableFunc(items, func(a, b json.RawMessage) int { return strings.Compare(name(a), name(b)) })
	} else if !slices.IsSortedFunc(items, func(a, b json.RawMessage) int { return strings.Compare(name(a), name(b)) }) {
		t.Errorf("tools not in order of name through hearth: %.300s", list)
	}
	return string(mustMarshal(items))
}
