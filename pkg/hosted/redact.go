package hosted

import (
	"net/url"
	"strings"
)

// Redacted is what a secret is shown as.
const Redacted = "***"

// secretWords mark a flag, variable or header name whose value may be a
// secret. Matching is by substring of the lowercased name, so it errs on
// the side of hiding ("--keyfile" and "--author" are hidden too).
var secretWords = []string{"token", "key", "secret", "pass", "pwd", "auth", "credential", "bearer", "cookie"}

// secretName: a name with one of secretWords in it.
func secretName(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// RedactArgs is a hosted command's arguments as hearth shows them (status,
// daemon_status, log lines, errors): the same list with the values that may
// be secrets replaced by "***" (docs/architecture.md, "Hosted servers").
// The rule, the one place it is written:
//
//   - `--NAME=VALUE` and `-NAME=VALUE`: VALUE, when NAME has one of
//     secretWords in it (token, key, secret, pass, pwd, auth, credential,
//     bearer, cookie);
//   - `--NAME VALUE`: the next argument, when NAME has one of them and no
//     '=' (a flag such as `--api-key` takes its value from the next
//     argument; the next one is hidden even if the flag is a switch);
//   - `NAME=VALUE` (no leading dash): VALUE, when NAME has one of them;
//   - `NAME: VALUE` (a header, as after `-H`): VALUE, when NAME has one of
//     them (Authorization, X-Api-Key);
//   - `Bearer VALUE` and `Basic VALUE`: VALUE;
//   - a URL with a user or password (`https://user:pw@host/`), alone or as
//     any of the values above: the password, or a user alone, becomes ***;
//     so do the values of its query parameters with such names
//     (`?api_key=…`).
//
// Single-letter flags (`-p secret`) are not hidden: what they mean depends
// on the program. Nor is a secret that is none of these (a bare token as a
// positional argument): hearth cannot tell it from a path or a name.
func RedactArgs(args []string) []string {
	out := make([]string, len(args))
	hideNext := false
	for i, a := range args {
		if hideNext {
			out[i], hideNext = Redacted, false
			continue
		}
		out[i] = redactArg(a)
		if name, ok := strings.CutPrefix(a, "--"); ok && !strings.Contains(name, "=") && secretName(name) {
			hideNext = true
		}
	}
	return out
}

// redactArg hides what one argument holds of a secret, by itself.
func redactArg(a string) string {
	if name, val, ok := strings.Cut(a, "="); ok && name != "" && !strings.ContainsAny(name, " :/") {
		if secretName(strings.TrimLeft(name, "-")) {
			return name + "=" + Redacted
		}
		return name + "=" + redactURL(val)
	}
	if name, _, ok := strings.Cut(a, ":"); ok && name != "" && !strings.ContainsAny(name, " /=") && !strings.Contains(a, "://") && secretName(name) {
		return name + ": " + Redacted
	}
	for _, scheme := range []string{"Bearer ", "Basic ", "bearer ", "basic "} {
		if strings.HasPrefix(a, scheme) {
			return scheme + Redacted
		}
	}
	return redactURL(a)
}

// redactURL hides a URL's password (or its user, when it has no
// password) and the values of its query parameters with secret names.
func redactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		// Not a URL Go can read: hide anything between :// and @, and
		// everything after a '?'.
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			rest = Redacted + rest[at:]
		}
		if q := strings.Index(rest, "?"); q >= 0 {
			rest = rest[:q+1] + Redacted
		}
		return scheme + "://" + rest
	}
	changed := false
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Redacted)
		} else {
			u.User = url.User(Redacted)
		}
		changed = true
	}
	if u.RawQuery != "" {
		parts := strings.Split(u.RawQuery, "&")
		for i, p := range parts {
			if name, _, ok := strings.Cut(p, "="); ok && secretName(name) {
				parts[i], changed = name+"="+Redacted, true
			}
		}
		u.RawQuery = strings.Join(parts, "&")
	}
	if !changed {
		return s
	}
	return strings.ReplaceAll(u.String(), "%2A%2A%2A", Redacted)
}
