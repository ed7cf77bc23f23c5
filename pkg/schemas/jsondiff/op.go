package jsondiff

import (
	"cmp"
	"encoding/json"
	"fmt"
)

// The operation names this package produces.
const (
	Add     = "add"
	Remove  = "remove"
	Replace = "replace"
)

// Op is one RFC 6902 operation.
type Op struct {
	// Op is Add, Remove or Replace.
	Op string
	// Path is an RFC 6901 JSON Pointer; "" is the whole document.
	Path string
	// Value is the new value for Add and Replace (nil means JSON null); it is
	// ignored for Remove. [Diff] sets a compact [json.RawMessage].
	Value any
}

// MarshalJSON writes {"op","path","value"}: value is always present for add and
// replace, null included, and always absent for remove.
func (o Op) MarshalJSON() ([]byte, error) {
	type withValue struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	type withoutValue struct {
		Op   string `json:"op"`
		Path string `json:"path"`
	}
	if o.Op == Remove {
		return json.Marshal(withoutValue{o.Op, o.Path})
	}
	v, err := json.Marshal(o.Value)
	if err != nil {
		return nil, fmt.Errorf("jsondiff: value of %s %q: %w", o.Op, o.Path, err)
	}
	return json.Marshal(withValue{o.Op, o.Path, v})
}

// rank orders operations on the same path: remove < add < replace.
func rank(op string) int {
	switch op {
	case Remove:
		return 0
	case Add:
		return 1
	case Replace:
		return 2
	}
	return 3
}

// compareOps is the patch order (see the package comment): by path, then by
// rank.
func compareOps(a, b Op) int {
	if c := cmp.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return cmp.Compare(rank(a.Op), rank(b.Op))
}

// appendToken appends "/" and key escaped per RFC 6901 ("~" → "~0", "/" → "~1").
func appendToken(path []byte, key string) []byte {
	path = append(path, '/')
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '~':
			path = append(path, '~', '0')
		case '/':
			path = append(path, '~', '1')
		default:
			path = append(path, c)
		}
	}
	return path
}
