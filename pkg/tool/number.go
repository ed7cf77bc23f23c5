package tool

import "strings"

// integerOf reads a JSON number literal as an integer, from its text alone
// (nothing is converted, so a number of a million digits costs one pass):
// its sign and magnitude, integral false when the value has a fractional
// part, and fits false when the magnitude does not fit in 64 bits. Every
// spelling of an integral value is one: 50, 50.0, 5e1, 5.0e1, 500e-1; -0
// is 0.
func integerOf(lit string) (neg bool, mag uint64, integral, fits bool) {
	s := lit
	if s != "" && s[0] == '-' {
		neg, s = true, s[1:]
	}
	mant, expText := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expText = s[:i], s[i+1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	n := len(intPart) + len(frac)
	digit := func(i int) byte {
		if i < len(intPart) {
			return intPart[i]
		}
		return frac[i-len(intPart)]
	}
	first, last := 0, n-1
	for first < n && digit(first) == '0' {
		first++
	}
	if first == n {
		return false, 0, true, true // zero, however it is written
	}
	for digit(last) == '0' {
		last--
	}
	// The value is digits[first..last] × 10^scale.
	scale := exponent(expText) - int64(len(frac)) + int64(n-1-last)
	if scale < 0 {
		return neg, 0, false, true
	}
	if int64(last-first+1)+scale > 20 { // 2^64 has 20 digits
		return neg, 0, true, false
	}
	for i := first; i <= last; i++ {
		d := uint64(digit(i) - '0')
		if mag > (1<<64-1-d)/10 {
			return neg, 0, true, false
		}
		mag = mag*10 + d
	}
	for ; scale > 0; scale-- {
		if mag > (1<<64-1)/10 {
			return neg, 0, true, false
		}
		mag *= 10
	}
	return neg, mag, true, true
}

// exponent reads an exponent's text (sign and digits, "" for none),
// clamped to ±1e15: any exponent beyond that makes a non-zero number
// either too large for 64 bits or not an integer.
func exponent(s string) int64 {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	const clamp = 1e15
	var e int64
	for i := 0; i < len(s) && e < clamp; i++ {
		e = e*10 + int64(s[i]-'0')
	}
	e = min(e, clamp)
	if neg {
		return -e
	}
	return e
}

// int64Of is a JSON number literal's value as an int64: ok false when it is
// not an integer or does not fit.
func int64Of(lit string) (v int64, integral, fits bool) {
	neg, mag, integral, fits := integerOf(lit)
	switch {
	case !integral || !fits:
		return 0, integral, fits
	case neg && mag <= 1<<63:
		return int64(-mag), true, true // -(1<<63) wraps to itself: MinInt64
	case !neg && mag <= 1<<63-1:
		return int64(mag), true, true
	}
	return 0, true, false
}
