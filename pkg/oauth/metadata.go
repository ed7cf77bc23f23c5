package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ResourceMetadata is a protected resource's metadata (RFC 9728 §2): what
// an MCP server says of itself.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is an authorization server's metadata (RFC 8414 §2, or
// OpenID Connect Discovery), the members hearth uses.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported            []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported               []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	// ISSParameterSupported is nil when the metadata does not say
	// (RFC 9207 §3).
	ISSParameterSupported     *bool `json:"authorization_response_iss_parameter_supported,omitempty"`
	ClientIDMetadataSupported bool  `json:"client_id_metadata_document_supported,omitempty"`
}

// maxDocument bounds a metadata document, a token response, a
// registration response.
const maxDocument = 1 << 20

// ResourceMetadataURLs are the places a server's metadata is looked for, in
// the specification's order: the challenge's resource_metadata when it has
// one, else the well-known URI with the server's path (RFC 9728 §3.1),
// then at the root.
func ResourceMetadataURLs(server string, fromChallenge string) ([]string, error) {
	if fromChallenge != "" {
		return []string{fromChallenge}, nil
	}
	u, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	root := u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{root}, nil
	}
	return []string{root + path, root}, nil
}

// ServerMetadataURLs are the places an issuer's metadata is looked for, in
// the MCP specification's order: RFC 8414 with the path inserted, OpenID
// Connect Discovery with the path inserted, then appended; for an issuer
// without a path, RFC 8414's then OpenID's.
func ServerMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	base := u.Scheme + "://" + u.Host
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if path == "" {
		return []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"}, nil
	}
	return []string{
		base + "/.well-known/oauth-authorization-server" + path,
		base + "/.well-known/openid-configuration" + path,
		base + path + "/.well-known/openid-configuration",
	}, nil
}

// errNotThere: a metadata URL answered 4xx (try the next one).
var errNotThere = errors.New("not there")

// getJSON fetches a JSON document (bounded) into v.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode >= 400 && res.StatusCode < 500 {
		io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
		return fmt.Errorf("%w: %s", errNotThere, res.Status)
	}
	if res.StatusCode != 200 {
		return fmt.Errorf("%s answered %s", u, res.Status)
	}
	return decodeBounded(res.Body, v)
}

func decodeBounded(r io.Reader, v any) error {
	body, err := io.ReadAll(io.LimitReader(r, maxDocument+1))
	if err != nil {
		return err
	}
	if len(body) > maxDocument {
		return errors.New("the document is larger than 1 MiB")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	return nil
}

// FetchResourceMetadata finds and checks a server's protected resource
// metadata: from the challenge's URL or the well-known places in order.
// The document's resource must be the server's URL or a prefix of it on
// the same origin (RFC 9728 §3.3: a client uses no metadata of another
// resource), and it must name an authorization server.
func FetchResourceMetadata(ctx context.Context, hc *http.Client, server, fromChallenge string) (ResourceMetadata, error) {
	urls, err := ResourceMetadataURLs(server, fromChallenge)
	if err != nil {
		return ResourceMetadata{}, err
	}
	var errs []string
	for _, u := range urls {
		if err := secureURL(u); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		var m ResourceMetadata
		err := getJSON(ctx, hc, u, &m)
		if errors.Is(err, errNotThere) {
			errs = append(errs, u+": "+err.Error())
			continue
		}
		if err != nil {
			return m, fmt.Errorf("the protected resource metadata at %s: %w", u, err)
		}
		if !resourceCovers(m.Resource, server) {
			return m, fmt.Errorf("the protected resource metadata at %s is for %q, not for %s: it is not used", u, m.Resource, server)
		}
		if len(m.AuthorizationServers) == 0 {
			return m, fmt.Errorf("the protected resource metadata at %s names no authorization server", u)
		}
		return m, nil
	}
	return ResourceMetadata{}, fmt.Errorf("%s published no protected resource metadata (%s)", server, strings.Join(errs, "; "))
}

// resourceCovers: the resource identifier res is server's URL, or the same
// origin with a path that is a prefix of server's at a segment boundary.
func resourceCovers(res, server string) bool {
	r, err1 := url.Parse(res)
	s, err2 := url.Parse(server)
	if err1 != nil || err2 != nil || r.Fragment != "" || r.Scheme == "" {
		return false
	}
	if !strings.EqualFold(r.Scheme, s.Scheme) || !strings.EqualFold(r.Host, s.Host) {
		return false
	}
	rp, sp := strings.TrimSuffix(r.EscapedPath(), "/"), strings.TrimSuffix(s.EscapedPath(), "/")
	return rp == "" || rp == sp || strings.HasPrefix(sp, rp+"/")
}

// FetchServerMetadata finds an issuer's metadata at the places of
// ServerMetadataURLs, in order, and checks it: its issuer is exactly the
// one the places were built from (RFC 8414 §3.3: a document claiming
// another issuer is not used), its endpoints are HTTPS (or loopback), and
// it supports PKCE with S256 (the MCP specification: without
// code_challenge_methods_supported the client must refuse).
func FetchServerMetadata(ctx context.Context, hc *http.Client, issuer string) (ServerMetadata, error) {
	if err := secureURL(issuer); err != nil {
		return ServerMetadata{}, err
	}
	urls, err := ServerMetadataURLs(issuer)
	if err != nil {
		return ServerMetadata{}, err
	}
	var errs []string
	for _, u := range urls {
		var m ServerMetadata
		err := getJSON(ctx, hc, u, &m)
		if errors.Is(err, errNotThere) {
			errs = append(errs, u+": "+err.Error())
			continue
		}
		if err != nil {
			errs = append(errs, u+": "+err.Error())
			continue
		}
		if m.Issuer != issuer {
			errs = append(errs, fmt.Sprintf("%s claims the issuer %q, not %q, and is not used", u, m.Issuer, issuer))
			continue
		}
		if err := m.check(); err != nil {
			return m, fmt.Errorf("the authorization server %s: %w", issuer, err)
		}
		return m, nil
	}
	return ServerMetadata{}, fmt.Errorf("no metadata of the authorization server %s (%s)", issuer, strings.Join(errs, "; "))
}

func (m ServerMetadata) check() error {
	if m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" {
		return errors.New("its metadata lacks authorization_endpoint or token_endpoint")
	}
	for _, e := range []string{m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint} {
		if e == "" {
			continue
		}
		if err := secureURL(e); err != nil {
			return err
		}
	}
	if !slices.Contains(m.CodeChallengeMethodsSupported, "S256") {
		return errors.New("it does not list S256 in code_challenge_methods_supported, so PKCE cannot be used with it and it is refused")
	}
	return nil
}

// secureURL refuses a URL that is neither HTTPS nor on a loopback host
// (the MCP specification: authorization endpoints are HTTPS; a server on
// 127.0.0.1 or localhost is the user's own).
func secureURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", s)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
	}
	return fmt.Errorf("%s is not HTTPS: authorization is refused over a channel others can read", s)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
