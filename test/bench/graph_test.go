//go:build unix

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/guard"
	"github.com/hearth-mcp/hearth/pkg/memory/jsonl"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// graphCorpus is n entities, each with one or two observations from
// corpusSentences, and about perEntity relations each to random others.
func graphCorpus(n, perEntity int) store.Subgraph {
	sentences := corpusSentences(n * 2)
	r := rand.New(rand.NewPCG(3, 4))
	types := []string{"person", "service", "database", "team", "document", "ticket"}
	var g store.Subgraph
	for i := 0; i < n; i++ {
		obs := []string{sentences[2*i]}
		if i%2 == 0 {
			obs = append(obs, sentences[2*i+1])
		}
		g.Entities = append(g.Entities, store.Entity{Name: fmt.Sprintf("entity-%d", i), Type: types[i%len(types)], Observations: obs})
	}
	verbs := []string{"uses", "owns", "depends_on", "mentions"}
	for i := 0; i < n*perEntity; i++ {
		a, b := r.IntN(n), r.IntN(n)
		g.Relations = append(g.Relations, store.Relation{From: fmt.Sprintf("entity-%d", a), To: fmt.Sprintf("entity-%d", b), Type: verbs[i%len(verbs)]})
	}
	return g
}

// writeJSONL writes g in the official server's format.
func writeJSONL(b *testing.B, path string, g store.Subgraph) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := jsonl.NewWriter(f)
	for _, e := range g.Entities {
		w.Entity(e)
	}
	for _, r := range g.Relations {
		w.Relation(r)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}

// graphHome is a data directory holding g, imported through the store.
func graphHome(b *testing.B, g store.Subgraph) string {
	home := b.TempDir()
	if _, err := guard.Check(home, "bench"); err != nil {
		b.Fatal(err)
	}
	st, err := sqlitestore.Open(context.Background(), filepath.Join(home, "memory.db"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Import(context.Background(), "default", g); err != nil {
		b.Fatal(err)
	}
	st.Close()
	return home
}

func hearthStdio(b *testing.B, home string) *conn {
	cmd := exec.Command(bins.hearthd, "stdio")
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_LOG_LEVEL=warn", "HEARTH_EMBED_URL=", "HEARTH_EMBED_MODEL=")
	return startPeer(b, cmd)
}

func officialMemory(b *testing.B, file string) *conn {
	server := filepath.Join("..", "ts", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	if _, err := os.Stat(server); err != nil {
		b.Log("official server-memory not installed (npm ci in test/ts); measuring hearth alone")
		return nil
	}
	cmd := exec.Command("node", server)
	cmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file)
	return startPeer(b, cmd)
}

func callLineFor(tool, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args)
}

// timedCall sends line and returns the round trip, failing on an error reply.
func timedCall(b *testing.B, c *conn, line string) time.Duration {
	t0 := time.Now()
	c.roundTrip(b, line)
	d := time.Since(t0)
	if strings.Contains(c.sc.Text(), `"isError":true`) || strings.Contains(c.sc.Text(), `"error":{`) {
		b.Fatalf("%.200s failed: %.300s", line, c.sc.Text())
	}
	return d
}

// BenchmarkGraphVsOfficial: search_nodes and open_nodes at 10 000 entities
// (15 000 observations, 20 000 relations) in hearth (`hearthd stdio`) and
// in the official @modelcontextprotocol/server-memory holding the same
// graph (its JSONL file), interleaved call by call in one run. "rare"
// queries match a few entities (a name), "common" ones a vocabulary word
// found in thousands, where both servers spend their time writing the
// answer. Goal: hearth ≥ 50× faster at p50.
func BenchmarkGraphVsOfficial(b *testing.B) {
	build(b)
	g := graphCorpus(10000, 2)
	home := graphHome(b, g)
	file := filepath.Join(b.TempDir(), "memory.jsonl")
	writeJSONL(b, file, g)
	hearth := hearthStdio(b, home)
	official := officialMemory(b, file)
	r := rand.New(rand.NewPCG(5, 6))
	common := []string{"deploy", "cache latency", "certificate", "invoice refund", "queue worker"}
	kinds := []struct {
		name string
		args func(i int) (string, string)
	}{
		{"search-rare", func(i int) (string, string) {
			return "search_nodes", fmt.Sprintf(`{"query":"entity-%d"}`, 1000+r.IntN(8999))
		}},
		{"search-common", func(i int) (string, string) {
			return "search_nodes", fmt.Sprintf(`{"query":%q}`, common[i%len(common)])
		}},
		{"open", func(i int) (string, string) {
			return "open_nodes", fmt.Sprintf(`{"names":["entity-%d","entity-%d","entity-%d"]}`, r.IntN(10000), r.IntN(10000), r.IntN(10000))
		}},
	}
	for _, k := range kinds {
		tool, args := k.args(0)
		timedCall(b, hearth, callLineFor(tool, args)) // warm
		if official != nil {
			timedCall(b, official, callLineFor(tool, args))
		}
	}
	b.ResetTimer()
	for _, k := range kinds {
		var hl, ol []time.Duration
		for i := 0; i < b.N; i++ {
			tool, args := k.args(i)
			line := callLineFor(tool, args)
			hl = append(hl, timedCall(b, hearth, line))
			if official != nil {
				ol = append(ol, timedCall(b, official, line))
			}
		}
		hp50, _ := quantiles(b, "hearth-"+k.name+"-", hl)
		if official != nil {
			op50, _ := quantiles(b, "official-"+k.name+"-", ol)
			b.ReportMetric(op50/hp50, k.name+"-speedup-x")
		}
	}
	b.StopTimer()
}

// BenchmarkGetRelated: get_related at depth 2 over 1 000 000 relations
// (100 000 entities, ten relations from each) through `hearthd stdio`.
// Goal: p99 ≤ 5 ms.
func BenchmarkGetRelated(b *testing.B) {
	build(b)
	g := graphCorpus(100000, 10)
	home := graphHome(b, g)
	hearth := hearthStdio(b, home)
	r := rand.New(rand.NewPCG(7, 8))
	line := func() string {
		return callLineFor("get_related", fmt.Sprintf(`{"name":"entity-%d","depth":2}`, r.IntN(100000)))
	}
	for i := 0; i < 50; i++ {
		timedCall(b, hearth, line())
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, timedCall(b, hearth, line()))
	}
	b.StopTimer()
	quantiles(b, "", lat)
	var res struct {
		Result struct {
			Structured struct {
				Count int `json:"count"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	json.Unmarshal(hearth.reply(), &res)
	b.ReportMetric(float64(res.Result.Structured.Count), "related")
}

// BenchmarkImportJSONL: `hearthd memory import` of a 100 000-entity file
// (150 000 observations, 100 000 relations) into a fresh data directory,
// without a daemon. Goal: ≤ 5 s.
func BenchmarkImportJSONL(b *testing.B) {
	build(b)
	g := graphCorpus(100000, 1)
	file := filepath.Join(b.TempDir(), "memory.jsonl")
	writeJSONL(b, file, g)
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		home := filepath.Join(b.TempDir(), fmt.Sprint("home", i))
		cmd := exec.Command(bins.hearthd, "memory", "import", file)
		cmd.Env = append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_LOG_LEVEL=warn")
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		total += time.Since(t0)
		if err != nil || !strings.Contains(string(out), "created 100000 entities") {
			b.Fatalf("import: %v\n%s", err, out)
		}
	}
	b.StopTimer()
	b.ReportMetric(total.Seconds()/float64(b.N), "s/import")
}
