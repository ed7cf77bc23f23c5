// Package llm is the one way hearth talks to a language model: the provider
// settings every family shares (an Ollama server, OpenAI, or any
// OpenAI-compatible server), one system+user exchange answered in JSON, and
// the retry rule. The clarification family plans with it and the memory
// family extracts graphs with it; both fall back to their deterministic code
// after Retries failed attempts, and say so in their reply ("llm_fallback").
// Without a provider nothing leaves the machine.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
)

// The settings, as the Preflights CLI names them (docs/reference.md's
// configuration table; pkg/config/keys lists them as llm_*).
const (
	EnvProvider = "PREFLIGHTS_LLM_PROVIDER" // "ollama", "openai", or an OpenAI-compatible base URL
	EnvURL      = "PREFLIGHTS_LLM_URL"      // the server (ollama: http://localhost:11434; openai: https://api.openai.com/v1)
	EnvModel    = "PREFLIGHTS_LLM_MODEL"    // required for a real provider
	EnvKey      = "PREFLIGHTS_LLM_API_KEY"  // bearer token for OpenAI-compatible servers
	EnvTimeout  = "PREFLIGHTS_LLM_TIMEOUT"  // one attempt's limit, e.g. 20s
)

// Retries is how often a failed exchange is retried before the caller's
// deterministic code takes over.
const Retries = 2

// The fallback a reply carries when deterministic code stood in for a model
// that failed: its "warning" and "message" members.
const (
	FallbackWarning = "llm_fallback"
	FallbackMessage = "LLM unavailable, using deterministic mode"
)

// Chatter sends one system+user exchange and returns the model's text.
type Chatter interface {
	Chat(ctx context.Context, system, user string) (string, error)
	Name() string
}

// FromEnv reads the provider from the settings. nil, nil: none configured
// (or "mock"), so callers use their deterministic code.
func FromEnv(getenv func(string) string) (Chatter, error) {
	provider := strings.TrimSpace(getenv(EnvProvider))
	if provider == "" || strings.EqualFold(provider, "mock") {
		return nil, nil
	}
	model := getenv(EnvModel)
	if model == "" {
		return nil, fmt.Errorf("%s=%s needs %s", EnvProvider, provider, EnvModel)
	}
	timeout := keys.DefaultLLMTimeout
	if v := getenv(EnvTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s=%q: want a duration such as 20s", EnvTimeout, v)
		}
		timeout = d
	}
	client := &http.Client{Timeout: timeout}
	url := strings.TrimRight(getenv(EnvURL), "/")
	switch {
	case strings.EqualFold(provider, "ollama"):
		if url == "" {
			url = "http://localhost:11434"
		}
		return &ollama{url: url, model: model, http: client}, nil
	case strings.EqualFold(provider, "openai"):
		if url == "" {
			url = "https://api.openai.com/v1"
		}
	case strings.HasPrefix(provider, "http://"), strings.HasPrefix(provider, "https://"):
		url = strings.TrimRight(provider, "/")
	default:
		return nil, fmt.Errorf("%s=%q: want ollama, openai or an OpenAI-compatible URL", EnvProvider, provider)
	}
	return &openAI{url: url, model: model, key: getenv(EnvKey), http: client}, nil
}

type ollama struct {
	url, model string
	http       *http.Client
}

func (o *ollama) Name() string { return "ollama" }

func (o *ollama) Chat(ctx context.Context, system, user string) (string, error) {
	var out struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	err := postJSON(ctx, o.http, o.url+"/api/chat", "", map[string]any{
		"model": o.model, "stream": false, "format": "json",
		"messages": []map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}},
	}, &out)
	return out.Message.Content, err
}

type openAI struct {
	url, model, key string
	http            *http.Client
}

func (o *openAI) Name() string { return "openai-compatible" }

func (o *openAI) Chat(ctx context.Context, system, user string) (string, error) {
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	err := postJSON(ctx, o.http, o.url+"/chat/completions", o.key, map[string]any{
		"model": o.model, "response_format": map[string]string{"type": "json_object"},
		"messages": []map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}},
	}, &out)
	if err == nil && len(out.Choices) == 0 {
		err = errors.New("the reply has no choices")
	}
	if err != nil {
		return "", err
	}
	return out.Choices[0].Message.Content, nil
}

func postJSON(ctx context.Context, c *http.Client, url, key string, body, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return json.Unmarshal(data, out)
}

// Ask runs one exchange and decodes its JSON into a value that check
// accepts, trying 1 + Retries times.
func Ask[T any](ctx context.Context, c Chatter, system, user string, check func(*T) error) (T, error) {
	var zero T
	var last error
	for attempt := 0; attempt <= Retries; attempt++ {
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		text, err := c.Chat(ctx, system, user)
		if err == nil {
			var v T
			if err = json.Unmarshal([]byte(ExtractJSON(text)), &v); err == nil {
				if err = check(&v); err == nil {
					return v, nil
				}
			}
		}
		last = err
	}
	return zero, fmt.Errorf("%s failed %d times; last: %w", c.Name(), Retries+1, last)
}

// ExtractJSON takes the outermost {...} of a reply (models wrap JSON in
// prose or code fences).
func ExtractJSON(s string) string {
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return s
	}
	return s[i : j+1]
}
