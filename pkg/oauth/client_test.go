package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// A token endpoint's refusal that repeats what it was sent holds none of
// it in the error.
func TestTokenErrorHoldsNoSecret(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.WriteHeader(400)
		json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant",
			"error_description": "refresh token " + r.PostForm.Get("refresh_token") + " of client secret " + r.PostForm.Get("client_secret") + " is unknown"})
	}))
	defer srv.Close()
	c := Client{ID: "id", Secret: "client-secret-value", AuthMethod: "client_secret_post"}
	_, err := tokenRequest(context.Background(), srv.Client(), srv.URL, c, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"rt-secret-value"}})
	te, ok := err.(*TokenError)
	if !ok || !te.Revoked() {
		t.Fatalf("%v", err)
	}
	if strings.Contains(err.Error(), "rt-secret-value") || strings.Contains(err.Error(), "client-secret-value") {
		t.Fatalf("the error holds a secret: %v", err)
	}
}

// The places metadata is looked for, in the specification's order.
func TestMetadataURLs(t *testing.T) {
	for _, c := range []struct {
		in, challenge string
		want          []string
	}{
		{"https://a.example/public/mcp", "", []string{"https://a.example/.well-known/oauth-protected-resource/public/mcp", "https://a.example/.well-known/oauth-protected-resource"}},
		{"https://a.example/", "", []string{"https://a.example/.well-known/oauth-protected-resource"}},
		{"https://a.example/mcp", "https://a.example/custom.json", []string{"https://a.example/custom.json"}},
	} {
		got, _ := ResourceMetadataURLs(c.in, c.challenge)
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: %v", c.in, got)
		}
	}
	got, _ := ServerMetadataURLs("https://auth.example/tenant1")
	want := "https://auth.example/.well-known/oauth-authorization-server/tenant1 https://auth.example/.well-known/openid-configuration/tenant1 https://auth.example/tenant1/.well-known/openid-configuration"
	if strings.Join(got, " ") != want {
		t.Errorf("%v", got)
	}
	got, _ = ServerMetadataURLs("https://auth.example")
	if strings.Join(got, " ") != "https://auth.example/.well-known/oauth-authorization-server https://auth.example/.well-known/openid-configuration" {
		t.Errorf("%v", got)
	}
}

// Which resource metadata describes which server, and which URLs may be
// used for authorization at all.
func TestResourceCoversAndSecureURL(t *testing.T) {
	for _, c := range []struct {
		res, server string
		ok          bool
	}{
		{"https://a.example/mcp", "https://a.example/mcp", true},
		{"https://a.example", "https://a.example/mcp", true},
		{"https://a.example/", "https://a.example/mcp", true},
		{"https://A.example/mcp", "https://a.example/mcp", true},
		{"https://a.example/m", "https://a.example/mcp", false},
		{"https://evil.example/mcp", "https://a.example/mcp", false},
		{"http://a.example/mcp", "https://a.example/mcp", false},
		{"https://a.example/mcp#x", "https://a.example/mcp", false},
		{"a.example/mcp", "https://a.example/mcp", false},
	} {
		if got := resourceCovers(c.res, c.server); got != c.ok {
			t.Errorf("resourceCovers(%q, %q) = %v", c.res, c.server, got)
		}
	}
	for u, ok := range map[string]bool{"https://x.example/t": true, "http://127.0.0.1:9/t": true, "http://localhost/t": true,
		"http://[::1]:8/t": true, "http://x.example/t": false, "ftp://x.example": false, "/relative": false} {
		if (secureURL(u) == nil) != ok {
			t.Errorf("secureURL(%q): %v", u, secureURL(u))
		}
	}
}
