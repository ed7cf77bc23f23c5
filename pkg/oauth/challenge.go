package oauth

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
)

var strconvQuote = strconv.Quote

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1): its scheme and its auth-params, names lower-cased.
type Challenge struct {
	Scheme string
	Params map[string]string
}

// Bearer is the Bearer challenge of a response's WWW-Authenticate headers,
// if it has one (a malformed header counts as none).
func Bearer(h http.Header) (Challenge, bool) {
	cs, _ := ParseChallenges(h.Values("WWW-Authenticate"))
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c, true
		}
	}
	return Challenge{}, false
}

// ResourceMetadata is the challenge's resource_metadata (RFC 9728 §5.1).
func (c Challenge) ResourceMetadata() string { return c.Params["resource_metadata"] }

// Scopes are the challenge's scope, split (RFC 6750 §3).
func (c Challenge) Scopes() []string { return strings.Fields(c.Params["scope"]) }

// Error is the challenge's error code (RFC 6750 §3.1), such as
// insufficient_scope.
func (c Challenge) Error() string { return c.Params["error"] }

// maxHeader bounds the header text parsed.
const maxHeader = 8 << 10

// ParseChallenges parses WWW-Authenticate header values: a comma-separated
// list of challenges, each a scheme then either a token68 or auth-params
// (name=token or name="quoted string"). An error says what is malformed;
// the challenges read up to it are returned.
func ParseChallenges(values []string) ([]Challenge, error) {
	var out []Challenge
	for _, v := range values {
		if len(v) > maxHeader {
			return out, errors.New("WWW-Authenticate is longer than 8 KiB")
		}
		elems, err := splitElements(v)
		if err != nil {
			return out, err
		}
		for _, e := range elems {
			p := &hparser{s: e}
			first := p.token()
			if first == "" {
				return out, errors.New("WWW-Authenticate: " + clipText(e) + " is neither a challenge nor a parameter")
			}
			p.skipSpace()
			if p.peek() == '=' && !onlyEquals(p.s[p.i:]) {
				// name=value: a parameter of the challenge before it.
				if len(out) == 0 {
					return out, errors.New("WWW-Authenticate: a parameter before any scheme")
				}
				if err := p.param(first, out[len(out)-1].Params); err != nil {
					return out, err
				}
				continue
			}
			c := Challenge{Scheme: first, Params: map[string]string{}}
			if !p.done() {
				name := p.token()
				p.skipSpace()
				switch {
				case name != "" && (p.done() || onlyEquals(p.s[p.i:])):
					c.Params[""] = name + p.s[p.i:] // a token68
				case name != "" && p.peek() == '=':
					if err := p.param(name, c.Params); err != nil {
						return out, err
					}
				default:
					return out, errors.New("WWW-Authenticate: " + clipText(e) + " is malformed")
				}
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// param reads "=value" after name into params, and nothing may follow.
func (p *hparser) param(name string, params map[string]string) error {
	p.i++ // '='
	p.skipSpace()
	val, err := p.value()
	if err != nil {
		return err
	}
	p.skipSpace()
	if !p.done() {
		return errors.New("WWW-Authenticate: unexpected text after the value of " + name)
	}
	params[strings.ToLower(name)] = val
	return nil
}

func onlyEquals(s string) bool {
	s = strings.TrimRight(s, " \t")
	return s != "" && strings.Trim(s, "=") == ""
}

// splitElements splits a header value at the commas outside quoted
// strings, dropping empty elements.
func splitElements(v string) ([]string, error) {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			if e := strings.TrimSpace(v[start:i]); e != "" {
				out = append(out, e)
			}
			start = i + 1
		}
	}
	if quoted {
		return nil, errors.New("WWW-Authenticate: an unclosed quoted string")
	}
	if e := strings.TrimSpace(v[start:]); e != "" {
		out = append(out, e)
	}
	return out, nil
}

func clipText(s string) string {
	if len(s) > 60 {
		return strconvQuote(s[:60] + "...")
	}
	return strconvQuote(s)
}

type hparser struct {
	s string
	i int
}

func (p *hparser) done() bool { return p.i >= len(p.s) }

func (p *hparser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *hparser) skipSpace() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// token reads an RFC 9110 token (token68 characters too: / + . ~ -).
func (p *hparser) token() string {
	start := p.i
	for !p.done() && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/", c) >= 0
}

// value reads a token or a quoted string (backslash escapes one byte).
func (p *hparser) value() (string, error) {
	if p.peek() != '"' {
		v := p.token()
		if v == "" {
			return "", errors.New("WWW-Authenticate: a parameter without a value")
		}
		return v, nil
	}
	p.i++
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			return b.String(), nil
		case '\\':
			if p.i+1 >= len(p.s) {
				return "", errors.New("WWW-Authenticate: a quoted string ends in a backslash")
			}
			b.WriteByte(p.s[p.i+1])
			p.i += 2
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", errors.New("WWW-Authenticate: an unclosed quoted string")
}
