package tool

import (
	"errors"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Violation is one schema violation: where in the instance, and what is wrong.
// The JSON shape is the schema tools' validation error object, {"path", "msg"}.
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

// SchemaViolations flattens a jsonschema validation error into its leaves,
// sorted by path then message, duplicates removed. Any other error becomes one
// violation at the root.
func SchemaViolations(err error) []Violation { return schemaViolations(err, nil) }

// schemaViolations is SchemaViolations with messages overridden by
// "<pointer> <keyword>" keys (see Tool.ArgMessages).
func schemaViolations(err error, override map[string]string) []Violation {
	var nr *NumberRangeError
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
			path := Pointer(e.InstanceLocation)
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

// Pointer builds an RFC 6901 JSON Pointer from reference tokens.
func Pointer(tokens []string) string {
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
