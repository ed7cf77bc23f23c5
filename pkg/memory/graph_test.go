package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/llm"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
	"github.com/hearth-mcp/hearth/pkg/tool"
)

// callCtx is call with a context and a progress reporter.
func callCtx(t *testing.T, ctx context.Context, f *Family, name string, args any, r tool.Reporter) (map[string]any, error) {
	t.Helper()
	reg := tool.NewRegistry("test")
	for _, tl := range f.Tools() {
		if err := reg.Add(tl); err != nil {
			t.Fatalf("tool contract: %v", err)
		}
	}
	e, _ := reg.Lookup(name)
	raw, _ := json.Marshal(args)
	checked, bad := e.CheckArgs(raw)
	if bad != nil {
		return nil, bad
	}
	res, err := e.Handler(ctx, tool.NewCall(name, checked, nil, tool.Client{}, r))
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(res)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

type progressLog struct {
	mu    sync.Mutex
	calls [][2]float64
	on    func(progress float64)
}

func (p *progressLog) Progress(progress, total float64, _ string) {
	p.mu.Lock()
	p.calls = append(p.calls, [2]float64{progress, total})
	on := p.on
	p.mu.Unlock()
	if on != nil {
		on(progress)
	}
}

func (p *progressLog) Log(tool.Level, string, any) {}

func names(list any) []string {
	var out []string
	for _, e := range list.([]any) {
		out = append(out, e.(map[string]any)["name"].(string))
	}
	return out
}

// TestGraphToolsAsTheOfficialServer: the nine tools' results, shapes and
// edge cases, as @modelcontextprotocol/server-memory gives them.
func TestGraphToolsAsTheOfficialServer(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	got := mustCall(t, f, "create_entities", map[string]any{"entities": []map[string]any{
		{"name": "Alice", "entityType": "person", "observations": []string{"likes tea"}},
		{"name": "Bob", "entityType": "person", "observations": []string{}},
	}})
	if !slices.Equal(names(got["entities"]), []string{"Alice", "Bob"}) {
		t.Fatalf("create_entities = %v", got)
	}
	got = mustCall(t, f, "create_entities", map[string]any{"entities": []map[string]any{{"name": "Alice", "entityType": "x", "observations": []string{}}}})
	if len(got["entities"].([]any)) != 0 {
		t.Fatalf("a duplicate is ignored: %v", got)
	}
	got = mustCall(t, f, "create_relations", map[string]any{"relations": []map[string]any{{"from": "Alice", "to": "Bob", "relationType": "knows"}, {"from": "Alice", "to": "Zed", "relationType": "knows"}}})
	if len(got["relations"].([]any)) != 2 {
		t.Fatalf("create_relations = %v", got)
	}
	_, err := call(t, f, "add_observations", map[string]any{"observations": []map[string]any{{"entityName": "Nobody", "contents": []string{"x"}}}})
	te, ok := tool.AsError(err)
	if !ok || te.Code != tool.NotFound || te.Message != "Entity with name Nobody not found" || te.Fields["entity"] != "Nobody" {
		t.Fatalf("observations for a missing entity: %v", err)
	}
	got = mustCall(t, f, "add_observations", map[string]any{"observations": []map[string]any{{"entityName": "Alice", "contents": []string{"likes tea", "plays go"}}}})
	want := `{"results":[{"addedObservations":["plays go"],"entityName":"Alice"}]}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Fatalf("add_observations = %s, want %s", b, want)
	}
	for _, tc := range []struct{ tool, msg string }{
		{"delete_observations", "Observations deleted successfully"},
		{"delete_relations", "Relations deleted successfully"},
		{"delete_entities", "Entities deleted successfully"},
	} {
		args := map[string]any{
			"delete_observations": map[string]any{"deletions": []map[string]any{{"entityName": "Alice", "observations": []string{"likes tea"}}}},
			"delete_relations":    map[string]any{"relations": []map[string]any{{"from": "Alice", "to": "Zed", "relationType": "knows"}}},
			"delete_entities":     map[string]any{"entityNames": []string{"Bob"}},
		}[tc.tool]
		got := mustCall(t, f, tc.tool, args)
		if got["success"] != true || got["message"] != tc.msg {
			t.Fatalf("%s = %v", tc.tool, got)
		}
	}
	got = mustCall(t, f, "read_graph", map[string]any{})
	if b, _ := json.Marshal(got); string(b) != `{"entities":[{"entityType":"person","name":"Alice","observations":["plays go"]}],"relations":[]}` {
		t.Fatalf("read_graph = %s", b)
	}
	got = mustCall(t, f, "search_nodes", map[string]any{"query": "PLAYS"})
	if !slices.Equal(names(got["entities"]), []string{"Alice"}) || got["entities"].([]any)[0].(map[string]any)["score"].(float64) <= 0 {
		t.Fatalf("search_nodes = %v", got)
	}
	got = mustCall(t, f, "open_nodes", map[string]any{"names": []string{"Alice", "Bob"}})
	if !slices.Equal(names(got["entities"]), []string{"Alice"}) || len(got["relations"].([]any)) != 0 {
		t.Fatalf("open_nodes = %v", got)
	}
}

func TestGraphToolsBadInput(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	tests := []struct {
		tool string
		args any
		want tool.Code
	}{
		{"create_entities", map[string]any{}, tool.InvalidRequest},
		{"create_entities", map[string]any{"entities": []map[string]any{{"name": "A", "entityType": "t"}}}, tool.InvalidRequest},
		{"create_entities", map[string]any{"entities": []map[string]any{{"name": "", "entityType": "t", "observations": []string{}}}}, tool.InvalidRequest},
		{"create_entities", map[string]any{"entities": []map[string]any{{"name": "A", "entityType": "t", "observations": []string{}, "extra": 1}}}, tool.InvalidRequest},
		{"create_entities", map[string]any{"entities": []map[string]any{{"name": strings.Repeat("n", store.MaxNameLen+1), "entityType": "t", "observations": []string{}}}}, tool.InvalidRequest},
		{"create_relations", map[string]any{"relations": []map[string]any{{"from": "A", "to": "B"}}}, tool.InvalidRequest},
		{"read_graph", map[string]any{"cursor": "bogus"}, tool.InvalidRequest},
		{"read_graph", map[string]any{"limit": 0}, tool.InvalidRequest},
		{"read_graph", map[string]any{"page": 2}, tool.InvalidRequest},
		{"search_nodes", map[string]any{}, tool.InvalidRequest},
		{"open_nodes", map[string]any{"names": "Alice"}, tool.InvalidRequest},
		{"get_related", map[string]any{"name": "A", "depth": 4}, tool.InvalidRequest},
		{"get_related", map[string]any{"name": "A", "direction": "sideways"}, tool.InvalidRequest},
		{"get_related", map[string]any{"name": "nobody"}, tool.NotFound},
		{"build_graph", map[string]any{"since": "yesterday"}, tool.InvalidRequest},
		{"build_graph", map[string]any{"extractor": "llm"}, tool.CapabilityMissing},
		{"build_graph", map[string]any{"extractor": "magic"}, tool.InvalidRequest},
		{"graph_status", map[string]any{"workspace_id": "no spaces"}, tool.InvalidRequest},
		{"import_graph", map[string]any{"path": "relative.jsonl"}, tool.InvalidRequest},
		{"import_graph", map[string]any{"path": "/nonexistent/memory.jsonl"}, tool.InvalidRequest},
	}
	for _, tc := range tests {
		_, err := call(t, f, tc.tool, tc.args)
		if got := toolCode(err); got != string(tc.want) {
			t.Errorf("%s(%v) = %v, want %s", tc.tool, tc.args, err, tc.want)
		}
	}
}

func TestReadGraphPagesThroughTheTool(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	var es []map[string]any
	for i := 0; i < 30; i++ {
		es = append(es, map[string]any{"name": fmt.Sprintf("e%d", i), "entityType": "t", "observations": []string{}})
	}
	mustCall(t, f, "create_entities", map[string]any{"entities": es, "workspace_id": "paged"})
	mustCall(t, f, "create_relations", map[string]any{"workspace_id": "paged", "relations": []map[string]any{{"from": "e0", "to": "e1", "relationType": "r"}}})
	var all []string
	rels := 0
	args := map[string]any{"limit": 7, "workspace_id": "paged"}
	for pages := 1; ; pages++ {
		got := mustCall(t, f, "read_graph", args)
		all = append(all, names(got["entities"])...)
		rels += len(got["relations"].([]any))
		next, ok := got["nextCursor"].(string)
		if !ok {
			if pages != 5 {
				t.Fatalf("%d pages for 31 items by 7", pages)
			}
			break
		}
		args["cursor"] = next
	}
	if len(all) != 30 || rels != 1 || all[29] != "e29" {
		t.Fatalf("read %d entities, %d relations", len(all), rels)
	}
	if got := mustCall(t, f, "read_graph", map[string]any{}); len(got["entities"].([]any)) != 0 {
		t.Fatalf("the default workspace is another graph: %v", got)
	}
}

// corpus is a set of memories whose entities the extractor must find.
var corpus = []string{
	"Alice Smith maintains hearthd. hearthd uses SQLite and Zap.",
	"The shim lives in shim/hearth/main.go; see https://example.com/hearth/docs for the protocol.",
	"Bob joined Acme Corp in March. Acme Corp uses PostgreSQL.",
	"Call `read_graph` with a cursor; `add_memory` stores a text.",
	"SQLite runs on Linux and macOS.",
}

func addCorpus(t *testing.T, f *Family, ws string) []string {
	var ids []string
	for _, text := range corpus {
		got := mustCall(t, f, "add_memory", map[string]any{"text": text, "workspace_id": ws})
		ids = append(ids, got["memory_id"].(string))
	}
	return ids
}

func TestBuildGraphFromCorpus(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	ids := addCorpus(t, f, "default")
	p := &progressLog{}
	got, err := callCtx(t, context.Background(), f, "build_graph", map[string]any{}, p)
	if err != nil {
		t.Fatal(err)
	}
	if got["status"] != "completed" || got["memories"] != 5.0 || got["pending"] != 0.0 || got["extractor"] != "rules/1" || got["warning"] != nil {
		t.Fatalf("build_graph = %v", got)
	}
	if len(p.calls) == 0 || p.calls[len(p.calls)-1] != [2]float64{5, 5} {
		t.Fatalf("progress %v", p.calls)
	}
	g := mustCall(t, f, "read_graph", map[string]any{})
	found := map[string]string{}
	for _, e := range g["entities"].([]any) {
		m := e.(map[string]any)
		found[m["name"].(string)] = m["entityType"].(string)
	}
	for name, typ := range map[string]string{
		"Alice Smith": "name", "hearthd": "", "SQLite": "name", "Zap": "name", "shim/hearth/main.go": "path",
		"https://example.com/hearth/docs": "url", "Bob": "name", "Acme Corp": "name", "PostgreSQL": "identifier",
		"read_graph": "identifier", "add_memory": "identifier", "Linux": "name", "macOS": "identifier",
	} {
		if typ == "" { // hearthd is lower case: no rule finds it
			if _, ok := found[name]; ok {
				t.Errorf("found %q, which no rule names", name)
			}
			continue
		}
		if found[name] != typ {
			t.Errorf("entity %q: type %q, want %q (found %v)", name, found[name], typ, found)
		}
	}
	rels := map[string]bool{}
	for _, r := range g["relations"].([]any) {
		m := r.(map[string]any)
		rels[m["from"].(string)+" "+m["relationType"].(string)+" "+m["to"].(string)] = true
	}
	for _, want := range []string{"Bob works_at Acme Corp", "Acme Corp uses PostgreSQL", "SQLite runs_on Linux", "SQLite runs_on macOS"} {
		if !rels[want] {
			t.Errorf("relation %q not found (found %v)", want, rels)
		}
	}
	// search_memory and get_stats name what memories mention.
	s := mustCall(t, f, "search_memory", map[string]any{"query": "Acme PostgreSQL"})
	r := s["results"].([]any)[0].(map[string]any)
	if r["memory_id"] != ids[2] || fmt.Sprint(r["entities"]) != "[Acme Corp Bob PostgreSQL]" {
		t.Fatalf("search_memory result %v", r)
	}
	stats := mustCall(t, f, "get_stats", map[string]any{})
	gs := stats["graph"].(map[string]any)
	top := gs["most_mentioned"].([]any)[0].(map[string]any)
	if gs["entities"].(float64) < 13 || gs["memories_extracted"] != 5.0 || top["name"] != "SQLite" || top["memories"] != 2.0 {
		t.Fatalf("get_stats graph %v", gs)
	}
	// get_related: from SQLite, with the memories mentioning each entity.
	rel := mustCall(t, f, "get_related", map[string]any{"name": "SQLite", "depth": 1})
	if ent := rel["entity"].(map[string]any); len(ent["memories"].([]any)) != 2 {
		t.Fatalf("SQLite's memories %v", ent)
	}
	relNames := names(rel["related"])
	if !slices.Contains(relNames, "Linux") || !slices.Contains(relNames, "macOS") {
		t.Fatalf("get_related %v", relNames)
	}
	for _, x := range rel["related"].([]any) {
		m := x.(map[string]any)
		if m["name"] == "Linux" && (len(m["memories"].([]any)) != 1 || m["memories"].([]any)[0].(map[string]any)["memory_id"] != ids[4]) {
			t.Fatalf("Linux's memories %v", m)
		}
	}
	// Incremental: a second build finds nothing new; a new memory is taken.
	got = mustCall(t, f, "build_graph", map[string]any{})
	if got["memories"] != 0.0 {
		t.Fatalf("second build %v", got)
	}
	mustCall(t, f, "add_memory", map[string]any{"text": "Carol uses Rust."})
	got = mustCall(t, f, "build_graph", map[string]any{"workspace_id": "default", "extractor": "rules"})
	if got["memories"] != 1.0 || got["relations_created"] != 1.0 {
		t.Fatalf("incremental build %v", got)
	}
	st := mustCall(t, f, "graph_status", map[string]any{"workspace_id": "default"})
	lb := st["last_build"].(map[string]any)
	if st["memories_pending"] != 0.0 || st["memories_extracted"] != 6.0 || lb["memories"] != 1.0 || lb["status"] != "completed" || st["building"] != false {
		t.Fatalf("graph_status %v", st)
	}
	// A deleted memory's links go; its entities stay.
	mustCall(t, f, "delete_memory", map[string]any{"memory_id": ids[4], "confirm": true})
	rel = mustCall(t, f, "get_related", map[string]any{"name": "Linux", "depth": 1})
	if ent := rel["entity"].(map[string]any); len(ent["memories"].([]any)) != 0 {
		t.Fatalf("Linux's memories after the delete %v", ent)
	}
	// rebuild extracts every memory again and creates nothing new.
	got = mustCall(t, f, "build_graph", map[string]any{"rebuild": true})
	if got["memories"] != 5.0 || got["entities_created"] != 0.0 || got["links"] != 0.0 {
		t.Fatalf("rebuild %v", got)
	}
}

// checkWhole checks that a build wrote each memory whole or not at all: an
// extracted memory has its links, a pending one none, every entity a link.
// It returns how many of ids are extracted.
func checkWhole(t *testing.T, f *Family, ids []string) (extracted int) {
	t.Helper()
	g, err := f.mem.Graph(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pending, err := g.PendingExtraction(context.Background(), store.ExtractScope{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	isPending := map[string]bool{}
	for _, m := range pending {
		isPending[m.ID] = true
	}
	mentions, err := g.Mentions(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		switch {
		case isPending[id] && len(mentions[id]) > 0:
			t.Fatalf("memory %s is pending but has links %v: half written", id, mentions[id])
		case !isPending[id] && len(mentions[id]) == 0:
			t.Fatalf("memory %s is marked extracted without its links", id)
		case !isPending[id]:
			extracted++
		}
	}
	// Every entity was written with a link (the build writes nothing else).
	page, err := g.ReadGraph(context.Background(), "default", "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, ns := range mentions {
		for _, n := range ns {
			linked[n] = true
		}
	}
	for _, e := range page.Entities {
		if !linked[e.Name] {
			t.Fatalf("entity %s has no link: half written", e.Name)
		}
	}
	return extracted
}

// TestBuildGraphCancelled: a build cancelled while the LLM answers its
// second batch stops; the first batch is whole, the rest pending, and a
// second build finishes the job.
func TestBuildGraphCancelled(t *testing.T) {
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if calls.Add(1) == buildBatch+3 { // inside the second batch
			cancel()
			<-r.Context().Done() // the body is read: the server sees the client go
			return
		}
		var note struct{ Note string }
		json.Unmarshal([]byte(req.Messages[1].Content), &note)
		word := strings.Fields(note.Note)[1]
		fmt.Fprintf(w, `{"choices":[{"message":{"content":%q}}]}`, fmt.Sprintf(`{"entities":[{"name":%q,"type":"thing"},{"name":"Shared","type":"thing"}],"relations":[{"from":%q,"to":"Shared","type":"part_of"}]}`, word, word))
	}))
	defer srv.Close()
	f := openTest(t, testEnv(t, map[string]string{llm.EnvProvider: srv.URL, llm.EnvModel: "m"}))
	var ids []string
	for i := 0; i < 3*buildBatch; i++ {
		got := mustCall(t, f, "add_memory", map[string]any{"text": fmt.Sprintf("memory word%d here", i)})
		ids = append(ids, got["memory_id"].(string))
	}
	_, err := callCtx(t, ctx, f, "build_graph", map[string]any{}, nil)
	if err == nil || !tool.IsContextDone(err) {
		t.Fatalf("cancelled build returned %v", err)
	}
	if n := checkWhole(t, f, ids); n != buildBatch {
		t.Fatalf("%d memories extracted before the cancel, want the first batch (%d)", n, buildBatch)
	}
	st := mustCall(t, f, "graph_status", map[string]any{})
	if lb := st["last_build"].(map[string]any); lb["status"] != "cancelled" || lb["memories"] != float64(buildBatch) {
		t.Fatalf("last build %v", lb)
	}
	got := mustCall(t, f, "build_graph", map[string]any{})
	if got["status"] != "completed" || got["memories"] != float64(2*buildBatch) || got["extractor"] != "llm/openai-compatible" {
		t.Fatalf("second build %v", got)
	}
	if n := checkWhole(t, f, ids); n != 3*buildBatch {
		t.Fatalf("%d extracted after the second build", n)
	}
}

// TestBuildGraphLLMFallback: an LLM that keeps failing is tried 1+Retries
// times, then the rules extract, and the reply says so as the clarification
// planner's does; a working one is used.
func TestBuildGraphLLMFallback(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer srv.Close()
	f := openTest(t, testEnv(t, map[string]string{llm.EnvProvider: srv.URL, llm.EnvModel: "m", llm.EnvTimeout: "2s"}))
	addCorpus(t, f, "default")
	got := mustCall(t, f, "build_graph", map[string]any{})
	if got["warning"] != "llm_fallback" || got["message"] != "LLM unavailable, using deterministic mode" ||
		got["memories"] != 5.0 || got["extractor"] != "llm/openai-compatible, then rules/1" {
		t.Fatalf("fallback build %v", got)
	}
	if calls.Load() != 1+llm.Retries {
		t.Fatalf("%d attempts, want %d (then rules for the rest of the build)", calls.Load(), 1+llm.Retries)
	}
	if g := mustCall(t, f, "open_nodes", map[string]any{"names": []string{"Acme Corp"}}); len(g["entities"].([]any)) != 1 {
		t.Fatalf("rules did not extract: %v", g)
	}
	st := mustCall(t, f, "graph_status", map[string]any{})
	if ex := st["extractors"].(map[string]any); ex["default"] != "llm" || ex["llm"] != "configured (openai-compatible)" {
		t.Fatalf("extractors %v", ex)
	}

	// A model that answers: its entities, as it names them.
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"message":{"content":"Here: {\"entities\":[{\"name\":\"The Moon\",\"type\":\"Place\"},{\"name\":\"Ada\",\"type\":\"person\"}],\"relations\":[{\"from\":\"Ada\",\"to\":\"The Moon\",\"type\":\"visited by\"}]}"}}`)
	}))
	defer ok.Close()
	f2 := openTest(t, testEnv(t, map[string]string{llm.EnvProvider: "ollama", llm.EnvURL: ok.URL, llm.EnvModel: "llama"}))
	mustCall(t, f2, "add_memory", map[string]any{"text": "Ada went to the moon."})
	got = mustCall(t, f2, "build_graph", map[string]any{})
	if got["warning"] != nil || got["extractor"] != "llm/ollama" || got["relations_created"] != 1.0 {
		t.Fatalf("llm build %v", got)
	}
	g := mustCall(t, f2, "read_graph", map[string]any{})
	if b, _ := json.Marshal(g); !strings.Contains(string(b), `{"entityType":"place","name":"The Moon","observations":[]}`) ||
		!strings.Contains(string(b), `{"from":"Ada","relationType":"visited_by","to":"The Moon"}`) {
		t.Fatalf("graph %s", b)
	}
	// Asking for rules skips the model.
	mustCall(t, f2, "add_memory", map[string]any{"text": "Grace uses COBOL."})
	if got := mustCall(t, f2, "build_graph", map[string]any{"extractor": "rules"}); got["extractor"] != "rules/1" {
		t.Fatalf("rules build %v", got)
	}
}

func TestImportGraphTool(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	dir := t.TempDir()
	good := filepath.Join(dir, "memory.jsonl")
	os.WriteFile(good, []byte(`{"type":"entity","name":"A","entityType":"t","observations":["x"]}
{"type":"entity","name":"B","entityType":"t","observations":[]}
{"type":"relation","from":"A","to":"B","relationType":"r"}`), 0o600)
	got := mustCall(t, f, "import_graph", map[string]any{"path": good})
	if got["entities_created"] != 2.0 || got["observations_added"] != 1.0 || got["relations_created"] != 1.0 || got["entities_read"] != 2.0 {
		t.Fatalf("import %v", got)
	}
	if got := mustCall(t, f, "import_graph", map[string]any{"path": good}); got["entities_created"] != 0.0 || got["relations_created"] != 0.0 {
		t.Fatalf("second import %v", got)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"type":"entity","name":"C","entityType":"t","observations":[]}
{"type":"entity","name":"D","entityType":"t","observations":[]}

{"type":"relation","from":"C"}`), 0o600)
	_, err := call(t, f, "import_graph", map[string]any{"path": bad})
	te, ok := tool.AsError(err)
	if !ok || te.Code != tool.InvalidRequest || te.Fields["line"] != 4 || !strings.Contains(te.Message, `line 4: relation: no "to"`) {
		t.Fatalf("bad line: %v", err)
	}
	if g := mustCall(t, f, "open_nodes", map[string]any{"names": []string{"C", "D"}}); len(g["entities"].([]any)) != 0 {
		t.Fatalf("a refused import wrote %v", g)
	}
	_, err = call(t, f, "import_graph", map[string]any{"path": dir})
	if te, ok := tool.AsError(err); !ok || !strings.Contains(te.Message, "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
}
