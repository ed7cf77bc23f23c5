// Package backend persists synesthetic assets to the optional HTTP backend:
// the domain logic of the schema family's populate_backend tool.
//
// The backend is disabled unless SYN_BACKEND_URL is set. An asset is POSTed as
// JSON to SYN_BACKEND_URL + SYN_BACKEND_ASSETS_PATH (default
// /synesthetic-assets/), once (no retries), within 5 seconds. Every outcome
// is a [Result] in the shape populate_backend's clients read ({ok, reason,
// ...}); only the caller's own cancellation is returned as an error.
//
// Validation: assets must be validated before they are persisted, so an
// asset is validated before every POST and an invalid one is never sent,
// whatever validate_first says. validate_first=true is the explicit request
// for that step; validate_first=false cannot switch the guard off (the Python
// adapter whose result shapes these tools keep let it, which broke its own
// guard). docs/decisions/0005-validate-first-must-be-true.md says why.
package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
)

// Configuration defaults.
const (
	DefaultAssetsPath = keys.DefaultBackendAssetsPath
	DefaultTimeout    = 5 * time.Second
	// MaxAssetBytes is the 1 MiB request limit (the frame limit), applied to the encoded asset.
	MaxAssetBytes = 1 << 20
)

// The environment variables the backend reads.
const (
	EnvURL        = "SYN_BACKEND_URL"
	EnvAssetsPath = "SYN_BACKEND_ASSETS_PATH"
)

// Result reasons, as populate_backend's result carries them.
const (
	ReasonValidationFailed = "validation_failed"
	ReasonBackendError     = "backend_error"
	ReasonUnsupported      = "unsupported"
)

// DetailNetworkUnreachable is the result's detail for a backend that cannot be
// reached; DetailTimeout says it was reached but did not answer in time.
// Both come with status 503.
const (
	DetailNetworkUnreachable = "network_unreachable"
	DetailTimeout            = "timeout"
)

// maxDetail bounds the detail taken from a backend's error body: an error
// reply must never carry a large input back (docs/architecture.md).
const maxDetail = 512

// maxResponse bounds how much of a response body is read.
const maxResponse = 4 << 20

// Config says where the backend is. The zero Config is a disabled backend.
type Config struct {
	// URL is SYN_BACKEND_URL, the backend's base URL; empty disables populate.
	URL string
	// AssetsPath is SYN_BACKEND_ASSETS_PATH; empty means DefaultAssetsPath.
	AssetsPath string
	// Timeout bounds one POST, response included; zero means DefaultTimeout.
	// Only tests set it.
	Timeout time.Duration
	// Transport carries the requests; nil means a clone of
	// http.DefaultTransport. Only tests set it.
	Transport http.RoundTripper
}

// ConfigFromEnv reads SYN_BACKEND_URL and SYN_BACKEND_ASSETS_PATH.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		URL:        strings.TrimSpace(getenv(EnvURL)),
		AssetsPath: strings.TrimSpace(getenv(EnvAssetsPath)),
	}
}

// Validator checks an asset against its schema. It reports the violations
// (already sorted) when the asset is invalid. The schema family supplies it,
// so this package needs neither a catalog nor a validator of its own.
type Validator func(asset any) (ok bool, errors []Violation)

// Violation is one reason an asset is refused: where in the asset (an RFC
// 6901 JSON Pointer, "" for the whole asset) and what is wrong. Its JSON is
// the validation error object every schema tool answers with.
type Violation struct {
	Path string `json:"path"`
	Msg  string `json:"msg"`
}

// Result is populate_backend's result object, in the shape its clients read.
type Result struct {
	OK         bool        `json:"ok"`
	AssetID    string      `json:"asset_id,omitempty"`
	BackendURL string      `json:"backend_url,omitempty"`
	Reason     string      `json:"reason,omitempty"`
	Errors     []Violation `json:"errors,omitempty"`
	Status     int         `json:"status,omitempty"`
	Detail     string      `json:"detail,omitempty"`
	// Cause is the underlying failure, for the daemon's log only; it is never
	// sent to the client (it may name hosts and ports).
	Cause error `json:"-"`
}

// Client posts assets to the backend. It is safe for concurrent use.
type Client struct {
	endpoint   string // base URL + assets path
	backendURL string // the base URL as reported to clients, password redacted
	timeout    time.Duration
	http       *http.Client
	validate   Validator
}

// New builds a Client. A Config without URL gives a disabled client whose
// Populate answers "unsupported". A URL that is not an absolute http(s) URL,
// or a nil validator, is an error: a typo in SYN_BACKEND_URL should stop the
// start, not surface on the first populate.
func New(cfg Config, validate Validator) (*Client, error) {
	if validate == nil {
		return nil, errors.New("backend: a validator is required: assets are validated before every POST")
	}
	c := &Client{validate: validate, timeout: cfg.Timeout}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if cfg.URL == "" {
		return c, nil
	}
	base, err := url.Parse(cfg.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("backend: %s=%q is not an absolute http(s) URL", EnvURL, redact(cfg.URL))
	}
	if base.RawQuery != "" || base.Fragment != "" {
		return nil, fmt.Errorf("backend: %s=%q must not carry a query or fragment", EnvURL, redact(cfg.URL))
	}
	path := cfg.AssetsPath
	if path == "" {
		path = DefaultAssetsPath
	}
	// Join like the Python adapter's httpx base_url: one slash between base and path.
	c.endpoint = strings.TrimRight(base.String(), "/") + "/" + strings.TrimLeft(path, "/")
	if _, err := url.Parse(c.endpoint); err != nil {
		return nil, fmt.Errorf("backend: %s=%q does not make a valid URL: %w", EnvAssetsPath, path, err)
	}
	c.backendURL = base.Redacted()
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	c.http = &http.Client{
		Transport: transport,
		// A redirect would re-send (or silently drop) the POST: report it instead.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// Enabled reports whether SYN_BACKEND_URL was set.
func (c *Client) Enabled() bool { return c.endpoint != "" }

// Endpoint is the URL assets are POSTed to ("" when disabled), password redacted.
func (c *Client) Endpoint() string {
	if c.endpoint == "" {
		return ""
	}
	return redact(c.endpoint)
}

// Populate validates the asset and, if it is valid, POSTs it to the backend.
// validateFirst is populate_backend's validate_first; validation happens
// either way (see the package comment). The error is non-nil only when ctx
// is done before the backend answered: the caller's cancellation or
// deadline, for the protocol layer to report; the backend's own timeout is a
// Result.
func (c *Client) Populate(ctx context.Context, asset any, validateFirst bool) (Result, error) {
	if !c.Enabled() {
		return Result{Reason: ReasonUnsupported, Detail: "backend disabled: " + EnvURL + " is not set"}, nil
	}
	body, err := encode(asset)
	if err != nil {
		return Result{Reason: ReasonValidationFailed, Errors: []Violation{{Path: "", Msg: "asset is not JSON: " + err.Error()}}, Cause: err}, nil
	}
	if len(body) > MaxAssetBytes {
		return Result{Reason: ReasonValidationFailed, Errors: []Violation{{Path: "", Msg: "payload_too_large"}}}, nil
	}
	if ok, violations := c.validate(asset); !ok {
		if len(violations) == 0 {
			violations = []Violation{{Path: "", Msg: "asset is invalid"}}
		}
		return Result{Reason: ReasonValidationFailed, Errors: violations}, nil
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	return c.post(ctx, body)
}

// encode marshals the asset without HTML escaping, so the size guard counts
// the bytes the backend receives, not inflated \u003c escapes.
func encode(asset any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(asset); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func (c *Client) post(ctx context.Context, body []byte) (Result, error) {
	reqCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("backend: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")

	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportFailure(ctx, reqCtx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return c.transportFailure(ctx, reqCtx, err)
	}
	if len(data) > maxResponse {
		data = nil // too large to be an id or a message worth reading
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Result{
			Reason: ReasonBackendError,
			Status: resp.StatusCode,
			Detail: errorDetail(resp.StatusCode, data),
			Cause:  fmt.Errorf("backend: POST %s: %s", c.Endpoint(), resp.Status),
		}, nil
	}
	id, ok := assetID(data)
	if !ok {
		// The backend took the asset but did not say under which id. Not a
		// success the client can use, and not safe to retry blindly either:
		// the detail says so.
		return Result{
			Reason: ReasonBackendError,
			Status: resp.StatusCode,
			Detail: "backend accepted the asset but its response names no id",
			Cause:  fmt.Errorf("backend: POST %s: %s with body %q", c.Endpoint(), resp.Status, clip(string(data), 80)),
		}, nil
	}
	return Result{OK: true, AssetID: id, BackendURL: c.backendURL}, nil
}

// transportFailure maps a failed exchange: the caller's cancellation is an
// error; our own timeout and an unreachable backend are results (status 503).
func (c *Client) transportFailure(ctx, reqCtx context.Context, err error) (Result, error) {
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	detail := DetailNetworkUnreachable
	if errors.Is(reqCtx.Err(), context.DeadlineExceeded) {
		detail = DetailTimeout
	}
	return Result{Reason: ReasonBackendError, Status: http.StatusServiceUnavailable, Detail: detail,
		Cause: fmt.Errorf("backend: POST %s: %w", c.Endpoint(), err)}, nil
}

// assetID takes the id from a JSON object body: "id", else "asset_id" (the
// Python adapter reads "id"; "asset_id" is the name populate_backend's result
// gives it).
// A string is taken as is, a number as its JSON text.
func assetID(body []byte) (string, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return "", false
	}
	for _, key := range []string{"id", "asset_id"} {
		raw, ok := obj[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s, true
		}
		var n json.Number
		if json.Unmarshal(raw, &n) == nil && n != "" { // null leaves n empty
			return n.String(), true
		}
	}
	return "", false
}

// errorDetail makes a short, single-line detail from an error body: the
// message of a JSON {"detail"|"error"|"message": "..."} body (FastAPI and
// most APIs), else the body text, else the status text.
func errorDetail(status int, body []byte) string {
	text := ""
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) == nil {
		for _, key := range []string{"detail", "error", "message"} {
			if raw, ok := obj[key]; ok {
				var s string
				if json.Unmarshal(raw, &s) == nil {
					text = s
				} else {
					text = string(raw) // e.g. FastAPI's list of validation errors
				}
				break
			}
		}
	}
	if text == "" {
		text = string(body)
	}
	text = strings.Join(strings.Fields(strings.ToValidUTF8(text, "\uFFFD")), " ")
	if text == "" {
		text = http.StatusText(status)
	}
	if text == "" {
		text = fmt.Sprintf("HTTP %d", status)
	}
	return clip(text, maxDetail)
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// redact hides a password in a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
