package validate

import (
	"encoding/json"
	"math/big"
	"slices"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fullValidate runs the full validator on an instance in encoding/json's form.
// Every full validation goes through it, never through Schema.Validate of
// santhosh-tekuri/jsonschema directly: v6.0.3 dereferences a nil *big.Rat
// when a numeric keyword (minimum, maximum, exclusive*, multipleOf,
// uniqueItems) meets a number that math/big refuses to parse (an exponent
// beyond ±1 000 000, such as 1E1000001), and a client would get a
// crash-shaped -32603 for a document it may send. Such a number is answered
// as a violation at its path instead (a *numberRangeError); any other panic
// is a bug and goes on up. See docs/decisions/0012-validator-number-guard.md.
func fullValidate(s *jsonschema.Schema, inst any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			path, found := unparsableNumber(inst, nil)
			if !found {
				panic(r)
			}
			err = &numberRangeError{Path: pointer(path)}
		}
	}()
	return s.Validate(inst)
}

// numberRangeError is a number too large (or too precise) to compare
// exactly: its decimal exponent is beyond what math/big parses.
type numberRangeError struct{ Path string }

func (e *numberRangeError) Error() string {
	return "number out of range: its exponent is too large to compare against the schema"
}

// unparsableNumber finds the first number math/big cannot parse (object
// members in sorted order, so the answer is deterministic).
func unparsableNumber(v any, path []string) ([]string, bool) {
	switch x := v.(type) {
	case json.Number:
		if _, ok := new(big.Rat).SetString(string(x)); !ok {
			return path, true
		}
	case []any:
		for i, e := range x {
			if p, ok := unparsableNumber(e, append(path, strconv.Itoa(i))); ok {
				return p, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p, ok := unparsableNumber(x[k], append(path, k)); ok {
				return p, true
			}
		}
	}
	return nil, false
}
