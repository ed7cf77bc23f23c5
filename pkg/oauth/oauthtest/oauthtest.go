// Package oauthtest is an authorization server and a protected MCP server
// for tests, in one process: the metadata of both (RFC 9728, RFC 8414),
// dynamic registration, the authorization endpoint (which redirects at
// once, as a user who consents would make it), the token endpoint with
// PKCE checked and refresh tokens rotated on every use (a used one
// presented again revokes its whole family, as identity providers with
// single-use rotation do), and a small 2025 Streamable HTTP MCP server
// that takes only its tokens. Browser is the "browser" that follows the
// authorization server's redirects to a client's loopback listener.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Options shape the servers.
type Options struct {
	// AccessLifetime is an access token's expires_in (default an hour).
	AccessLifetime time.Duration
	// NoRefresh issues no refresh tokens.
	NoRefresh bool
	// Scopes is the resource's scopes_supported (nil: none published).
	Scopes []string
	// RequiredScopes are needed by every MCP request (challenged in the
	// 401's scope).
	RequiredScopes []string
	// CallScopes are needed by tools/call besides (a 403
	// insufficient_scope names them).
	CallScopes []string
	// PreRegistered is a client the server knows already (id: secret).
	PreRegistered map[string]string
	// AuthMethods is token_endpoint_auth_methods_supported (default none).
	AuthMethods []string
	// CIMD advertises client ID metadata documents.
	CIMD bool
	// NoS256 leaves S256 out of code_challenge_methods_supported.
	NoS256 bool
	// ISS is what the authorization response's iss is: "" the issuer,
	// "omit", "slash" (the issuer with a trailing slash, equal only once
	// normalized), or a value to send instead.
	ISS string
	// Header, when set, sees the headers of every MCP request.
	Header func(map[string][]string)
}

// Server is the authorization server and the MCP server.
type Server struct {
	o   Options
	srv *httptest.Server

	mu        sync.Mutex
	clients   map[string]client
	codes     map[string]grantReq
	access    map[string]token
	refresh   map[string]*refreshState
	families  map[int]*family
	nextFam   int
	counts    Counts
	lastAuthz url.Values
}

// Counts are what the servers saw.
type Counts struct {
	Registrations  int
	Authorizations int // authorization requests (sign-ins begun)
	CodeExchanges  int
	Refreshes      int // refresh grants honoured
	Reuses         int // a rotated refresh token presented again
	Revoked        int // families revoked
	MCPRequests    int
	Unauthorized   int // 401s the MCP server sent
}

type client struct {
	secret    string
	redirects []string
	method    string
}

type grantReq struct {
	clientID, redirect, challenge, resource string
	scopes                                  []string
}

type token struct {
	family int
	expiry time.Time
	scopes []string
}

type refreshState struct {
	family int
	used   bool
}

type family struct {
	revoked  bool
	clientID string
	resource string
	scopes   []string
}

// New starts the servers.
func New(o Options) *Server {
	if o.AccessLifetime == 0 {
		o.AccessLifetime = time.Hour
	}
	if o.AuthMethods == nil {
		o.AuthMethods = []string{"none"}
	}
	s := &Server{o: o, clients: map[string]client{}, codes: map[string]grantReq{}, access: map[string]token{},
		refresh: map[string]*refreshState{}, families: map[int]*family{}}
	for id, secret := range o.PreRegistered {
		s.clients[id] = client{secret: secret, method: "client_secret_basic"}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", s.prm)
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.asMetadata)
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)
	mux.HandleFunc("/register", s.register)
	mux.HandleFunc("/mcp", s.mcp)
	s.srv = httptest.NewServer(mux)
	return s
}

// Close stops the servers.
func (s *Server) Close() { s.srv.Close() }

// URL is the MCP endpoint; Issuer the authorization server's issuer.
func (s *Server) URL() string    { return s.srv.URL + "/mcp" }
func (s *Server) Issuer() string { return s.srv.URL }

// Counts are what the servers saw so far.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// Tokens are every access and refresh token issued so far (for tests
// that check none of them is shown anywhere).
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for t := range s.access {
		out = append(out, t)
	}
	for t := range s.refresh {
		out = append(out, t)
	}
	return out
}

// LastAuthorization is the query of the last authorization request.
func (s *Server) LastAuthorization() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastAuthz
}

// ExpireAccess makes every access token issued so far invalid (the next
// request with one gets 401): a forced refresh.
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// RevokeAll revokes every family (the user revoked the app).
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.families {
		f.revoked = true
	}
	clear(s.access)
}

func random() string {
	b := make([]byte, 18)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) prm(w http.ResponseWriter, r *http.Request) {
	m := map[string]any{"resource": s.URL(), "authorization_servers": []string{s.Issuer()}}
	if s.o.Scopes != nil {
		m["scopes_supported"] = s.o.Scopes
	}
	writeJSON(w, 200, m)
}

func (s *Server) asMetadata(w http.ResponseWriter, r *http.Request) {
	methods := []string{"S256"}
	if s.o.NoS256 {
		methods = []string{"plain"}
	}
	writeJSON(w, 200, map[string]any{
		"issuer": s.Issuer(), "authorization_endpoint": s.srv.URL + "/authorize", "token_endpoint": s.srv.URL + "/token",
		"registration_endpoint": s.srv.URL + "/register", "response_types_supported": []string{"code"},
		"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": methods,
		"token_endpoint_auth_methods_supported": s.o.AuthMethods, "authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported": s.o.CIMD, "scopes_supported": append([]string{"offline_access"}, s.o.Scopes...),
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req struct {
		RedirectURIs []string `json:"redirect_uris"`
		Method       string   `json:"token_endpoint_auth_method"`
	}
	if json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req) != nil || len(req.RedirectURIs) == 0 {
		writeJSON(w, 400, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Registrations++
	id := "client-" + random()
	c := client{redirects: req.RedirectURIs, method: req.Method}
	out := map[string]any{"client_id": id, "redirect_uris": req.RedirectURIs, "token_endpoint_auth_method": req.Method}
	if req.Method != "none" {
		c.secret = "secret-" + random()
		out["client_secret"] = c.secret
	}
	s.clients[id] = c
	writeJSON(w, 201, out)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	s.counts.Authorizations++
	s.lastAuthz = q
	c, known := s.clients[q.Get("client_id")]
	cimd := s.o.CIMD && strings.HasPrefix(q.Get("client_id"), "https://")
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	switch {
	case !known && !cimd:
		http.Error(w, "unknown client", 400)
		return
	case known && len(c.redirects) > 0 && !contains(c.redirects, redirect):
		http.Error(w, "redirect_uri not registered", 400)
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("response_type") != "code":
		http.Error(w, "PKCE S256 required", 400)
		return
	case q.Get("resource") != s.URL():
		http.Error(w, "wrong resource", 400)
		return
	}
	code := random()
	s.mu.Lock()
	s.codes[code] = grantReq{clientID: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scopes: strings.Fields(q.Get("scope"))}
	s.mu.Unlock()
	u, _ := url.Parse(redirect)
	rq := u.Query()
	rq.Set("code", code)
	rq.Set("state", q.Get("state"))
	switch s.o.ISS {
	case "":
		rq.Set("iss", s.Issuer())
	case "omit":
	case "slash":
		rq.Set("iss", s.Issuer()+"/")
	default:
		rq.Set("iss", s.o.ISS)
	}
	u.RawQuery = rq.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clientOf authenticates the token request's client.
func (s *Server) clientOf(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	c, ok := s.clients[id]
	if !ok {
		return id, s.o.CIMD && strings.HasPrefix(id, "https://")
	}
	return id, c.secret == secret
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.clientOf(r)
	if !ok {
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	var fam int
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		switch {
		case !ok || g.clientID != id || g.redirect != r.PostForm.Get("redirect_uri"):
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier"})
			return
		case r.PostForm.Get("resource") != g.resource:
			writeJSON(w, 400, map[string]string{"error": "invalid_target"})
			return
		}
		s.counts.CodeExchanges++
		s.nextFam++
		fam = s.nextFam
		s.families[fam] = &family{clientID: id, resource: g.resource, scopes: g.scopes}
	case "refresh_token":
		rt := s.refresh[r.PostForm.Get("refresh_token")]
		if rt == nil || s.families[rt.family].revoked {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		if rt.used {
			// A rotated refresh token used again: the family is revoked.
			s.counts.Reuses++
			s.counts.Revoked++
			s.families[rt.family].revoked = true
			for k, t := range s.access {
				if t.family == rt.family {
					delete(s.access, k)
				}
			}
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "refresh token reused"})
			return
		}
		if r.PostForm.Get("resource") != s.families[rt.family].resource {
			writeJSON(w, 400, map[string]string{"error": "invalid_target"})
			return
		}
		rt.used = true
		s.counts.Refreshes++
		fam = rt.family
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	f := s.families[fam]
	access := "at-" + random()
	s.access[access] = token{family: fam, expiry: time.Now().Add(s.o.AccessLifetime), scopes: f.scopes}
	out := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(s.o.AccessLifetime / time.Second),
		"scope": strings.Join(f.scopes, " ")}
	if !s.o.NoRefresh {
		rt := "rt-" + random()
		s.refresh[rt] = &refreshState{family: fam}
		out["refresh_token"] = rt
	}
	writeJSON(w, 200, out)
}

// mcp is the protected MCP server (2025, stateless, JSON answers).
func (s *Server) mcp(w http.ResponseWriter, r *http.Request) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m)
	if s.o.Header != nil {
		s.o.Header(r.Header.Clone())
	}
	s.mu.Lock()
	s.counts.MCPRequests++
	bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	t, ok := s.access[bearer]
	if ok && (time.Now().After(t.expiry) || s.families[t.family].revoked) {
		ok = false
	}
	if !ok || !hasAll(t.scopes, s.o.RequiredScopes) {
		s.counts.Unauthorized++
		s.mu.Unlock()
		ch := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.srv.URL)
		if len(s.o.RequiredScopes) > 0 {
			ch += fmt.Sprintf(`, scope="%s"`, strings.Join(s.o.RequiredScopes, " "))
		}
		if bearer != "" {
			ch += `, error="invalid_token"`
		}
		w.Header().Set("WWW-Authenticate", ch)
		writeJSON(w, 401, map[string]string{"error": "invalid_token"})
		return
	}
	if m.Method == "tools/call" && !hasAll(t.scopes, s.o.CallScopes) {
		s.mu.Unlock()
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope="%s", resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`,
			strings.Join(s.o.CallScopes, " "), s.srv.URL))
		writeJSON(w, 403, map[string]string{"error": "insufficient_scope"})
		return
	}
	s.mu.Unlock()
	var result any
	switch m.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "oauthtest", "version": "1"}}
	case "tools/list":
		result = map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}}}
	case "tools/call":
		result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}
	case "":
		w.WriteHeader(202)
		return
	default:
		if m.ID == nil {
			w.WriteHeader(202)
			return
		}
		result = map[string]any{}
	}
	writeJSON(w, 200, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !contains(have, w) {
			return false
		}
	}
	return true
}

// Browser is an opener that does what a browser does with an
// authorization URL: it follows the redirects, the last one to the
// client's loopback listener.
func Browser(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	if res.StatusCode != 200 {
		return fmt.Errorf("the browser ended on HTTP %s", res.Status)
	}
	return nil
}

// MemStore is an oauth.Store in memory.
type MemStore struct {
	mu sync.Mutex
	m  map[string]string
}

func NewMemStore() *MemStore { return &MemStore{m: map[string]string{}} }

func (s *MemStore) Get(name string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[name]
	return v, ok, nil
}

func (s *MemStore) Set(name, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[name] = value
	return nil
}

func (s *MemStore) Delete(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, name)
	return nil
}

// Dump is everything the store holds (to check what it keeps).
func (s *MemStore) Dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(s.m)
	return string(b)
}
