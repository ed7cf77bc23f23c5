package hosted

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Finding the instances `hearthd servers restart|stop X` means
// (docs/architecture.md, "Hosted servers"):
//
//   - X is a server's name (ServerName: its config name, or the name of
//     what it runs) or its label as status shows it: the instances with
//     that name, when they are all one server, that is one [servers.NAME],
//     or one inline command with the same arguments and environment,
//     running for several directories or connections. Instances of two
//     servers that happen to share a name (two `node index.js` of two
//     projects) are refused as ambiguous: restarting a server the user did
//     not mean cuts every window's calls to it.
//   - else X is a prefix of a key, of at least 4 hex digits: the one
//     instance whose key starts with it; a prefix of several is ambiguous.
//   - else nothing: refused, listing what runs.
//
// A refusal lists the matches (name, key, directory) so that the user can
// name one by its key.

// minKeyPrefix is the shortest key prefix taken.
const minKeyPrefix = 4

var hexDigits = regexp.MustCompile(`^[0-9a-f]+$`)

// Match is an instance as a refusal lists it.
type Match struct {
	Name  string `json:"name"`
	Key   string `json:"key"`
	Scope string `json:"scope,omitempty"` // the directory, or connection, it is for
	State string `json:"state"`
}

// FindError is why X names no instance, or more than one server: Matches
// are the instances X matched (ambiguous), or every instance (unknown).
type FindError struct {
	Query     string
	Ambiguous bool
	Verb      string // restart, stop
	Matches   []Match
}

func (e *FindError) Error() string {
	var b strings.Builder
	switch {
	case e.Ambiguous:
		fmt.Fprintf(&b, "%q matches %d instances of different hosted servers; name one by its key (hearthd servers %s KEY):", e.Query, len(e.Matches), e.Verb)
	case len(e.Matches) == 0:
		fmt.Fprintf(&b, "no hosted server named %q runs, and none has a key starting with it; no hosted server runs now", e.Query)
		return b.String()
	default:
		fmt.Fprintf(&b, "no hosted server named %q runs, and none has a key starting with it; these run (hearthd servers %s NAME or KEY):", e.Query, e.Verb)
	}
	for _, m := range e.Matches {
		fmt.Fprintf(&b, "\n  %s  key %s  %s", m.Name, m.Key, m.State)
		if m.Scope != "" {
			fmt.Fprintf(&b, "  for %s", m.Scope)
		}
	}
	return b.String()
}

// definition tells servers apart: instances with one definition are one
// server running for several directories or connections.
func (s Spec) definition() string {
	if s.Name != "" {
		return "config " + s.Name
	}
	return "inline " + s.Key("")
}

// find is the instances q names for verb, or why none or too many.
func (t *Table) find(q, verb string) ([]*Instance, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var named, keyed []*Instance
	prefix := len(q) >= minKeyPrefix && hexDigits.MatchString(q)
	for _, in := range t.inst {
		if in.spec.ServerName() == q || in.spec.Label() == q {
			named = append(named, in)
		}
		if prefix && strings.HasPrefix(in.key, q) {
			keyed = append(keyed, in)
		}
	}
	list := named
	if len(list) == 0 {
		list = keyed
	}
	if len(list) == 0 {
		return nil, &FindError{Query: q, Verb: verb, Matches: matches(t.listLocked())}
	}
	one := len(list) == 1
	if !one && len(named) > 0 {
		one = true
		for _, in := range list[1:] {
			one = one && in.spec.definition() == list[0].spec.definition()
		}
	}
	if !one {
		return nil, &FindError{Query: q, Ambiguous: true, Verb: verb, Matches: matches(list)}
	}
	return list, nil
}

func (t *Table) listLocked() []*Instance {
	list := make([]*Instance, 0, len(t.inst))
	for _, in := range t.inst {
		list = append(list, in)
	}
	return list
}

func matches(list []*Instance) []Match {
	out := make([]Match, 0, len(list))
	for _, in := range list {
		in.mu.Lock()
		st := in.stateLocked()
		in.mu.Unlock()
		out = append(out, Match{Name: in.spec.ServerName(), Key: in.key, Scope: in.scope, State: st})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// shellSafe: a name that a shell passes as it is.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9@%+=:,./_-]+$`)

// restartAdvice is the command that restarts in, as an error tells it: by
// its name when that names in (and only instances of its server), else by
// its key. Call it without in.mu held (it takes the table's lock).
func (t *Table) restartAdvice(in *Instance) string {
	name := in.spec.ServerName()
	if shellSafe.MatchString(name) {
		if list, err := t.find(name, "restart"); err == nil {
			for _, m := range list {
				if m == in {
					return "hearthd servers restart " + name
				}
			}
		}
	}
	return "hearthd servers restart " + in.key
}
