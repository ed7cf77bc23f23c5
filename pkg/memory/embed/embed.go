// Package embed computes text embeddings through an Ollama server's /api/embed
// endpoint: POST {"model": m, "input": [texts]} → {"embeddings": [[floats]]}.
// It checks the answer as strictly as a request: one finite, non-empty vector
// per input, all of the same dimension; anything else is an error, never a
// vector that would silently poison the ranking.
package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"time"
)

// maxResponse bounds what we read from the server: 256 inputs of 8192 floats
// printed at ~20 bytes each is 40 MiB.
const maxResponse = 64 << 20

// Client talks to one embedding server and model.
type Client struct {
	url      string
	redacted string // url without any password, for errors and logs
	model    string
	http     *http.Client
}

// New returns a client for an Ollama-compatible endpoint and model. endpoint is
// the URL of /api/embed (http://localhost:11434/api/embed); a bare server URL
// (http://localhost:11434) gets that path added.
func New(endpoint, model string) (*Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("embedding URL must be an absolute http(s) URL")
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/api/embed"
	}
	if model == "" {
		return nil, errors.New("embedding model is empty")
	}
	return &Client{url: u.String(), redacted: u.Redacted(), model: model, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// String names the endpoint without its password.
func (c *Client) String() string { return c.redacted + " model " + c.model }

// Model names the model vectors come from.
func (c *Client) Model() string { return c.model }

// Embed returns one vector per text, in order.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{c.model, texts})
	if err != nil {
		return nil, fmt.Errorf("encode embedding request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embedding request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		// A *url.Error quotes the full URL, password included: keep only its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("embedding server %s: %w", c.redacted, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("read embedding response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embedding server answered %s", resp.Status)
	}
	if len(raw) > maxResponse {
		return nil, errors.New("embedding response too large")
	}
	var out struct {
		Embeddings [][]float64 `json:"embeddings"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("embedding response is not Ollama's shape: %w", err)
	}
	if len(out.Embeddings) != len(texts) {
		return nil, fmt.Errorf("embedding server returned %d vectors for %d inputs", len(out.Embeddings), len(texts))
	}
	dim := len(out.Embeddings[0])
	vecs := make([][]float32, len(texts))
	for i, e := range out.Embeddings {
		if len(e) == 0 || len(e) != dim {
			return nil, fmt.Errorf("embedding %d has dimension %d, want %d (non-zero)", i, len(e), dim)
		}
		v := make([]float32, dim)
		var norm float64
		for j, x := range e {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
				return nil, fmt.Errorf("embedding %d has a non-finite value", i)
			}
			v[j] = float32(x)
			norm += x * x
		}
		if norm == 0 {
			return nil, fmt.Errorf("embedding %d is the zero vector", i)
		}
		vecs[i] = v
	}
	return vecs, nil
}
