//go:build unix

package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverMemory starts the official memory server (the version pinned in
// test/ts) on file, skipping (failing in CI) without node.
func serverMemory(t *testing.T, file string) *mcp.ClientSession {
	t.Helper()
	node := needNode(t)
	script, _ := filepath.Abs(filepath.Join("ts", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js"))
	_, err := os.Stat(script)
	needOrSkip(t, err == nil, "@modelcontextprotocol/server-memory in test/ts/node_modules")
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// graphAnswer is a tool's answer reduced to what both servers share: an
// error flag with its text, or the structured result with entities,
// relations and other members compared as sets.
type graphAnswer struct {
	isError   bool
	text      string
	entities  []string // "name|type|obs1;obs2"
	relations []string // "from|type|to"
	other     map[string]any
}

func answerOf(t *testing.T, res *mcp.CallToolResult) graphAnswer {
	t.Helper()
	var a graphAnswer
	a.isError = res.IsError
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			a.text = tc.Text
		}
	}
	if a.isError {
		return a
	}
	b, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
	a.other = map[string]any{}
	for k, v := range m {
		switch k {
		case "entities":
			for _, e := range v.([]any) {
				e := e.(map[string]any)
				var obs []string
				for _, o := range e["observations"].([]any) {
					obs = append(obs, o.(string))
				}
				a.entities = append(a.entities, fmt.Sprintf("%s|%s|%s", e["name"], e["entityType"], strings.Join(obs, ";")))
			}
		case "relations":
			for _, r := range v.([]any) {
				r := r.(map[string]any)
				a.relations = append(a.relations, fmt.Sprintf("%s|%s|%s", r["from"], r["relationType"], r["to"]))
			}
		case "results":
			var rs []string
			for _, r := range v.([]any) {
				b, _ := json.Marshal(r)
				rs = append(rs, string(b))
			}
			sort.Strings(rs)
			a.other[k] = rs
		default:
			a.other[k] = v
		}
	}
	sort.Strings(a.entities)
	sort.Strings(a.relations)
	return a
}

func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// graphScript is the same sequence of graph calls for both servers: creates
// with duplicates, observations on a missing entity, deletes that cascade,
// searches and opens.
var graphScript = []struct {
	tool string
	args map[string]any
}{
	{"create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Alice", "entityType": "person", "observations": []any{"likes tea", "works on hearth"}},
		map[string]any{"name": "Bob", "entityType": "person", "observations": []any{"writes Go"}},
		map[string]any{"name": "hearth", "entityType": "project", "observations": []any{"one daemon per user", "SQLite store"}},
		map[string]any{"name": "Straße", "entityType": "Place", "observations": []any{"ÜBER alles"}},
	}}},
	{"create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Alice", "entityType": "robot", "observations": []any{"ignored"}},
		map[string]any{"name": "Carol", "entityType": "person", "observations": []any{}},
	}}},
	{"create_relations", map[string]any{"relations": []any{
		map[string]any{"from": "Alice", "to": "hearth", "relationType": "maintains"},
		map[string]any{"from": "Bob", "to": "hearth", "relationType": "contributes_to"},
		map[string]any{"from": "Alice", "to": "Bob", "relationType": "knows"},
		map[string]any{"from": "Ghost", "to": "Carol", "relationType": "haunts"},
		map[string]any{"from": "Carol", "to": "Nobody", "relationType": "knows"},
	}}},
	{"create_relations", map[string]any{"relations": []any{
		map[string]any{"from": "Alice", "to": "Bob", "relationType": "knows"},
		map[string]any{"from": "Bob", "to": "Alice", "relationType": "knows"},
	}}},
	{"add_observations", map[string]any{"observations": []any{
		map[string]any{"entityName": "Alice", "contents": []any{"likes tea", "plays chess"}},
		map[string]any{"entityName": "Carol", "contents": []any{"new here"}},
	}}},
	{"add_observations", map[string]any{"observations": []any{
		map[string]any{"entityName": "Bob", "contents": []any{"not added"}},
		map[string]any{"entityName": "Nobody", "contents": []any{"x"}},
	}}},
	{"open_nodes", map[string]any{"names": []any{"Bob"}}},
	{"search_nodes", map[string]any{"query": "person"}},
	{"search_nodes", map[string]any{"query": "TEA"}},
	{"search_nodes", map[string]any{"query": "über"}},
	{"search_nodes", map[string]any{"query": "nothing matches this"}},
	{"search_nodes", map[string]any{"query": ""}},
	{"open_nodes", map[string]any{"names": []any{"Alice", "Carol", "Ghost", "Nobody"}}},
	{"delete_observations", map[string]any{"deletions": []any{
		map[string]any{"entityName": "Alice", "observations": []any{"likes tea", "never there"}},
		map[string]any{"entityName": "Nobody", "observations": []any{"x"}},
	}}},
	{"delete_relations", map[string]any{"relations": []any{
		map[string]any{"from": "Bob", "to": "hearth", "relationType": "contributes_to"},
		map[string]any{"from": "Bob", "to": "hearth", "relationType": "no_such"},
	}}},
	{"delete_entities", map[string]any{"entityNames": []any{"Bob", "Ghost", "Nobody at all"}}},
	{"open_nodes", map[string]any{"names": []any{"Alice", "Bob"}}},
	{"search_nodes", map[string]any{"query": "knows"}},
	{"read_graph", map[string]any{}},
}

// TestGraphAgreesWithServerMemory runs the same script against the official
// memory server and against hearth through the shim: every answer agrees
// (as sets; search_nodes may find more, never less). Then the official
// server's JSONL file imports into hearth, through the daemon and without
// one, and read_graph equals the official server's; and hearth's export
// imports back into a fresh data directory unchanged.
func TestGraphAgreesWithServerMemory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	official := serverMemory(t, file)
	env, _, state := shimEnv(t)
	hearth := shimSession(t, env)
	for i, step := range graphScript {
		o := answerOf(t, callTool(t, official, step.tool, step.args))
		h := answerOf(t, callTool(t, hearth, step.tool, step.args))
		where := fmt.Sprintf("step %d %s(%v)", i, step.tool, step.args)
		if o.isError != h.isError {
			t.Fatalf("%s: official error=%v %q, hearth error=%v %q", where, o.isError, o.text, h.isError, h.text)
		}
		if o.isError {
			if !strings.Contains(h.text, o.text) {
				t.Fatalf("%s: hearth's error %q does not carry the official %q", where, h.text, o.text)
			}
			continue
		}
		if step.tool == "search_nodes" {
			if !isSubset(o.entities, h.entities) || !isSubset(o.relations, h.relations) {
				t.Fatalf("%s: hearth found less\nofficial %v %v\nhearth   %v %v", where, o.entities, o.relations, h.entities, h.relations)
			}
			continue
		}
		if !slices.Equal(o.entities, h.entities) || !slices.Equal(o.relations, h.relations) || fmt.Sprint(o.other) != fmt.Sprint(h.other) {
			t.Fatalf("%s:\nofficial %v %v %v\nhearth   %v %v %v", where, o.entities, o.relations, o.other, h.entities, h.relations, h.other)
		}
	}
	want := answerOf(t, callTool(t, official, "read_graph", map[string]any{}))
	if len(want.entities) != 4 || len(want.relations) != 2 {
		t.Fatalf("the script should leave 4 entities and 2 relations: %v %v", want.entities, want.relations)
	}

	// The official server's file, imported into another workspace of the
	// running daemon (through it) and into a data directory nobody owns.
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	out, code := runHearthdCmd(t, env, "memory", "import", "--workspace", "imported", file)
	if code != 0 || !strings.Contains(out, "through the daemon") || !strings.Contains(out, "created 4 entities and 2 relations") {
		t.Fatalf("import through the daemon: exit %d\n%s", code, out)
	}
	got := answerOf(t, callTool(t, hearth, "read_graph", map[string]any{"workspace_id": "imported"}))
	if !slices.Equal(got.entities, want.entities) || !slices.Equal(got.relations, want.relations) {
		t.Fatalf("imported graph:\n%v %v\nofficial:\n%v %v", got.entities, got.relations, want.entities, want.relations)
	}
	if out, code := runHearthdCmd(t, env, "memory", "import", "--workspace", "imported", file); code != 0 || !strings.Contains(out, "created 0 entities and 0 relations, added 0 observations") {
		t.Fatalf("a second import must change nothing: exit %d\n%s", code, out)
	}

	// Export from the daemon, import into a fresh home without a daemon.
	exported := filepath.Join(t.TempDir(), "export.jsonl")
	if out, code := runHearthdCmd(t, env, "memory", "export", "-o", exported); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	fresh := append(append([]string{}, env...), "HEARTH_HOME="+filepath.Join(state, "fresh"))
	if out, code := runHearthdCmd(t, fresh, "memory", "import", exported); code != 0 || !strings.Contains(out, "directly") {
		t.Fatalf("import without a daemon: exit %d\n%s", code, out)
	}
	again := filepath.Join(t.TempDir(), "again.jsonl")
	if out, code := runHearthdCmd(t, fresh, "memory", "export", "-o", again); code != 0 {
		t.Fatalf("export without a daemon: exit %d\n%s", code, out)
	}
	a, _ := os.ReadFile(exported)
	b, _ := os.ReadFile(again)
	if string(a) != string(b) || len(a) == 0 {
		t.Fatalf("export → import → export differs:\n%s\n---\n%s", a, b)
	}
	freshSession := shimSession(t, fresh)
	got = answerOf(t, callTool(t, freshSession, "read_graph", map[string]any{}))
	if !slices.Equal(got.entities, want.entities) || !slices.Equal(got.relations, want.relations) {
		t.Fatalf("round-tripped graph:\n%v %v\nofficial:\n%v %v", got.entities, got.relations, want.entities, want.relations)
	}

	// A bad line: refused, naming it, nothing imported.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`{"type":"entity","name":"Z","entityType":"t","observations":[]}`+"\n"+`{"type":"relation","from":"Z"}`), 0o600)
	if out, code := runHearthdCmd(t, env, "memory", "import", "--workspace", "bad", bad); code == 0 || !strings.Contains(out, `line 2: relation: no "to"`) {
		t.Fatalf("bad line: exit %d\n%s", code, out)
	}
	if got := answerOf(t, callTool(t, hearth, "read_graph", map[string]any{"workspace_id": "bad"})); len(got.entities) != 0 {
		t.Fatalf("a refused import wrote %v", got.entities)
	}
}

func runHearthdCmd(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin.hearthd, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestGraphConcurrentClientsSurviveSIGKILL: sixteen clients on the socket
// create overlapping entities and relations at once; the daemon is killed
// mid-stream. After a restart every answered write is there, each once.
func TestGraphConcurrentClientsSurviveSIGKILL(t *testing.T) {
	d := startDaemon(t)
	answeredE, answeredR := graphWriteLoad(t, []string{d.socket}, 16, 400, 20, func() {
		d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
		d.done <- nil
	})
	t.Logf("killed after %d answered entity names and %d answered relations", len(answeredE), len(answeredR))

	// Restart on the same data directory and read everything back.
	home := ""
	for _, kv := range d.cmd.Env {
		if v, ok := strings.CutPrefix(kv, "HEARTH_HOME="); ok {
			home = v
		}
	}
	d2 := startDaemon(t, "HEARTH_HOME="+home)
	c := dialRaw(t, d2.socket)
	c.initialize()
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_graph","arguments":{"limit":10000}}}`)
	var page struct {
		Result struct {
			Structured struct {
				Entities  []struct{ Name string } `json:"entities"`
				Relations []struct {
					From, To, RelationType string
				} `json:"relations"`
				Next string `json:"nextCursor"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(c.recv()), &page); err != nil {
		t.Fatal(err)
	}
	if page.Result.Structured.Next != "" {
		t.Fatal("more than one page")
	}
	var names, rels []string
	for _, e := range page.Result.Structured.Entities {
		names = append(names, e.Name)
	}
	for _, r := range page.Result.Structured.Relations {
		rels = append(rels, r.From+"|"+r.RelationType+"|"+r.To)
	}
	checkAnsweredOnce(t, names, rels, answeredE, answeredR)
}

// graphWriteLoad has clients, spread over sockets, create overlapping
// entities and relations (names n0 to n<names-1>, shared by neighbouring
// clients) until every client has had perClient answers; then kill runs
// and the clients stop. It returns the entity names and the relations
// ("from|next|to") some answer reported written.
func graphWriteLoad(t *testing.T, sockets []string, clients, names, perClient int, kill func()) (answeredE, answeredR map[string]bool) {
	t.Helper()
	var mu sync.Mutex
	answeredE, answeredR = map[string]bool{}, map[string]bool{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var answers sync.WaitGroup
	answers.Add(clients * perClient)
	for c := 0; c < clients; c++ {
		socket := sockets[c%len(sockets)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			counted := 0
			defer func() {
				for ; counted < perClient; counted++ {
					answers.Done()
				}
			}()
			conn, err := net.Dial("unix", socket)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			sc := bufio.NewScanner(conn)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			conn.Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n"))
			if !sc.Scan() {
				return
			}
			conn.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				a, b := fmt.Sprintf("n%d", (c*10+i)%names), fmt.Sprintf("n%d", (c*10+i+7)%names)
				tool, args := "create_entities", fmt.Sprintf(`{"entities":[{"name":%q,"entityType":"node","observations":["by %d"]},{"name":%q,"entityType":"node","observations":[]}]}`, a, c, b)
				if i%2 == 1 {
					tool, args = "create_relations", fmt.Sprintf(`{"relations":[{"from":%q,"to":%q,"relationType":"next"}]}`, a, b)
				}
				conn.Write([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", i+1, tool, args)))
				if !sc.Scan() {
					return // the daemon was killed
				}
				var r reply
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Result == nil || r.Result.IsError {
					t.Errorf("reply %.300s: %v", sc.Text(), err)
					return
				}
				mu.Lock()
				// Answered: the write is durable. The names it asked for
				// exist now, created by this call or an earlier one.
				if tool == "create_entities" {
					answeredE[a], answeredE[b] = true, true
				} else {
					answeredR[a+"|next|"+b] = true
				}
				mu.Unlock()
				if counted < perClient {
					counted++
					answers.Done()
				}
			}
		}()
	}
	answers.Wait()
	kill()
	close(stop)
	wg.Wait()
	return answeredE, answeredR
}

// checkAnsweredOnce: the graph read back (entity names, relations as
// "from|type|to") holds every answered write, and each entity and relation
// once.
func checkAnsweredOnce(t *testing.T, names, relations []string, answeredE, answeredR map[string]bool) {
	t.Helper()
	seenE := map[string]bool{}
	for _, name := range names {
		if seenE[name] {
			t.Fatalf("entity %s twice", name)
		}
		seenE[name] = true
	}
	seenR := map[string]bool{}
	for _, r := range relations {
		if seenR[r] {
			t.Fatalf("relation %s twice", r)
		}
		seenR[r] = true
	}
	for name := range answeredE {
		if !seenE[name] {
			t.Fatalf("answered entity %s lost after SIGKILL", name)
		}
	}
	for r := range answeredR {
		if !seenR[r] {
			t.Fatalf("answered relation %s lost after SIGKILL", r)
		}
	}
}
