package jsonval

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// exact is the reference reading of a document for equality: encoding/json
// (UseNumber, the last duplicate wins), with every number replaced by its
// exact rational value. It uses nothing from this package. false: a number
// too large for big.Rat.
func exact(t testing.TB, doc string) (any, bool) {
	t.Helper()
	v, err := reference(doc)
	if err != nil {
		t.Fatalf("%q: %v", doc, err)
	}
	ok := true
	var norm func(any) any
	norm = func(v any) any {
		switch x := v.(type) {
		case json.Number:
			r, parsed := new(big.Rat).SetString(string(x))
			if !parsed {
				ok = false
				return nil
			}
			return "number:" + r.RatString()
		case []any:
			for i := range x {
				x[i] = norm(x[i])
			}
		case map[string]any:
			for k, e := range x {
				x[k] = norm(e)
			}
		}
		return v
	}
	v = norm(v)
	return v, ok
}

// equalEverywhere checks Equal on a and b decoded every way a caller may
// hold them (Parse, ParseRaw, as a Sub of a larger document), in both
// orders, against want.
func equalEverywhere(t testing.TB, a, b string, want bool) {
	t.Helper()
	ways := func(s string) []*Doc {
		p, err := ParseString(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		r, _ := ParseRaw([]byte(s))
		w, _ := ParseRaw([]byte(`{"x":[0],"v":` + s + `,"y":{}}`))
		return []*Doc{p, r, w.Sub(w.Get(w.Root(), "v"))}
	}
	for _, da := range ways(a) {
		for _, db := range ways(b) {
			if got := Equal(da, da.Root(), db, db.Root()); got != want {
				t.Fatalf("Equal(%s, %s) = %v, want %v", a, b, got, want)
			}
			if got := Equal(db, db.Root(), da, da.Root()); got != want {
				t.Fatalf("Equal(%s, %s) = %v, want %v", b, a, got, want)
			}
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`null`, `null`, true},
		{`true`, `true`, true},
		{`true`, `false`, false},
		{`true`, `1`, false},
		{`null`, `false`, false},
		{`"1"`, `1`, false},
		{`1`, `1.0`, true},
		{`1e2`, `100`, true},
		{`-0`, `0.0`, true},
		{`0.1`, `1E-1`, true},
		{`9007199254740993`, `9007199254740992`, false},
		{`1e400`, `10e399`, true},
		{`1e99999999999999999999`, `10e99999999999999999998`, true},
		{`1e99999999999999999999`, `1e99999999999999999998`, false},
		{`"a"`, `"a"`, true},
		{`"\n\u00e9\/"`, "\"\\u000a\u00e9/\"", true},
		{`"\ud83d\ude00"`, `"😀"`, true},
		{`"\ud83d"`, `"\ufffd"`, true},
		{`"a"`, `"b"`, false},
		{`[]`, `[]`, true},
		{`[1,[2,"x"]]`, ` [ 1.0 , [ 2 , "\u0078" ] ] `, true},
		{`[1,2]`, `[2,1]`, false},
		{`[1]`, `[1,1]`, false},
		{`[]`, `{}`, false},
		{`{}`, `{}`, true},
		{`{"a":1,"b":[null]}`, `{"b":[null],"a":1.0}`, true},
		{`{"a":1,"b":2}`, `{"a":1,"c":2}`, false},
		{`{"a":1}`, `{"a":1,"b":1}`, false},
		{`{"\u00e9":1}`, `{"é":1}`, true},
		{`{"a":1,"a":2}`, `{"a":2}`, true},
		{`{"a":1,"a":2}`, `{"a":1}`, false},
		{`{"a":1,"a":2}`, `{"a":3,"a":2}`, true},
		{`{"a":1,"a":1}`, `{"a":1,"b":1}`, false},
		{`{"b":1,"a":{"d":1,"c":2},"b":3}`, `{"a":{"c":2.0,"d":1},"b":3}`, true},
		{`{"b":1,"a":{"d":1,"c":2},"b":3}`, `{"a":{"c":2.0,"d":1},"b":1}`, false},
		{`[{"y":[1],"x":{"q":1,"p":2}}]`, `[{"x":{"p":2,"q":1},"y":[1.0]}]`, true},
		{`[{"y":[1],"x":{"q":1,"p":2}}]`, `[{"x":{"p":2,"q":2},"y":[1.0]}]`, false},
		{`{"":{"":[]}}`, `{"":{"":[]}}`, true},
		{`{"a":null}`, `{}`, false},
	}
	for _, tc := range tests {
		ra, oka := exact(t, tc.a)
		rb, okb := exact(t, tc.b)
		if ref := reflect.DeepEqual(ra, rb); oka && okb && ref != tc.want {
			t.Fatalf("the table is wrong on %s, %s: the reference says %v", tc.a, tc.b, ref)
		}
		equalEverywhere(t, tc.a, tc.b, tc.want)
		av, _ := reference(tc.a)
		bv, _ := reference(tc.b)
		if got := EqualAny(av, bv); got != tc.want {
			t.Errorf("EqualAny(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestEqualDeep compares documents at the depth limit, and objects in
// unsorted order at every level (members sorted in the scratch buffer, one
// level's on top of another's).
func TestEqualDeep(t *testing.T) {
	const levels = MaxDepth/2 - 1 // equalEverywhere nests them once more
	deep := strings.Repeat(`{"z":0,"a":[`, levels) + strings.Repeat(`]}`, levels)
	sorted := strings.Repeat(`{"a":[`, levels) + strings.Repeat(`],"z":0}`, levels)
	equalEverywhere(t, deep, sorted, true)
	changed := strings.Replace(sorted, `"z":0`, `"z":1`, 1)
	equalEverywhere(t, deep, changed, false)
}

// TestEqualAny covers values decoded without UseNumber, or built in Go.
func TestEqualAny(t *testing.T) {
	type custom struct{}
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"float64 and json.Number compare by value", map[string]any{"a": 1.0}, map[string]any{"a": json.Number("1")}, true},
		{"int and float64", map[string]any{"a": 3}, map[string]any{"a": 3.0}, true},
		{"uint64 beyond float64 stays exact", map[string]any{"a": uint64(1<<63 + 1)}, map[string]any{"a": json.Number("9223372036854775808")}, false},
		{"uint64 and its json.Number", uint64(1<<63 + 1), json.Number("9223372036854775809"), true},
		{"every integer type", []any{int8(-1), int16(2), int32(3), int64(4), uint(5), uint8(6), uint16(7), uint32(8)},
			[]any{-1.0, json.Number("2"), 3, json.Number("4e0"), 5.0, 6, json.Number("7.0"), 8.0}, true},
		{"float32", []any{float32(0.5)}, []any{0.5}, true},
		{"-0 and 0", -math.Copysign(0, 1), 0.0, true},
		{"nil slices and maps inside", map[string]any{"a": []any(nil)}, map[string]any{"a": []any{}}, true},
		{"true is not 1", true, json.Number("1"), false},
		{"NaN", math.NaN(), math.NaN(), false},
		{"infinity", math.Inf(1), math.Inf(1), false},
		{"NaN inside", []any{math.NaN()}, []any{math.NaN()}, false},
		{"malformed json.Number", json.Number("1x"), json.Number("1x"), false},
		{"empty json.Number", json.Number(""), json.Number(""), false},
		{"unsupported type", map[string]any{"a": custom{}}, map[string]any{"a": custom{}}, false},
		{"cycle", cyclic, cyclic, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := EqualAny(tc.a, tc.b); got != tc.want {
				t.Errorf("EqualAny(a, b) = %v, want %v", got, tc.want)
			}
			if got := EqualAny(tc.b, tc.a); got != tc.want {
				t.Errorf("EqualAny(b, a) = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSortedMembers(t *testing.T) {
	d, _ := ParseString(`{"b":1,"a":2,"b":3,"":4,"a":5,"c":{"y":1,"x":2}}`)
	var got []string
	for _, m := range d.SortedMembers(nil, d.Root()) {
		got = append(got, d.Key(m)+"="+string(must(json.Marshal(d.AnyOf(m)))))
	}
	if want := `=4 a=5 b=3 c={"x":2,"y":1}`; strings.Join(got, " ") != want {
		t.Fatalf("got %s, want %s", strings.Join(got, " "), want)
	}
	// Appends after what buf holds, and leaves a sorted object as it is.
	c := d.Get(d.Root(), "c")
	buf := d.SortedMembers([]*Node{c}, c)
	if len(buf) != 3 || buf[0] != c || d.Key(buf[1]) != "x" || d.Key(buf[2]) != "y" {
		t.Fatalf("SortedMembers on a buffer: %v", buf)
	}
	if s, _ := ParseString(`[1]`); len(s.SortedMembers(nil, s.Root())) != 0 {
		t.Fatal("members of an array")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestNumbersEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"0", "-0", true},
		{"0", "0e10", true},
		{"0.000", "-0.0E-5", true},
		{"1", "1.000", true},
		{"10", "1e1", true},
		{"10", "1E+1", true},
		{"0.5", "5e-1", true},
		{"123.45", "12345e-2", true},
		{"100", "1000e-1", true},
		{"1", "-1", false},
		{"1", "2", false},
		{"1", "10", false},
		{"12", "21", false},
		{"1.1", "1.01", false},
		{"123456789012345678901234567890", "123456789012345678901234567891", false},
		{"123456789012345678901234567890", "12345678901234567890123456789e1", true},
		{"1e9223372036854775807", "10e9223372036854775806", true},
		{"1e-9223372036854775808", "0.1e-9223372036854775807", true},
		{"1e99999999999999999999999", "1e99999999999999999999998", false},
	}
	for _, tc := range tests {
		if got := numbersEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("numbersEqual(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := numbersEqual(tc.b, tc.a); got != tc.want {
			t.Errorf("numbersEqual(%s, %s) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestValidNumber(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "1.5e-3": true, "1E+9": true, "123456789012345678901234567890": true,
		"": false, "-": false, "01": false, "1.": false, ".5": false, "1e": false, "+1": false, "1x": false, " 1": false, "NaN": false,
	} {
		if validNumber(s) != want {
			t.Errorf("validNumber(%q) = %v", s, !want)
		}
	}
}

// TestNumbersEqualAgainstBigRat compares the exact decimal comparison with
// math/big on random number texts, including equal values written apart.
func TestNumbersEqualAgainstBigRat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + r.IntN(10)))
		}
		return b.String()
	}
	number := func() string {
		s := ""
		if r.IntN(3) == 0 {
			s = "-"
		}
		if r.IntN(3) == 0 {
			s += "0"
		} else {
			s += fmt.Sprint(1+r.IntN(9)) + digits(r.IntN(4))
		}
		if r.IntN(2) == 0 {
			s += "." + digits(1+r.IntN(4))
		}
		if r.IntN(2) == 0 {
			s += []string{"e", "E", "e+", "e-", "E-"}[r.IntN(5)] + digits(1+r.IntN(2))
		}
		return s
	}
	equal := 0
	for range 200000 {
		a, b := number(), number()
		if r.IntN(4) == 0 { // the same value, rewritten
			ra, _ := new(big.Rat).SetString(a)
			b = ra.FloatString(30)
		}
		if !validNumber(a) || !validNumber(b) {
			t.Fatalf("generator made an invalid number: %q %q", a, b)
		}
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		want := ra.Cmp(rb) == 0
		if got := numbersEqual(a, b); got != want {
			t.Fatalf("numbersEqual(%s, %s) = %v, want %v", a, b, got, want)
		}
		if want {
			equal++
		}
	}
	if equal < 1000 {
		t.Fatalf("only %d equal pairs: the generator does not test equality", equal)
	}
}

// addSmall agrees with math/big on exponents of any length, and numbers
// with million-digit exponents compare in linear time.
func TestAddSmallAgreesWithBig(t *testing.T) {
	exps := []string{"0", "-0", "+0", "7", "-7", "0009", "-0009", "9223372036854775807", "-9223372036854775808",
		"99999999999999999999", "-99999999999999999999", "100000000000000000000", "-100000000000000000000", "12345678901234567890123"}
	ks := []int{0, 1, -1, 7, -7, 9, -9, 10, -10, 1 << 30, -(1 << 30)}
	for _, e := range exps {
		for _, k := range ks {
			want, _ := new(big.Int).SetString(strings.TrimPrefix(e, "+"), 10)
			want.Add(want, big.NewInt(int64(k)))
			if got := addSmall(e, k); got != want.String() {
				t.Errorf("addSmall(%s, %d) = %s, want %s", e, k, got, want)
			}
		}
	}
	nines := strings.Repeat("9", 1_000_000)
	if !numbersEqual("1e"+nines, "10e"+nines[:len(nines)-1]+"8") || numbersEqual("1e"+nines, "1e-"+nines) {
		t.Fatal("million-digit exponents")
	}
}
