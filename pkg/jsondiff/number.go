package jsondiff

import (
	"math/big"
	"strconv"
)

// scanNumber checks the RFC 8259 number grammar
//
//	-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
//
// starting at s[i] and returns the index just past the number, or -1.
func scanNumber[T string | []byte](s T, i int) int {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i+1)
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits[T string | []byte](s T, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// validNumber reports whether s is exactly one JSON number.
func validNumber(s string) bool {
	return scanNumber(s, 0) == len(s)
}

// decimal is a JSON number split into its parts, without any rounding:
// the value is ±(intPart.frac) × 10^exp.
type decimal struct {
	neg     bool
	intPart string
	frac    string
	exp     string // the exponent's text, sign included; "" for none
}

func splitNumber(s string) decimal {
	var d decimal
	if s != "" && s[0] == '-' {
		d.neg = true
		s = s[1:]
	}
	i := skipDigits(s, 0)
	d.intPart, s = s[:i], s[i:]
	if s != "" && s[0] == '.' {
		j := skipDigits(s, 1)
		d.frac, s = s[1:j], s[j:]
	}
	if s != "" {
		d.exp = s[1:] // past the 'e' or 'E'
	}
	return d
}

// digit returns the i-th digit of intPart followed by frac.
func (d *decimal) digit(i int) byte {
	if i < len(d.intPart) {
		return d.intPart[i]
	}
	return d.frac[i-len(d.intPart)]
}

// significant returns the span [first, last] of nonzero-bounded digits, or
// zero=true when every digit is 0.
func (d *decimal) significant() (first, last int, zero bool) {
	n := len(d.intPart) + len(d.frac)
	first = 0
	for first < n && d.digit(first) == '0' {
		first++
	}
	if first == n {
		return 0, 0, true
	}
	last = n - 1
	for d.digit(last) == '0' {
		last--
	}
	return first, last, false
}

// numbersEqual reports whether two valid JSON numbers have the same value,
// exactly: both are brought to the form ±0.d₁d₂…dₙ × 10^e with d₁ and dₙ
// nonzero, and the signs, digit strings and exponents are compared.
func numbersEqual(a, b string) bool {
	if a == b {
		return true
	}
	x, y := splitNumber(a), splitNumber(b)
	xf, xl, xzero := x.significant()
	yf, yl, yzero := y.significant()
	if xzero || yzero {
		return xzero && yzero // -0 == 0
	}
	if x.neg != y.neg || xl-xf != yl-yf {
		return false
	}
	for i := 0; i <= xl-xf; i++ {
		if x.digit(xf+i) != y.digit(yf+i) {
			return false
		}
	}
	// The exponents of the normalised forms: exp + (digits before the point
	// that come after the leading zeros).
	return exponentsEqual(x.exp, len(x.intPart)-xf, y.exp, len(y.intPart)-yf)
}

// exponentsEqual reports whether ea+ka == eb+kb, where ea and eb are
// exponent texts of any length ("" is 0) and ka, kb are small.
func exponentsEqual(ea string, ka int, eb string, kb int) bool {
	a, aerr := strconv.ParseInt(orZero(ea), 10, 64)
	b, berr := strconv.ParseInt(orZero(eb), 10, 64)
	if aerr == nil && berr == nil && a < 1<<62 && a > -(1<<62) && b < 1<<62 && b > -(1<<62) {
		return a+int64(ka) == b+int64(kb)
	}
	// An exponent too long for int64: rare enough to pay for math/big.
	ba, _ := new(big.Int).SetString(orZero(ea), 10)
	bb, _ := new(big.Int).SetString(orZero(eb), 10)
	ba.Add(ba, big.NewInt(int64(ka)))
	bb.Add(bb, big.NewInt(int64(kb)))
	return ba.Cmp(bb) == 0
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}
