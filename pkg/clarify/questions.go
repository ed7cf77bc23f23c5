package clarify

import (
	"fmt"
	"slices"
	"strings"
)

// Question types, as replies name them.
const (
	SingleChoice = "single_choice"
	MultiChoice  = "multi_choice"
	FreeText     = "free_text"
)

// Other is the option that takes the user's own answer.
const Other = "Other (specify)"

// MaxQuestions bounds the questions one session asks, over all its turns.
const MaxQuestions = 5

// Question is one clarification question. DependsOn/DependsValue make it
// conditional: it is asked only once the question it depends on was
// answered with that value, and clients never see the dependency.
type Question struct {
	ID            string   `json:"id"`
	Type          string   `json:"type"`
	Question      string   `json:"question"`
	Options       []string `json:"options,omitempty"`
	MinSelections int      `json:"min_selections,omitempty"`
	Optional      bool     `json:"optional,omitempty"`

	DependsOn    string `json:"-"`
	DependsValue string `json:"-"`
	// Category and Key place the answer in the architecture snapshot
	// (Authentication / Strategy); empty for questions that only shape the
	// task.
	Category string `json:"-"`
	Key      string `json:"-"`
}

// visibleTo reports whether a conditional question's condition holds.
func (q Question) visibleTo(answers map[string]any) bool {
	if q.DependsOn == "" {
		return true
	}
	switch v := answers[q.DependsOn].(type) {
	case string:
		return v == q.DependsValue
	case []string:
		return slices.Contains(v, q.DependsValue)
	}
	return false
}

// check validates one answer against its question and returns it
// normalised: a string, or a []string for multi choice. An answer that is
// not among the options is the user's own when the question offers Other
// (specify); the bare Other option is kept and asks its follow-up.
func (q Question) check(v any) (any, error) {
	switch q.Type {
	case SingleChoice:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want one option as a string")
		}
		return q.choice(s)
	case MultiChoice:
		raw, ok := v.([]any)
		if !ok {
			if s, isStr := v.(string); isStr { // one selection given bare
				raw = []any{s}
			} else {
				return nil, fmt.Errorf("want an array of options")
			}
		}
		var out []string
		for _, item := range raw {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("every selection must be a string")
			}
			c, err := q.choice(s)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, c.(string)) {
				out = append(out, c.(string))
			}
		}
		if min := max(q.MinSelections, 1); len(out) < min && !(q.Optional && len(out) == 0) {
			return nil, fmt.Errorf("select at least %d option(s)", min)
		}
		return out, nil
	default:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want text")
		}
		s = strings.TrimSpace(s)
		if s == "" && !q.Optional {
			return nil, fmt.Errorf("the answer is empty")
		}
		if len(s) > 4000 {
			return nil, fmt.Errorf("the answer is longer than 4000 characters")
		}
		return s, nil
	}
}

func (q Question) choice(s string) (any, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("the answer is empty")
	}
	for _, o := range q.Options {
		if strings.EqualFold(o, s) {
			return o, nil
		}
	}
	if rest, ok := cutOther(s); ok && slices.Contains(q.Options, Other) {
		return rest, nil
	}
	if slices.Contains(q.Options, Other) && len(s) <= 200 {
		return s, nil
	}
	return nil, fmt.Errorf("%q is not one of the options %s", s, strings.Join(q.Options, ", "))
}

// cutOther reads "Other: X" / "Other (specify): X" as X.
func cutOther(s string) (string, bool) {
	for _, p := range []string{Other + ":", "Other:"} {
		if len(s) > len(p) && strings.EqualFold(s[:len(p)], p) {
			if rest := strings.TrimSpace(s[len(p):]); rest != "" {
				return rest, true
			}
		}
	}
	return "", false
}

// answerText renders a normalised answer for documents.
func answerText(v any) string {
	switch a := v.(type) {
	case string:
		return a
	case []string:
		return strings.Join(a, ", ")
	}
	return fmt.Sprint(v)
}
