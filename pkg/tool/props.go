package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Property is one argument of an input schema: its name and its JSON
// Schema, as JSON text with a type (or typed anyOf branches), a title and a
// description. The arguments several tools take (RepoPath, Limit,
// TimeoutMS, AnyValue) are defined here, once, so that they cannot drift
// apart from one family to the next.
type Property struct {
	Name     string
	Schema   string
	required bool
}

// Prop is a property from its schema's JSON text.
func Prop(name, schema string) Property { return Property{Name: name, Schema: schema} }

// Required is the property as a required argument.
func (p Property) Required() Property {
	p.required = true
	return p
}

// Object is an input schema: Draft 2020-12, "type": "object", the
// properties in the order given, the required ones listed, and
// "additionalProperties": false. It panics when a property's schema is not
// a JSON object: a programming error, which any test building it finds.
func Object(props ...Property) json.RawMessage { return object(`,"additionalProperties":false`, props) }

// Output is an output schema (Tool.OutputSchema): Draft 2020-12, "type":
// "object", the properties in the order given and the required ones listed.
// Other properties are not refused: what a result carries is pinned by the
// snapshot and its schemaVersion, and a client that checks a result needs
// only what it reads.
func Output(props ...Property) json.RawMessage { return object("", props) }

func object(extra string, props []Property) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"` + extra)
	var required []string
	for _, p := range props {
		if p.required {
			required = append(required, p.Name)
		}
	}
	writeRequired(&b, required)
	b.WriteString(`,"properties":{`)
	for i, p := range props {
		var s bytes.Buffer
		if err := json.Compact(&s, []byte(p.Schema)); err != nil || !bytes.HasPrefix(s.Bytes(), []byte("{")) {
			panic(fmt.Sprintf("tool.Object: property %q: the schema is not a JSON object: %.80s", p.Name, p.Schema))
		}
		if i > 0 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(p.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(s.Bytes())
	}
	b.WriteString(`}}`)
	return b.Bytes()
}

// writeRequired writes an object schema's "required" member, unless no
// property is required.
func writeRequired(b *bytes.Buffer, required []string) {
	if required != nil {
		r, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(r)
	}
}

// RepoPath is the repo_path argument of the tools that work on one
// repository (the clarification and workspace families). It is a string or
// null (clients of the clarification tools send null for "none"); null and
// "" mean the default. Bind it to a string (or *string) tagged omitempty;
// package repo resolves it.
var RepoPath = Prop("repo_path", `{
	"anyOf": [{"type": "string", "maxLength": 4096}, {"type": "null"}],
	"title": "Repository",
	"description": "The repository's directory (absolute, or relative to the client's directory); a directory inside a repository stands for the repository, as in git. Default (also for null or \"\"): the client's directory walked up to the nearest .git."}`)

// Limit is a limit argument: how many of what (a plural, "results") a call
// returns at most, from 1 to max, def when absent. Bind it to an int
// tagged omitempty (0 is never sent: the minimum is 1) or an *int.
func Limit(def, max int, what string) Property {
	return Prop("limit", fmt.Sprintf(`{"type": "integer", "minimum": 1, "maximum": %d, "default": %d, "title": "Limit",
		"description": %s}`, max, def, quote(fmt.Sprintf("Most %s to return (default %d, at most %d).", what, def, max))))
}

// TimeoutMS is the timeout_ms argument of a tool whose call may ask for its
// own time limit, in milliseconds: def is the tool's Timeout, max the
// longest a call may ask for, and onExpiry says what happens when it runs
// out. The tool names it as its TimeoutArg (the registry checks that the
// default is the tool's Timeout). Bind it to an *int, or an int tagged
// omitempty.
func TimeoutMS(def, max time.Duration, onExpiry string) Property {
	return Prop("timeout_ms", fmt.Sprintf(`{"type": "integer", "minimum": 1, "maximum": %d, "default": %d, "title": "Timeout (ms)",
		"description": %s}`, max.Milliseconds(), def.Milliseconds(),
		quote(fmt.Sprintf("Time limit of this call in milliseconds (default %d, at most %d). %s", def.Milliseconds(), max.Milliseconds(), onExpiry))))
}

// AnyValue is an argument that takes any JSON value (a document to
// validate or compare). A schema without a type would say the same, but
// clients that map tool schemas onto a single-type dialect reject it or
// drop it, so it is spelled as one anyOf branch per JSON type. Bind it to
// any or json.RawMessage, or read it in place (ForDoc).
func AnyValue(name, title, description string) Property {
	return Prop(name, fmt.Sprintf(`{"anyOf": [{"type": "object"}, {"type": "array"}, {"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}],
		"title": %s, "description": %s}`, quote(title), quote(description)))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
