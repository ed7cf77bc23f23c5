package route

import "encoding/json"

// Identity is who a client says it is: its initialize's clientInfo and
// protocol version, or a probing modern client's _meta (server/discover);
// the later of the two.
type Identity struct {
	Name, Version, ProtocolVersion string
	// Modern: it said so in a modern request's _meta; an empty name there
	// leaves the one known.
	Modern bool
}

// said is what a client's request said of who it is: the params of its
// latest initialize, or of a server/discover with modern _meta (modern).
type said struct {
	params json.RawMessage
	modern bool
}

// hear keeps what a request says of who the client is, to be decoded only
// when asked (Identity); r.mu is held.
func (c *Client) hear(q *request) {
	switch q.msg.Method {
	case "initialize":
		c.said = said{params: q.msg.Params}
	case "server/discover":
		// A probing client says who it is in _meta; it stays so unless it
		// falls back to initialize.
		if q.modern {
			c.said = said{params: q.msg.Params, modern: true}
		}
	}
}

// Identity is who the client said it is; false when it has not said.
func (c *Client) Identity() (Identity, bool) {
	c.r.mu.Lock()
	said, modern := c.said.params, c.said.modern
	c.r.mu.Unlock()
	if said == nil {
		return Identity{}, false
	}
	if !modern {
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
			ClientInfo      struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"clientInfo"`
		}
		if json.Unmarshal(said, &p) != nil {
			return Identity{}, false
		}
		return Identity{Name: p.ClientInfo.Name, Version: p.ClientInfo.Version, ProtocolVersion: p.ProtocolVersion}, true
	}
	var p struct {
		Meta struct {
			Version string `json:"io.modelcontextprotocol/protocolVersion"`
			Info    struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"io.modelcontextprotocol/clientInfo"`
		} `json:"_meta"`
	}
	if json.Unmarshal(said, &p) != nil || p.Meta.Version == "" {
		return Identity{}, false
	}
	return Identity{Name: p.Meta.Info.Name, Version: p.Meta.Info.Version, ProtocolVersion: p.Meta.Version, Modern: true}, true
}
