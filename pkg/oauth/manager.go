// Package oauth is hearth's MCP authorization client (the MCP
// authorization specification, 2025-11-25 and 2026-07-28): it finds a
// remote server's authorization server (RFC 9728 protected resource
// metadata from the challenge or the well-known places; RFC 8414 or OpenID
// Connect discovery), becomes its client (pre-registered, a client ID
// metadata document, or dynamic registration, in that order), signs the
// user in (authorization code with PKCE S256, the resource indicator of
// RFC 8707, the state, iss checked as RFC 9207 says) and holds the token
// family that results, one per (server, issuer, account).
//
// A Manager is the one owner of a server's token family. Renewals are
// serialized: of any number of callers that find the token expired or
// refused at once, one refreshes and the others wait for its answer, so a
// refresh token that rotates on every use is never used twice. A grant the
// authorization server revoked becomes one "sign-in needed" state that
// every caller gets at once, not one sign-in per caller.
//
// Tokens, codes, verifiers and secrets are never in an error, a log line
// or a Status.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Store keeps grants and client registrations (a *secret.Vault).
type Store interface {
	Get(name string) (value string, ok bool, err error)
	Set(name, value string) error
	Delete(name string) error
}

// Config is one remote server's authorization.
type Config struct {
	// Name is the server's name in hearth's words, for messages
	// ("hearthd login NAME").
	Name string
	// Server is the MCP endpoint's URL.
	Server string
	// Account tells apart two sign-ins to one server ("" is "default").
	Account string
	// Registration says how hearth becomes a client of the server's
	// authorization server.
	Registration Registration
	// Store holds the grants and registrations.
	Store Store
	// HTTP is the client for metadata, registration and token requests
	// (nil: one with a 30 s timeout that follows no redirect).
	HTTP *http.Client
	// Open opens an authorization URL in the user's browser.
	Open func(ctx context.Context, url string) error
	// AutoSignIn signs in from within Token and Challenged when a grant is
	// needed, the callers waiting for it; without it they get
	// *SignInNeeded at once and SignIn is the user's to run.
	AutoSignIn bool
	// SignInTimeout bounds a sign-in (default 5 minutes).
	SignInTimeout time.Duration
	// RedirectPort is the loopback redirect listener's port (0: a fresh one
	// each sign-in).
	RedirectPort int
	// Now is the clock (tests).
	Now func() time.Time
}

// SignInNeeded is the error of a call that needs the user to sign in: the
// server's grant is missing, expired or revoked, or it asks for scopes the
// grant lacks. Every caller gets the same one until a sign-in succeeds.
type SignInNeeded struct {
	Name   string
	Server string
	Why    string
	Scopes []string // what the sign-in will ask for
}

func (e *SignInNeeded) Error() string {
	return fmt.Sprintf("%s needs you to sign in (%s): run `hearthd login %s`", e.Name, e.Why, e.Name)
}

// Token is an access token to send, and which renewal it came from.
type Token struct {
	Access string // "" when no authorization is known to be needed
	gen    uint64
}

// Status says where a server's authorization stands, without any secret.
type Status struct {
	State   string    `json:"state"` // "none", "signed-in", "sign-in-needed"
	Issuer  string    `json:"issuer,omitempty"`
	Account string    `json:"account"`
	Scopes  []string  `json:"scopes,omitempty"`
	Expiry  time.Time `json:"expiry,omitzero"`
	Why     string    `json:"why,omitempty"`
	Client  string    `json:"client,omitempty"` // how hearth is a client: pre-registered, metadata-document, registered
}

// discovery is what a server's metadata and its authorization server's
// said.
type discovery struct {
	resource ResourceMetadata
	as       ServerMetadata
}

// Manager owns one server's token family (see the package comment).
type Manager struct {
	cfg Config
	hc  *http.Client

	mu      sync.Mutex
	loaded  bool
	grant   *Grant
	gen     uint64
	need    *SignInNeeded
	disc    *discovery
	op      *op // the renewal or sign-in under way
	stepUps map[string]int
	client  string
	signIns int
	pending *Pending // the sign-in Begin started
}

type noAutoKey struct{}

// WithoutAutoSignIn marks the calls of ctx as ones that get *SignInNeeded
// instead of waiting for a sign-in the Manager opens itself (AutoSignIn):
// their caller offers the sign-in its own way (Begin's URL, as a URL-mode
// elicitation).
func WithoutAutoSignIn(ctx context.Context) context.Context {
	return context.WithValue(ctx, noAutoKey{}, true)
}

// auto: a sign-in needed by a call of ctx is opened and waited for.
func (m *Manager) auto(ctx context.Context) bool {
	return m.cfg.AutoSignIn && ctx.Value(noAutoKey{}) == nil
}

// op is a serialized renewal: its callers wait for done.
type op struct {
	done chan struct{}
	err  error
}

// maxStepUps bounds the sign-ins one scope set may cause (the
// specification: retry no more than a few times, then the failure is
// permanent).
const maxStepUps = 2

// New makes the Manager of one server.
func New(cfg Config) (*Manager, error) {
	if cfg.Store == nil {
		return nil, errors.New("oauth: no store for the grants")
	}
	if _, err := url.Parse(cfg.Server); err != nil || cfg.Server == "" {
		return nil, fmt.Errorf("oauth: the server URL %q: %v", cfg.Server, err)
	}
	if cfg.Account == "" {
		cfg.Account = "default"
	}
	if cfg.Name == "" {
		cfg.Name = cfg.Server
	}
	if cfg.SignInTimeout <= 0 {
		cfg.SignInTimeout = 5 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &Manager{cfg: cfg, hc: hc, stepUps: map[string]int{}}, nil
}

// SignIns counts the sign-ins this Manager completed.
func (m *Manager) SignIns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.signIns
}

// Names in the Store.
func (m *Manager) pointerName() string { return "oauth/server/" + m.cfg.Account + " " + m.cfg.Server }
func (m *Manager) grantName(issuer, resource string) string {
	return "oauth/grant/" + m.cfg.Account + " " + issuer + " " + resource
}
func clientName(issuer string) string { return "oauth/client/" + issuer }

type pointer struct {
	Issuer   string `json:"issuer"`
	Resource string `json:"resource"`
}

// loadStored reads the family the server last used (m.mu held).
func (m *Manager) loadStored() {
	raw, ok, err := m.cfg.Store.Get(m.pointerName())
	if err != nil || !ok {
		return
	}
	var p pointer
	if json.Unmarshal([]byte(raw), &p) != nil {
		return
	}
	if g := m.readGrant(p.Issuer, p.Resource); g != nil && (m.grant == nil || g.Obtained.After(m.grant.Obtained)) {
		m.grant, m.need = g, nil
		m.gen++
	}
}

func (m *Manager) readGrant(issuer, resource string) *Grant {
	raw, ok, err := m.cfg.Store.Get(m.grantName(issuer, resource))
	if err != nil || !ok {
		return nil
	}
	var g Grant
	if json.Unmarshal([]byte(raw), &g) != nil || g.Access == "" {
		return nil
	}
	return &g
}

// saveGrant stores g as the server's family (m.mu held).
func (m *Manager) saveGrant(g Grant) error {
	raw, _ := json.Marshal(g)
	if err := m.cfg.Store.Set(m.grantName(g.Issuer, g.Resource), string(raw)); err != nil {
		return fmt.Errorf("keeping %s's grant: %w", m.cfg.Name, err)
	}
	p, _ := json.Marshal(pointer{Issuer: g.Issuer, Resource: g.Resource})
	return m.cfg.Store.Set(m.pointerName(), string(p))
}

// expired: the access token's lifetime (less a minute's margin) is over.
func (m *Manager) expired(g *Grant) bool {
	return !g.Expiry.IsZero() && !m.cfg.Now().Before(g.Expiry.Add(-time.Minute))
}

// Token is the access token to send with a request: the current one,
// renewed first when it expired. Token{} when no authorization is known to
// be needed (the server's first 401 says so).
func (m *Manager) Token(ctx context.Context) (Token, error) {
	m.mu.Lock()
	if !m.loaded {
		m.loaded = true
		m.loadStored()
	}
	if m.need != nil && m.op == nil {
		m.loadStored() // a sign-in by another process (hearthd login)
	}
	if m.need != nil && !m.auto(ctx) {
		err := m.need
		m.mu.Unlock()
		return Token{}, err
	}
	g, gen, need := m.grant, m.gen, m.need
	m.mu.Unlock()
	if g == nil && need == nil {
		return Token{}, nil
	}
	if g != nil && !m.expired(g) {
		return Token{Access: g.Access, gen: gen}, nil
	}
	return m.renew(ctx, gen, nil, false)
}

// Challenged handles a 401 or 403 the server answered to a request made
// with tok (header: the response's headers) and returns the token to try
// again with: a renewal another caller already made, a refreshed one, one
// of a new sign-in; or why none is to be had. Concurrent callers share one
// renewal.
func (m *Manager) Challenged(ctx context.Context, tok Token, status int, header http.Header) (Token, error) {
	ch, _ := Bearer(header)
	if status == http.StatusForbidden && ch.Error() != "insufficient_scope" {
		return Token{}, fmt.Errorf("%s refused the request (HTTP 403%s)", m.cfg.Name, describe(ch))
	}
	m.mu.Lock()
	m.loaded = true
	m.mu.Unlock()
	return m.renew(ctx, tok.gen, &ch, status == http.StatusForbidden)
}

func describe(ch Challenge) string {
	s := ""
	if e := ch.Error(); e != "" {
		s += ": " + clipText(e)
	}
	if d := ch.Params["error_description"]; d != "" {
		s += ": " + clipText(d)
	}
	return s
}

// renew runs one renewal for the caller whose token is of generation gen,
// or waits for the one under way and takes its outcome.
func (m *Manager) renew(ctx context.Context, gen uint64, ch *Challenge, stepUp bool) (Token, error) {
	for {
		m.mu.Lock()
		if o := m.op; o != nil {
			if err := m.await(ctx, o); err != nil {
				m.mu.Unlock()
				return Token{}, err
			}
			if m.gen != gen && m.grant != nil && m.need == nil {
				// Renewed meanwhile; a step-up's caller checks the scopes
				// again below.
				if !stepUp || m.covers(ch) {
					t := Token{Access: m.grant.Access, gen: m.gen}
					m.mu.Unlock()
					return t, nil
				}
			} else if o.err != nil {
				m.mu.Unlock()
				return Token{}, o.err
			}
			gen = m.gen
			m.mu.Unlock()
			continue
		}
		if m.need != nil && !m.auto(ctx) {
			// One state for everyone until a sign-in ends it.
			err := m.need
			m.mu.Unlock()
			return Token{}, err
		}
		if m.gen != gen && m.grant != nil && m.need == nil && (!stepUp || m.covers(ch)) && !m.expired(m.grant) {
			t := Token{Access: m.grant.Access, gen: m.gen}
			m.mu.Unlock()
			return t, nil
		}
		err := m.run(func() error { return m.doRenew(ctx, ch, stepUp) })
		m.mu.Lock()
		var t Token
		if err == nil && m.grant != nil {
			t = Token{Access: m.grant.Access, gen: m.gen}
		}
		m.mu.Unlock()
		return t, err
	}
}

// await waits for the renewal o under way to end, or for ctx's end; m.mu
// is held on entry and on return, released while it waits.
func (m *Manager) await(ctx context.Context, o *op) error {
	m.mu.Unlock()
	defer m.mu.Lock()
	select {
	case <-o.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run makes f the renewal under way (m.mu is held on entry, released on
// return): whoever needs one meanwhile waits for its outcome.
func (m *Manager) run(f func() error) error {
	o := &op{done: make(chan struct{})}
	m.op = o
	m.mu.Unlock()
	o.err = f()
	m.mu.Lock()
	m.op = nil
	m.mu.Unlock()
	close(o.done)
	return o.err
}

// covers: the current grant's scopes hold what the challenge asks (m.mu
// held).
func (m *Manager) covers(ch *Challenge) bool {
	if ch == nil || m.grant == nil {
		return true
	}
	for _, s := range ch.Scopes() {
		if !slices.Contains(m.grant.Scopes, s) && !slices.Contains(m.grant.Requested, s) {
			return false
		}
	}
	return true
}

// doRenew is one renewal: discovery again when the server challenged (its
// authorization server may have changed), then a refresh, or a sign-in.
func (m *Manager) doRenew(ctx context.Context, ch *Challenge, stepUp bool) error {
	m.mu.Lock()
	g := m.grant
	m.mu.Unlock()
	var d *discovery
	if ch != nil || g == nil {
		var err error
		if d, err = m.discover(ctx, ch); err != nil {
			return err
		}
		if g != nil && (g.Issuer != d.as.Issuer || g.Resource != d.resource.Resource) {
			// Another family: the server moved to another authorization
			// server (or resource). Its own stored grant, if any, is tried;
			// nothing of the old one is used there.
			m.mu.Lock()
			g = m.readGrant(d.as.Issuer, d.resource.Resource)
			m.grant = g
			if g != nil {
				m.gen++
				m.need = nil
				m.mu.Unlock()
				return nil
			}
			m.mu.Unlock()
		}
	}
	if stepUp && g != nil {
		wanted := union(g.Requested, ch.Scopes())
		if subset(wanted, g.Scopes) {
			return fmt.Errorf("%s refused the request for insufficient scope (%s) although the grant holds every scope it asked for; not signing in again",
				m.cfg.Name, strings.Join(ch.Scopes(), " "))
		}
		key := strings.Join(sorted(wanted), " ")
		m.mu.Lock()
		m.stepUps[key]++
		n := m.stepUps[key]
		m.mu.Unlock()
		if n > maxStepUps {
			return fmt.Errorf("%s still refuses for insufficient scope after %d sign-ins asking for %s: giving up", m.cfg.Name, maxStepUps, key)
		}
		return m.needSignIn(ctx, d, ch, "it asks for the scopes "+strings.Join(ch.Scopes(), " "), wanted)
	}
	if g != nil && g.Refresh != "" {
		err := m.refresh(ctx, g, d)
		var te *TokenError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &te) && te.Revoked():
			m.mu.Lock()
			m.cfg.Store.Delete(m.grantName(g.Issuer, g.Resource))
			if m.grant == g {
				m.grant = nil
			}
			m.mu.Unlock()
			return m.needSignIn(ctx, d, ch, "its authorization server ended the grant ("+te.Code+")", nil)
		default:
			return err // transient: the grant stays, the next call tries again
		}
	}
	why := "it asks for authorization"
	if g != nil {
		why = "its access token expired or was refused, and there is no refresh token"
	}
	return m.needSignIn(ctx, d, ch, why, nil)
}

// needSignIn signs in (AutoSignIn) or enters the sign-in-needed state.
func (m *Manager) needSignIn(ctx context.Context, d *discovery, ch *Challenge, why string, scopes []string) error {
	if m.auto(ctx) {
		return m.signIn(ctx, d, ch, scopes)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if scopes == nil && ch != nil && len(ch.Scopes()) > 0 {
		scopes = ch.Scopes() // what the sign-in will ask for (hearthd login)
	}
	if m.need == nil {
		m.need = &SignInNeeded{Name: m.cfg.Name, Server: m.cfg.Server, Why: why, Scopes: scopes}
	}
	if ch != nil {
		m.disc = d
	}
	return m.need
}

// discover reads the server's resource metadata (from the challenge or the
// well-known places) and its authorization server's metadata, preferring
// an authorization server the account already holds a grant of.
func (m *Manager) discover(ctx context.Context, ch *Challenge) (*discovery, error) {
	from := ""
	if ch != nil {
		from = ch.ResourceMetadata()
	}
	rm, err := FetchResourceMetadata(ctx, m.hc, m.cfg.Server, from)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.cfg.Name, err)
	}
	servers := rm.AuthorizationServers
	m.mu.Lock()
	for i, s := range servers {
		if m.readGrant(s, rm.Resource) != nil {
			servers = append([]string{s}, slices.Delete(slices.Clone(servers), i, i+1)...)
			break
		}
	}
	m.mu.Unlock()
	var errs []string
	for _, s := range servers {
		as, err := FetchServerMetadata(ctx, m.hc, s)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		d := &discovery{resource: rm, as: as}
		m.mu.Lock()
		m.disc = d
		m.mu.Unlock()
		return d, nil
	}
	return nil, fmt.Errorf("%s: %s", m.cfg.Name, strings.Join(errs, "; "))
}

// refresh renews g with its refresh token (the resource again, RFC 8707
// §2.2); a rotated refresh token replaces the old one before anyone else
// may use it.
func (m *Manager) refresh(ctx context.Context, g *Grant, d *discovery) error {
	if d == nil {
		var err error
		if d, err = m.discoverFor(ctx, g); err != nil {
			return err
		}
	}
	c, err := m.clientFor(ctx, d.as, "")
	if err != nil {
		return err
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {g.Refresh}, "resource": {g.Resource}}
	t, err := tokenRequest(ctx, m.hc, d.as.TokenEndpoint, c, form)
	if err != nil {
		return err
	}
	ng := grantFrom(t, g, m.cfg.Now())
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.saveGrant(ng); err != nil {
		return err
	}
	m.grant, m.need = &ng, nil
	m.gen++
	return nil
}

// discoverFor is the discovery of the family g belongs to, cached.
func (m *Manager) discoverFor(ctx context.Context, g *Grant) (*discovery, error) {
	m.mu.Lock()
	d := m.disc
	m.mu.Unlock()
	if d != nil && d.as.Issuer == g.Issuer {
		return d, nil
	}
	as, err := FetchServerMetadata(ctx, m.hc, g.Issuer)
	if err != nil {
		return nil, err
	}
	d = &discovery{resource: ResourceMetadata{Resource: g.Resource, AuthorizationServers: []string{g.Issuer}}, as: as}
	m.mu.Lock()
	m.disc = d
	m.mu.Unlock()
	return d, nil
}

// clientFor is hearth's client at the authorization server: stored (by
// issuer) when it fits the redirect URI, else obtained anew.
func (m *Manager) clientFor(ctx context.Context, as ServerMetadata, redirect string) (Client, error) {
	reg := m.cfg.Registration
	if reg.ClientID != "" || (as.ClientIDMetadataSupported && reg.MetadataURL != "") {
		return register(ctx, m.hc, as, reg, redirect)
	}
	if raw, ok, err := m.cfg.Store.Get(clientName(as.Issuer)); err == nil && ok {
		var c Client
		if json.Unmarshal([]byte(raw), &c) == nil && c.Issuer == as.Issuer && c.ID != "" && (redirect == "" || c.fits(redirect)) {
			return c, nil
		}
	}
	if redirect == "" {
		return Client{}, fmt.Errorf("no registration of hearth at %s is kept", as.Issuer)
	}
	c, err := register(ctx, m.hc, as, reg, redirect)
	if err != nil {
		return c, err
	}
	raw, _ := json.Marshal(c)
	if err := m.cfg.Store.Set(clientName(as.Issuer), string(raw)); err != nil {
		return c, fmt.Errorf("keeping hearth's registration at %s: %w", as.Issuer, err)
	}
	return c, nil
}

// SignIn signs the user in now (hearthd login): discovery from the last
// challenge (else the one an unauthorized request gets, else the
// well-known places), the browser opened on the authorization URL, the
// code received on the loopback listener.
func (m *Manager) SignIn(ctx context.Context) error {
	return m.signInWith(ctx, m.cfg.Open)
}

// Begin starts a sign-in and returns its authorization URL without opening
// it, for the user to open (a URL-mode elicitation, a line printed); the
// sign-in goes on in the background until the browser reaches the
// loopback listener or the sign-in's timeout. While one begun so is under
// way, Begin returns it again.
func (m *Manager) Begin(ctx context.Context) (*Pending, error) {
	m.mu.Lock()
	if p := m.pending; p != nil {
		select {
		case <-p.done:
		default:
			m.mu.Unlock()
			select {
			case <-p.ready:
				return p, nil
			case <-p.done:
				return nil, p.err
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	p := &Pending{done: make(chan struct{}), ready: make(chan struct{})}
	m.pending = p
	m.mu.Unlock()
	go func() {
		p.err = m.signInWith(context.WithoutCancel(ctx), func(_ context.Context, u string) error {
			p.URL = u
			close(p.ready)
			return nil
		})
		close(p.done)
	}()
	select {
	case <-p.ready:
		return p, nil
	case <-p.done:
		return nil, p.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (m *Manager) signInWith(ctx context.Context, open func(context.Context, string) error) error {
	m.mu.Lock()
	for m.op != nil {
		if err := m.await(ctx, m.op); err != nil {
			m.mu.Unlock()
			return err
		}
	}
	var scopes []string
	if m.need != nil {
		scopes = m.need.Scopes
	}
	d := m.disc
	return m.run(func() error {
		var ch *Challenge
		if d == nil {
			ch = m.probe(ctx)
			var err error
			if d, err = m.discover(ctx, ch); err != nil {
				return err
			}
		}
		return m.signInOpening(ctx, d, ch, scopes, open)
	})
}

// probe asks the server, without a token, for the challenge that names
// its metadata (a sign-in before any request was refused: hearthd login);
// nil when it gives none, and the well-known places are used.
func (m *Manager) probe(ctx context.Context) *Challenge {
	req, err := http.NewRequestWithContext(ctx, "POST", m.cfg.Server, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"ping"}`))
	if err != nil {
		return nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := m.hc.Do(req)
	if err != nil {
		return nil
	}
	res.Body.Close()
	if ch, ok := Bearer(res.Header); ok && res.StatusCode == http.StatusUnauthorized {
		return &ch
	}
	return nil
}

// signIn is one authorization code flow; scopes, when set, are a
// step-up's (else the challenge's, else the resource's scopes_supported).
func (m *Manager) signIn(ctx context.Context, d *discovery, ch *Challenge, scopes []string) error {
	return m.signInOpening(ctx, d, ch, scopes, m.cfg.Open)
}

// signInOpening is signIn with open as the way the URL is opened.
func (m *Manager) signInOpening(ctx context.Context, d *discovery, ch *Challenge, scopes []string, open func(context.Context, string) error) error {
	if d == nil {
		var err error
		if d, err = m.discover(ctx, ch); err != nil {
			return err
		}
	}
	if open == nil {
		return &SignInNeeded{Name: m.cfg.Name, Server: m.cfg.Server, Why: "nothing here can open a browser"}
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.SignInTimeout)
	defer cancel()
	a, err := listen(m.cfg.RedirectPort, d.as)
	if err != nil {
		return err
	}
	defer a.close()
	c, err := m.clientFor(ctx, d.as, a.redirect)
	if err != nil {
		return err
	}
	if scopes == nil {
		switch {
		case ch != nil && len(ch.Scopes()) > 0:
			scopes = ch.Scopes()
		default:
			scopes = d.resource.ScopesSupported
		}
	}
	// A refresh token is asked for where the authorization server says it
	// knows offline_access (never where it does not).
	if len(scopes) > 0 && slices.Contains(d.as.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(slices.Clone(scopes), "offline_access")
	}
	u, err := a.authorizationURL(d.as, c, d.resource.Resource, scopes)
	if err != nil {
		return err
	}
	if err := open(ctx, u); err != nil {
		return fmt.Errorf("%s: opening the sign-in page: %w", m.cfg.Name, err)
	}
	var cb callback
	select {
	case cb = <-a.got:
	case <-ctx.Done():
		return fmt.Errorf("%s: the sign-in did not finish within %s", m.cfg.Name, m.cfg.SignInTimeout)
	}
	code, err := a.code(cb)
	if err != nil {
		return fmt.Errorf("%s: %w", m.cfg.Name, err)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {a.redirect},
		"code_verifier": {a.verifier}, "resource": {d.resource.Resource}}
	t, err := tokenRequest(ctx, m.hc, d.as.TokenEndpoint, c, form)
	if err != nil {
		return fmt.Errorf("%s: %w", m.cfg.Name, err)
	}
	g := grantFrom(t, nil, m.cfg.Now())
	g.Resource, g.Issuer, g.Account, g.ClientID = d.resource.Resource, d.as.Issuer, m.cfg.Account, c.ID
	g.Requested = scopes
	if t.Scope == "" {
		g.Scopes = scopes
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.saveGrant(g); err != nil {
		return err
	}
	m.grant, m.need, m.client = &g, nil, c.How
	m.gen++
	m.signIns++
	return nil
}

// Logout forgets the server's grant; the next call needs a sign-in.
func (m *Manager) Logout() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loaded = true
	if m.grant != nil {
		if err := m.cfg.Store.Delete(m.grantName(m.grant.Issuer, m.grant.Resource)); err != nil {
			return err
		}
	}
	if err := m.cfg.Store.Delete(m.pointerName()); err != nil {
		return err
	}
	m.grant = nil
	m.gen++
	m.need = &SignInNeeded{Name: m.cfg.Name, Server: m.cfg.Server, Why: "you signed out"}
	return nil
}

// Status says where the server's authorization stands.
func (m *Manager) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.loaded {
		m.loaded = true
		m.loadStored()
	}
	s := Status{State: "none", Account: m.cfg.Account, Client: m.client}
	if g := m.grant; g != nil {
		s.State, s.Issuer, s.Scopes, s.Expiry = "signed-in", g.Issuer, g.Scopes, g.Expiry
	}
	if m.need != nil {
		s.State, s.Why = "sign-in-needed", m.need.Why
	}
	return s
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
