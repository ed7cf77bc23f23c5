package memory

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/terms"
)

// ollama is a local server speaking Ollama's /api/embed shape. Its vectors are
// bags of hashed words, so texts sharing words are close. While failing is
// set it answers 500.
type ollama struct {
	failing atomic.Bool
	calls   atomic.Int64
	srv     *httptest.Server
}

const dims = 64

func bagOfWords(text string) []float64 {
	v := make([]float64, dims)
	for _, w := range terms.Split(text) {
		h := fnv.New32a()
		h.Write([]byte(terms.Fold(w)))
		v[h.Sum32()%dims]++
	}
	v[0] += 0.01 // never the zero vector
	return v
}

func newOllama(t *testing.T) *ollama {
	o := &ollama{}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.calls.Add(1)
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/api/embed" || r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "test-model" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if o.failing.Load() {
			http.Error(w, "model not loaded", http.StatusInternalServerError)
			return
		}
		out := struct {
			Model      string      `json:"model"`
			Embeddings [][]float64 `json:"embeddings"`
		}{Model: req.Model}
		for _, in := range req.Input {
			out.Embeddings = append(out.Embeddings, bagOfWords(in))
		}
		json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

func withEmbedder(t *testing.T, o *ollama) *Family {
	return openTest(t, testEnv(t, map[string]string{EnvEmbedURL: o.srv.URL, EnvEmbedModel: "test-model"}))
}

func TestEmbedderHybrid(t *testing.T) {
	o := newOllama(t)
	f := withEmbedder(t, o)
	added := mustCall(t, f, "add_memory", map[string]any{"text": "the cat sat on the mat"})
	if added["embedding"] != "done" {
		t.Fatalf("add_memory = %v, want embedding done", added)
	}
	other := mustCall(t, f, "add_memory", map[string]any{"text": "stock prices fell sharply"})

	res := mustCall(t, f, "search_memory", map[string]any{"query": "cat mat"})
	if res["mode"] != "hybrid" || res["note"] != nil {
		t.Fatalf("default mode with an embedder = %v, want hybrid without note", res)
	}
	if ids := resultIDs(res); len(ids) == 0 || ids[0] != added["memory_id"] {
		t.Fatalf("hybrid ranking = %v, want %s first", ids, added["memory_id"])
	}
	vec := mustCall(t, f, "search_memory", map[string]any{"query": "prices stock", "mode": "vector", "limit": 1})
	if ids := resultIDs(vec); len(ids) != 1 || ids[0] != other["memory_id"] {
		t.Fatalf("vector ranking = %v, want [%s]", ids, other["memory_id"])
	}
	stats := mustCall(t, f, "get_stats", map[string]any{})
	e := stats["embedder"].(map[string]any)
	if e["state"] != "ok" || e["model"] != "test-model" || e["pending_chunks"] != 0.0 {
		t.Fatalf("embedder stats = %v", e)
	}
}

func TestEmbedderFailsAtAddThenCatchesUp(t *testing.T) {
	o := newOllama(t)
	f := withEmbedder(t, o)
	o.failing.Store(true)
	added := mustCall(t, f, "add_memory", map[string]any{"text": "written while the embedder was down"})
	if added["embedding"] != "pending" {
		t.Fatalf("add_memory = %v, want embedding pending", added)
	}
	stats := mustCall(t, f, "get_stats", map[string]any{})
	if e := stats["embedder"].(map[string]any); e["state"] != "failing" || e["pending_chunks"] != 1.0 || e["last_error"] == nil {
		t.Fatalf("embedder stats while down = %v", e)
	}
	// Hybrid degrades to lexical and says so; vector is refused.
	res := mustCall(t, f, "search_memory", map[string]any{"query": "embedder down"})
	if res["mode"] != "lexical" || res["note"] == nil || res["count"] != 1.0 {
		t.Fatalf("hybrid search while the embedder is down = %v", res)
	}
	if _, err := call(t, f, "search_memory", map[string]any{"query": "x", "mode": "vector"}); toolCode(err) != "CAPABILITY_MISSING" {
		t.Fatalf("vector search while the embedder is down = %v, want CAPABILITY_MISSING", err)
	}

	// The embedder comes back: the next successful use wakes the backfill.
	o.failing.Store(false)
	mustCall(t, f, "add_memory", map[string]any{"text": "written after it came back"})
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := f.mem.Stats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Store.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d chunks pending after the embedder came back", st.Store.Pending)
		}
		time.Sleep(10 * time.Millisecond)
	}
	vec := mustCall(t, f, "search_memory", map[string]any{"query": "embedder was down", "mode": "vector", "limit": 1})
	if ids := resultIDs(vec); len(ids) != 1 || ids[0] != added["memory_id"] {
		t.Fatalf("the late-embedded memory is not found by vector: %v", ids)
	}
}

func TestBackfillExplicit(t *testing.T) {
	o := newOllama(t)
	f := withEmbedder(t, o)
	o.failing.Store(true)
	for _, text := range []string{"one pending", "two pending", "three pending"} {
		mustCall(t, f, "add_memory", map[string]any{"text": text})
	}
	if n, err := f.mem.Backfill(context.Background()); err == nil || n != 0 {
		t.Fatalf("Backfill while failing = %d, %v; want an error", n, err)
	}
	o.failing.Store(false)
	n, err := f.mem.Backfill(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The background loop may have embedded some first; together they did all.
	st, err := f.mem.Stats(context.Background())
	if err != nil || st.Store.Pending != 0 || n > 3 {
		t.Fatalf("after Backfill: embedded %d, pending %d, %v", n, st.Store.Pending, err)
	}
}

func TestEmbedderGarbage(t *testing.T) {
	answers := map[string]string{
		"not json":        `<html>oops</html>`,
		"wrong key":       `{"embedding":[0.1,0.2]}`,
		"too few vectors": `{"embeddings":[]}`,
		"empty vector":    `{"embeddings":[[]]}`,
		"zero vector":     `{"embeddings":[[0,0,0]]}`,
		"strings":         `{"embeddings":[["a","b"]]}`,
		"overflow":        `{"embeddings":[[1e400]]}`,
	}
	for name, body := range answers {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte(body))
			}))
			defer srv.Close()
			f := openTest(t, testEnv(t, map[string]string{EnvEmbedURL: srv.URL + "/api/embed", EnvEmbedModel: "m"}))
			added := mustCall(t, f, "add_memory", map[string]any{"text": "stored despite a garbage embedder"})
			if added["embedding"] != "pending" {
				t.Fatalf("add_memory = %v, want pending", added)
			}
			res := mustCall(t, f, "search_memory", map[string]any{"query": "garbage embedder"})
			if res["mode"] != "lexical" || res["count"] != 1.0 {
				t.Fatalf("search with a garbage embedder = %v", res)
			}
		})
	}
}

func TestEmbedderMisconfigured(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"url only":   {EnvEmbedURL: "http://localhost:1"},
		"model only": {EnvEmbedModel: "m"},
		"bad url":    {EnvEmbedURL: "localhost:11434", EnvEmbedModel: "m"},
	} {
		t.Run(name, func(t *testing.T) {
			f := openTest(t, testEnv(t, vars))
			stats := mustCall(t, f, "get_stats", map[string]any{})
			if s, _ := stats["embedder"].(map[string]any)["state"].(string); len(s) < 13 || s[:13] != "misconfigured" {
				t.Fatalf("embedder state = %q, want misconfigured", s)
			}
			if _, err := call(t, f, "search_memory", map[string]any{"query": "x", "mode": "vector"}); toolCode(err) != "CAPABILITY_MISSING" {
				t.Fatalf("vector search = %v, want CAPABILITY_MISSING", err)
			}
		})
	}
}
