package route

import (
	"bytes"
	"encoding/json"

	"github.com/hearth-mcp/hearth/pkg/jsonrpc"
	"github.com/hearth-mcp/hearth/pkg/jsonrpc/wire"
	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// The JSON the router reads and writes besides whole frames. What it reads
// of a frame on every call (a request's _meta and members, a progress
// token, a cancellation's id) it reads from the session's decode of the
// frame, and what it changes there it writes once from that decode
// (writeObject); the rest (initialize results, catalogs, errors) is read
// with encoding/json, where it costs little.

// isNull: the JSON text is null (which json.Unmarshal takes into anything).
func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

// shortText is JSON text for an error message, cut to 80 bytes.
func shortText(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// member is one member of a JSON object: its key and its value's text.
type member struct {
	key string
	val json.RawMessage
}

// rpcError is a JSON-RPC error object's JSON text.
func rpcError(code int, message string) json.RawMessage {
	return (&jsonrpc.Error{Code: code, Message: message}).JSON()
}

// quote is s as a JSON string.
func quote(s string) json.RawMessage { return wire.AppendString(nil, s) }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// errorMessage is an error object's message (its text when it has none).
func errorMessage(errObj json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(errObj, &e) != nil || e.Message == "" {
		return string(errObj)
	}
	return e.Message
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

// rawMember is the text of object n's member key in doc (nil: none).
func rawMember(doc *jsonval.Doc, n *jsonval.Node, key string) json.RawMessage {
	m := doc.Get(n, key)
	if m == nil {
		return nil
	}
	s, _ := doc.Raw(m)
	return json.RawMessage(s)
}

// writeObject writes object n of doc (nil: an empty object) with the
// members of set, and of its _meta those of setMeta, in place: n's members
// in their order (a key written twice once, as its last value, as
// encoding/json reads it), each member set in place of n's own or, when n
// has none, after them; a _meta n has not comes first. Values not set are
// their text as written.
func writeObject(doc *jsonval.Doc, n *jsonval.Node, set, setMeta []member) json.RawMessage {
	b := make([]byte, 0, 16+textLen(doc, n)+membersLen(set)+membersLen(setMeta))
	return appendObject(b, doc, n, set, setMeta)
}

// appendObject appends what writeObject writes; n that is no object is
// none (a _meta that is no object is the router's own from now on).
func appendObject(b []byte, doc *jsonval.Doc, n *jsonval.Node, set, setMeta []member) []byte {
	if n != nil && n.Kind() != jsonval.Object {
		n = nil
	}
	w := objectWriter{b: append(b, '{')}
	if setMeta != nil && (n == nil || doc.Get(n, "_meta") == nil) {
		// The router's own _meta, first (as a 2026-07-28 client writes it).
		w.key("_meta")
		w.b = appendObject(w.b, nil, nil, setMeta, nil)
		setMeta = nil
	}
	var wroteBuf [8]bool
	wrote := wroteBuf[:0]
	if len(set) > len(wroteBuf) {
		wrote = make([]bool, 0, len(set))
	}
	wrote = wrote[:len(set)]
	if n != nil {
		last := lastOf{doc: doc, n: n}
		for it := doc.Kids(n); ; {
			m := it.Next()
			if m == nil {
				break
			}
			key := doc.Key(m)
			if !last.is(key, m) {
				continue
			}
			w.key(key)
			switch i := indexOf(set, key); {
			case i >= 0:
				w.b = append(w.b, set[i].val...)
				wrote[i] = true
			case key == "_meta" && setMeta != nil:
				w.b = appendObject(w.b, doc, m, setMeta, nil)
			default:
				raw, _ := doc.Raw(m)
				w.b = append(w.b, raw...)
			}
		}
	}
	for i, s := range set {
		if !wrote[i] {
			w.key(s.key)
			w.b = append(w.b, s.val...)
		}
	}
	return append(w.b, '}')
}

// objectWriter writes an object's members, the comma between them
// included.
type objectWriter struct {
	b    []byte
	some bool
}

// key writes a member's key and colon, after a comma if one came before.
func (w *objectWriter) key(k string) {
	if w.some {
		w.b = append(w.b, ',')
	}
	w.some = true
	w.b = wire.AppendString(w.b, k)
	w.b = append(w.b, ':')
}

// lastOf says of each member of object n whether it is the last one of its
// key, the one encoding/json keeps: by looking the key up again in a small
// object, by a map of the last ones in a large one, so that a client's
// object of many members costs one pass.
type lastOf struct {
	doc  *jsonval.Doc
	n    *jsonval.Node
	last map[string]*jsonval.Node
}

func (l *lastOf) is(key string, m *jsonval.Node) bool {
	if l.n.Len() <= 16 {
		return l.doc.Get(l.n, key) == m
	}
	if l.last == nil {
		l.last = make(map[string]*jsonval.Node, l.n.Len())
		for it := l.doc.Kids(l.n); ; {
			k := it.Next()
			if k == nil {
				break
			}
			l.last[l.doc.Key(k)] = k
		}
	}
	return l.last[key] == m
}

func indexOf(list []member, key string) int {
	for i := range list {
		if list[i].key == key {
			return i
		}
	}
	return -1
}

// textLen is the length of n's text (0 for none).
func textLen(doc *jsonval.Doc, n *jsonval.Node) int {
	if doc == nil || n == nil {
		return 0
	}
	s, _ := doc.Raw(n)
	return len(s)
}

// membersLen bounds the text the members take.
func membersLen(list []member) int {
	n := 0
	for _, m := range list {
		n += len(m.key) + len(m.val) + 4
	}
	return n
}
