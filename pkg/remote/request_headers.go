package remote

// What each request carries beside its body: the revision it goes in (a
// 2025 session's, or the one its own 2026-07-28 _meta names) and the
// headers of that revision.

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/version"
)

// modernMeta is the protocol version a 2026-07-28 request carries in its
// _meta ("" for a legacy request).
func modernMeta(frame []byte) string {
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &m) != nil {
		return ""
	}
	var v string
	json.Unmarshal(m.Params.Meta["io.modelcontextprotocol/protocolVersion"], &v)
	return v
}

// modernVersion is the 2026-07-28 revision a request goes in, outside any
// session: the one its _meta names, unless this connection's initialize
// negotiated a 2025 version. Then every request goes in that session, as
// the server expects of the client that initialized it, whatever its
// _meta says (hearth's bridge serves a 2026-07-28 client of a 2025
// server with its request's _meta as the client wrote it).
func (c *Conn) modernVersion(frame []byte) string {
	c.mu.Lock()
	negotiated := c.protocol
	c.mu.Unlock()
	if negotiated != "" && negotiated < "2026-07-28" {
		return ""
	}
	return modernMeta(frame)
}

// headers sets what every request carries: the static headers, the
// protocol headers of the frame's era, the bearer token.
func (c *Conn) headers(req *http.Request, frame []byte, method string) {
	for k, vs := range c.o.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("User-Agent", "hearth/"+version.Version)
	if frame == nil {
		c.mu.Lock()
		if c.protocol != "" {
			req.Header.Set("MCP-Protocol-Version", c.protocol)
		}
		c.mu.Unlock()
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	// The standard headers go on every POST: a 2026-07-28 server requires
	// them, and an earlier one ignores them.
	if method != "" {
		req.Header.Set("Mcp-Method", method)
		if name := nameOf(frame, method); name != "" {
			req.Header.Set("Mcp-Name", headerValue(name))
		}
	}
	if v := c.modernVersion(frame); v != "" {
		req.Header.Set("MCP-Protocol-Version", v)
		c.paramHeaders(req, frame, method)
		return
	}
	c.mu.Lock()
	protocol := c.protocol
	if protocol != "" && method != "initialize" {
		req.Header.Set("MCP-Protocol-Version", protocol)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	c.mu.Unlock()
	if protocol >= "2026-07-28" { // an initialize that negotiated the modern revision
		c.paramHeaders(req, frame, method)
	}
}

// nameOf is the request's params.name (tools/call, prompts/get) or
// params.uri (resources/read), mirrored as Mcp-Name.
func nameOf(frame []byte, method string) string {
	var m struct {
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	json.Unmarshal(frame, &m)
	switch method {
	case "tools/call", "prompts/get":
		return m.Params.Name
	case "resources/read":
		return m.Params.URI
	}
	return ""
}

// headerValue is s as a header value, Base64 in the specification's
// sentinel form when it is not plain visible ASCII (or looks like one).
func headerValue(s string) string {
	plain := s != "" && strings.TrimSpace(s) == s && !(strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?="))
	for i := 0; plain && i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			plain = false
		}
	}
	if plain {
		return s
	}
	return "=?base64?" + b64(s) + "?="
}
