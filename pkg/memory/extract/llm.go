package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/hearth-mcp/hearth/pkg/llm"
	"github.com/hearth-mcp/hearth/pkg/memory/store"
)

// LLM asks a language model for a memory's entities and relations, with the
// provider settings and retry rule of package llm. A reply is accepted only
// if it is well formed (see check); the caller falls back to Rules when it
// is not, after llm.Retries more attempts.
type LLM struct {
	Chat llm.Chatter
}

// Name names the extractor after its provider.
func (l LLM) Name() string { return "llm/" + l.Chat.Name() }

// maxLLMText is the most of a memory sent to the model, in characters.
const maxLLMText = 8000

// Limits of an accepted reply.
const (
	maxLLMEntities = 64
	maxNameLen     = 200
)

const llmSystem = `You extract a knowledge graph from a note.
Answer with JSON only: {"entities": [{"name": string, "type": string}], "relations": [{"from": string, "to": string, "type": string}]}
Entities are the people, organisations, places, projects, software, files, URLs and concepts the note names, with their names as written.
Types are one lowercase word (person, organization, place, project, software, file, url, concept).
Relations connect two of those entities, in active voice, typed in snake_case (uses, depends_on, works_at, part_of).
At most 64 entities. No entity or relation the note does not state.`

type llmReply struct {
	Entities []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"entities"`
	Relations []struct {
		From string `json:"from"`
		To   string `json:"to"`
		Type string `json:"type"`
	} `json:"relations"`
}

var relTypeRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// check accepts a reply whose entities have names and types, whose
// relations join two of its entities with a snake_case type.
func (r *llmReply) check() error {
	if len(r.Entities) > maxLLMEntities {
		return fmt.Errorf("%d entities, at most %d", len(r.Entities), maxLLMEntities)
	}
	known := map[string]bool{}
	for _, e := range r.Entities {
		if strings.TrimSpace(e.Name) == "" || utf8.RuneCountInString(e.Name) > maxNameLen || strings.TrimSpace(e.Type) == "" {
			return fmt.Errorf("an entity without a name or type, or named at length: %q", e.Name)
		}
		known[strings.TrimSpace(e.Name)] = true
	}
	for _, rel := range r.Relations {
		if !known[strings.TrimSpace(rel.From)] || !known[strings.TrimSpace(rel.To)] {
			return fmt.Errorf("relation %q→%q names an entity it did not list", rel.From, rel.To)
		}
		if !relTypeRE.MatchString(normalType(rel.Type)) {
			return fmt.Errorf("relation type %q is not snake_case", rel.Type)
		}
	}
	return nil
}

func normalType(t string) string {
	return strings.ToLower(strings.Join(strings.Fields(strings.TrimSpace(t)), "_"))
}

// Extract asks the model; an error means every attempt failed.
func (l LLM) Extract(ctx context.Context, text string) (Result, error) {
	if utf8.RuneCountInString(text) > maxLLMText {
		text = string([]rune(text)[:maxLLMText])
	}
	user, _ := json.Marshal(map[string]string{"note": text})
	reply, err := llm.Ask(ctx, l.Chat, llmSystem, string(user), (*llmReply).check)
	if err != nil {
		return Result{}, err
	}
	var res Result
	seen := map[string]bool{}
	for _, e := range reply.Entities {
		name := strings.TrimSpace(e.Name)
		if !seen[name] {
			seen[name] = true
			res.Entities = append(res.Entities, store.Entity{Name: name, Type: strings.ToLower(strings.TrimSpace(e.Type)), Observations: []string{}})
		}
	}
	seenRel := map[store.Relation]bool{}
	for _, r := range reply.Relations {
		rel := store.Relation{From: strings.TrimSpace(r.From), To: strings.TrimSpace(r.To), Type: normalType(r.Type)}
		if !seenRel[rel] {
			seenRel[rel] = true
			res.Relations = append(res.Relations, rel)
		}
	}
	return res, nil
}
