package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Pending is a sign-in under way: its authorization URL, to open in the
// user's browser (or to send a client as a URL-mode elicitation), and its
// end.
type Pending struct {
	URL   string
	ready chan struct{} // closed once URL is set
	done  chan struct{}
	err   error
}

// Done is closed once the sign-in ended.
func (p *Pending) Done() <-chan struct{} { return p.done }

// Err is why the sign-in failed (nil once it succeeded); valid after Done.
func (p *Pending) Err() error { return p.err }

// Wait waits for the sign-in's end, or ctx's.
func (p *Pending) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// callback is what the loopback listener received.
type callback struct {
	query url.Values
}

// attempt is one authorization request: its PKCE verifier, state, the
// issuer recorded with them (RFC 9207), the redirect URI and the listener.
type attempt struct {
	verifier, state string
	issuer          string
	issAdvertised   bool
	redirect        string
	ln              net.Listener
	srv             *http.Server
	got             chan callback
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// challengeOf is the PKCE S256 code challenge of a verifier (RFC 7636 §4.2).
func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// listen opens the loopback redirect listener on 127.0.0.1 (port 0: a
// fresh one) and serves /callback; each callback whose state matches is
// handed on, the others answered 400 and ignored.
func listen(port int, as ServerMetadata) (*attempt, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("the sign-in's redirect listener on 127.0.0.1: %w", err)
	}
	a := &attempt{
		verifier: randomString(32), state: randomString(24),
		issuer: as.Issuer, issAdvertised: as.ISSParameterSupported != nil && *as.ISSParameterSupported,
		redirect: "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + "/callback",
		ln:       ln, got: make(chan callback, 1),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if r.Method != "GET" || q.Get("state") != a.state {
			// Not this sign-in's answer (a stale tab, another page): it
			// changes nothing and the sign-in goes on waiting.
			http.Error(w, "This is not the answer hearth is waiting for (its state does not match).", http.StatusBadRequest)
			return
		}
		select {
		case a.got <- callback{query: q}:
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, "<!doctype html><title>hearth</title><p>"+html.EscapeString("hearth received the sign-in. You can close this window.")+"</p>")
	})
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10}
	go a.srv.Serve(ln)
	return a, nil
}

func (a *attempt) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	a.srv.Shutdown(ctx)
}

// authorizationURL is the authorization request (OAuth 2.1 §4.1.1) with
// PKCE S256, the state, the resource (RFC 8707) and the scopes ("" omits
// them).
func (a *attempt) authorizationURL(as ServerMetadata, c Client, resource string, scopes []string) (string, error) {
	u, err := url.Parse(as.AuthorizationEndpoint)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("response_type", "code")
	q.Set("client_id", c.ID)
	q.Set("redirect_uri", a.redirect)
	q.Set("state", a.state)
	q.Set("code_challenge", challengeOf(a.verifier))
	q.Set("code_challenge_method", "S256")
	q.Set("resource", resource)
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// ErrIssuerMismatch: the authorization response came from another issuer
// than the one the request was made to (RFC 9207), or lacked the iss its
// server advertises; its code is not used and its error not shown.
var ErrIssuerMismatch = errors.New("the authorization response's issuer does not match")

// code checks an authorization response and returns its code: the iss
// first (RFC 9207 §2.4, and MCP's rule that a present iss is compared
// whatever the metadata says), exactly as a string, before anything else
// in it is looked at.
func (a *attempt) code(cb callback) (string, error) {
	iss, has := cb.query["iss"]
	switch {
	case has && (len(iss) != 1 || iss[0] != a.issuer):
		return "", fmt.Errorf("%w: the response names %q, the request went to %q", ErrIssuerMismatch, clipText(strings.Join(iss, ",")), a.issuer)
	case !has && a.issAdvertised:
		return "", fmt.Errorf("%w: %s advertises the iss parameter but its response has none", ErrIssuerMismatch, a.issuer)
	}
	if e := cb.query.Get("error"); e != "" {
		msg := "the authorization server refused the sign-in: " + clipText(e)
		if d := cb.query.Get("error_description"); d != "" {
			msg += ": " + clipText(d)
		}
		return "", errors.New(msg)
	}
	code := cb.query.Get("code")
	if code == "" {
		return "", errors.New("the authorization response has no code")
	}
	return code, nil
}
