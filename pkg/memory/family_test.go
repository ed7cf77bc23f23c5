package memory

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/hearth-mcp/hearth/pkg/tool"
)

// testEnv is a daemon environment with its own home and the given variables.
func testEnv(t *testing.T, vars map[string]string) tool.Env {
	return tool.Env{
		Home:    t.TempDir(),
		Getenv:  func(k string) string { return vars[k] },
		Log:     zap.NewNop(),
		Version: "test",
	}
}

func openTest(t *testing.T, env tool.Env) *Family {
	t.Helper()
	f := openFamily(env, 0, time.Hour)
	t.Cleanup(func() { f.Close() })
	return f
}

// call runs a tool the way the daemon does: arguments checked against the
// schema by a registry, then the handler, its result checked against the
// output schema. It returns the result as JSON-decoded map, or the error the
// client would see.
func call(t *testing.T, f *Family, name string, args any) (map[string]any, error) {
	t.Helper()
	reg := tool.NewRegistry("test")
	for _, tl := range f.Tools() {
		if err := reg.Add(tl); err != nil {
			t.Fatalf("tool contract: %v", err)
		}
	}
	e, ok := reg.Lookup(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	checked, bad := e.CheckArgs(raw)
	if bad != nil {
		return nil, bad
	}
	res, err := e.Handler(context.Background(), tool.NewCall(name, checked, nil, tool.Client{}, nil))
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("result of %s does not marshal: %v", name, err)
	}
	// Every result is held to the output schema clients are told, as the
	// end-to-end builds do (docs/decisions/0025-typed-results.md).
	if err := e.CheckResult(b); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("result of %s is not an object: %s", name, b)
	}
	return m, nil
}

func mustCall(t *testing.T, f *Family, name string, args any) map[string]any {
	t.Helper()
	m, err := call(t, f, name, args)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return m
}

func toolCode(err error) string {
	if te, ok := tool.AsError(err); ok {
		return string(te.Code)
	}
	return ""
}

func resultIDs(res map[string]any) []string {
	var out []string
	for _, r := range res["results"].([]any) {
		out = append(out, r.(map[string]any)["memory_id"].(string))
	}
	return out
}

func TestToolsLifecycle(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	added := mustCall(t, f, "add_memory", map[string]any{
		"text":     "Hearth keeps one warm daemon for every editor on the machine.",
		"metadata": map[string]any{"source": "design", "tags": []string{"arch"}, "timestamp": "2025-03-01"},
	})
	id, _ := added["memory_id"].(string)
	if id == "" || added["chunks"] != 1.0 || added["workspace_id"] != "default" || added["embedding"] != "none" {
		t.Fatalf("add_memory = %v", added)
	}

	found := mustCall(t, f, "search_memory", map[string]any{"query": "warm daemon", "filters": map[string]any{"tags": []string{"arch"}, "date_from": "2025-03-01", "date_to": "2025-03-01"}})
	if found["mode"] != "lexical" || !strings.Contains(found["note"].(string), "no embedder") {
		t.Fatalf("search without embedder must say it is lexical: %v", found)
	}
	if ids := resultIDs(found); len(ids) != 1 || ids[0] != id {
		t.Fatalf("search found %v, want [%s]", ids, id)
	}
	r := found["results"].([]any)[0].(map[string]any)
	if r["snippet"] != "Hearth keeps one **warm** **daemon** for every editor on the machine." {
		t.Fatalf("snippet = %q", r["snippet"])
	}
	md := r["metadata"].(map[string]any)
	if md["source"] != "design" || md["timestamp"] != "2025-03-01T00:00:00Z" || r["text"] == "" || r["score"].(float64) <= 0 {
		t.Fatalf("result = %v", r)
	}

	stats := mustCall(t, f, "get_stats", map[string]any{})
	if stats["memories"] != 1.0 || stats["chunks"] != 1.0 || stats["avg_chunks_per_memory"] != 1.0 ||
		stats["store_size_bytes"].(float64) <= 0 || stats["oldest_memory"] != "2025-03-01T00:00:00Z" {
		t.Fatalf("get_stats = %v", stats)
	}
	if e := stats["embedder"].(map[string]any); e["state"] != "none" {
		t.Fatalf("embedder state = %v, want none", e)
	}
	if lat := stats["search_latency_ms"].(map[string]any); lat["count"] != 1.0 {
		t.Fatalf("search latency = %v, want one search counted", lat)
	}

	if _, err := call(t, f, "delete_memory", map[string]any{"memory_id": id, "confirm": false}); toolCode(err) != "INVALID_REQUEST" {
		t.Fatalf("delete without confirm = %v, want INVALID_REQUEST", err)
	}
	del := mustCall(t, f, "delete_memory", map[string]any{"memory_id": id, "confirm": true})
	if del["deleted"] != true {
		t.Fatalf("delete_memory = %v", del)
	}
	if _, err := call(t, f, "delete_memory", map[string]any{"memory_id": id, "confirm": true}); toolCode(err) != "NOT_FOUND" {
		t.Fatalf("second delete = %v, want NOT_FOUND", err)
	}
}

// TestLimitNumberForms: search_memory's limit takes an integral number
// however it is written (the schema accepts them all as integers).
func TestLimitNumberForms(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	for i := range 3 {
		mustCall(t, f, "add_memory", map[string]any{"text": "hearth memory number " + strings.Repeat("x", i+1)})
	}
	for _, lit := range []string{"2", "2.0", "2e0", "0.2e1", "20e-1", "2.000e+0"} {
		found := mustCall(t, f, "search_memory", map[string]any{"query": "hearth memory", "limit": json.RawMessage(lit)})
		if found["count"] != 2.0 {
			t.Errorf("limit %s: %v results, want 2", lit, found["count"])
		}
	}
	if _, err := call(t, f, "search_memory", map[string]any{"query": "x", "limit": json.RawMessage("2.5")}); toolCode(err) != "INVALID_REQUEST" {
		t.Errorf("limit 2.5: %v, want INVALID_REQUEST", err)
	}
}

func TestToolErrors(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	tests := []struct {
		name string
		tool string
		args map[string]any
		code string
	}{
		{"vector without embedder", "search_memory", map[string]any{"query": "x", "mode": "vector"}, "CAPABILITY_MISSING"},
		{"empty query", "search_memory", map[string]any{"query": ""}, "INVALID_REQUEST"},
		{"query too long", "search_memory", map[string]any{"query": strings.Repeat("q", 1001)}, "INVALID_REQUEST"},
		{"limit too large", "search_memory", map[string]any{"query": "x", "limit": 101}, "INVALID_REQUEST"},
		{"unknown mode", "search_memory", map[string]any{"query": "x", "mode": "fuzzy"}, "INVALID_REQUEST"},
		{"bad date", "search_memory", map[string]any{"query": "x", "filters": map[string]any{"date_from": "yesterday"}}, "INVALID_REQUEST"},
		{"dates reversed", "search_memory", map[string]any{"query": "x", "filters": map[string]any{"date_from": "2025-02-01", "date_to": "2025-01-01"}}, "INVALID_REQUEST"},
		{"unknown filter", "search_memory", map[string]any{"query": "x", "filters": map[string]any{"colour": "red"}}, "INVALID_REQUEST"},
		{"bad workspace", "add_memory", map[string]any{"text": "x", "workspace_id": "../etc"}, "INVALID_REQUEST"},
		{"blank text", "add_memory", map[string]any{"text": "   \n"}, "INVALID_REQUEST"},
		{"bad timestamp", "add_memory", map[string]any{"text": "x", "metadata": map[string]any{"timestamp": "31/01/2025"}}, "INVALID_REQUEST"},
		{"unknown argument", "add_memory", map[string]any{"text": "x", "content": "y"}, "INVALID_REQUEST"},
		{"delete unknown", "delete_memory", map[string]any{"memory_id": "nope", "confirm": true}, "NOT_FOUND"},
		{"NUL in text", "add_memory", map[string]any{"text": "a\x00b"}, "INVALID_REQUEST"},
		{"NUL in a tag", "add_memory", map[string]any{"text": "x", "metadata": map[string]any{"tags": []any{"ok", "b\x00"}}}, "INVALID_REQUEST"},
		{"NUL in a query", "search_memory", map[string]any{"query": "\x00"}, "INVALID_REQUEST"},
		{"NUL in an entity name", "create_entities", map[string]any{"entities": []any{map[string]any{"name": "a\x00", "entityType": "t", "observations": []any{}}}}, "INVALID_REQUEST"},
		{"NUL in an observation", "add_observations", map[string]any{"observations": []any{map[string]any{"entityName": "a", "contents": []any{"\x00"}}}}, "INVALID_REQUEST"},
		{"NUL in a relation", "create_relations", map[string]any{"relations": []any{map[string]any{"from": "a", "to": "b", "relationType": "x\x00"}}}, "INVALID_REQUEST"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := call(t, f, tc.tool, tc.args)
			if toolCode(err) != tc.code {
				t.Fatalf("%s(%v) = %v, want %s", tc.tool, tc.args, err, tc.code)
			}
			if strings.HasPrefix(tc.name, "NUL") && !strings.Contains(err.Error(), "a NUL character (U+0000) is not kept by the memory store") {
				t.Fatalf("%s: %v", tc.name, err)
			}
		})
	}
}

// A huge text is refused with a small reply.
func TestAddTooLong(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	huge := strings.Repeat("x", 1_000_000)

	// The handler's own check, whatever validated the arguments before it.
	_, err := f.addMemory(context.Background(), tool.NewCall("add_memory", mustJSON(t, map[string]any{"text": huge}), nil, tool.Client{}, nil), addArgs{Text: huge})
	te, ok := tool.AsError(err)
	if !ok || te.Code != tool.InvalidRequest || te.Message != "content exceeds max length" {
		t.Fatalf("handler = %v, want INVALID_REQUEST content exceeds max length", err)
	}
	if n := len(mustJSON(t, te.Object())); n >= 1024 {
		t.Fatalf("reply is %d bytes, want < 1 KiB", n)
	}
	// 100 000 characters exactly is fine, counted in characters, not bytes.
	if _, err := call(t, f, "add_memory", map[string]any{"text": strings.Repeat("é", MaxTextLen)}); err != nil {
		t.Fatalf("a text of exactly %d characters: %v", MaxTextLen, err)
	}

	// Through the registry the schema's maxLength answers first, with the
	// fixed message clients match on (Tool.ArgMessages).
	_, err = call(t, f, "add_memory", map[string]any{"text": huge})
	te, ok = tool.AsError(err)
	if !ok || te.Code != tool.InvalidRequest || te.Message != "content exceeds max length" {
		t.Fatalf("registry = %v, want INVALID_REQUEST content exceeds max length", err)
	}
	if n := len(mustJSON(t, te.Object())); n >= 1024 {
		t.Fatalf("reply is %d bytes, want < 1 KiB", n)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A corrupt store makes the tools answer -32000 and nothing else
// fails; repairing the file brings them back without reopening the family.
func TestCorruptStore(t *testing.T) {
	env := testEnv(t, nil)
	path := filepath.Join(env.Home, StoreFile)
	if err := os.WriteFile(path, []byte(strings.Repeat("definitely not an sqlite database ", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	f := openTest(t, env) // must not fail
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"add_memory", map[string]any{"text": "x"}},
		{"search_memory", map[string]any{"query": "x"}},
		{"get_stats", map[string]any{}},
		{"delete_memory", map[string]any{"memory_id": "x", "confirm": true}},
	}
	for _, c := range calls {
		_, err := call(t, f, c.tool, c.args)
		var re *tool.RPCError
		if !errors.As(err, &re) {
			t.Fatalf("%s = %v, want a JSON-RPC error", c.tool, err)
		}
		if re.Code != -32000 || re.Message != "Database connection failed. Please check SQLite is running." {
			t.Fatalf("%s = %d %q", c.tool, re.Code, re.Message)
		}
		if strings.Contains(re.Message, env.Home) {
			t.Fatalf("the message leaks the path: %q", re.Message)
		}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, f, "add_memory", map[string]any{"text": "after repair"}); err != nil {
		t.Fatalf("after the file was repaired: %v", err)
	}
}

func TestNoHome(t *testing.T) {
	env := testEnv(t, nil)
	env.Home = ""
	f := openTest(t, env)
	if _, err := call(t, f, "get_stats", map[string]any{}); err == nil {
		t.Fatal("get_stats without a data directory succeeded")
	} else if re, ok := tool.AsRPCError(err); !ok || re.Code != tool.CodeStoreUnavailable {
		t.Fatalf("get_stats = %v, want -32000", err)
	}
}

func TestWorkspaceArgument(t *testing.T) {
	f := openTest(t, testEnv(t, nil))
	mustCall(t, f, "add_memory", map[string]any{"text": "project alpha uses postgres", "workspace_id": "alpha"})
	mustCall(t, f, "add_memory", map[string]any{"text": "project beta uses postgres"})
	alpha := mustCall(t, f, "search_memory", map[string]any{"query": "postgres", "workspace_id": "alpha"})
	def := mustCall(t, f, "search_memory", map[string]any{"query": "postgres"})
	if alpha["count"] != 1.0 || def["count"] != 1.0 {
		t.Fatalf("alpha sees %v, default sees %v; want one each", alpha["count"], def["count"])
	}
	if txt := def["results"].([]any)[0].(map[string]any)["text"]; txt != "project beta uses postgres" {
		t.Fatalf("default workspace found %q", txt)
	}
}
