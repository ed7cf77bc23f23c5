package validate

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

// schemas the differential tests check documents against: every keyword the
// checker implements, and the shapes it optimizes (type-only anyOf
// branches, $ref chains, always-valid branches, cycles).
var schemas = []string{
	`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string","minLength":2,"maxLength":3}},"required":["a"],"additionalProperties":false}`,
	`{"type":"object","minProperties":2,"maxProperties":3}`,
	`{"properties":{"x":{"minimum":0.1,"exclusiveMaximum":1e3}},"patternProperties":{"^p_":{"type":"boolean"}},"additionalProperties":{"type":"null"}}`,
	`{"type":"array","prefixItems":[{"type":"number"},{"enum":["a","b"]}],"items":{"const":{"k":[1,null]}},"minItems":1,"maxItems":4}`,
	`{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}],"$defs":{"node":{"type":"object","properties":{"next":{"anyOf":[{"$ref":"#/$defs/node"},{"type":"null"}]},"v":{"type":["integer","string"]}},"required":["v"]}}}`,
	`{"oneOf":[{"type":"integer"},{"type":"number","maximum":2}],"not":{"const":1}}`,
	`{"allOf":[{"type":"string","pattern":"^[a-z]+$"},{"minLength":1}],"anyOf":[{},{"type":"null"}]}`,
	`{"type":"object","properties":{"é":{"type":"string","maxLength":1},"a/b":true,"":{"type":"number"},"ab":false},"required":["","é"]}`,
	`{"enum":[1,"1",[1],{"a":1},null,true]}`,
	`{"type":"integer","minimum":-9007199254740993,"maximum":18446744073709551616}`,
	`{"type":"object","properties":{"abc":{"type":"number"},"axc":{"type":"string"},"bbc":{"type":"boolean"}},"additionalProperties":false}`,
	`{"format":"date-time","type":["string","number"]}`,
}

// docs are the documents every schema is tried on.
var docs = []string{
	`null`, `true`, `0`, `1`, `1.0`, `1e0`, `1.5`, `-0`, `2`, `0.1`, `0.1000000000000000000001`, `0.09999999999999999999`,
	`1000`, `999.9999999999999999`, `-9007199254740993`, `-9007199254740994`, `18446744073709551616`, `18446744073709551617`,
	`1e400`, `-1e400`, `1e-400`, `1E1000001`, `-1e1000001`, `1e-1000001`, `{"x":1e1000001}`,
	`""`, `"a"`, `"ab"`, `"abc"`, `"abcd"`, `"éé"`, `"😀😀"`, `"aZ"`, `"2026-11-23T05:00:00Z"`, `"not a date"`,
	`[]`, `[1]`, `[1,"a"]`, `[1,"c"]`, `[1,"a",{"k":[1,null]}]`, `[1,"a",{"k":[1,null]},{"k":[1]}]`, `[1,"a",{"k":[1,null]},{"k":[1,null]},{"k":[1,null]}]`, `["x"]`,
	`{}`, `{"a":1}`, `{"a":1.0}`, `{"a":"1"}`, `{"a":1,"b":"xy"}`, `{"a":1,"b":"x"}`, `{"a":1,"b":"xyzw"}`, `{"a":1,"c":1}`,
	`{"a":1,"a":"s"}`, `{"a":"s","a":1}`, `{"b":"xy","b":"xy"}`, `{"a":1,"a":1}`, `{"\u0061":1}`, `{"a\u0000":1}`,
	`{"x":0.1}`, `{"x":0.09}`, `{"x":1000}`, `{"x":999}`, `{"p_1":true}`, `{"p_1":1}`, `{"q":null}`, `{"q":1}`,
	`{"v":1}`, `{"v":"s","next":{"v":2,"next":null}}`, `{"v":1,"next":{"next":null}}`, `{"v":1.5}`,
	`{"":1,"é":"x"}`, `{"":1,"é":"xy"}`, `{"":"1","é":"x"}`, `{"":1,"\u00e9":"x","ab":1}`, `{"":1,"é":"x","a/b":[]}`,
	`{"abc":1}`, `{"axc":"s"}`, `{"bbc":true}`, `{"abc":"s"}`, `{"acc":1}`, `{"k":[1,null]}`,
	// Numbers too long to convert (docs/decisions/0012-validator-number-guard.md).
	millionDigits, "-" + millionDigits, "1." + strings.Repeat("0", 999_990), `{"a":` + millionDigits + `}`,
	`[1,"a",{"k":[1,` + millionDigits + `]}]`, `{"x":` + strings.Repeat("9", 1001) + `e-1000}`,
	"1e" + strings.Repeat("9", 999_998), `{"k":[1,1e` + strings.Repeat("0", 999_990) + `]}`,
}

// millionDigits is a number of 1 000 000 digits: a 1 MiB frame can carry it.
var millionDigits = "1" + strings.Repeat("7", 999_999)

func compile(t testing.TB, src string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// agrees checks the fast verdict against the full validator's: a valid
// verdict must always be right (nothing invalid gets through); with no
// duplicate keys the verdicts are equal. (A duplicated key is checked at
// every occurrence, stricter than encoding/json's last-wins, so the fast
// check may refuse such a document and leave it to the full validator.)
func agrees(t *testing.T, s *jsonschema.Schema, fast *fastSchema, doc string) {
	t.Helper()
	d, err := jsonval.ParseString(doc)
	if err != nil {
		return
	}
	err = fullValidate(s, d)
	var nr *numberRangeError
	if errors.As(err, &nr) {
		return // a number too long to convert or math/big cannot parse: the full validator cannot judge
	}
	want := err == nil
	got := fast.valid(d, d.Root())
	if got && !want {
		t.Errorf("%s: fast says valid, the full validator says invalid", doc)
	}
	if got != want && !duplicateKeys(d, d.Root()) {
		t.Errorf("%s: fast says %v, full validator %v", doc, got, want)
	}
}

func duplicateKeys(d *jsonval.Doc, n *jsonval.Node) bool {
	seen := map[string]bool{}
	it := d.Kids(n)
	for m := it.Next(); m != nil; m = it.Next() {
		if n.Kind() == jsonval.Object {
			if seen[d.Key(m)] {
				return true
			}
			seen[d.Key(m)] = true
		}
		if duplicateKeys(d, m) {
			return true
		}
	}
	return false
}

func TestAgreesWithTheFullValidator(t *testing.T) {
	for i, src := range schemas {
		full := compile(t, src)
		fast := compileFast(full)
		if fast == nil {
			t.Fatalf("schema %d did not compile to a fast check: %s", i, src)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, doc := range docs {
				agrees(t, full, fast, doc)
			}
		})
	}
}

// TestUnsupportedKeywords: a schema using anything the checker does not
// implement gets no checker at all, so the full validator answers.
func TestUnsupportedKeywords(t *testing.T) {
	for _, src := range []string{
		`{"if":{"type":"string"},"then":{"minLength":1}}`,
		`{"type":"array","contains":{"type":"string"}}`,
		`{"uniqueItems":true}`,
		`{"multipleOf":2}`,
		`{"unevaluatedProperties":false}`,
		`{"properties":{"a":{"dependentRequired":{"a":["b"]}}}}`,
		`{"$defs":{"x":{"propertyNames":{"maxLength":1}}},"anyOf":[{"$ref":"#/$defs/x"}]}`,
	} {
		if compileFast(compile(t, src)) != nil {
			t.Errorf("%s: compiled, but the checker does not implement it", src)
		}
	}
}

// TestManyProperties: more than 64 required properties (past the bitmask)
// and key sets no perfect hash separates still check exactly.
func TestManyProperties(t *testing.T) {
	var props, req []string
	for i := 0; i < 80; i++ {
		props = append(props, fmt.Sprintf(`"k%02d":{"type":"integer"}`, i))
		req = append(req, fmt.Sprintf(`"k%02d"`, i))
	}
	// Same length, same first, middle and last byte: one signature.
	props = append(props, `"aXbYc":{"type":"string"}`, `"aZbWc":{"type":"number"}`)
	src := `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `],"additionalProperties":false}`
	full := compile(t, src)
	fast := compileFast(full)
	if fast == nil {
		t.Fatal("no fast check")
	}
	var all []string
	for i := 0; i < 80; i++ {
		all = append(all, fmt.Sprintf(`"k%02d":%d`, i, i))
	}
	for _, doc := range []string{
		`{` + strings.Join(all, ",") + `}`,
		`{` + strings.Join(all[:79], ",") + `}`,
		`{` + strings.Join(all[1:], ",") + `}`,
		`{` + strings.Join(all, ",") + `,"aXbYc":"s","aZbWc":1}`,
		`{` + strings.Join(all, ",") + `,"aXbYc":1}`,
		`{` + strings.Join(all, ",") + `,"aZbWc":"s"}`,
		`{` + strings.Join(all, ",") + `,"aQbQc":1}`,
	} {
		agrees(t, full, fast, doc)
	}
}

func FuzzAgreesWithTheFullValidator(f *testing.F) {
	for i := range schemas {
		for _, d := range []string{`{"a":1}`, `[1,"a"]`, `{"v":1,"next":null}`, `0.1`, `"ab"`,
			// Past maxDigits: the million-digit numbers are in docs; in the
			// fuzz corpus they would slow every mutation down.
			strings.Repeat("7", 1001), `{"a":1.` + strings.Repeat("0", 1001) + `}`, `[1,1.` + strings.Repeat("7", 1001) + `e3]`} {
			f.Add(uint8(i), d)
		}
	}
	full := make([]*jsonschema.Schema, len(schemas))
	fast := make([]*fastSchema, len(schemas))
	for i, src := range schemas {
		full[i] = compile(f, src)
		fast[i] = compileFast(full[i])
	}
	f.Fuzz(func(t *testing.T, which uint8, doc string) {
		i := int(which) % len(schemas)
		agrees(t, full[i], fast[i], doc)
	})
}
