package route

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
)

// A client's shape is what of its initialize can change what a 2025 server
// offers it or does for it (docs/decisions/0056-client-shape.md): its
// protocol version and its capabilities, with the JSON written one way and
// what the protocol defines as equal folded together. Its clientInfo is
// not: no server the tests run reads it, and two clients that declare the
// same are served alike.
// A shared 2025 upstream serves clients of one shape only, and is
// initialized with what they declare: every one of them then sees what it
// would see spawning the server itself.

// ShapeOf is the shape of the client a request comes from, when the request
// says it: an initialize's params, or a 2026-07-28 request's _meta (whose
// capabilities a 2025 upstream would be initialized with, with the version
// initParamsFromMeta gives it). ok is false for any other request.
func ShapeOf(msg *jsonrpc.Message) (shape string, ok bool) {
	if msg == nil || msg.Kind != jsonrpc.Request {
		return "", false
	}
	if msg.Method == "initialize" {
		return Shape(msg.Params), true
	}
	if q := readRequest(msg); q.modern {
		return Shape(initParamsFromMeta(q)), true
	}
	return "", false
}

// Shape is the canonical text of initialize params: every member but
// clientInfo (who the client is, which changes nothing a server offers
// that hearth knows of) and _meta (what one request is about), objects
// with their keys sorted, and capabilities normalized:
//
//   - elicitation: {} means form mode (the 2025-11-25 revision's rule for
//     clients written before modes), so it is {"form":{}};
//   - roots.listChanged false is no listChanged, as is its absence.
//
// Anything else counts as written, a capability hearth does not know of
// included: a server may offer something for it. Params that are not a JSON
// object have the shape of their text.
func Shape(params json.RawMessage) string {
	var p map[string]any
	d := json.NewDecoder(bytes.NewReader(params))
	d.UseNumber()
	if d.Decode(&p) != nil || p == nil {
		return "invalid:" + string(bytes.TrimSpace(params))
	}
	delete(p, "_meta")
	delete(p, "clientInfo")
	if caps, ok := p["capabilities"].(map[string]any); ok {
		if e, ok := caps["elicitation"].(map[string]any); ok {
			_, form := e["form"]
			_, url := e["url"]
			if !form && !url {
				e["form"] = map[string]any{}
			}
		}
		if r, ok := caps["roots"].(map[string]any); ok && r["listChanged"] == false {
			delete(r, "listChanged")
		}
	}
	b, _ := json.Marshal(p) // map keys sorted, numbers as written
	return string(b)
}

// Described words a shape for people, from the params it was made of:
// the protocol version and the capabilities declared, sub-capabilities in
// parentheses ("2025-11-25, elicitation(form,url) roots(listChanged)").
func Described(params json.RawMessage) string {
	var p struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(params, &p)
	var parts []string
	if p.ProtocolVersion != "" {
		parts = append(parts, p.ProtocolVersion)
	}
	names := make([]string, 0, len(p.Capabilities))
	for name, v := range p.Capabilities {
		var sub map[string]json.RawMessage
		_ = json.Unmarshal(v, &sub)
		subs := make([]string, 0, len(sub))
		for s, sv := range sub {
			if string(bytes.TrimSpace(sv)) != "false" {
				subs = append(subs, s)
			}
		}
		sort.Strings(subs)
		if len(subs) > 0 {
			name += "(" + strings.Join(subs, ",") + ")"
		}
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		parts = append(parts, "no capabilities")
	} else {
		parts = append(parts, strings.Join(names, " "))
	}
	return strings.Join(parts, ", ")
}
