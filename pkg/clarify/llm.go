package clarify

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/llm"
)

// The LLM configuration: the same variables as the Preflights CLI (package
// llm, which the memory graph's extractor shares). Without
// PREFLIGHTS_LLM_PROVIDER the deterministic planner is used and nothing
// leaves the machine.
const (
	EnvLLMProvider = llm.EnvProvider
	EnvLLMURL      = llm.EnvURL
	EnvLLMModel    = llm.EnvModel
	EnvLLMKey      = llm.EnvKey
	EnvLLMTimeout  = llm.EnvTimeout
)

// llmRetries is how often a failed LLM call is retried before the
// deterministic planner takes over and the reply carries the llm_fallback
// warning.
const llmRetries = llm.Retries

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
