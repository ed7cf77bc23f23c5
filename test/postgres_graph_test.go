//go:build unix

package test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
)

// graphOf reads a tool answer's entities ("name|type|obs;obs") and
// relations ("from|type|to").
func graphOf(t *testing.T, tool string, r reply) (entities, relations []string) {
	t.Helper()
	if r.Result == nil || r.Result.IsError {
		t.Fatalf("%s: %+v", tool, r)
	}
	b, _ := json.Marshal(r.Result.StructuredContent)
	var g struct {
		Entities []struct {
			Name         string   `json:"name"`
			EntityType   string   `json:"entityType"`
			Observations []string `json:"observations"`
		} `json:"entities"`
		Relations []struct {
			From         string `json:"from"`
			To           string `json:"to"`
			RelationType string `json:"relationType"`
		} `json:"relations"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v: %s", tool, err, b)
	}
	for _, e := range g.Entities {
		entities = append(entities, e.Name+"|"+e.EntityType+"|"+strings.Join(e.Observations, ";"))
	}
	for _, r := range g.Relations {
		relations = append(relations, r.From+"|"+r.RelationType+"|"+r.To)
	}
	return entities, relations
}

// readGraph is read_graph of a workspace in one page.
func (c *mcpConn) readGraph(ws string) (entities, relations []string) {
	c.t.Helper()
	return graphOf(c.t, "read_graph", c.call("read_graph", map[string]any{"workspace_id": ws, "limit": 10000}))
}

func (c *mcpConn) ok(tool string, args map[string]any) map[string]any {
	c.t.Helper()
	r := c.call(tool, args)
	if r.Result == nil || r.Result.IsError {
		c.t.Fatalf("%s: %+v", tool, r)
	}
	return r.Result.StructuredContent
}

// TestPostgresTwoDaemonsShareGraph: two daemons with their own homes and
// sockets share one PostgreSQL database. Entities and relations created
// through either are read by read_graph, search_nodes and open_nodes on the
// other within a second; delete_entities cascades on both; a memory deleted
// through one loses its links on both. With the server stopped the graph
// tools answer -32000 promptly and heal without a restart. hearthd memory
// export and import work on the database directly and through a daemon.
func TestPostgresTwoDaemonsShareGraph(t *testing.T) {
	srv := pgServer(t)
	url := srv.URL(srv.CreateDB(t))
	d1 := startDaemon(t, "HEARTH_STORE_URL="+url)
	d2 := startDaemon(t, "HEARTH_STORE_URL="+url)
	c1, c2 := dialMCP(t, d1.socket), dialMCP(t, d2.socket)

	var seen []time.Duration
	for i := 0; i < 10; i++ {
		from, to := c1, c2
		if i%2 == 1 {
			from, to = c2, c1
		}
		name, word := fmt.Sprintf("Platypus%d", i), fmt.Sprintf("burrow%dword", i)
		want := name + "|animal|lives in a " + word
		from.ok("create_entities", map[string]any{"entities": []map[string]any{{"name": name, "entityType": "animal", "observations": []string{"lives in a " + word}}}})
		seen = append(seen, until(t, time.Second, "create of "+name+" read by the other daemon", func() bool {
			es, _ := graphOf(t, "open_nodes", to.call("open_nodes", map[string]any{"names": []string{name}}))
			return slices.Equal(es, []string{want})
		}))
		if es, _ := graphOf(t, "search_nodes", to.call("search_nodes", map[string]any{"query": word})); !slices.Equal(es, []string{want}) {
			t.Fatalf("search_nodes %s on the other daemon: %v", word, es)
		}
		if es, _ := to.readGraph("default"); !slices.Contains(es, want) {
			t.Fatalf("read_graph on the other daemon lacks %s: %v", name, es)
		}
		if i > 0 {
			prev := fmt.Sprintf("Platypus%d", i-1)
			from.ok("create_relations", map[string]any{"relations": []map[string]any{{"from": prev, "to": name, "relationType": "precedes"}}})
			seen = append(seen, until(t, time.Second, "relation to "+name+" read by the other daemon", func() bool {
				_, rs := graphOf(t, "open_nodes", to.call("open_nodes", map[string]any{"names": []string{name}}))
				return slices.Contains(rs, prev+"|precedes|"+name)
			}))
		}
	}
	slices.Sort(seen)
	t.Logf("a graph write on one daemon read on the other: p50 %v, max %v (%d writes)", seen[len(seen)/2], seen[len(seen)-1], len(seen))

	// delete_entities through daemon 2 cascades on both.
	c2.ok("delete_entities", map[string]any{"entityNames": []string{"Platypus4"}})
	for _, c := range []*mcpConn{c1, c2} {
		until(t, time.Second, "the delete read on both daemons", func() bool {
			es, rs := c.readGraph("default")
			for _, r := range rs {
				if strings.Contains(r, "Platypus4") {
					return false
				}
			}
			return len(es) == 9 && len(rs) == 7
		})
	}

	// A memory's links to the entities it mentions: built through daemon 1,
	// gone on both once daemon 2 deletes the memory.
	id := c1.add("Ada Lovelace wrote notes on the Analytical Engine")
	if b := c1.ok("build_graph", map[string]any{}); b["links"].(float64) < 1 {
		t.Fatalf("build_graph linked nothing: %v", b)
	}
	links := func(c *mcpConn) float64 { return c.ok("graph_status", map[string]any{})["links"].(float64) }
	if n := links(c2); n < 1 {
		t.Fatalf("daemon 2 sees %v links after daemon 1's build", n)
	}
	c2.ok("delete_memory", map[string]any{"memory_id": id, "confirm": true})
	for _, c := range []*mcpConn{c1, c2} {
		if n := links(c); n != 0 {
			t.Fatalf("links after the memory's delete: %v", n)
		}
	}

	// hearthd memory export straight from the database (a home no daemon
	// owns), then import into another workspace through daemon 2: daemon 1
	// reads it.
	dir := shortTempDir(t)
	direct := append(os.Environ(), "HEARTH_HOME="+filepath.Join(dir, "home"), "XDG_RUNTIME_DIR="+dir, "HOME="+dir,
		"MCP_SOCKET_PATH=", "HEARTH_STORE_URL="+url)
	exported := filepath.Join(dir, "export.jsonl")
	if out, code := runHearthdCmd(t, direct, "memory", "export", "-o", exported); code != 0 {
		t.Fatalf("export from the database: exit %d\n%s", code, out)
	}
	if b, _ := os.ReadFile(exported); strings.Count(string(b), `"type":"entity"`) < 9 || !strings.Contains(string(b), "Platypus9") {
		t.Fatalf("export: %s", b)
	}
	if out, code := runHearthdCmd(t, d2.cmd.Env, "memory", "import", "--workspace", "copy", exported); code != 0 || !strings.Contains(out, "through the daemon") {
		t.Fatalf("import through daemon 2: exit %d\n%s", code, out)
	}
	wantE, wantR := c1.readGraph("default")
	if es, rs := c1.readGraph("copy"); !slices.Equal(es, wantE) || !slices.Equal(rs, wantR) {
		t.Fatalf("daemon 1 reads the import through daemon 2:\n%v %v\nwant\n%v %v", es, rs, wantE, wantR)
	}
	if out, code := runHearthdCmd(t, direct, "memory", "import", "--workspace", "copy2", exported); code != 0 || !strings.Contains(out, "directly") {
		t.Fatalf("import into the database directly: exit %d\n%s", code, out)
	}
	if es, rs := c2.readGraph("copy2"); !slices.Equal(es, wantE) || !slices.Equal(rs, wantR) {
		t.Fatalf("daemon 2 reads the direct import:\n%v %v", es, rs)
	}

	// The server goes down: the graph tools answer -32000 promptly.
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*mcpConn{c1, c2} {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"create_entities", map[string]any{"entities": []map[string]any{{"name": "Outage", "entityType": "event", "observations": []string{}}}}},
			{"read_graph", map[string]any{}},
			{"search_nodes", map[string]any{"query": "platypus"}},
			{"open_nodes", map[string]any{"names": []string{"Platypus1"}}},
			{"get_related", map[string]any{"name": "Platypus1"}},
			{"graph_status", map[string]any{}},
		} {
			r := c.call(call.tool, call.args)
			if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "PostgreSQL") {
				t.Fatalf("%s with PostgreSQL down: %+v", call.tool, r)
			}
			if r.took > 5*time.Second {
				t.Errorf("%s took %v to answer -32000", call.tool, r.took)
			}
		}
		if r := c.call("validate_asset", map[string]any{"schema": "shader", "asset": map[string]any{}}); r.Result == nil || r.took > 5*time.Second {
			t.Fatalf("validate_asset while PostgreSQL is down: %+v", r)
		}
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	took := until(t, 15*time.Second, "a graph write through daemon 2 after the restart", func() bool {
		r := c2.call("create_entities", map[string]any{"entities": []map[string]any{{"name": "Echidna", "entityType": "animal", "observations": []string{"after the restart"}}}})
		return r.Result != nil && !r.Result.IsError
	})
	t.Logf("daemon 2 answered a graph write %v after PostgreSQL came back", took)
	until(t, 6*time.Second, "daemon 1 reads daemon 2's write after the restart", func() bool {
		r := c1.call("open_nodes", map[string]any{"names": []string{"Echidna"}})
		if r.Result == nil || r.Result.IsError {
			return false
		}
		es, _ := graphOf(t, "open_nodes", r)
		return len(es) == 1
	})
}

// TestPostgresGraphSIGKILL: sixteen clients, eight on each of two daemons
// sharing one database, create overlapping entities and relations; daemon 1
// is killed mid-stream. Every write either daemon answered is read back
// through daemon 2, each entity and relation once.
func TestPostgresGraphSIGKILL(t *testing.T) {
	srv := pgServer(t)
	url := srv.URL(srv.CreateDB(t))
	d1 := startDaemon(t, "HEARTH_STORE_URL="+url)
	d2 := startDaemon(t, "HEARTH_STORE_URL="+url)
	answeredE, answeredR := graphWriteLoad(t, []string{d1.socket, d2.socket}, 16, 300, 15, func() {
		d1.cmd.Process.Signal(syscall.SIGKILL)
		<-d1.done
		d1.done <- nil
	})
	t.Logf("daemon 1 killed after %d answered entity names and %d answered relations", len(answeredE), len(answeredR))

	c2 := dialMCP(t, d2.socket)
	es, rs := c2.readGraph("default")
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = strings.SplitN(e, "|", 2)[0]
	}
	checkAnsweredOnce(t, names, rs, answeredE, answeredR)
	// A daemon started on the same database loads the same graph.
	d3 := startDaemon(t, "HEARTH_STORE_URL="+url)
	es3, rs3 := dialMCP(t, d3.socket).readGraph("default")
	if !slices.Equal(es3, es) || !slices.Equal(rs3, rs) {
		t.Fatalf("a new daemon's graph differs from daemon 2's: %d/%d entities, %d/%d relations", len(es3), len(es), len(rs3), len(rs))
	}
}

// TestPostgresMigrateToGraph: a database of format 1.0 (memories, no graph
// tables) stops hearthd serve with exit 78 naming both formats; hearthd
// migrate adds the graph's tables, and the daemon then serves the old
// memories and the graph.
func TestPostgresMigrateToGraph(t *testing.T) {
	srv := pgServer(t)
	db := srv.CreateDB(t)
	dir := shortTempDir(t)
	env := []string{"HEARTH_HOME=" + dir + "/home", "XDG_RUNTIME_DIR=" + dir, "HOME=" + dir,
		"MCP_SOCKET_PATH=", "MCP_READY_FILE=", "HEARTH_STORE_URL=" + srv.DSN(db)}
	d := startDaemon(t, "HEARTH_STORE_URL="+srv.DSN(db))
	id := dialMCP(t, d.socket).add("written before the graph: kookaburra")
	d.stop(t)
	// What a hearthd of format 1.0 left: its tables, no graph.
	if err := srv.Exec(context.Background(), db, `DROP TABLE hearth_graph_changes, hearth_graph_builds, hearth_extracted, hearth_mentions,
		hearth_relations, hearth_observations, hearth_entities, hearth_graph_counters, hearth_daemons, hearth_pruned;
		UPDATE hearth_format SET format = '1.0', written_by = 'hearthd 1.0-era'`); err != nil {
		t.Fatal(err)
	}
	code, out := runHearthd(t, env, "serve")
	if code != 78 || !strings.Contains(out, "in format 1.0") || !strings.Contains(out, "reads format "+pgstore.Format) || !strings.Contains(out, "hearthd migrate") {
		t.Fatalf("serve on a database of format 1.0: exit %d\n%s", code, out)
	}
	if code, out := runHearthd(t, env, "migrate"); code != 0 || !strings.Contains(out, "from format 1.0 to "+pgstore.Format) || !strings.Contains(out, "graph") {
		t.Fatalf("migrate from 1.0: exit %d\n%s", code, out)
	}
	d = startDaemon(t, "HEARTH_STORE_URL="+srv.DSN(db))
	c := dialMCP(t, d.socket)
	if !c.finds("kookaburra", id) {
		t.Fatal("the memory of format 1.0 is not found after migrating")
	}
	c.ok("create_entities", map[string]any{"entities": []map[string]any{{"name": "Kookaburra", "entityType": "bird", "observations": []string{"laughs"}}}})
	if es, _ := c.readGraph("default"); !slices.Equal(es, []string{"Kookaburra|bird|laughs"}) {
		t.Fatalf("graph after migrating: %v", es)
	}
}
