package backend

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// validAsset is what the test validator accepts: an object with a "name".
var validAsset = map[string]any{"name": "Asset One", "shader": map[string]any{"u": []any{1.0, nil}}}

func acceptNamed(asset any) (bool, []Violation) {
	m, ok := asset.(map[string]any)
	if !ok {
		return false, []Violation{{Path: "", Msg: "expected object"}}
	}
	if _, ok := m["name"]; !ok {
		return false, []Violation{{Path: "", Msg: "missing property 'name'"}, {Path: "/shader", Msg: "expected object"}}
	}
	return true, nil
}

// backendServer is a real local HTTP server that records what it receives.
type backendServer struct {
	*httptest.Server
	posts atomic.Int32
	last  atomic.Value // the last request: recorded
}

type recorded struct {
	method, path, contentType string
	body                      []byte
}

func newBackend(t *testing.T, handler http.HandlerFunc) *backendServer {
	t.Helper()
	s := &backendServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.posts.Add(1)
		s.last.Store(recorded{r.Method, r.URL.Path, r.Header.Get("Content-Type"), body})
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func reply(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg, acceptNamed)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func TestPopulateSuccess(t *testing.T) {
	tests := []struct {
		name, body, wantID string
	}{
		{"string id", `{"id":"xyz","name":"Asset One"}`, "xyz"},
		{"numeric id", `{"id":42}`, "42"},
		{"big numeric id stays exact", `{"id":12345678901234567890}`, "12345678901234567890"},
		{"asset_id when no id", `{"asset_id":"a-1"}`, "a-1"},
		{"id wins over asset_id", `{"asset_id":"b","id":"a"}`, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBackend(t, reply(http.StatusCreated, tc.body))
			c := newClient(t, Config{URL: srv.URL})
			res, err := c.Populate(context.Background(), validAsset, true)
			if err != nil {
				t.Fatal(err)
			}
			want := Result{OK: true, AssetID: tc.wantID, BackendURL: srv.URL}
			if res.OK != want.OK || res.AssetID != want.AssetID || res.BackendURL != want.BackendURL || res.Reason != "" {
				t.Fatalf("got %+v, want %+v", res, want)
			}
			got := srv.last.Load().(recorded)
			if got.method != http.MethodPost || got.path != DefaultAssetsPath || got.contentType != "application/json" {
				t.Errorf("request %s %s (%s), want POST %s application/json", got.method, got.path, got.contentType, DefaultAssetsPath)
			}
			var sent any
			if err := json.Unmarshal(got.body, &sent); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			if b1, b2 := mustJSON(t, sent), mustJSON(t, validAsset); b1 != b2 {
				t.Errorf("backend got %s, want %s", b1, b2)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPopulatePaths(t *testing.T) {
	tests := []struct {
		name, basePath, assetsPath, want string
	}{
		{"default", "", "", "/synesthetic-assets/"},
		{"override", "", "/custom-assets/", "/custom-assets/"},
		{"override without slash", "", "custom", "/custom"},
		{"base URL with a path", "/api/v1/", "", "/api/v1/synesthetic-assets/"},
		{"base URL path without slash", "/api", "assets", "/api/assets"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBackend(t, reply(http.StatusOK, `{"id":"p"}`))
			c := newClient(t, Config{URL: srv.URL + tc.basePath, AssetsPath: tc.assetsPath})
			res, err := c.Populate(context.Background(), validAsset, true)
			if err != nil || !res.OK {
				t.Fatalf("got %+v, %v", res, err)
			}
			if got := srv.last.Load().(recorded).path; got != tc.want {
				t.Errorf("POST went to %s, want %s", got, tc.want)
			}
			if c.Endpoint() != srv.URL+tc.want {
				t.Errorf("Endpoint() = %s, want %s", c.Endpoint(), srv.URL+tc.want)
			}
		})
	}
}

func TestPopulateHTTPErrors(t *testing.T) {
	huge := strings.Repeat("x", 100_000)
	tests := []struct {
		name       string
		status     int
		body       string
		wantDetail string
	}{
		{"422 FastAPI detail", http.StatusUnprocessableEntity, `{"detail":"name must not be empty"}`, "name must not be empty"},
		{"422 FastAPI error list", http.StatusUnprocessableEntity, `{"detail":[{"loc":["body","name"],"msg":"field required"}]}`, `[{"loc":["body","name"],"msg":"field required"}]`},
		{"400 error member", http.StatusBadRequest, `{"error":"bad"}`, "bad"},
		{"404 plain text", http.StatusNotFound, "not here\n", "not here"},
		{"500 message", http.StatusInternalServerError, `{"message":"internal error"}`, "internal error"},
		{"500 empty body", http.StatusInternalServerError, "", "Internal Server Error"},
		{"503 multi-line text collapses", http.StatusServiceUnavailable, "down\n  for\tmaintenance", "down for maintenance"},
		{"502 invalid UTF-8", http.StatusBadGateway, "bad \xff\xfe gateway", "bad \uFFFD gateway"},
		{"599 unknown status, empty body", 599, "", "HTTP 599"},
		{"500 huge body is clipped", http.StatusInternalServerError, huge, huge[:maxDetail-len("…")] + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBackend(t, reply(tc.status, tc.body))
			c := newClient(t, Config{URL: srv.URL})
			res, err := c.Populate(context.Background(), validAsset, true)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK || res.Reason != ReasonBackendError || res.Status != tc.status || res.Detail != tc.wantDetail {
				t.Errorf("got {ok:%v reason:%q status:%d detail:%q}, want backend_error %d %q", res.OK, res.Reason, res.Status, clip(res.Detail, 80), tc.status, clip(tc.wantDetail, 80))
			}
			if len(res.Detail) > maxDetail || !utf8.ValidString(res.Detail) {
				t.Errorf("detail of %d bytes (valid UTF-8: %v), want at most %d", len(res.Detail), utf8.ValidString(res.Detail), maxDetail)
			}
			if n := srv.posts.Load(); n != 1 {
				t.Errorf("backend saw %d POSTs, want exactly 1 (no retries)", n)
			}
		})
	}
}

// TestPopulateGarbageSuccessBody: a 2xx that names no id is not a success.
func TestPopulateGarbageSuccessBody(t *testing.T) {
	for _, body := range []string{"<html>ok</html>", "", "[]", `{"id":null}`, `{"id":""}`, `{"name":"x"}`, "\x00\xff", `"xyz"`} {
		srv := newBackend(t, reply(http.StatusCreated, body))
		c := newClient(t, Config{URL: srv.URL})
		res, err := c.Populate(context.Background(), validAsset, true)
		if err != nil {
			t.Fatal(err)
		}
		if res.OK || res.Reason != ReasonBackendError || res.Status != http.StatusCreated || !strings.Contains(res.Detail, "names no id") {
			t.Errorf("body %q: got %+v, want backend_error 201 naming the missing id", body, res)
		}
	}
}

func TestPopulateSlowBackendTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	c := newClient(t, Config{URL: srv.URL, Timeout: 50 * time.Millisecond})
	res, err := c.Populate(context.Background(), validAsset, true)
	if err != nil {
		t.Fatalf("our own timeout must be a result, not an error: %v", err)
	}
	if res.OK || res.Reason != ReasonBackendError || res.Status != http.StatusServiceUnavailable || res.Detail != DetailTimeout {
		t.Errorf("got %+v, want backend_error 503 timeout", res)
	}
	if !errors.Is(res.Cause, context.DeadlineExceeded) {
		t.Errorf("cause %v does not wrap the deadline", res.Cause)
	}
	if n := srv.posts.Load(); n != 1 {
		t.Errorf("backend saw %d POSTs, want 1", n)
	}
}

func TestPopulateDefaultTimeoutIsFiveSeconds(t *testing.T) {
	c := newClient(t, Config{URL: "http://127.0.0.1:1"})
	if c.timeout != 5*time.Second {
		t.Errorf("default timeout %v, want 5s", c.timeout)
	}
}

func TestPopulateSlowResponseBodyTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":`)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	c := newClient(t, Config{URL: srv.URL, Timeout: 50 * time.Millisecond})
	res, err := c.Populate(context.Background(), validAsset, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusServiceUnavailable || res.Detail != DetailTimeout {
		t.Errorf("got %+v, want 503 timeout while reading the body", res)
	}
}

func TestPopulateClosedPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newClient(t, Config{URL: "http://" + addr})
	res, err := c.Populate(context.Background(), validAsset, true)
	if err != nil {
		t.Fatal(err)
	}
	want := Result{Reason: ReasonBackendError, Status: 503, Detail: DetailNetworkUnreachable}
	if res.OK || res.Reason != want.Reason || res.Status != want.Status || res.Detail != want.Detail {
		t.Errorf("got %+v, want %+v", res, want)
	}
	if res.Cause == nil {
		t.Error("no cause recorded for the log")
	}
}

func TestPopulateConnectionDropped(t *testing.T) {
	srv := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	c := newClient(t, Config{URL: srv.URL})
	res, err := c.Populate(context.Background(), validAsset, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != 503 || res.Detail != DetailNetworkUnreachable {
		t.Errorf("got %+v, want 503 network_unreachable", res)
	}
	if n := srv.posts.Load(); n != 1 {
		t.Errorf("backend saw %d POSTs, want 1 (no retries)", n)
	}
}

func TestPopulateDoesNotFollowRedirects(t *testing.T) {
	target := newBackend(t, reply(http.StatusCreated, `{"id":"moved"}`))
	srv := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/elsewhere", http.StatusTemporaryRedirect)
	})
	c := newClient(t, Config{URL: srv.URL})
	res, err := c.Populate(context.Background(), validAsset, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.Status != http.StatusTemporaryRedirect || target.posts.Load() != 0 {
		t.Errorf("got %+v and %d POSTs at the target; want backend_error 307 and none", res, target.posts.Load())
	}
}

// TestPopulateValidation: validation runs before every POST, with
// validate_first true or false, and an invalid asset never reaches the backend.
func TestPopulateValidation(t *testing.T) {
	tests := []struct {
		name          string
		asset         any
		validateFirst bool
		wantOK        bool
		wantErrors    []Violation
	}{
		{"valid, validate_first", validAsset, true, true, nil},
		{"valid, no validate_first", validAsset, false, true, nil},
		{"invalid, validate_first", map[string]any{"shader": 1}, true, false,
			[]Violation{{Path: "", Msg: "missing property 'name'"}, {Path: "/shader", Msg: "expected object"}}},
		{"invalid, no validate_first: still refused", map[string]any{"shader": 1}, false, false,
			[]Violation{{Path: "", Msg: "missing property 'name'"}, {Path: "/shader", Msg: "expected object"}}},
		{"not an object", []any{1}, false, false, []Violation{{Path: "", Msg: "expected object"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newBackend(t, reply(http.StatusCreated, `{"id":"v"}`))
			var validated atomic.Int32
			c, err := New(Config{URL: srv.URL}, func(asset any) (bool, []Violation) {
				validated.Add(1)
				if srv.posts.Load() != 0 {
					t.Error("validation ran after the POST")
				}
				return acceptNamed(asset)
			})
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Populate(context.Background(), tc.asset, tc.validateFirst)
			if err != nil {
				t.Fatal(err)
			}
			if res.OK != tc.wantOK {
				t.Fatalf("got %+v, want ok=%v", res, tc.wantOK)
			}
			if validated.Load() != 1 {
				t.Errorf("validator ran %d times, want 1", validated.Load())
			}
			wantPosts := int32(0)
			if tc.wantOK {
				wantPosts = 1
			} else {
				if res.Reason != ReasonValidationFailed || mustJSON(t, res.Errors) != mustJSON(t, tc.wantErrors) {
					t.Errorf("got %+v, want validation_failed with %v", res, tc.wantErrors)
				}
			}
			if n := srv.posts.Load(); n != wantPosts {
				t.Errorf("backend saw %d POSTs, want %d", n, wantPosts)
			}
		})
	}
}

func TestPopulateInvalidWithoutViolationsStillExplains(t *testing.T) {
	srv := newBackend(t, reply(http.StatusCreated, `{"id":"v"}`))
	c, err := New(Config{URL: srv.URL}, func(any) (bool, []Violation) { return false, nil })
	if err != nil {
		t.Fatal(err)
	}
	res, _ := c.Populate(context.Background(), validAsset, true)
	if res.Reason != ReasonValidationFailed || len(res.Errors) != 1 || res.Errors[0].Msg == "" || srv.posts.Load() != 0 {
		t.Errorf("got %+v with %d POSTs, want validation_failed with one explicit error and no POST", res, srv.posts.Load())
	}
}

func TestPopulateGuardsSize(t *testing.T) {
	srv := newBackend(t, reply(http.StatusCreated, `{"id":"v"}`))
	c := newClient(t, Config{URL: srv.URL})
	big := map[string]any{"name": strings.Repeat("y", MaxAssetBytes)}
	res, err := c.Populate(context.Background(), big, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != ReasonValidationFailed || mustJSON(t, res.Errors) != `[{"path":"","msg":"payload_too_large"}]` || srv.posts.Load() != 0 {
		t.Errorf("got %+v, want payload_too_large and no POST", res)
	}
	// HTML characters are not counted as their \u003c escapes.
	justUnder := map[string]any{"name": strings.Repeat("<", MaxAssetBytes-len(`{"name":""}`))}
	if res, _ := c.Populate(context.Background(), justUnder, false); !res.OK {
		t.Errorf("asset of exactly 1 MiB refused: %+v", res)
	}
}

func TestPopulateUnencodableAsset(t *testing.T) {
	srv := newBackend(t, reply(http.StatusCreated, `{"id":"v"}`))
	c := newClient(t, Config{URL: srv.URL})
	res, err := c.Populate(context.Background(), map[string]any{"name": func() {}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != ReasonValidationFailed || srv.posts.Load() != 0 {
		t.Errorf("got %+v, want validation_failed and no POST", res)
	}
}

func TestPopulateDisabled(t *testing.T) {
	called := false
	c, err := New(Config{}, func(any) (bool, []Violation) { called = true; return true, nil })
	if err != nil {
		t.Fatal(err)
	}
	if c.Enabled() || c.Endpoint() != "" {
		t.Error("a client without URL claims to be enabled")
	}
	res, err := c.Populate(context.Background(), validAsset, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, res); got != `{"ok":false,"reason":"unsupported","detail":"backend disabled: SYN_BACKEND_URL is not set"}` {
		t.Errorf("got %s", got)
	}
	if called {
		t.Error("validator ran for a disabled backend")
	}
}

func TestPopulateCallerCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		cancel() // the client gives up while the backend works
		<-r.Context().Done()
	})
	c := newClient(t, Config{URL: srv.URL})
	res, err := c.Populate(ctx, validAsset, true)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %+v, %v; want context.Canceled", res, err)
	}

	// Already cancelled: nothing is sent.
	quiet := newBackend(t, reply(http.StatusCreated, `{"id":"v"}`))
	c = newClient(t, Config{URL: quiet.URL})
	if _, err := c.Populate(ctx, validAsset, true); !errors.Is(err, context.Canceled) || quiet.posts.Load() != 0 {
		t.Errorf("cancelled call: %v with %d POSTs, want context.Canceled and none", err, quiet.posts.Load())
	}
}

func TestResultJSON(t *testing.T) {
	tests := []struct {
		res  Result
		want string
	}{
		{Result{OK: true, AssetID: "a", BackendURL: "http://b", Cause: errors.New("never sent")}, `{"ok":true,"asset_id":"a","backend_url":"http://b"}`},
		{Result{Reason: ReasonBackendError, Status: 500, Detail: "internal error"}, `{"ok":false,"reason":"backend_error","status":500,"detail":"internal error"}`},
		{Result{Reason: ReasonBackendError, Status: 503, Detail: DetailNetworkUnreachable}, `{"ok":false,"reason":"backend_error","status":503,"detail":"network_unreachable"}`},
		{Result{Reason: ReasonValidationFailed, Errors: []Violation{{Path: "/a", Msg: "m"}}}, `{"ok":false,"reason":"validation_failed","errors":[{"path":"/a","msg":"m"}]}`},
	}
	for _, tc := range tests {
		if got := mustJSON(t, tc.res); got != tc.want {
			t.Errorf("got %s, want %s", got, tc.want)
		}
	}
}

func TestBackendURLHidesPassword(t *testing.T) {
	srv := newBackend(t, func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"id":"auth"}`)
	})
	withAuth := strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1)
	c := newClient(t, Config{URL: withAuth})
	res, err := c.Populate(context.Background(), validAsset, true)
	if err != nil || !res.OK {
		t.Fatalf("got %+v, %v", res, err)
	}
	if strings.Contains(res.BackendURL, "s3cret") || strings.Contains(c.Endpoint(), "s3cret") || !strings.Contains(res.BackendURL, "user:") {
		t.Errorf("backend_url %q / endpoint %q: password must be redacted", res.BackendURL, c.Endpoint())
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		v    Validator
		want string
	}{
		{"nil validator", Config{URL: "http://x"}, nil, "validator is required"},
		{"nil validator even when disabled", Config{}, nil, "validator is required"},
		{"not a URL", Config{URL: "::nope"}, acceptNamed, "not an absolute http(s) URL"},
		{"relative", Config{URL: "localhost:8000"}, acceptNamed, "not an absolute http(s) URL"},
		{"other scheme", Config{URL: "ftp://host/"}, acceptNamed, "not an absolute http(s) URL"},
		{"no host", Config{URL: "http://"}, acceptNamed, "not an absolute http(s) URL"},
		{"query", Config{URL: "http://host/?a=1"}, acceptNamed, "query or fragment"},
		{"password not echoed", Config{URL: "ftp://u:hunter2@host/"}, acceptNamed, "u:xxxxx@host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg, tc.v)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv(EnvURL, " http://127.0.0.1:8000 ")
	t.Setenv(EnvAssetsPath, "/custom/")
	cfg := ConfigFromEnv(os.Getenv)
	if cfg.URL != "http://127.0.0.1:8000" || cfg.AssetsPath != "/custom/" {
		t.Errorf("got %+v", cfg)
	}
	t.Setenv(EnvURL, "")
	if c := newClient(t, ConfigFromEnv(os.Getenv)); c.Enabled() {
		t.Error("empty SYN_BACKEND_URL enabled the backend")
	}
}
