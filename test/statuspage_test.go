//go:build linux

package test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-mcp/hearth/pkg/proctable"
)

// namedClient connects a go-sdk client called name to `hearth run ARGS`.
func namedClient(t *testing.T, env []string, name string, runArgs ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin.hearth, append([]string{"run"}, runArgs...)...)
	cmd.Env = env
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// hostedInstance is one of daemon_status's hosted entries.
type hostedInstance struct {
	Server, Key  string
	Pid, Clients int
	RSSBytes     int64
}

// hostedOf is daemon_status's hosted list, by what it runs: the word of
// its command line that has want in it.
func hostedOf(t *testing.T, env []string) map[string]hostedInstance {
	t.Helper()
	res := callTool(t, shimSession(t, env), "daemon_status", map[string]any{})
	var st struct{ Hosted []hostedInstance }
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &st)
	out := map[string]hostedInstance{}
	for _, h := range st.Hosted {
		for _, name := range []string{"server-everything", "server-memory"} {
			if strings.Contains(h.Server, name) {
				out[name] = h
			}
		}
	}
	return out
}

// A tree as a direct spawn runs it: a keeper's descendants, less the keeper.
func upstreamTree(table []proctable.Proc, keeper int) (procs int, rss int64) {
	for _, p := range proctable.Tree(table, keeper) {
		if p.Pid != keeper && !p.Zombie {
			procs++
			rss += p.RSS
		}
	}
	return procs, rss
}

// The status page in headless Chromium: three clients on two hosted servers
// (server-everything, two windows; server-memory, one). The page shows both
// servers and their clients by name, and a direct-spawn figure equal to the
// test's own sum of each instance's clients times its measured tree (the
// processes exactly, the memory within 10 %: the two reads are moments
// apart); a restart from the page restarts the instance; a request without
// the page's secret, with a foreign Origin or Host, or a used link, is
// refused. It writes a screenshot for people to look at
// ($HEARTH_PAGE_SCREENSHOT, else hearth-status-page.png in the temporary
// directory; the log says where).
func TestStatusPageInChromium(t *testing.T) {
	everything := npmServer(t, "server-everything")
	memory := npmServer(t, "server-memory")
	node := needNode(t)
	env, _ := startUserDaemon(t)
	memEnv := append(append([]string(nil), env...), "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
	a1 := namedClient(t, env, "editor-one", "--", node, everything)
	a2 := namedClient(t, env, "agent-two", "--", node, everything)
	b1 := namedClient(t, memEnv, "editor-one", "--env", "MEMORY_FILE_PATH", "--", node, memory)
	for _, cs := range []*mcp.ClientSession{a1, a2} {
		if out, isErr := callText(t, cs, "echo", map[string]any{"message": "hi"}); isErr || out != "Echo: hi" {
			t.Fatalf("echo: %q", out)
		}
	}
	if _, isErr := callText(t, b1, "read_graph", map[string]any{}); isErr {
		t.Fatal("read_graph failed")
	}

	// hearthd ui, its opener a script that notes the link.
	dir := t.TempDir()
	noted := filepath.Join(dir, "url")
	opener := filepath.Join(dir, "open")
	os.WriteFile(opener, []byte("#!/bin/sh\nfor a; do last=$a; done\nprintf %s \"$last\" > "+noted+"\n"), 0o755)
	ui := exec.Command(bin.hearthd, "ui")
	ui.Env = append(append([]string(nil), env...), "HEARTH_OPEN_URL="+opener)
	if out, err := ui.CombinedOutput(); err != nil || !strings.Contains(string(out), "opened the status page") {
		t.Fatalf("hearthd ui: %v\n%s", err, out)
	}
	link, _ := os.ReadFile(noted)
	u, err := url.Parse(string(link))
	if err != nil || u.Hostname() != "127.0.0.1" || !strings.HasPrefix(u.Fragment, "t=") {
		t.Fatalf("the opener was given %q", link)
	}
	base := u.Scheme + "://" + u.Host

	b := startBrowser(t)
	b.navigate(string(link))
	b.waitFor(`document.querySelectorAll("[data-server]").length === 2 && document.querySelector("[data-server] .clients tbody tr")`, 30*time.Second)
	b.waitFor(`[...document.querySelectorAll("[data-server]")].every(e => e.querySelectorAll(".procs tbody tr").length > 0)`, 20*time.Second)
	var page struct {
		Servers     []struct{ Key, Text string }
		DirectProcs string
		DirectRSS   string
		Secret      string
		Hash        string
	}
	read := func() {
		t.Helper()
		if err := b.eval(`({servers: [...document.querySelectorAll("[data-server]")].map(e => ({key: e.dataset.key, text: e.innerText})),
			directProcs: document.getElementById("direct-procs").dataset.n, directRSS: document.getElementById("direct-rss").dataset.bytes,
			secret: sessionStorage.getItem("hearth-secret"), hash: location.hash})`, &page); err != nil {
			t.Fatal(err)
		}
	}
	// The page's figure against the test's own measure of the trees, taken
	// on either side of it (a server's memory moves a little between).
	measure := func() (procs int, rss int64) {
		table, err := proctable.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hostedOf(t, env) {
			n, r := upstreamTree(table, h.Pid)
			procs += h.Clients * n
			rss += int64(h.Clients) * r
		}
		return procs, rss
	}
	wantProcs, rssBefore := measure()
	time.Sleep(2500 * time.Millisecond) // a refresh of the page after the measure
	read()
	_, rssAfter := measure()
	if wantProcs != 3 { // server-everything and server-memory are one node process each
		t.Fatalf("the test measured %d direct-spawn processes, want 3", wantProcs)
	}
	var gotRSS int64
	json.Unmarshal([]byte(page.DirectRSS), &gotRSS)
	lo, hi := min(rssBefore, rssAfter), max(rssBefore, rssAfter)
	if page.DirectProcs != "3" || float64(gotRSS) < 0.9*float64(lo) || float64(gotRSS) > 1.1*float64(hi) {
		t.Fatalf("the page's direct spawn: %s processes, %d bytes; the test measured %d processes, %d to %d bytes", page.DirectProcs, gotRSS, wantProcs, lo, hi)
	}
	t.Logf("direct spawn per window: %s processes, %.1f MB (the test measured %.1f to %.1f MB)", page.DirectProcs, float64(gotRSS)/1e6, float64(lo)/1e6, float64(hi)/1e6)
	texts := map[string]string{}
	for _, s := range page.Servers {
		texts[s.Key] = s.Text
	}
	evName, memName := "server-everything", "server-memory"
	hosted := hostedOf(t, env)
	names := map[string]string{evName: texts[hosted[evName].Key], memName: texts[hosted[memName].Key]}
	if len(texts) != 2 || !strings.Contains(names[evName], "editor-one") || !strings.Contains(names[evName], "agent-two") ||
		!strings.Contains(names[memName], "editor-one") || strings.Contains(names[memName], "agent-two") || !strings.Contains(names[evName], "2 windows") {
		t.Fatalf("the servers and their clients on the page: %v", names)
	}
	if page.Secret == "" || page.Hash != "" {
		t.Fatalf("the page kept secret %q, its address #%s", page.Secret, page.Hash)
	}
	// A hosted instance's resident memory in daemon_status is its whole
	// tree (keeper, upstream and what it started), not its keeper's group.
	if table, err := proctable.List(); err == nil {
		for name, h := range hostedOf(t, env) {
			_, tree := upstreamTree(table, h.Pid)
			if h.RSSBytes < tree {
				t.Errorf("%s: daemon_status says %d bytes resident; its upstream's tree alone holds %d", name, h.RSSBytes, tree)
			}
		}
	}

	shot := os.Getenv("HEARTH_PAGE_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(os.TempDir(), "hearth-status-page.png")
	}
	b.screenshot(shot)
	t.Logf("screenshot of the status page: %s", shot)

	// Restart from the page: the instance's keeper and upstream end; the
	// next call starts a new one.
	before := hostedOf(t, env)[evName]
	table, _ := proctable.List()
	oldKeeper := proctable.ByPid(table)[before.Pid]
	if oldKeeper == nil {
		t.Fatalf("no keeper %d", before.Pid)
	}
	if err := b.eval(`document.querySelector('[data-key="`+before.Key+`"] button.restart').click()`, nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if p, err := proctable.Stat(oldKeeper.Pid); err != nil || p.Start != oldKeeper.Start || p.Zombie {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the page's restart did not end the instance's keeper")
		}
	}
	// A call in the moment the instance is restarting is answered with an
	// error saying so; the next starts it again.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := a1.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "again"}})
		cancel()
		if err == nil && !res.IsError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("echo after the restart: %v %+v", err, res)
		}
	}
	if after := hostedOf(t, env)[evName]; after.Pid == 0 || after.Pid == before.Pid {
		t.Fatalf("after the restart the instance runs keeper %d (before: %d)", after.Pid, before.Pid)
	}

	// Refusals.
	get := func(path string, hdr map[string]string, host string) int {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	secret := map[string]string{"X-Hearth-Secret": page.Secret}
	if code := get("/api/state", secret, ""); code != 200 {
		t.Fatalf("with the secret: %d", code)
	}
	if code := get("/api/state", nil, ""); code != 403 {
		t.Errorf("without the secret: %d", code)
	}
	if code := get("/api/state", map[string]string{"X-Hearth-Secret": strings.Repeat("0", 64)}, ""); code != 403 {
		t.Errorf("with another secret: %d", code)
	}
	if code := get("/api/state", map[string]string{"X-Hearth-Secret": page.Secret, "Origin": "https://evil.example"}, ""); code != 403 {
		t.Errorf("from another site's page: %d", code)
	}
	if code := get("/api/state", map[string]string{"X-Hearth-Secret": page.Secret, "Origin": "http://127.0.0.1:1"}, ""); code != 403 {
		t.Errorf("from another local page: %d", code)
	}
	if code := get("/api/state", secret, "evil.example:80"); code != 403 {
		t.Errorf("with a rebound Host: %d", code)
	}
	post := func(path string, hdr map[string]string, body string) int {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post("/api/open", map[string]string{"X-Hearth-Token": strings.TrimPrefix(u.Fragment, "t=")}, ""); code != 403 {
		t.Errorf("the link opened twice: %d", code)
	}
	if code := post("/api/action", nil, `{"action":"stop","name":"`+before.Key+`"}`); code != 403 {
		t.Errorf("a stop without the secret: %d", code)
	}
	if hostedOf(t, env)[evName].Pid == 0 {
		t.Fatal("a refused stop stopped the server")
	}
}

// What sharing saves for six sessions (windows), each with the three npm
// servers a window commonly has (server-everything, server-memory,
// server-filesystem): a measurement for people, run with
// HEARTH_MEASURE_SAVINGS=1; it logs daemon_status's savings and checks
// them against the test's own sum of the trees.
func TestSavingsOfSixSessions(t *testing.T) {
	if os.Getenv("HEARTH_MEASURE_SAVINGS") != "1" {
		t.Skip("a measurement: HEARTH_MEASURE_SAVINGS=1 runs it")
	}
	node := needNode(t)
	servers := [][]string{
		{"--", node, npmServer(t, "server-everything")},
		{"--env", "MEMORY_FILE_PATH", "--", node, npmServer(t, "server-memory")},
		{"--", node, npmServer(t, "server-filesystem"), t.TempDir()},
	}
	env, _ := startUserDaemon(t)
	env = append(env, "MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"))
	for i := range 6 {
		for _, s := range servers {
			cs := namedClient(t, env, "session-"+string(rune('a'+i)), s...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			cancel()
		}
	}
	time.Sleep(2 * time.Second) // the servers settle
	res := callTool(t, shimSession(t, env), "daemon_status", map[string]any{})
	var st struct {
		Savings struct {
			Now  map[string]any
			Line string
		}
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &st)
	t.Logf("%s\n%v", st.Savings.Line, st.Savings.Now)
	if st.Savings.Now["clients"] != float64(18) || st.Savings.Now["directProcs"] != float64(18) {
		t.Fatalf("savings %v", st.Savings.Now)
	}
}
