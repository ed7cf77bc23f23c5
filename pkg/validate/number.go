package validate

// maxDigits bounds the digits of a number (its mantissa's and its
// exponent's) that validation converts or compares exactly: math/big
// converts decimal text in time quadratic in its length, so a 1 MiB frame
// holding one 1 000 000-digit number would cost seconds of CPU
// (docs/decisions/0012-validator-number-guard.md). No real document needs
// more: a float64 has 17 significant digits, an int64 19.
const maxDigits = 1000

// maxExponent is the largest decimal exponent, in magnitude, that math/big
// parses (big.Rat.SetString refuses a number whose mantissa is not zero
// and whose exponent, less its fraction digits, is beyond it).
const maxExponent = 1_000_000

// number is what the number guard reads from a JSON number's literal,
// without converting it: the value is mantissa × 10^exp, where mantissa is
// the literal's digits (integer and fraction parts) as an integer.
type number struct {
	digits int   // digits of the mantissa and the exponent
	trail  int   // its trailing zeros
	exp    int64 // the written exponent less the fraction's digits, clamped to ±1e15
	zero   bool  // every digit is 0: the value is 0
}

// readNumber reads a literal the decoder has accepted as a JSON number.
func readNumber(lit string) number {
	var n number
	i := 0
	if i < len(lit) && lit[i] == '-' {
		i++
	}
	n.zero = true
	frac := false
	for ; i < len(lit); i++ {
		c := lit[i]
		if c == '.' {
			frac = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		n.digits++
		if frac {
			n.exp--
		}
		if c == '0' {
			n.trail++
		} else {
			n.trail, n.zero = 0, false
		}
	}
	if i < len(lit) { // 'e' or 'E'
		i++
		neg := false
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			neg = lit[i] == '-'
			i++
		}
		const clamp = 1e15
		var e int64
		for ; i < len(lit); i++ {
			n.digits++
			if e < clamp {
				e = e*10 + int64(lit[i]-'0')
			}
		}
		e = min(e, clamp)
		if neg {
			e = -e
		}
		n.exp += e
	}
	return n
}

// integer reports whether the number's value is an integer (1.0 and 1e2
// are, as JSON Schema says).
func (n number) integer() bool { return n.zero || n.exp+int64(n.trail) >= 0 }

// unparsable reports whether math/big refuses the number (its exponent is
// beyond maxExponent).
func (n number) unparsable() bool {
	return !n.zero && (n.exp > maxExponent || n.exp < -maxExponent)
}

// tooLong reports whether the number has more digits than validation
// converts or compares.
func (n number) tooLong() bool { return n.digits > maxDigits }
