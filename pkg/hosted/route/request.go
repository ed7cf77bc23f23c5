package route

import (
	"encoding/json"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// The reserved _meta keys of 2026-07-28 requests and results.
const (
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaClientInfo   = "io.modelcontextprotocol/clientInfo"
	metaLogLevel     = "io.modelcontextprotocol/logLevel"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
	metaSubscription = "io.modelcontextprotocol/subscriptionId"
)

// request is one client request as the router reads it: its frame, and
// what its params say, read from the decode the session made of the frame
// (docs/decisions/0011-one-decode-per-frame.md): whether it is a
// 2026-07-28 request (its _meta holds the protocol version), its progress
// token, and the members the router acts on. Nothing of it is decoded
// again; what the router changes in its params (its level, its _meta, its
// progress token) is written once, when it goes upstream (params).
type request struct {
	msg *jsonrpc.Message
	doc *jsonval.Doc // the params decoded (nil: none)
	// meta is params._meta when it is an object; modern says it holds the
	// 2026-07-28 version key: a modern client's request.
	meta   *jsonval.Node
	modern bool
	// token is _meta.progressToken's text (nil: none).
	token json.RawMessage
	// set and setMeta are the members of params, and of its _meta, the
	// router gives other values (nil: the client's text goes as it is).
	set, setMeta []member
}

// readRequest reads a client's request, once.
func readRequest(msg *jsonrpc.Message) *request {
	q := &request{msg: msg, doc: msg.ParamsDoc()}
	if q.doc == nil && msg.Params != nil {
		// A message the session did not decode (none does today): its
		// params are decoded here, once.
		q.doc, _ = jsonval.ParseRaw(msg.Params)
	}
	if q.doc == nil || q.doc.Root().Kind() == jsonval.Null {
		q.doc = nil // params: null are none
		return q
	}
	if m := q.doc.Get(q.doc.Root(), "_meta"); m != nil && m.Kind() == jsonval.Object {
		q.meta = m
		q.modern = q.doc.Get(m, metaVersion) != nil
		q.token = q.rawOf(q.doc.Get(m, "progressToken"))
	}
	return q
}

// rawOf is a node's text (nil for none).
func (q *request) rawOf(n *jsonval.Node) json.RawMessage {
	if n == nil {
		return nil
	}
	s, _ := q.doc.Raw(n)
	return json.RawMessage(s)
}

// str is a string member of params ("" when absent or not a string).
func (q *request) str(key string) string {
	if q.doc == nil {
		return ""
	}
	n := q.doc.Get(q.doc.Root(), key)
	if n == nil || n.Kind() != jsonval.String {
		return ""
	}
	return q.doc.Str(n)
}

// param is a member of params as text (nil: absent).
func (q *request) param(key string) json.RawMessage {
	if q.doc == nil {
		return nil
	}
	return q.rawOf(q.doc.Get(q.doc.Root(), key))
}

// metaObject is a member of _meta as text when it is an object (nil
// otherwise).
func (q *request) metaObject(key string) json.RawMessage {
	if q.meta == nil {
		return nil
	}
	n := q.doc.Get(q.meta, key)
	if n == nil || n.Kind() != jsonval.Object {
		return nil
	}
	return q.rawOf(n)
}

// wantsResources: a subscriptions/listen asks for resource updates (its
// notifications.resourceSubscriptions is anything but an empty list).
func (q *request) wantsResources() bool {
	if q.doc == nil {
		return false
	}
	n := q.doc.Get(q.doc.Root(), "notifications")
	if n == nil || n.Kind() != jsonval.Object {
		return false
	}
	rs := q.doc.Get(n, "resourceSubscriptions")
	return rs != nil && (rs.Kind() != jsonval.Array || rs.Len() > 0)
}

// keys lists the keys params holds (nil: none, or not an object).
func (q *request) keys() []string {
	if q.doc == nil || q.doc.Root().Kind() != jsonval.Object {
		return nil
	}
	var out []string
	for it := q.doc.Kids(q.doc.Root()); ; {
		m := it.Next()
		if m == nil {
			return out
		}
		out = append(out, q.doc.Key(m))
	}
}

// setParam gives a member of params another value.
func (q *request) setParam(key string, val json.RawMessage) { q.set = setMember(q.set, key, val) }

// setMetaMember gives a member of _meta another value.
func (q *request) setMetaMember(key string, val json.RawMessage) {
	q.setMeta = setMember(q.setMeta, key, val)
}

func setMember(list []member, key string, val json.RawMessage) []member {
	for i := range list {
		if list[i].key == key {
			list[i].val = val
			return list
		}
	}
	return append(list, member{key, val})
}

// params are the request's params as they go upstream: the client's text
// when the router changed nothing, else written once from the decode, the
// client's members in its order (a key written twice once, as its last
// value, as encoding/json reads it), each member the router set in place
// of the client's or, when the client had none, after them; a _meta the
// router adds comes first. Params that are no object go as they are.
func (q *request) params() json.RawMessage {
	if q.set == nil && q.setMeta == nil {
		return q.msg.Params
	}
	if q.doc == nil {
		return writeObject(nil, nil, q.set, q.setMeta)
	}
	if q.doc.Root().Kind() != jsonval.Object {
		return q.msg.Params
	}
	return writeObject(q.doc, q.doc.Root(), q.set, q.setMeta)
}
