package validate

import (
	"errors"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Violation is one schema violation: where in the instance, and what is wrong.
// Its JSON is the validation error object of validate_asset's errors and of
// INVALID_REQUEST's "errors" field (docs/protocol.md).
type Violation struct {
	// Path is an absolute RFC 6901 JSON Pointer into the instance ("" is the root).
	Path string `json:"path"`
	// Msg says what is wrong, without echoing large values.
	Msg string `json:"msg"`
}

func (v Violation) String() string {
	if v.Path == "" {
		return "(root): " + v.Msg
	}
	return v.Path + ": " + v.Msg
}

var printer = message.NewPrinter(language.English)

// maxViolationMsg bounds one message: a const or enum error may quote a value.
const maxViolationMsg = 200

// violations flattens a full validator's error into its leaves, sorted by
// path then message, duplicates removed; override replaces the messages of
// leaves its "<pointer> <keyword>" keys name (see Schema.Validate). Any other
// error becomes one violation at the root.
func violations(err error, override map[string]string) []Violation {
	var nr *numberRangeError
	if errors.As(err, &nr) {
		return []Violation{{Path: nr.Path, Msg: nr.Error()}}
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Violation{{Path: "", Msg: truncate(err.Error(), maxViolationMsg)}}
	}
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			path := pointer(e.InstanceLocation)
			msg := truncate(e.ErrorKind.LocalizedString(printer), maxViolationMsg)
			if kw := e.ErrorKind.KeywordPath(); len(kw) > 0 && override != nil {
				if m, ok := override[path+" "+kw[len(kw)-1]]; ok {
					msg = m
				}
			}
			out = append(out, Violation{Path: path, Msg: msg})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Msg < out[j].Msg
	})
	dedup := out[:0]
	for i, v := range out {
		if i > 0 && v == out[i-1] {
			continue
		}
		dedup = append(dedup, v)
	}
	return dedup
}

// pointer builds an RFC 6901 JSON Pointer from reference tokens.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
