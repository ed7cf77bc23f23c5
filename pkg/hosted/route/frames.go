package route

import (
	"bytes"
	"encoding/json"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc/wire"
)

// rpcError is a JSON-RPC error object's JSON text.
func rpcError(code int, message string) json.RawMessage {
	return (&jsonrpc.Error{Code: code, Message: message}).JSON()
}

// object is a JSON object decoded one level deep, each member kept as text,
// to change a member and write the object back.
type object map[string]json.RawMessage

func decodeObject(raw json.RawMessage) (object, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	var o object
	if json.Unmarshal(raw, &o) != nil || o == nil {
		return nil, false
	}
	return o, true
}

func (o object) encode() json.RawMessage {
	b, _ := json.Marshal(map[string]json.RawMessage(o))
	return b
}

// str reads a string member ("" when absent or not a string).
func (o object) str(key string) string {
	var s string
	if v, ok := o[key]; ok {
		_ = json.Unmarshal(v, &s)
	}
	return s
}

// metaOf decodes params and its _meta; ok is false unless both are
// objects.
func metaOf(params json.RawMessage) (p, meta object, ok bool) {
	if p, ok = decodeObject(params); !ok {
		return nil, nil, false
	}
	meta, ok = decodeObject(p["_meta"])
	return p, meta, ok
}

// progressToken returns params._meta.progressToken's text, if any.
func progressToken(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte(`"progressToken"`)) {
		return nil
	}
	_, meta, ok := metaOf(params)
	if !ok {
		return nil
	}
	return meta["progressToken"]
}

// withProgressToken returns params with _meta.progressToken set to token.
func withProgressToken(params json.RawMessage, token json.RawMessage) json.RawMessage {
	p, meta, ok := metaOf(params)
	if !ok {
		return params
	}
	meta["progressToken"] = token
	p["_meta"] = meta.encode()
	return p.encode()
}

// withMember returns params (an object) with key set to val.
func withMember(params json.RawMessage, key string, val json.RawMessage) json.RawMessage {
	p, ok := decodeObject(params)
	if !ok {
		p = object{}
	}
	p[key] = val
	return p.encode()
}

// quote is s as a JSON string, as encoding/json writes it (strconv.Quote
// writes Go's escapes, \a, \v and \x01 among them, which are no JSON).
func quote(s string) json.RawMessage { return wire.AppendString(nil, s) }
