//go:build unix

package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/memory/pgstore"
	"github.com/hearth-mcp/hearth/pkg/memory/pgstore/pgtest"
)

// mcpConn is an initialized MCP connection to a daemon's socket that makes
// one tools/call at a time.
type mcpConn struct {
	*rawConn
	mu sync.Mutex
	id int
}

func dialMCP(t *testing.T, socket string) *mcpConn {
	t.Helper()
	r := dialRaw(t, socket)
	r.initialize()
	return &mcpConn{rawConn: r}
}

// reply is a tools/call answer: a result, or a JSON-RPC error.
type reply struct {
	Result *struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	took time.Duration
}

func (c *mcpConn) call(tool string, args map[string]any) reply {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.id++
	a, _ := json.Marshal(args)
	start := time.Now()
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, c.id, tool, a))
	for {
		line := c.recv()
		var head struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal([]byte(line), &head)
		if string(head.ID) != fmt.Sprint(c.id) {
			continue // a notification
		}
		var r reply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			c.t.Fatalf("%s: %v: %s", tool, err, line)
		}
		r.took = time.Since(start)
		return r
	}
}

func (c *mcpConn) add(text string) string {
	c.t.Helper()
	r := c.call("add_memory", map[string]any{"text": text})
	if r.Result == nil || r.Result.IsError {
		c.t.Fatalf("add_memory: %+v", r)
	}
	return r.Result.StructuredContent["memory_id"].(string)
}

// finds reports whether search_memory for query returns id.
func (c *mcpConn) finds(query, id string) bool {
	c.t.Helper()
	r := c.call("search_memory", map[string]any{"query": query, "limit": 5})
	if r.Result == nil || r.Result.IsError {
		return false
	}
	b, _ := json.Marshal(r.Result.StructuredContent)
	return strings.Contains(string(b), id)
}

// until polls cond every few milliseconds and returns how long it took to
// hold; it fails the test past limit.
func until(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

func pgServer(t *testing.T) *pgtest.Server {
	t.Helper()
	needOrSkip(t, pgtest.Bin() != "", "PostgreSQL (initdb, pg_ctl)")
	return pgtest.Start(t, pgtest.Options{})
}

// TestPostgresTwoDaemonsShareMemory: two daemons with their own homes and
// sockets share one PostgreSQL database. What either adds or deletes is
// found, or no longer found, by search_memory on the other within a second;
// stopping the server makes the memory tools answer -32000 promptly while
// the other families go on answering, and starting it again heals both
// daemons without a restart; SIGKILL of one daemon mid-load loses none of
// the adds it answered.
func TestPostgresTwoDaemonsShareMemory(t *testing.T) {
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
		word := fmt.Sprintf("quokka%d", i)
		id := from.add("the shared note about " + word)
		seen = append(seen, until(t, time.Second, "add "+word+" seen by the other daemon", func() bool { return to.finds(word, id) }))
		if r := to.call("delete_memory", map[string]any{"memory_id": id, "confirm": true}); r.Result == nil || r.Result.IsError {
			t.Fatalf("delete_memory: %+v", r)
		}
		seen = append(seen, until(t, time.Second, "delete of "+word+" seen by the writer", func() bool { return !from.finds(word, id) }))
	}
	slices.Sort(seen)
	t.Logf("a write on one daemon searchable on the other: p50 %v, max %v (%d adds and deletes)", seen[len(seen)/2], seen[len(seen)-1], len(seen))

	// The server goes down.
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*mcpConn{c1, c2} {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"add_memory", map[string]any{"text": "during the outage"}},
			{"search_memory", map[string]any{"query": "quokka"}},
			{"get_stats", map[string]any{}},
		} {
			r := c.call(call.tool, call.args)
			if r.Error == nil || r.Error.Code != -32000 || !strings.Contains(r.Error.Message, "PostgreSQL") || strings.Contains(r.Error.Message, srv.Dir) {
				t.Fatalf("%s with PostgreSQL down: %+v", call.tool, r)
			}
			if r.took > 5*time.Second {
				t.Errorf("%s took %v to answer -32000", call.tool, r.took)
			}
		}
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"validate_asset", map[string]any{"schema": "shader", "asset": map[string]any{}}},
			{"search", map[string]any{"query": "quokka"}},
			{"daemon_status", map[string]any{}},
		} {
			if r := c.call(call.tool, call.args); r.Result == nil || r.took > 5*time.Second {
				t.Fatalf("%s while PostgreSQL is down: %+v", call.tool, r)
			}
		}
	}
	// It comes back: both daemons heal on their own.
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	var healed string
	took := until(t, 15*time.Second, "an add through daemon 1 after the restart", func() bool {
		r := c1.call("add_memory", map[string]any{"text": "after the restart: wombat"})
		if r.Result != nil && !r.Result.IsError {
			healed = r.Result.StructuredContent["memory_id"].(string)
			return true
		}
		return false
	})
	t.Logf("daemon 1 answered an add %v after PostgreSQL came back", took)
	until(t, 6*time.Second, "daemon 2 finds daemon 1's write after the restart", func() bool { return c2.finds("wombat", healed) })
	id := c2.add("from daemon 2 after the restart: numbat")
	until(t, time.Second, "daemon 1 finds daemon 2's write", func() bool { return c1.finds("numbat", id) })

	// SIGKILL daemon 1 in the middle of a stream of adds: every add it
	// answered is in the database, and daemon 2 finds it.
	// The load runs on a connection of its own, read without t (the kill
	// ends it mid-call).
	conn, err := net.Dial("unix", d1.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	fmt.Fprintln(conn, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)
	if _, err := rd.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(conn, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var answered []struct{ word, id string }
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; ; i++ {
			word := fmt.Sprintf("loaditem%dx", i)
			if _, err := fmt.Fprintf(conn, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add_memory","arguments":{"text":"load %s"}}}`+"\n", i, word); err != nil {
				return
			}
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			var r reply
			if json.Unmarshal([]byte(line), &r) != nil || r.Result == nil || r.Result.IsError {
				return
			}
			mu.Lock()
			answered = append(answered, struct{ word, id string }{word, r.Result.StructuredContent["memory_id"].(string)})
			mu.Unlock()
		}
	}()
	time.Sleep(400 * time.Millisecond)
	d1.cmd.Process.Signal(syscall.SIGKILL)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(answered) == 0 {
		t.Fatal("no add was answered before the kill")
	}
	for _, a := range answered {
		until(t, time.Second, "answered add "+a.word+" found after SIGKILL", func() bool { return c2.finds(a.word, a.id) })
	}
	t.Logf("%d adds answered before SIGKILL, all found on the other daemon", len(answered))
}

// TestPostgresGuard: hearthd serve refuses a database in another format
// (exit 78, naming both formats and hearthd migrate) and hearth tables
// without a marker (exit 65), leaving them as they were; hearthd migrate
// --adopt marks them, and serve then starts.
func TestPostgresGuard(t *testing.T) {
	srv := pgServer(t)
	db := srv.CreateDB(t)
	dir := shortTempDir(t)
	env := []string{"HEARTH_HOME=" + dir + "/home", "XDG_RUNTIME_DIR=" + dir, "HOME=" + dir,
		"MCP_SOCKET_PATH=", "MCP_READY_FILE=", "HEARTH_STORE_URL=" + srv.DSN(db)}
	ctx := context.Background()
	if code, out := runHearthd(t, env, "migrate"); code != 0 || !strings.Contains(out, "created the hearth tables") {
		t.Fatalf("migrate on an empty database: exit %d\n%s", code, out)
	}
	if err := srv.Exec(ctx, db, `UPDATE hearth_format SET format = '2.0', written_by = 'hearthd 9.9.9'`); err != nil {
		t.Fatal(err)
	}
	code, out := runHearthd(t, env, "serve")
	if code != 78 || !strings.Contains(out, "format 2.0") || !strings.Contains(out, "reads format "+pgstore.Format) || !strings.Contains(out, "hearthd migrate") {
		t.Fatalf("serve on a database in format 2.0: exit %d\n%s", code, out)
	}
	if err := srv.Exec(ctx, db, `DROP TABLE hearth_format`); err != nil {
		t.Fatal(err)
	}
	code, out = runHearthd(t, env, "serve")
	if code != 65 || !strings.Contains(out, "no format marker") {
		t.Fatalf("serve on hearth tables without a marker: exit %d\n%s", code, out)
	}
	if code, out := runHearthd(t, env, "migrate"); code != 65 {
		t.Fatalf("migrate without --adopt: exit %d\n%s", code, out)
	}
	if code, out := runHearthd(t, env, "migrate", "--adopt"); code != 0 || !strings.Contains(out, "adopted") {
		t.Fatalf("migrate --adopt: exit %d\n%s", code, out)
	}
	// With a password in the URL (trust auth ignores it): it shows nowhere.
	const pw = "Pw-never-shown-77"
	d := startDaemon(t, "HEARTH_STORE_URL=postgres://hearth:"+pw+"@/"+db+"?host="+srv.Dir+"&sslmode=disable")
	c := dialMCP(t, d.socket)
	id := c.add("after adopting: echidna")
	if !c.finds("echidna", id) {
		t.Fatal("the adopted store does not serve")
	}
	r := c.call("daemon_status", map[string]any{})
	b, _ := json.Marshal(r.Result.StructuredContent)
	if !strings.Contains(string(b), "postgres hearth@") || !strings.Contains(string(b), "hearth:xxxxx@") {
		t.Fatalf("daemon_status does not name the PostgreSQL store and its redacted setting: %s", b)
	}
	if strings.Contains(string(b), pw) || strings.Contains(d.stderr.String(), pw) {
		t.Fatal("the password shows in daemon_status or the log")
	}
}
