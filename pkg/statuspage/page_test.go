package statuspage

import (
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/sweep"
)

// page is a Page over fixed state, recording the actions it was asked.
func page(t *testing.T) (*Page, *[]string) {
	var acts []string
	p := New(Options{
		State: func() (State, error) { return State{Daemon: Daemon{Pid: 42}}, nil },
		Act: func(action, name string) (int, error) {
			if name == "nothing" {
				return 0, errors.New("no hosted server named nothing")
			}
			acts = append(acts, action+" "+name)
			return 1, nil
		},
		Sweep: func() ([]sweep.Orphan, error) { return nil, nil },
		Kill: func(o []sweep.Orphan) ([]sweep.Outcome, error) {
			acts = append(acts, "kill")
			return []sweep.Outcome{{Pid: o[0].Pid}}, nil
		},
	})
	return p, &acts
}

func do(p *Page, method, path string, hdr map[string]string, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://127.0.0.1:4000"+path, strings.NewReader(body))
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	p.ServeHTTP(w, r)
	return w
}

// open trades a link's token for a secret.
func open(t *testing.T, p *Page) string {
	t.Helper()
	link := p.OpenURL("http://127.0.0.1:4000")
	tok := link[strings.Index(link, "#t=")+3:]
	w := do(p, "POST", "/api/open", map[string]string{TokenHeader: tok, "Origin": "http://127.0.0.1:4000"}, "")
	if w.Code != 200 {
		t.Fatalf("open: %d %s", w.Code, w.Body)
	}
	if again := do(p, "POST", "/api/open", map[string]string{TokenHeader: tok}, ""); again.Code != 403 {
		t.Fatalf("a token taken twice: %d", again.Code)
	}
	s := w.Body.String()
	return s[strings.Index(s, `"secret":"`)+10 : strings.LastIndex(s, `"`)]
}

// Who is served: the page itself to anyone on a loopback Host; its API to
// a request with a live page's secret, from no Origin or its own.
func TestWhoIsServed(t *testing.T) {
	p, acts := page(t)
	secret := open(t, p)
	ok := map[string]string{SecretHeader: secret}
	for _, tc := range []struct {
		name         string
		method, path string
		hdr          map[string]string
		body         string
		want         int
	}{
		{"the page", "GET", "/", nil, "", 200},
		{"its script", "GET", "/page.js", nil, "", 200},
		{"the page from a rebound name", "GET", "/", map[string]string{"Host": "evil.example"}, "", 403},
		{"the page posted to", "POST", "/", nil, "", 405},
		{"state with the secret", "GET", "/api/state", ok, "", 200},
		{"state without", "GET", "/api/state", nil, "", 403},
		{"state with a wrong secret", "GET", "/api/state", map[string]string{SecretHeader: strings.Repeat("a", 64)}, "", 403},
		{"state from another site", "GET", "/api/state", map[string]string{SecretHeader: secret, "Origin": "https://evil.example"}, "", 403},
		{"state from another local port", "GET", "/api/state", map[string]string{SecretHeader: secret, "Origin": "http://127.0.0.1:4001"}, "", 403},
		{"state from its own page", "GET", "/api/state", map[string]string{SecretHeader: secret, "Origin": "http://127.0.0.1:4000"}, "", 200},
		{"state from a rebound name", "GET", "/api/state", map[string]string{SecretHeader: secret, "Host": "evil.example:4000"}, "", 403},
		{"state posted", "POST", "/api/state", ok, "{}", 405},
		{"a restart", "POST", "/api/action", ok, `{"action":"restart","name":"abcd"}`, 200},
		{"a restart without the secret", "POST", "/api/action", nil, `{"action":"restart","name":"abcd"}`, 403},
		{"an action of no kind", "POST", "/api/action", ok, `{"action":"format","name":"abcd"}`, 400},
		{"an action without a name", "POST", "/api/action", ok, `{"action":"stop"}`, 400},
		{"an action that is not JSON", "POST", "/api/action", ok, `stop abcd`, 400},
		{"an action on nothing", "POST", "/api/action", ok, `{"action":"stop","name":"nothing"}`, 400},
		{"an action too large", "POST", "/api/action", ok, `{"action":"stop","name":"` + strings.Repeat("x", 70<<10) + `"}`, 400},
		{"a kill without targets", "POST", "/api/sweep/kill", ok, `{"targets":[]}`, 400},
		{"a kill of garbage", "POST", "/api/sweep/kill", ok, `{"targets":"all"}`, 400},
		{"a kill", "POST", "/api/sweep/kill", ok, `{"targets":[{"pid":9,"start":1}]}`, 200},
		{"the sweep's list", "GET", "/api/sweep", ok, "", 200},
		{"no such request", "GET", "/api/nothing", ok, "", 404},
		{"a token of nothing", "POST", "/api/open", map[string]string{TokenHeader: "abc"}, "", 403},
		{"no token", "POST", "/api/open", nil, "", 403},
	} {
		if w := do(p, tc.method, tc.path, tc.hdr, tc.body); w.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.want)
		}
	}
	if strings.Join(*acts, ",") != "restart abcd,kill" {
		t.Fatalf("acted on %q", *acts)
	}
}

// A link dies unopened after its life; the oldest page is let go of when
// too many are open.
func TestTokensAndSecretsAreBounded(t *testing.T) {
	p, _ := page(t)
	link := p.OpenURL("http://127.0.0.1:4000/")
	tok := link[strings.Index(link, "#t=")+3:]
	p.mu.Lock()
	p.tokens[tok] = time.Now().Add(-time.Second)
	p.mu.Unlock()
	if w := do(p, "POST", "/api/open", map[string]string{TokenHeader: tok}, ""); w.Code != 403 {
		t.Fatalf("an old link opened: %d", w.Code)
	}
	first := open(t, p)
	for range maxSecrets {
		open(t, p)
	}
	if w := do(p, "GET", "/api/state", map[string]string{SecretHeader: first}, ""); w.Code != 403 {
		t.Fatalf("the oldest of %d pages still served: %d", maxSecrets+1, w.Code)
	}
	if len(p.secrets) > maxSecrets {
		t.Fatalf("%d secrets kept", len(p.secrets))
	}
}

// The page's assets carry no script from elsewhere and a policy that
// allows none.
func TestAssetsAreSelfContained(t *testing.T) {
	p, _ := page(t)
	w := do(p, "GET", "/", nil, "")
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Fatalf("policy %q", csp)
	}
	for _, name := range []string{"index.html", "page.js", "page.css"} {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "http://") && name != "page.js" || strings.Contains(string(b), "https://") || strings.Contains(string(b), "innerHTML") {
			t.Errorf("%s fetches from elsewhere or writes markup", name)
		}
	}
}

// Tail: the last lines of a file, a partial first line of the window left out.
func TestTail(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/log"
	var b strings.Builder
	for i := range 3000 {
		b.WriteString(strings.Repeat("x", i%50) + "\n")
	}
	b.WriteString("last line\n")
	if err := writeFile(path, b.String()); err != nil {
		t.Fatal(err)
	}
	got := Tail(path, 5)
	if len(got) != 5 || got[4] != "last line" {
		t.Fatalf("%q", got)
	}
	if Tail(dir+"/none", 5) != nil || Tail("", 5) != nil {
		t.Fatal("a missing file has a tail")
	}
	writeFile(path, "")
	if got := Tail(path, 5); len(got) != 0 {
		t.Fatalf("an empty file: %q", got)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }
