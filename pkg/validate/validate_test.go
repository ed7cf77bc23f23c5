package validate

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/hearth-mcp/hearth/pkg/jsonval"
)

type refuse struct{}

func (refuse) Load(url string) (any, error) { return nil, fmt.Errorf("refusing %s", url) }

// mustCompile compiles one self-contained schema through the package's own
// compiler, as the registry and the catalog do.
func mustCompile(t testing.TB, src string) *Schema {
	t.Helper()
	doc, err := UnmarshalJSON(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCompiler(refuse{})
	if err := c.AddResource("mem:///s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem:///s.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustParse(t testing.TB, src string) *jsonval.Doc {
	t.Helper()
	d, err := jsonval.ParseString(src)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestValidateTakesTheFullValidatorOnlyForRejects: with and without a fast
// check, valid documents give nil and invalid ones the full validator's
// violations, sorted by path then message.
func TestValidateTakesTheFullValidatorOnlyForRejects(t *testing.T) {
	for _, tc := range []struct {
		src  string
		fast bool
	}{
		{`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"}},"required":["a"],"additionalProperties":false}`, true},
		// uniqueItems has no fast check: the full validator answers alone.
		{`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"u":{"uniqueItems":true}},"required":["a"],"additionalProperties":false}`, false},
	} {
		s := mustCompile(t, tc.src)
		if _, checked := s.FastVerdict(mustParse(t, `{}`)); checked != tc.fast {
			t.Fatalf("%s: fast check compiled %v, want %v", tc.src, checked, tc.fast)
		}
		if vs := s.Validate(mustParse(t, `{"a":1,"b":"x"}`), nil); vs != nil {
			t.Errorf("valid document: %v", vs)
		}
		vs := s.Validate(mustParse(t, `{"b":2,"c":null}`), nil)
		if len(vs) != 3 || vs[0].Path != "" || vs[1].Path != "" || vs[2].Path != "/b" {
			t.Errorf("invalid document: %v", vs)
		}
		for i := 1; i < len(vs); i++ {
			if vs[i-1].Path > vs[i].Path || (vs[i-1].Path == vs[i].Path && vs[i-1].Msg >= vs[i].Msg) {
				t.Errorf("not sorted: %v", vs)
			}
		}
	}
}

func TestValidateMessages(t *testing.T) {
	s := mustCompile(t, `{"type":"object","properties":{"text":{"type":"string","maxLength":5}}}`)
	msgs := map[string]string{"/text maxLength": "content exceeds max length"}
	if vs := s.Validate(mustParse(t, `{"text":"123456"}`), msgs); len(vs) != 1 || vs[0] != (Violation{Path: "/text", Msg: "content exceeds max length"}) {
		t.Fatalf("override: %v", vs)
	}
	if vs := s.Validate(mustParse(t, `{"text":5}`), msgs); len(vs) != 1 || vs[0].Msg == "content exceeds max length" {
		t.Fatalf("other violations keep the validator's words: %v", vs)
	}
	if vs := s.Validate(mustParse(t, `{"text":"123456"}`), nil); len(vs) != 1 || vs[0].Msg == "content exceeds max length" {
		t.Fatalf("no override: %v", vs)
	}
}

// TestValidateHugeExponent: the full validator's nil *big.Rat on a number
// math/big refuses becomes a violation at the number's path, not a panic
// (docs/decisions/0012-validator-number-guard.md).
func TestValidateHugeExponent(t *testing.T) {
	// multipleOf has no fast check: every document meets the full validator.
	s := mustCompile(t, `{"properties":{"g":{"items":{"type":"number","maximum":1,"multipleOf":0.5}}}}`)
	for in, want := range map[string]string{
		`{"g":[0.5,1E1000001]}`: "/g/1",
		`{"g":[-1e-1000001]}`:   "/g/0",
	} {
		vs := s.Validate(mustParse(t, in), nil)
		if len(vs) != 1 || vs[0].Path != want || !strings.Contains(vs[0].Msg, "out of range") {
			t.Errorf("%s: %v, want one out-of-range violation at %s", in, vs, want)
		}
	}
	if vs := s.Validate(mustParse(t, `{"g":[2]}`), nil); len(vs) != 1 || vs[0].Path != "/g/0" || strings.Contains(vs[0].Msg, "out of range") {
		t.Errorf("an ordinary violation: %v", vs)
	}

	// With a fast check, a number beyond the bound is still rejected (then
	// answered by the guard), and one the float comparison decides is valid.
	s = mustCompile(t, `{"properties":{"g":{"items":{"type":"number","maximum":1}}}}`)
	if vs := s.Validate(mustParse(t, `{"g":[0.5,1E1000001]}`), nil); len(vs) != 1 || vs[0].Path != "/g/1" || !strings.Contains(vs[0].Msg, "out of range") {
		t.Errorf("above the maximum: %v", vs)
	}
	if vs := s.Validate(mustParse(t, `{"g":[-1e-1000001]}`), nil); vs != nil {
		t.Errorf("below the maximum: %v", vs)
	}
}

func TestViolationsAndPointers(t *testing.T) {
	if got := pointer([]string{"a/b", "c~d", ""}); got != "/a~1b/c~0d/" {
		t.Fatalf("pointer %q", got)
	}
	if pointer(nil) != "" {
		t.Fatal("root pointer")
	}
	vs := violations(errors.New("plain"), nil)
	if len(vs) != 1 || vs[0].Path != "" || vs[0].Msg != "plain" {
		t.Fatalf("%v", vs)
	}
	if s := (Violation{Path: "", Msg: "m"}).String(); s != "(root): m" {
		t.Fatalf("%q", s)
	}
	if s := (Violation{Path: "/a", Msg: "m"}).String(); s != "/a: m" {
		t.Fatalf("%q", s)
	}
}

func TestReadNumber(t *testing.T) {
	for _, c := range []struct {
		lit                          string
		integer, unparsable, tooLong bool
	}{
		{"0", true, false, false},
		{"-0", true, false, false},
		{"50", true, false, false},
		{"50.0", true, false, false},
		{"5e1", true, false, false},
		{"5.0e1", true, false, false},
		{"500e-1", true, false, false},
		{"0.5", false, false, false},
		{"1.5e1", true, false, false},
		{"1.55e1", false, false, false},
		{"15e-1", false, false, false},
		{"0.0e-99999999999999999999", true, false, false},
		{"1E1000001", true, true, false},
		{"1e1000000", true, false, false},
		{"-1e-1000001", false, true, false},
		{"0.1e-999999", false, false, false},
		{"0.1e-1000000", false, true, false},
		{"10e999999", true, false, false},
		{"1e99999999999999999999", true, true, false},
		{"1" + strings.Repeat("0", maxDigits-1), true, false, false},
		{"1" + strings.Repeat("0", maxDigits), true, false, true},
		{"1." + strings.Repeat("0", maxDigits), true, false, true},
		{"0." + strings.Repeat("0", maxDigits) + "1", false, false, true},
		{"1e" + strings.Repeat("0", maxDigits-2), true, false, false},
		{"1e" + strings.Repeat("0", maxDigits), true, false, true},
		{"1e" + strings.Repeat("9", 1_000_000), true, true, true},
	} {
		n := readNumber(c.lit)
		if !n.tooLong() && !strings.Contains(c.lit, "99999999") && len(c.lit) < 100 {
			// math/big is the reference, where it is cheap to ask.
			r, ok := new(big.Rat).SetString(c.lit)
			if ok == n.unparsable() || (ok && r.IsInt() != n.integer()) {
				t.Errorf("%s: math/big parses it %v (integer %v)", c.lit, ok, ok && r.IsInt())
			}
		}
		if n.integer() != c.integer || n.unparsable() != c.unparsable || n.tooLong() != c.tooLong {
			t.Errorf("%.40s: integer %v, unparsable %v, tooLong %v; want %v, %v, %v", c.lit,
				n.integer(), n.unparsable(), n.tooLong(), c.integer, c.unparsable, c.tooLong)
		}
	}
}

// TestValidateManyDigits: a number with more digits than validation
// converts is a violation at its path, answered without converting it
// (docs/decisions/0012-validator-number-guard.md), wherever the fast check
// would have to convert it and whenever the document meets the full
// validator. One the fast check decides without converting stays valid.
func TestValidateManyDigits(t *testing.T) {
	s := mustCompile(t, `{"type":"object","additionalProperties":false,"required":["q"],"properties":{`+
		`"q":{"type":"string"},"limit":{"type":"integer","minimum":1,"maximum":100},"any":{}}}`)
	million := "1" + strings.Repeat("7", 999_999)
	long := "1" + strings.Repeat("0", maxDigits) // maxDigits+1 digits
	for in, path := range map[string]string{
		`{"q":"x","limit":` + million + `}`:                             "/limit",
		`{"q":"x","limit":-` + million + `}`:                            "/limit",
		`{"q":"x","limit":1.` + strings.Repeat("0", 999_990) + `}`:      "/limit", // 1 as a float64: a tie
		`{"q":"x","limit":1.` + strings.Repeat("0", 999_990) + `1}`:     "/limit",
		`{"q":"x","limit":1.` + strings.Repeat("7", 999_990) + `e3}`:    "/limit",
		`{"q":"x","limit":` + long + `e-` + fmt.Sprint(maxDigits) + `}`: "/limit",   // 1, exactly
		`{"limit":2,"any":[0,{"n":` + long + `}]}`:                      "/any/1/n", // rejected for q: the full validator meets it
	} {
		vs := s.Validate(mustParse(t, in), nil)
		if len(vs) != 1 || vs[0].Path != path || !strings.Contains(vs[0].Msg, "out of range") || !strings.Contains(vs[0].Msg, "digits") {
			t.Errorf("%.60s…: %v, want one out-of-range violation at %s", in, vs, path)
		}
	}
	// enum and const compare exactly: a long number there, or inside a
	// value compared, is answered without comparing it.
	s2 := mustCompile(t, `{"properties":{"e":{"enum":[1,"x",[1]]},"c":{"const":{"k":[2]}}}}`)
	for in, path := range map[string]string{
		`{"e":1e` + strings.Repeat("9", 1_000_000) + `}`: "/e",
		`{"e":[` + million + `]}`:                        "/e/0",
		`{"c":{"k":[` + million + `]}}`:                  "/c/k/0",
	} {
		vs := s2.Validate(mustParse(t, in), nil)
		if len(vs) != 1 || vs[0].Path != path || !strings.Contains(vs[0].Msg, "digits") {
			t.Errorf("%.40s…: %v, want one out-of-range violation at %s", in, vs, path)
		}
	}
	if vs := s2.Validate(mustParse(t, `{"e":1.0,"c":{"k":[2e0]}}`), nil); vs != nil {
		t.Errorf("short numbers compare as before: %v", vs)
	}
	// Nothing needs converting: a plain integer above the maximum as a
	// float64, or a long number the schema does not compare.
	if vs := s.Validate(mustParse(t, `{"q":"x","limit":`+million+`}`), nil); len(vs) != 1 {
		t.Errorf("above the maximum: %v", vs)
	}
	if vs := s.Validate(mustParse(t, `{"q":"x","limit":50,"any":`+million+`}`), nil); vs != nil {
		t.Errorf("a long number nothing compares: %v", vs)
	}
	if vs := s.Validate(mustParse(t, `{"q":"x","limit":`+strings.Repeat("1", maxDigits-3)+`e-`+fmt.Sprint(maxDigits-5)+`}`), nil); len(vs) != 1 || strings.Contains(vs[0].Msg, "digits") {
		t.Errorf("maxDigits digits are compared: %v", vs)
	}
}
