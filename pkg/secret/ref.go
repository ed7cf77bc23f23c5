package secret

import (
	"errors"
	"fmt"
	"strings"
)

// A value in a server's env or headers may name a stored secret instead of
// holding it: "${secret:NAME}", alone or within the value
// ("Bearer ${secret:github}"). NAME is 1 to 128 letters, digits, '.', '_'
// or '-'. "$${" is a literal "${". Anything else is the value as written.

// Static is the vault name of the static secret a value calls NAME (the
// name `hearthd secret set NAME` stores under).
func Static(name string) string { return "static/" + name }

// Refs lists the secret names value refers to, in order, or says what is
// wrong with a reference in it.
func Refs(value string) ([]string, error) {
	var names []string
	_, err := expand(value, func(n string) (string, error) {
		names = append(names, n)
		return "", nil
	})
	return names, err
}

// Expand replaces each reference in value with the secret lookup gives
// for its name. An error names the secret, never a value.
func Expand(value string, lookup func(name string) (string, error)) (string, error) {
	return expand(value, lookup)
}

// ErrNoSecret: a reference names a secret that is not stored.
var ErrNoSecret = errors.New("no such secret")

func expand(value string, lookup func(string) (string, error)) (string, error) {
	if !strings.Contains(value, "${") {
		return value, nil
	}
	var b strings.Builder
	for i := 0; i < len(value); {
		switch {
		case strings.HasPrefix(value[i:], "$${"):
			b.WriteString("${")
			i += 3
		case strings.HasPrefix(value[i:], "${secret:"):
			end := strings.IndexByte(value[i:], '}')
			if end < 0 {
				return "", fmt.Errorf("a secret reference at byte %d has no closing '}'", i)
			}
			name := value[i+len("${secret:") : i+end]
			if !validRefName(name) {
				return "", fmt.Errorf("a secret reference at byte %d names %q: a name is 1 to 128 letters, digits, '.', '_' or '-'", i, clip(name))
			}
			v, err := lookup(name)
			if err != nil {
				return "", fmt.Errorf("secret %q: %w", name, err)
			}
			b.WriteString(v)
			i += end + 1
		default:
			b.WriteByte(value[i])
			i++
		}
	}
	return b.String(), nil
}

func validRefName(n string) bool {
	if n == "" || len(n) > 128 {
		return false
	}
	for _, r := range n {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Lookup is the lookup of Expand for static secrets held in v.
func (v *Vault) Lookup(name string) (string, error) {
	s, ok, err := v.Get(Static(name))
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("%w (store it with `hearthd secret set %s`)", ErrNoSecret, name)
	}
	return s, nil
}
