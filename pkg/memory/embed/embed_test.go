package embed

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestEmbed(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{"ok", 200, `{"model":"m","embeddings":[[0.1,0.2],[0.3,0.4]]}`, ""},
		{"server error", 500, `{"error":"boom"}`, "500"},
		{"not json", 200, `nope`, "not Ollama's shape"},
		{"count", 200, `{"embeddings":[[0.1,0.2]]}`, "1 vectors for 2 inputs"},
		{"dimensions", 200, `{"embeddings":[[0.1,0.2],[0.3]]}`, "dimension"},
		{"empty", 200, `{"embeddings":[[],[]]}`, "dimension"},
		{"zero", 200, `{"embeddings":[[0,0],[1,1]]}`, "zero vector"},
		{"too big for float32", 200, `{"embeddings":[[1e300,1],[1,1]]}`, "non-finite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var req struct {
					Model string   `json:"model"`
					Input []string `json:"input"`
				}
				if r.URL.Path != "/api/embed" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "m" || len(req.Input) != 2 {
					http.Error(w, "bad request shape", 400)
					return
				}
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			c, err := New(srv.URL, "m") // the bare server URL gets /api/embed
			if err != nil {
				t.Fatal(err)
			}
			vecs, err := c.Embed(context.Background(), []string{"a", "b"})
			if tc.wantErr == "" {
				if err != nil || len(vecs) != 2 || vecs[1][1] != float32(0.4) {
					t.Fatalf("Embed = %v, %v", vecs, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Embed error = %v, want one mentioning %q", err, tc.wantErr)
			}
		})
	}
}

func TestNoPasswordInErrors(t *testing.T) {
	c, err := New("http://user:s3cret@127.0.0.1:1/api/embed", "m")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Embed(context.Background(), []string{"x"})
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(c.String(), "s3cret") {
		t.Fatalf("error %v / name %s must not carry the password", err, c)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct{ url, model string }{{"", "m"}, {"ftp://x/api/embed", "m"}, {"localhost:11434", "m"}, {"http://x", ""}} {
		if _, err := New(tc.url, tc.model); err == nil {
			t.Errorf("New(%q, %q) accepted", tc.url, tc.model)
		}
	}
}
