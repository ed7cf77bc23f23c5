package remote

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// A 2026-07-28 server may ask that some of a tool's arguments be mirrored
// in headers (x-mcp-header in the tool's inputSchema, Mcp-Param-NAME on
// the request). The transport learns them from the answers to tools/list
// that pass through it, drops a tool whose annotations break the rules
// (the specification: such a tool is left out of the list, with a warning),
// and adds the headers to each tools/call.

// paramHeader is one argument mirrored: its path of property names, and
// the header's name part.
type paramHeader struct {
	path   []string
	name   string
	typ    string
	header string
}

// toolHeaders reads a tool's x-mcp-header annotations, or says why the
// tool is invalid.
func toolHeaders(schema json.RawMessage) ([]paramHeader, error) {
	var root any
	if len(schema) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("its inputSchema is not JSON")
	}
	total := countAnnotations(root)
	if total == 0 {
		return nil, nil
	}
	var out []paramHeader
	seen := map[string]bool{}
	var walk func(node any, path []string) error
	walk = func(node any, path []string) error {
		obj, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		props, _ := obj["properties"].(map[string]any)
		for name, p := range props {
			po, ok := p.(map[string]any)
			if !ok {
				continue
			}
			sub := append(append([]string(nil), path...), name)
			if h, has := po["x-mcp-header"]; has {
				hs, ok := h.(string)
				if !ok || hs == "" || !isToken(hs) {
					return fmt.Errorf("x-mcp-header %v of %s is not a header name token", h, strings.Join(sub, "."))
				}
				if seen[strings.ToLower(hs)] {
					return fmt.Errorf("x-mcp-header %q is used twice", hs)
				}
				seen[strings.ToLower(hs)] = true
				typ, _ := po["type"].(string)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("x-mcp-header %q is on %s, whose type is not string, integer or boolean", hs, strings.Join(sub, "."))
				}
				out = append(out, paramHeader{path: sub, name: name, typ: typ, header: hs})
			}
			if err := walk(po, sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, nil); err != nil {
		return nil, err
	}
	if len(out) != total {
		return nil, fmt.Errorf("an x-mcp-header is not reachable through properties alone")
	}
	return out, nil
}

// countAnnotations counts x-mcp-header members anywhere in a schema.
func countAnnotations(node any) int {
	n := 0
	switch v := node.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "x-mcp-header" {
				n++
			}
			n += countAnnotations(x)
		}
	case []any:
		for _, x := range v {
			n += countAnnotations(x)
		}
	}
	return n
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTChar(s[i]) {
			return false
		}
	}
	return true
}

func isTChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// learnTools reads a tools/list answer: it keeps each valid tool's
// mirrored arguments and returns the answer without the invalid tools
// (msg itself when nothing changes).
func (c *Conn) learnTools(msg []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(m["result"], &result) != nil || result["tools"] == nil {
		return msg
	}
	var tools []json.RawMessage
	if json.Unmarshal(result["tools"], &tools) != nil {
		return msg
	}
	kept := tools[:0:0]
	learned := map[string][]paramHeader{}
	for _, t := range tools {
		var def struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		json.Unmarshal(t, &def)
		hs, err := toolHeaders(def.InputSchema)
		if err != nil {
			c.log.Warn("remote server's tool left out: its x-mcp-header annotations break the rules",
				zap.String("server", c.o.Name), zap.String("tool", def.Name), zap.String("why", err.Error()))
			continue
		}
		if len(hs) > 0 {
			learned[def.Name] = hs
		}
		kept = append(kept, t)
	}
	c.mu.Lock()
	if c.toolHeaders == nil {
		c.toolHeaders = map[string][]paramHeader{}
	}
	for k, v := range learned {
		c.toolHeaders[k] = v
	}
	c.mu.Unlock()
	if len(kept) == len(tools) {
		return msg
	}
	result["tools"], _ = json.Marshal(kept)
	m["result"], _ = json.Marshal(result)
	out, _ := json.Marshal(m)
	return out
}

// paramHeaders adds a tools/call's mirrored arguments.
func (c *Conn) paramHeaders(req *http.Request, frame []byte, method string) {
	if method != "tools/call" {
		return
	}
	var m struct {
		Params struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	d := json.NewDecoder(bytes.NewReader(frame))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return
	}
	c.mu.Lock()
	hs := c.toolHeaders[m.Params.Name]
	c.mu.Unlock()
	for _, h := range hs {
		var v any = m.Params.Arguments
		for _, p := range h.path {
			o, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = o[p]
		}
		var text string
		switch x := v.(type) {
		case string:
			text = headerValue(x)
		case bool:
			text = strconv.FormatBool(x)
		case json.Number:
			n, err := x.Int64()
			if err != nil || math.Abs(float64(n)) > 1<<53-1 {
				continue
			}
			text = strconv.FormatInt(n, 10)
		default:
			continue // absent or null: no header
		}
		req.Header.Set("Mcp-Param-"+h.header, text)
	}
}
