package oauth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Client is the OAuth client hearth is at one authorization server: a
// pre-registered one, a client ID metadata document's URL, or one
// registered dynamically. Its credentials belong to that issuer alone.
type Client struct {
	Issuer       string   `json:"issuer"`
	ID           string   `json:"client_id"`
	Secret       string   `json:"client_secret,omitempty"`
	AuthMethod   string   `json:"token_endpoint_auth_method"` // none, client_secret_basic, client_secret_post
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	How          string   `json:"how"` // pre-registered, metadata-document, registered
}

// Registration says how hearth may be a client of an authorization server.
type Registration struct {
	// ClientID and ClientSecret are a pre-registered client (the server's
	// entry); Issuer, when set, is the authorization server they belong to.
	ClientID, ClientSecret, Issuer string
	// MetadataURL is the HTTPS URL of a client ID metadata document that
	// describes hearth ("" when there is none to use).
	MetadataURL string
	// Name is the client_name registered dynamically ("hearth").
	Name string
}

// chooseAuthMethod picks how a client with (or without) a secret
// authenticates at a token endpoint that lists supported (RFC 8414: absent
// means client_secret_basic).
func chooseAuthMethod(hasSecret bool, supported []string) string {
	if !hasSecret {
		return "none"
	}
	if len(supported) == 0 || slices.Contains(supported, "client_secret_basic") {
		return "client_secret_basic"
	}
	if slices.Contains(supported, "client_secret_post") {
		return "client_secret_post"
	}
	return "client_secret_basic"
}

// register obtains a client at the authorization server as the
// specification orders: a pre-registered client, else the client ID
// metadata document where the server supports them, else dynamic
// registration (RFC 7591) where it offers it.
func register(ctx context.Context, hc *http.Client, as ServerMetadata, reg Registration, redirect string) (Client, error) {
	if reg.ClientID != "" {
		if reg.Issuer != "" && reg.Issuer != as.Issuer {
			return Client{}, fmt.Errorf("the pre-registered client %q is for the authorization server %s, but the server now names %s: "+
				"it is not used there (register a client with %s and configure it)", reg.ClientID, reg.Issuer, as.Issuer, as.Issuer)
		}
		return Client{Issuer: as.Issuer, ID: reg.ClientID, Secret: reg.ClientSecret,
			AuthMethod: chooseAuthMethod(reg.ClientSecret != "", as.TokenEndpointAuthMethodsSupported), How: "pre-registered"}, nil
	}
	if as.ClientIDMetadataSupported && reg.MetadataURL != "" {
		return Client{Issuer: as.Issuer, ID: reg.MetadataURL, AuthMethod: "none", How: "metadata-document"}, nil
	}
	if as.RegistrationEndpoint == "" {
		return Client{}, fmt.Errorf("the authorization server %s takes neither client ID metadata documents nor dynamic registration: "+
			"register a client with it and configure its client_id", as.Issuer)
	}
	method := "none"
	if s := as.TokenEndpointAuthMethodsSupported; len(s) > 0 && !slices.Contains(s, "none") {
		method = chooseAuthMethod(true, s)
	}
	name := reg.Name
	if name == "" {
		name = "hearth"
	}
	body, _ := json.Marshal(map[string]any{
		"client_name":                name,
		"redirect_uris":              []string{redirect},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           "native",
	})
	req, err := http.NewRequestWithContext(ctx, "POST", as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return Client{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return Client{}, fmt.Errorf("dynamic registration at %s: %w", as.RegistrationEndpoint, err)
	}
	defer res.Body.Close()
	var out struct {
		ClientID     string   `json:"client_id"`
		ClientSecret string   `json:"client_secret"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		RedirectURIs []string `json:"redirect_uris"`
		Error        string   `json:"error"`
		Description  string   `json:"error_description"`
	}
	derr := decodeBounded(res.Body, &out)
	if res.StatusCode/100 != 2 {
		return Client{}, fmt.Errorf("dynamic registration at %s refused (%s): %s %s", as.RegistrationEndpoint, res.Status, clipText(out.Error), clipText(out.Description))
	}
	if derr != nil || out.ClientID == "" {
		return Client{}, fmt.Errorf("dynamic registration at %s: no client_id in the answer", as.RegistrationEndpoint)
	}
	if out.AuthMethod != "" {
		method = out.AuthMethod
	}
	if method != "none" && out.ClientSecret == "" {
		method = "none"
	}
	uris := out.RedirectURIs
	if len(uris) == 0 {
		uris = []string{redirect}
	}
	return Client{Issuer: as.Issuer, ID: out.ClientID, Secret: out.ClientSecret, AuthMethod: method, RedirectURIs: uris, How: "registered"}, nil
}

// fits says whether a stored client can be used with redirect (a
// dynamically registered one names its redirect URIs; the others were
// configured or describe themselves).
func (c Client) fits(redirect string) bool {
	return c.How != "registered" || slices.Contains(c.RedirectURIs, redirect)
}

// TokenResponse is a token endpoint's answer (RFC 6749 §5.1).
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// TokenError is a token endpoint's refusal (RFC 6749 §5.2). Its text has
// the error code and description, never a token.
type TokenError struct {
	Status      int
	Code        string
	Description string
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("the token endpoint refused (HTTP %d): %s", e.Status, clipText(e.Code))
	if e.Description != "" {
		s += ": " + clipText(e.Description)
	}
	return s
}

// Revoked: the grant is gone (invalid_grant: expired, revoked, or a
// rotated refresh token used twice), and only a new sign-in helps.
func (e *TokenError) Revoked() bool { return e.Code == "invalid_grant" }

// tokenRequest posts form to the token endpoint with the client's
// authentication.
func tokenRequest(ctx context.Context, hc *http.Client, endpoint string, c Client, form url.Values) (TokenResponse, error) {
	switch c.AuthMethod {
	case "client_secret_post":
		form.Set("client_id", c.ID)
		form.Set("client_secret", c.Secret)
	case "client_secret_basic":
	default:
		form.Set("client_id", c.ID)
	}
	req, err := http.NewRequestWithContext(ctx, "POST", endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return TokenResponse{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if c.AuthMethod == "client_secret_basic" {
		// RFC 6749 §2.3.1: both form-encoded before the colon joins them.
		cred := url.QueryEscape(c.ID) + ":" + url.QueryEscape(c.Secret)
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	}
	res, err := hc.Do(req)
	if err != nil {
		return TokenResponse{}, fmt.Errorf("the token endpoint %s: %w", endpoint, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxDocument+1))
	if err != nil {
		return TokenResponse{}, fmt.Errorf("the token endpoint %s: %w", endpoint, err)
	}
	if res.StatusCode != 200 {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		json.Unmarshal(raw, &e)
		// An authorization server that repeats what it was sent does not
		// put a code, a verifier, a refresh token or a secret in an error.
		for _, k := range []string{"code", "code_verifier", "refresh_token", "client_secret"} {
			if v := form.Get(k); len(v) >= 8 {
				e.Error = strings.ReplaceAll(e.Error, v, "***")
				e.Description = strings.ReplaceAll(e.Description, v, "***")
			}
		}
		if len(c.Secret) >= 8 {
			e.Description = strings.ReplaceAll(e.Description, c.Secret, "***")
		}
		return TokenResponse{}, &TokenError{Status: res.StatusCode, Code: e.Error, Description: e.Description}
	}
	var t TokenResponse
	if len(raw) > maxDocument || json.Unmarshal(raw, &t) != nil || t.AccessToken == "" {
		return TokenResponse{}, fmt.Errorf("the token endpoint %s answered no access token", endpoint)
	}
	if t.TokenType != "" && !strings.EqualFold(t.TokenType, "Bearer") {
		return TokenResponse{}, fmt.Errorf("the token endpoint %s issued a %q token; hearth sends Bearer tokens only", endpoint, clipText(t.TokenType))
	}
	return t, nil
}

// Grant is one token family: what a sign-in obtained and each refresh
// renewed. It is kept in the Store, never logged.
type Grant struct {
	Resource  string    `json:"resource"`
	Issuer    string    `json:"issuer"`
	Account   string    `json:"account"`
	Access    string    `json:"access_token"`
	Refresh   string    `json:"refresh_token,omitempty"`
	Expiry    time.Time `json:"expiry,omitzero"`     // zero: not said
	Scopes    []string  `json:"scopes,omitempty"`    // granted (the answer's scope, else those asked)
	Requested []string  `json:"requested,omitempty"` // asked for at the last sign-in
	ClientID  string    `json:"client_id"`
	Obtained  time.Time `json:"obtained"`
}

// grantFrom makes a grant of a token response; old is the grant renewed
// (nil for a sign-in), whose refresh token stays when no new one came.
func grantFrom(t TokenResponse, old *Grant, now time.Time) Grant {
	g := Grant{Access: t.AccessToken, Refresh: t.RefreshToken, Obtained: now}
	if old != nil {
		g.Resource, g.Issuer, g.Account, g.ClientID = old.Resource, old.Issuer, old.Account, old.ClientID
		g.Scopes, g.Requested = old.Scopes, old.Requested
		if g.Refresh == "" {
			g.Refresh = old.Refresh
		}
	}
	if t.ExpiresIn > 0 {
		g.Expiry = now.Add(time.Duration(t.ExpiresIn) * time.Second)
	}
	if t.Scope != "" {
		g.Scopes = strings.Fields(t.Scope)
	}
	return g
}
