//go:build unix

package test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-mcp/hearth/pkg/oauth/oauthtest"
)

// browserCommand builds test/internal/remoteclient, whose -browse mode is
// the HEARTH_OPEN_URL that signs in without a person: it follows the
// authorization server's redirect to the daemon's loopback listener.
func browserCommand(t *testing.T) string {
	t.Helper()
	client := filepath.Join(shortTempDir(t), "remoteclient")
	if out, err := exec.Command("go", "build", "-o", client, "github.com/hearth-mcp/hearth/test/internal/remoteclient").CombinedOutput(); err != nil {
		t.Fatalf("building remoteclient: %v\n%s", err, out)
	}
	return client + " -browse"
}

// Five Go SDK clients call one remote server at once through hearth (three
// sharing one hosted instance, two with instances of their own: one token
// family for all five, held by the daemon) while the test's authorization
// server forces twenty refreshes; it rotates the refresh token on every
// use and revokes the whole family when a used one comes back. Not one
// call fails, there is one sign-in (the first), no refresh token is
// presented twice. The entry is a [servers.NAME] with a static key in a
// header that names a stored secret: the key reaches the server, and
// neither it nor any token the authorization server issued is in the
// daemon's log, hearthd status, the servers' logs or the catalog.
func TestRemoteRotationThroughHearth(t *testing.T) {
	const apiKey = "k3y-0f-the-static-header-9a8b7c"
	var keySeen atomic.Int64
	s := oauthtest.New(oauthtest.Options{AccessLifetime: time.Hour, Header: func(h map[string][]string) {
		if v := h["X-Api-Key"]; len(v) == 1 && v[0] == apiKey {
			keySeen.Add(1)
		}
	}})
	defer s.Close()
	cfg := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[servers.rotating]\nurl = %q\nheaders = { X-Api-Key = \"${secret:rotating-key}\" }\n", s.URL())), 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, "HEARTH_CONFIG="+cfg, "HEARTH_OPEN_URL="+browserCommand(t), "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent", "HEARTH_LOG_LEVEL=debug")
	set := exec.Command(bin.hearthd, "secret", "set", "rotating-key")
	set.Env, set.Stdin = d.cmd.Env, strings.NewReader(apiKey+"\n")
	if out, err := set.CombinedOutput(); err != nil || strings.Contains(string(out), apiKey) {
		t.Fatalf("hearthd secret set: %v\n%s", err, out)
	}
	if out, code := runHearthdCmd(t, d.cmd.Env, "secret", "list"); code != 0 || strings.TrimSpace(out) != "rotating-key" {
		t.Fatalf("hearthd secret list: %d %q", code, out)
	}

	const clients, refreshes = 5, 20
	var sessions []*mcp.ClientSession
	for i := 0; i < clients; i++ {
		args := []string{"rotating"}
		if i >= 3 {
			args = []string{"--share", "client", "rotating"}
		}
		sessions = append(sessions, runClientWith(t, d.cmd.Env, nil, "", args))
	}
	var calls, failed atomic.Int64
	var failures sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
				cancel()
				calls.Add(1)
				if err != nil || res.IsError {
					failed.Add(1)
					failures.Store(fmt.Sprint(err, res), true)
				}
			}
		}()
	}
	wait := func(cond func() bool, what string) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("waited a minute for %s: %+v", what, s.Counts())
			}
		}
	}
	wait(func() bool { return calls.Load() >= clients*2 }, "the first calls")
	for i := 0; i < refreshes; i++ {
		before := s.Counts().Refreshes
		s.ExpireAccess()
		wait(func() bool { return s.Counts().Refreshes > before }, "a refresh")
		at := calls.Load()
		wait(func() bool { return calls.Load() >= at+clients }, "calls after a refresh")
	}
	close(stop)
	wg.Wait()
	c := s.Counts()
	failures.Range(func(k, _ any) bool { t.Errorf("failed call: %s", k); return true })
	t.Logf("%d calls by %d clients, %d failed; sign-ins %d, refreshes %d, refresh tokens reused %d, families revoked %d, 401s %d",
		calls.Load(), clients, failed.Load(), c.Authorizations, c.Refreshes, c.Reuses, c.Revoked, c.Unauthorized)
	if failed.Load() != 0 || c.Authorizations != 1 || c.Reuses != 0 || c.Revoked != 0 || c.Refreshes != refreshes {
		t.Fatalf("%d failed calls, %d sign-ins, %d refreshes (want %d), %d reuses, %d revoked",
			failed.Load(), c.Authorizations, c.Refreshes, refreshes, c.Reuses, c.Revoked)
	}
	if keySeen.Load() == 0 {
		t.Fatal("the static key of the entry's header never reached the server")
	}

	// No secret anywhere but the vault.
	status, _ := runHearthdCmd(t, d.cmd.Env, "status", "--json")
	servers, _ := runHearthdCmd(t, d.cmd.Env, "servers", "--json")
	if !strings.Contains(status, `"headerNames":["X-Api-Key"]`) || !strings.Contains(status, `"state":"signed-in"`) {
		t.Fatalf("status shows neither the header's name nor the sign-in:\n%s", status)
	}
	places := map[string]string{"hearthd's log": d.stderr.String(), "hearthd status": status, "hearthd servers": servers}
	home := ""
	for _, kv := range d.cmd.Env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && !strings.HasPrefix(fi.Name(), "secrets.") {
			if b, err := os.ReadFile(p); err == nil {
				places[p] = string(b)
			}
		}
		return nil
	})
	secrets := append(s.Tokens(), apiKey)
	names := make([]string, 0, len(places))
	for where := range places {
		names = append(names, strings.TrimPrefix(where, home))
	}
	t.Logf("%d secrets searched for in: %s", len(secrets), strings.Join(names, ", "))
	for where, text := range places {
		for _, sec := range secrets {
			if strings.Contains(text, sec) {
				t.Errorf("a secret (%.6s...) is in %s", sec, where)
			}
		}
	}
	if len(places) < 4 {
		t.Fatalf("only %d places searched", len(places))
	}
}

// Where no sign-in can be opened (the open_url command fails), a client's
// call to a remote server that needs one is answered at once with an
// error naming `hearthd login NAME`, and hangs not; `hearthd login NAME
// --print` prints the authorization URL, and once a browser followed it the
// command reports the sign-in and the client is served; after `hearthd
// logout NAME` the next client's call fails with the same advice.
func TestRemoteSignInNeededLoginLogout(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{})
	defer s.Close()
	d := startDaemon(t, "HEARTH_OPEN_URL=/bin/false", "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent")
	connect := func() (*mcp.ClientSession, error) {
		cmd := exec.Command(bin.hearth, "run", "--url", s.URL(), "--name", "tracker")
		cmd.Env = d.cmd.Env
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return mcp.NewClient(&mcp.Implementation{Name: "signin", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	}
	if cs, err := connect(); err == nil {
		cs.Close()
		t.Fatal("a server that needs a sign-in was reached without one")
	} else if !strings.Contains(err.Error(), "hearthd login tracker") {
		t.Fatalf("the error does not name hearthd login tracker: %v", err)
	}
	login := exec.Command(bin.hearthd, "login", "tracker", "--print")
	login.Env = d.cmd.Env
	out, err := login.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	login.Stderr = &stderr
	if err := login.Start(); err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 4096)
	n, _ := out.Read(first)
	link := strings.TrimSpace(string(first[:n]))
	if !strings.HasPrefix(link, s.Issuer()) || !strings.Contains(link, "code_challenge_method=S256") {
		t.Fatalf("hearthd login --print: %q (%s)", link, stderr.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := oauthtest.Browser(ctx, link); err != nil {
		t.Fatal(err)
	}
	rest := new(strings.Builder)
	buf := make([]byte, 4096)
	for {
		n, err := out.Read(buf)
		rest.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if err := login.Wait(); err != nil || !strings.Contains(rest.String(), "signed in to tracker") {
		t.Fatalf("hearthd login: %v: %s %s", err, rest, stderr.String())
	}
	cs, err := connect()
	if err != nil {
		t.Fatalf("after hearthd login: %v", err)
	}
	if text, isErr := callText(t, cs, "echo", map[string]any{}); isErr || text != "ok" {
		t.Fatalf("echo after the sign-in: %q", text)
	}
	cs.Close()
	if out, code := runHearthdCmd(t, d.cmd.Env, "logout", "tracker"); code != 0 {
		t.Fatalf("hearthd logout: %s", out)
	}
	if out, code := runHearthdCmd(t, d.cmd.Env, "servers", "stop", "tracker"); code != 0 {
		t.Fatalf("hearthd servers stop: %s", out)
	}
	// The catalog may answer the initialize; the call needs the server.
	if cs, err := connect(); err != nil {
		if !strings.Contains(err.Error(), "hearthd login tracker") {
			t.Fatalf("after logout, the error does not name hearthd login tracker: %v", err)
		}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
		cancel()
		cs.Close()
		if err == nil {
			t.Fatalf("served after hearthd logout: %+v", res)
		}
		if !strings.Contains(err.Error(), "hearthd login tracker") {
			t.Fatalf("after logout, the error does not name hearthd login tracker: %v", err)
		}
	}
	if out, code := runHearthdCmd(t, d.cmd.Env, "login", "nosuch"); code == 0 || !strings.Contains(out, `no remote server named "nosuch"`) {
		t.Fatalf("hearthd login nosuch: %d %s", code, out)
	}
	if s.Counts().Authorizations != 1 {
		t.Fatalf("%d sign-ins, want the one of hearthd login", s.Counts().Authorizations)
	}
}

// A client that declares URL-mode elicitation, through `hearth run --url`:
// its first connection waits for the sign-in the daemon opens; once the
// authorization server revoked the grant, its next call is answered at
// once with a URL-mode elicitation of the sign-in's link (the
// URLElicitationRequiredError, -32042), not held; after a browser followed
// that link, the call is served again.
func TestRemoteSignInAsURLElicitation(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{})
	defer s.Close()
	d := startDaemon(t, "HEARTH_OPEN_URL="+browserCommand(t), "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent")
	cmd := exec.Command(bin.hearth, "run", "--url", s.URL(), "--name", "tracker")
	cmd.Env = d.cmd.Env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	lines := make(chan map[string]json.RawMessage, 16)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	ask := func(id int, method, params string) map[string]json.RawMessage {
		t.Helper()
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatalf("hearth ended before answering %s", method)
				}
				if string(m["id"]) == fmt.Sprint(id) {
					return m
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: no answer in 30s", method)
			}
		}
	}
	init := ask(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"url-client","version":"1"}}`)
	if init["result"] == nil {
		t.Fatalf("initialize: %s", init["error"])
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if m := ask(2, "tools/call", `{"name":"echo","arguments":{}}`); m["result"] == nil {
		t.Fatalf("the first call: %s", m["error"])
	}
	s.RevokeAll()
	m := ask(3, "tools/call", `{"name":"echo","arguments":{}}`)
	var e struct {
		Code    int
		Message string
		Data    struct {
			Elicitations []struct{ Mode, ElicitationID, URL, Message string }
		}
	}
	json.Unmarshal(m["error"], &e)
	if e.Code != -32042 || len(e.Data.Elicitations) != 1 || e.Data.Elicitations[0].Mode != "url" ||
		!strings.HasPrefix(e.Data.Elicitations[0].URL, s.Issuer()) || !strings.Contains(e.Message, "hearthd login tracker") {
		t.Fatalf("after the grant was revoked: %s %s", m["error"], m["result"])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := oauthtest.Browser(ctx, e.Data.Elicitations[0].URL); err != nil {
		t.Fatal(err)
	}
	for id := 4; ; id++ {
		m := ask(id, "tools/call", `{"name":"echo","arguments":{}}`)
		if m["result"] != nil {
			break
		}
		if id > 200 {
			t.Fatalf("never served after the sign-in: %s", m["error"])
		}
		time.Sleep(10 * time.Millisecond) // the listener hands the code over
	}
	if c := s.Counts(); c.Authorizations != 2 {
		t.Fatalf("%d sign-ins, want the first and the one of the elicitation", c.Authorizations)
	}
}
