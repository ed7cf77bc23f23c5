package clarify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The LLM configuration: the same variables as the Preflights CLI. Without
// PREFLIGHTS_LLM_PROVIDER the deterministic planner is used and nothing
// leaves the machine.
const (
	EnvLLMProvider = "PREFLIGHTS_LLM_PROVIDER" // "ollama", "openai", or an OpenAI-compatible base URL
	EnvLLMURL      = "PREFLIGHTS_LLM_URL"      // the server (ollama: http://localhost:11434; openai: https://api.openai.com/v1)
	EnvLLMModel    = "PREFLIGHTS_LLM_MODEL"    // required for a real provider
	EnvLLMKey      = "PREFLIGHTS_LLM_API_KEY"  // bearer token for OpenAI-compatible servers
	EnvLLMTimeout  = "PREFLIGHTS_LLM_TIMEOUT"  // one attempt's limit, e.g. 20s
)

// llmRetries is how often a failed LLM call is retried before the
// deterministic planner takes over and the reply carries the llm_fallback
// warning.
const llmRetries = 2

// chatter sends one system+user exchange and returns the model's text.
type chatter interface {
	chat(ctx context.Context, system, user string) (string, error)
	name() string
}

// llmConfig reads the provider from the environment. nil: none configured.
func llmConfig(getenv func(string) string) (chatter, error) {
	provider := strings.TrimSpace(getenv(EnvLLMProvider))
	if provider == "" || strings.EqualFold(provider, "mock") {
		return nil, nil
	}
	model := getenv(EnvLLMModel)
	if model == "" {
		return nil, fmt.Errorf("%s=%s needs %s", EnvLLMProvider, provider, EnvLLMModel)
	}
	timeout := 20 * time.Second
	if v := getenv(EnvLLMTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%s=%q: want a duration such as 20s", EnvLLMTimeout, v)
		}
		timeout = d
	}
	client := &http.Client{Timeout: timeout}
	url := strings.TrimRight(getenv(EnvLLMURL), "/")
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
		return nil, fmt.Errorf("%s=%q: want ollama, openai or an OpenAI-compatible URL", EnvLLMProvider, provider)
	}
	return &openAI{url: url, model: model, key: getenv(EnvLLMKey), http: client}, nil
}

type ollama struct {
	url, model string
	http       *http.Client
}

func (o *ollama) name() string { return "ollama" }

func (o *ollama) chat(ctx context.Context, system, user string) (string, error) {
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

func (o *openAI) name() string { return "openai-compatible" }

func (o *openAI) chat(ctx context.Context, system, user string) (string, error) {
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

// withRetries runs one LLM exchange and decodes its JSON into a value that
// check accepts, trying 1 + llmRetries times.
func withRetries[T any](ctx context.Context, c chatter, system, user string, check func(*T) error) (T, error) {
	var zero T
	var last error
	for attempt := 0; attempt <= llmRetries; attempt++ {
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		text, err := c.chat(ctx, system, user)
		if err == nil {
			var v T
			if err = json.Unmarshal([]byte(extractJSON(text)), &v); err == nil {
				if err = check(&v); err == nil {
					return v, nil
				}
			}
		}
		last = err
	}
	return zero, fmt.Errorf("%s failed %d times; last: %w", c.name(), llmRetries+1, last)
}

// extractJSON takes the outermost {...} of a reply (models wrap JSON in
// prose or code fences).
func extractJSON(s string) string {
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j < i {
		return s
	}
	return s[i : j+1]
}

const planSystem = `You help a software team decide whether a change request needs an Architecture Decision Record (ADR) and what to ask before work starts.
An ADR is needed for: authentication, database, storage, cache, framework, runtime, deployment, infrastructure, queue/messaging choices; new dependencies; migrations or cross-cutting changes; requests mentioning architecture, strategy or approach. Not for bug fixes, refactors within existing patterns, or config-only changes.
Answer with JSON only: {"needs_adr": bool, "categories": [string], "decision_hint": string, "missing_info": [string],
"questions": [{"id": "snake_case", "type": "single_choice"|"multi_choice"|"free_text", "question": string, "options": [string], "min_selections": int, "optional": bool, "category": string, "key": string}]}
At most 5 questions. Choice questions have 2 to 10 options and may end with "Other (specify)". category and key name where the answer goes in the architecture snapshot (e.g. "Authentication", "Strategy").`

type llmPlan struct {
	NeedsADR     bool     `json:"needs_adr"`
	Categories   []string `json:"categories"`
	DecisionHint string   `json:"decision_hint"`
	MissingInfo  []string `json:"missing_info"`
	Questions    []struct {
		ID            string   `json:"id"`
		Type          string   `json:"type"`
		Question      string   `json:"question"`
		Options       []string `json:"options"`
		MinSelections int      `json:"min_selections"`
		Optional      bool     `json:"optional"`
		Category      string   `json:"category"`
		Key           string   `json:"key"`
	} `json:"questions"`
}

var questionID = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

func (p *llmPlan) check() error {
	if len(p.Questions) > MaxQuestions {
		return fmt.Errorf("%d questions, at most %d", len(p.Questions), MaxQuestions)
	}
	if p.NeedsADR && len(p.Questions) == 0 {
		return errors.New("an ADR with no questions")
	}
	seen := map[string]bool{}
	for _, q := range p.Questions {
		if !questionID.MatchString(q.ID) || seen[q.ID] {
			return fmt.Errorf("bad or repeated question id %q", q.ID)
		}
		seen[q.ID] = true
		if strings.TrimSpace(q.Question) == "" {
			return fmt.Errorf("question %s has no text", q.ID)
		}
		switch q.Type {
		case SingleChoice, MultiChoice:
			if len(q.Options) < 2 || len(q.Options) > 10 || slices.Contains(q.Options, "") {
				return fmt.Errorf("question %s needs 2 to 10 non-empty options", q.ID)
			}
		case FreeText:
		default:
			return fmt.Errorf("question %s has type %q", q.ID, q.Type)
		}
	}
	return nil
}

func (p *llmPlan) plan() Plan {
	out := Plan{NeedsADR: p.NeedsADR, Categories: p.Categories, DecisionHint: p.DecisionHint, MissingInfo: p.MissingInfo}
	for _, q := range p.Questions {
		cat := q.Category
		if cat == "" && len(p.Categories) > 0 {
			cat = p.Categories[0]
		}
		if cat == "" {
			cat = "Decisions"
		}
		key := q.Key
		if key == "" {
			key = humanize(q.ID)
		}
		out.Questions = append(out.Questions, Question{ID: q.ID, Type: q.Type, Question: q.Question, Options: q.Options,
			MinSelections: q.MinSelections, Optional: q.Optional, Category: cat, Key: key})
	}
	return out
}

const extractSystem = `You turn a clarified change request into architecture decisions.
Answer with JSON only: {"title": string, "summary": string, "decisions": {"<Category>": {"<Key>": "<value>"}}}
Use the categories and keys given with the answers; values are short (a name or a phrase).`

type llmExtract struct {
	Title     string                       `json:"title"`
	Summary   string                       `json:"summary"`
	Decisions map[string]map[string]string `json:"decisions"`
}

func (x *llmExtract) check() error {
	if len(x.Decisions) == 0 {
		return errors.New("no decisions")
	}
	for c, kv := range x.Decisions {
		if strings.TrimSpace(c) == "" || len(kv) == 0 {
			return errors.New("an empty category")
		}
		for k, v := range kv {
			if strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
				return fmt.Errorf("an empty key or value in %s", c)
			}
		}
	}
	return nil
}

func humanize(id string) string {
	s := strings.ReplaceAll(id, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// planPrompt and extractPrompt are the user messages.
func planPrompt(intention, context string, current Snapshot) string {
	b, _ := json.Marshal(map[string]any{"user_intention": intention, "optional_context": context, "current_architecture": current})
	return string(b)
}

func extractPrompt(intention string, answers [][4]string) string {
	type qa struct{ Question, Answer, Category, Key string }
	list := make([]qa, len(answers))
	for i, a := range answers {
		list[i] = qa{a[0], a[1], a[2], a[3]}
	}
	b, _ := json.Marshal(map[string]any{"user_intention": intention, "answers": list})
	return string(b)
}
