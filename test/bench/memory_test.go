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
	"sync"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/guard"
	"github.com/hearth-mcp/hearth/pkg/memory/chunk"
	"github.com/hearth-mcp/hearth/pkg/memory/sqlitestore"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// corpusSentences generates n deterministic observations from a small
// vocabulary with a skewed word frequency, like notes people keep.
func corpusSentences(n int) []string {
	vocab := strings.Fields(`deploy staging database port migration cache latency token
		review merge branch release schema index query timeout retry queue worker cluster
		backup restore secret rotate certificate alert dashboard metric budget owner meeting
		customer invoice refund ticket bug crash memory leak profile trace log error warning`)
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		words := make([]string, 8+r.IntN(12))
		for j := range words {
			// Squaring the uniform draw favours the first words (a skew).
			f := r.Float64()
			words[j] = vocab[int(f*f*float64(len(vocab)))]
		}
		out[i] = fmt.Sprintf("note %d: %s", i, strings.Join(words, " "))
	}
	return out
}

var memoryQueries = []string{"staging database", "cache latency", "certificate rotate", "invoice refund", "memory leak profile", "deploy", "queue worker timeout", "alert dashboard"}

// BenchmarkSearchMemoryVsOfficial: 10 000 memories in hearth (search_memory
// over stdio) and 10 000 observations in the official
// @modelcontextprotocol/server-memory (search_nodes over stdio), the same
// queries timed sequentially in one run. The peer's search is an unranked
// substring scan of its JSONL file; hearth's is ranked BM25.
func BenchmarkSearchMemoryVsOfficial(b *testing.B) {
	build(b)
	const n = 10000
	sentences := corpusSentences(n)

	// hearth: fill a store through the store API, many writers at once
	// (durable adds share commits), behind a version-guard marker.
	home := b.TempDir()
	if _, err := guard.Check(home, "bench"); err != nil {
		b.Fatal(err)
	}
	st, err := sqlitestore.Open(context.Background(), filepath.Join(home, "memory.db"))
	if err != nil {
		b.Fatal(err)
	}
	fillStore(b, st, sentences, 64)

	hcmd := exec.Command(bins.hearthd, "stdio")
	hcmd.Env = append(os.Environ(), "HEARTH_HOME="+home, "HEARTH_LOG_LEVEL=warn", "HEARTH_EMBED_URL=", "HEARTH_EMBED_MODEL=")
	hearth := startPeer(b, hcmd)

	// The official server: its JSONL memory file, written directly.
	server := filepath.Join("..", "ts", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	var official *conn
	if _, err := os.Stat(server); err == nil {
		file := filepath.Join(b.TempDir(), "memory.jsonl")
		var lines strings.Builder
		for i, s := range sentences {
			e, _ := json.Marshal(map[string]any{"type": "entity", "name": fmt.Sprintf("note-%d", i), "entityType": "note", "observations": []string{s}})
			lines.Write(e)
			lines.WriteByte('\n')
		}
		os.WriteFile(file, []byte(lines.String()), 0o600)
		ocmd := exec.Command("node", server)
		ocmd.Env = append(os.Environ(), "MEMORY_FILE_PATH="+file)
		official = startPeer(b, ocmd)
	} else {
		b.Log("official server-memory not installed (npm ci in test/ts); measuring hearth alone")
	}

	search := func(c *conn, tool, arg string) func() time.Duration {
		i := 0
		return func() time.Duration {
			q := memoryQueries[i%len(memoryQueries)]
			i++
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":%q,"arguments":{%q:%q}}}`, tool, arg, q)
			d := timed(func() { c.roundTrip(b, line) })
			if strings.Contains(c.sc.Text(), `"isError":true`) {
				b.Fatalf("%s failed: %.300s", tool, c.sc.Text())
			}
			return d
		}
	}
	cs := []contender{{"hearth", search(hearth, "search_memory", "query")}}
	if official != nil {
		cs = append(cs, contender{"official", search(official, "search_nodes", "query")})
	}
	// The two take turns, 20 queries at a time, in five rounds.
	b.ResetTimer()
	lat := interleave(5, max(b.N/5, 20), 20, cs...)
	b.StopTimer()
	roundQuantiles(b, "hearth-", lat[0])
	if official != nil {
		roundQuantiles(b, "official-", lat[1])
		roundRatio(b, "speedup", lat[1], lat[0])
	}
}

// startPeer starts a stdio MCP server and initializes it.
func startPeer(b *testing.B, cmd *exec.Cmd) *conn {
	b.Helper()
	c, in := spawnConn(b, cmd)
	b.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second): // a peer blocked writing to us never exits on its own
			cmd.Process.Kill()
			<-done
		}
	})
	c.initialize(b)
	return c
}

// BenchmarkAddMemorySocket: add_memory through the daemon's socket, each
// answered only once durable, from 1 and from 16 connections that each keep
// one request in flight (as that many editors would). Target: ≥ 5 000 adds/s.
func BenchmarkAddMemorySocket(b *testing.B) {
	for _, conns := range []int{1, 16} {
		b.Run(fmt.Sprintf("conns=%d", conns), func(b *testing.B) {
			cs := dialInitialized(b, startSocketDaemon(b), conns)
			sentences := corpusSentences(1000)
			b.ResetTimer()
			rate := acrossConns(b, cs, b.N, func(ci int, c *conn, per int) {
				for i := 0; i < per; i++ {
					text, _ := json.Marshal(sentences[(ci*per+i)%len(sentences)])
					c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_memory","arguments":{"text":` + string(text) + `,"metadata":{"tags":["bench"]}}}}`)
					if err := c.w.Flush(); err != nil || !c.sc.Scan() {
						b.Error("connection ended")
						return
					}
					if !strings.Contains(c.sc.Text(), `memory_id`) {
						b.Errorf("add_memory failed: %.300s", c.sc.Text())
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(rate, "adds/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// fillStore adds one memory per sentence to st through the store API, from
// writers goroutines at once (durable adds share commits), then closes it.
func fillStore(b *testing.B, st store.Store, sentences []string, writers int) {
	var wg sync.WaitGroup
	work := make(chan string)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				if _, err := st.Add(context.Background(), store.NewMemory{Workspace: "default", Text: s, Chunks: chunk.Split(s),
					Metadata: store.Metadata{Time: time.Now()}}); err != nil {
					b.Error(err)
				}
			}
		}()
	}
	for _, s := range sentences {
		work <- s
	}
	close(work)
	wg.Wait()
	st.Close()
}
