package oauth

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// RFC 9207 as the MCP specification tabulates it, and the error of a
// response from the wrong issuer never shown.
func TestAuthorizationResponseISS(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		advertised *bool
		query      string
		ok         bool
	}{
		{&yes, "code=c&iss=https%3A%2F%2Fas.example", true},
		{&yes, "code=c", false},
		{&yes, "code=c&iss=https%3A%2F%2Fas.example%2F", false},    // no normalization
		{&yes, "code=c&iss=HTTPS%3A%2F%2Fas.example", false},       // no case folding
		{&yes, "code=c&iss=https%3A%2F%2Fas.example&iss=x", false}, // two
		{&no, "code=c", true},
		{nil, "code=c", true},
		{nil, "code=c&iss=https%3A%2F%2Fevil.example", false},
		{nil, "error=access_denied&error_description=SHOWN&iss=https%3A%2F%2Fevil.example", false},
		{nil, "error=access_denied&iss=https%3A%2F%2Fas.example", false},
		{nil, "iss=https%3A%2F%2Fas.example", false}, // no code
	} {
		a := &attempt{issuer: "https://as.example", issAdvertised: c.advertised != nil && *c.advertised}
		q, _ := url.ParseQuery(c.query)
		code, err := a.code(callback{query: q})
		if (err == nil) != c.ok || (c.ok && code != "c") {
			t.Errorf("advertised %v, %s: %q %v", c.advertised, c.query, code, err)
		}
		if err != nil && strings.Contains(c.query, "evil") && strings.Contains(err.Error(), "SHOWN") {
			t.Errorf("the error of a mismatched response was shown: %v", err)
		}
	}
}

// The loopback listener takes only the answer that carries its state;
// anything else is refused and the wait goes on.
func TestListenerState(t *testing.T) {
	a, err := listen(0, ServerMetadata{Issuer: "https://as.example"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if !strings.HasPrefix(a.redirect, "http://127.0.0.1:") || !strings.HasSuffix(a.redirect, "/callback") {
		t.Fatalf("redirect %s", a.redirect)
	}
	res, err := http.Get(a.redirect + "?code=stolen&state=guess")
	if err != nil || res.StatusCode != 400 {
		t.Fatalf("wrong state: %v %v", res, err)
	}
	select {
	case <-a.got:
		t.Fatal("a wrong state was taken")
	case <-time.After(50 * time.Millisecond):
	}
	res, err = http.Get(a.redirect + "?code=right&state=" + a.state)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("right state: %v %v", res, err)
	}
	if cb := <-a.got; cb.query.Get("code") != "right" {
		t.Fatalf("%v", cb.query)
	}
	if challengeOf("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") != "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" {
		t.Fatal("S256 of RFC 7636's example")
	}
}
