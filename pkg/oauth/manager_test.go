package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-mcp/hearth/pkg/oauth"
	"github.com/hearth-mcp/hearth/pkg/oauth/oauthtest"
)

// call makes one MCP request as the transport does: the manager's token,
// and a 401 or 403 handed back to it, a few rounds at most.
func call(ctx context.Context, m *oauth.Manager, url, method string) (int, error) {
	for round := 0; round < 4; round++ {
		tok, err := m.Token(ctx)
		if err != nil {
			return 0, err
		}
		req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+method+`"}`))
		req.Header.Set("Content-Type", "application/json")
		if tok.Access != "" {
			req.Header.Set("Authorization", "Bearer "+tok.Access)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 401 && res.StatusCode != 403 {
			return res.StatusCode, nil
		}
		if _, err := m.Challenged(ctx, tok, res.StatusCode, res.Header); err != nil {
			return res.StatusCode, err
		}
	}
	return 0, errors.New("too many rounds")
}

func manager(t *testing.T, s *oauthtest.Server, store oauth.Store, mod func(*oauth.Config)) *oauth.Manager {
	t.Helper()
	cfg := oauth.Config{Name: "test", Server: s.URL(), Store: store, Open: oauthtest.Browser, AutoSignIn: true, SignInTimeout: 10 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	m, err := oauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The whole sign-in: the 401's challenge, the metadata of both servers,
// dynamic registration, PKCE, the resource, the state, iss; then the
// grant is kept (no token in the clear but in the store) and used by a
// Manager made later (a daemon restarted).
func TestSignInAndReuse(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{Scopes: []string{"mcp:read"}})
	defer s.Close()
	store := oauthtest.NewMemStore()
	m := manager(t, s, store, nil)
	ctx := context.Background()
	if st, err := call(ctx, m, s.URL(), "tools/list"); err != nil || st != 200 {
		t.Fatalf("call: %d %v", st, err)
	}
	q := s.LastAuthorization()
	if q.Get("resource") != s.URL() || q.Get("code_challenge_method") != "S256" || q.Get("state") == "" ||
		!strings.HasPrefix(q.Get("redirect_uri"), "http://127.0.0.1:") {
		t.Fatalf("authorization request: %v", q)
	}
	if q.Get("scope") != "mcp:read offline_access" {
		t.Fatalf("scope: %q (scopes_supported, and offline_access the AS lists)", q.Get("scope"))
	}
	c := s.Counts()
	if c.Registrations != 1 || c.Authorizations != 1 || c.CodeExchanges != 1 || m.SignIns() != 1 {
		t.Fatalf("counts %+v, sign-ins %d", c, m.SignIns())
	}
	st := m.Status()
	if st.State != "signed-in" || st.Issuer != s.Issuer() || st.Client != "registered" {
		t.Fatalf("status %+v", st)
	}
	// A new Manager on the same store: no sign-in, no registration.
	m2 := manager(t, s, store, func(c *oauth.Config) { c.AutoSignIn = false })
	if st, err := call(ctx, m2, s.URL(), "tools/call"); err != nil || st != 200 {
		t.Fatalf("second manager: %d %v", st, err)
	}
	if c := s.Counts(); c.Authorizations != 1 || c.Registrations != 1 {
		t.Fatalf("the kept grant was not used: %+v", c)
	}
	// Expired access: refreshed, not signed in again.
	s.ExpireAccess()
	if st, err := call(ctx, m2, s.URL(), "tools/call"); err != nil || st != 200 {
		t.Fatalf("after expiry: %d %v", st, err)
	}
	if c := s.Counts(); c.Refreshes != 1 || c.Authorizations != 1 {
		t.Fatalf("counts %+v", c)
	}
	if err := m2.Logout(); err != nil {
		t.Fatal(err)
	}
	var need *oauth.SignInNeeded
	if _, err := call(ctx, m2, s.URL(), "tools/list"); !errors.As(err, &need) || !strings.Contains(err.Error(), "hearthd login test") {
		t.Fatalf("after logout: %v", err)
	}
}

// A revoked grant is one sign-in-needed state: of many concurrent callers
// only one tries the refresh, and all get the same error at once.
func TestRevokedIsOneSignInNeeded(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{})
	defer s.Close()
	store := oauthtest.NewMemStore()
	ctx := context.Background()
	if _, err := call(ctx, manager(t, s, store, nil), s.URL(), "tools/list"); err != nil {
		t.Fatal(err)
	}
	m := manager(t, s, store, func(c *oauth.Config) { c.AutoSignIn = false })
	if _, err := call(ctx, m, s.URL(), "tools/list"); err != nil {
		t.Fatal(err)
	}
	before := s.Counts()
	s.RevokeAll()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = call(ctx, m, s.URL(), "tools/list")
		}()
	}
	wg.Wait()
	var first *oauth.SignInNeeded
	for i, err := range errs {
		var need *oauth.SignInNeeded
		if !errors.As(err, &need) {
			t.Fatalf("caller %d: %v", i, err)
		}
		if first == nil {
			first = need
		} else if need != first {
			t.Fatalf("caller %d got its own sign-in-needed state", i)
		}
	}
	after := s.Counts()
	if after.Authorizations != before.Authorizations {
		t.Fatal("a sign-in was started without AutoSignIn")
	}
	if m.Status().State != "sign-in-needed" {
		t.Fatalf("status %+v", m.Status())
	}
	// Refused at once from now on, without asking the servers.
	n := s.Counts().MCPRequests
	if _, err := m.Token(ctx); err == nil {
		t.Fatal("token after revocation")
	}
	if s.Counts().MCPRequests != n {
		t.Fatal("the servers were asked again")
	}
	// Another process signs in (hearthd login): the Manager takes it up.
	if _, err := call(ctx, manager(t, s, store, nil), s.URL(), "tools/list"); err != nil {
		t.Fatal(err)
	}
	if st, err := call(ctx, m, s.URL(), "tools/list"); err != nil || st != 200 {
		t.Fatalf("after a sign-in elsewhere: %d %v", st, err)
	}
}

// Step-up: a 403 insufficient_scope signs in again for the union of the
// scopes asked before and those challenged; a server that keeps refusing
// what the grant holds is not signed into again.
func TestStepUp(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{RequiredScopes: []string{"mcp:basic"}, CallScopes: []string{"mcp:write"}})
	defer s.Close()
	m := manager(t, s, oauthtest.NewMemStore(), nil)
	ctx := context.Background()
	if st, err := call(ctx, m, s.URL(), "tools/list"); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	if got := s.LastAuthorization().Get("scope"); got != "mcp:basic offline_access" {
		t.Fatalf("first scope %q (the challenge's)", got)
	}
	if st, err := call(ctx, m, s.URL(), "tools/call"); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	if got := s.LastAuthorization().Get("scope"); got != "mcp:basic offline_access mcp:write" {
		t.Fatalf("step-up scope %q (the union)", got)
	}
	if m.SignIns() != 2 {
		t.Fatalf("sign-ins %d", m.SignIns())
	}
}

// A pre-registered client with a secret authenticates with Basic, and is
// not used at another authorization server.
func TestPreRegistered(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{PreRegistered: map[string]string{"my-client": "my-secret"}, AuthMethods: []string{"client_secret_basic"}})
	defer s.Close()
	m := manager(t, s, oauthtest.NewMemStore(), func(c *oauth.Config) {
		c.Registration = oauth.Registration{ClientID: "my-client", ClientSecret: "my-secret"}
	})
	if st, err := call(context.Background(), m, s.URL(), "tools/list"); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	if c := s.Counts(); c.Registrations != 0 {
		t.Fatalf("registered although pre-registered: %+v", c)
	}
	m2 := manager(t, s, oauthtest.NewMemStore(), func(c *oauth.Config) {
		c.Registration = oauth.Registration{ClientID: "my-client", ClientSecret: "my-secret", Issuer: "https://other.example"}
	})
	if _, err := call(context.Background(), m2, s.URL(), "tools/list"); err == nil || !strings.Contains(err.Error(), "other.example") {
		t.Fatalf("a client of another issuer used: %v", err)
	}
}

// Client ID metadata documents come first where the server takes them.
func TestMetadataDocumentFirst(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{CIMD: true})
	defer s.Close()
	m := manager(t, s, oauthtest.NewMemStore(), func(c *oauth.Config) {
		c.Registration = oauth.Registration{MetadataURL: "https://hearth.example/client.json"}
	})
	if st, err := call(context.Background(), m, s.URL(), "tools/list"); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	if got := s.LastAuthorization().Get("client_id"); got != "https://hearth.example/client.json" || s.Counts().Registrations != 0 {
		t.Fatalf("client_id %q, registrations %d", got, s.Counts().Registrations)
	}
}

// What must stop a sign-in stops it before any code reaches a token
// endpoint: no S256, an iss that is not the issuer's, or none where it
// is advertised.
func TestRefusals(t *testing.T) {
	for name, o := range map[string]oauthtest.Options{
		"no S256":     {NoS256: true},
		"wrong iss":   {ISS: "https://evil.example"},
		"missing iss": {ISS: "omit"},
		"normalized":  {ISS: "slash"},
	} {
		t.Run(name, func(t *testing.T) {
			s := oauthtest.New(o)
			defer s.Close()
			m := manager(t, s, oauthtest.NewMemStore(), nil)
			_, err := call(context.Background(), m, s.URL(), "tools/list")
			if err == nil {
				t.Fatal("signed in")
			}
			if s.Counts().CodeExchanges != 0 {
				t.Fatalf("a code reached the token endpoint: %v", err)
			}
			if strings.Contains(err.Error(), "at-") || strings.Contains(err.Error(), "rt-") {
				t.Fatalf("an error holds a token: %v", err)
			}
		})
	}
}

// The kept grant never appears in a Status.
func TestStatusHoldsNoSecret(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{})
	defer s.Close()
	store := oauthtest.NewMemStore()
	m := manager(t, s, store, nil)
	call(context.Background(), m, s.URL(), "tools/list")
	st := fmt.Sprintf("%+v", m.Status())
	if strings.Contains(st, "at-") || strings.Contains(st, "rt-") || !strings.Contains(store.Dump(), "rt-") {
		t.Fatalf("status %s", st)
	}
}

// SignIn before any request (hearthd login): the server's challenge is
// asked for, and the grant is there for the first call.
func TestSignInFirst(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{RequiredScopes: []string{"mcp:basic"}})
	defer s.Close()
	m := manager(t, s, oauthtest.NewMemStore(), func(c *oauth.Config) { c.AutoSignIn = false })
	if err := m.SignIn(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := s.LastAuthorization().Get("scope"); got != "mcp:basic offline_access" {
		t.Fatalf("scope %q: the challenge was not used", got)
	}
	if st, err := call(context.Background(), m, s.URL(), "tools/list"); err != nil || st != 200 {
		t.Fatalf("%d %v", st, err)
	}
	if s.Counts().Authorizations != 1 {
		t.Fatalf("%+v", s.Counts())
	}
}

// A sign-in nobody completes ends at its timeout, and the call with it.
func TestSignInTimeout(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{})
	defer s.Close()
	m := manager(t, s, oauthtest.NewMemStore(), func(c *oauth.Config) {
		c.SignInTimeout = 200 * time.Millisecond
		c.Open = func(context.Context, string) error { return nil } // the user never comes
	})
	start := time.Now()
	_, err := call(context.Background(), m, s.URL(), "tools/list")
	if err == nil || !strings.Contains(err.Error(), "did not finish within") || time.Since(start) > 5*time.Second {
		t.Fatalf("%v after %s", err, time.Since(start))
	}
}

// Begin gives the authorization URL without opening it (for a URL-mode
// elicitation); the sign-in ends when the browser reaches the listener,
// and a second Begin meanwhile gets the same one.
func TestBegin(t *testing.T) {
	s := oauthtest.New(oauthtest.Options{})
	defer s.Close()
	opened := 0
	m := manager(t, s, oauthtest.NewMemStore(), func(c *oauth.Config) {
		c.AutoSignIn = false
		c.Open = func(context.Context, string) error { opened++; return nil }
	})
	ctx := context.Background()
	if _, err := call(ctx, m, s.URL(), "tools/list"); err == nil {
		t.Fatal("no sign-in needed")
	}
	p, err := m.Begin(ctx)
	if err != nil || !strings.Contains(p.URL, "code_challenge=") {
		t.Fatalf("%v %v", p, err)
	}
	again, err := m.Begin(ctx)
	if err != nil || again != p {
		t.Fatalf("a second Begin: %v %v", again, err)
	}
	if err := oauthtest.Browser(ctx, p.URL); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if st, err := call(ctx, m, s.URL(), "tools/list"); err != nil || st != 200 || opened != 0 {
		t.Fatalf("%d %v, opened %d", st, err, opened)
	}
}
