package hosted

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/hosted/route"
)

// Finding the instances `hearthd servers restart|stop X` means
// (docs/architecture.md, "Hosted servers"):
//
//   - X is a server's name (its config name, a name its clients' entries
//     give it, or the name of what it runs) or its label as status shows
//     it: the instances with that name, when they are all one server, that
//     is one [servers.NAME], or one inline command with the same arguments
//     and environment, running for several directories, connections or
//     client shapes. Instances of two
//     servers that happen to share a name (two `node index.js` of two
//     projects) are refused as ambiguous: restarting a server the user did
//     not mean cuts every window's calls to it.
//   - else X is a prefix of a key, of at least 4 hex digits: the one
//     instance whose key starts with it; a prefix of several is ambiguous.
//   - else nothing: refused, listing what runs.
//
// A refusal lists the matches (name, key, and what tells them apart:
// directory, variable names, client shape; never a variable's value) so
// that the user can name one by its key.

// minKeyPrefix is the shortest key prefix taken.
const minKeyPrefix = 4

var hexDigits = regexp.MustCompile(`^[0-9a-f]+$`)

// Match is an instance as a refusal lists it.
type Match struct {
	Name  string `json:"name"`
	Key   string `json:"key"`
	Scope string `json:"scope,omitempty"` // the directory, or connection, it is for
	State string `json:"state"`
	// Differs words what tells it apart from the other matches of its name
	// (differences).
	Differs string `json:"differs,omitempty"`
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
		if m.Differs != "" {
			fmt.Fprintf(&b, "  (%s)", m.Differs)
		} else if m.Scope != "" {
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
	return "inline " + s.Key("", "")
}

// find is the instances q names for verb, or why none or too many.
func (t *Table) find(q, verb string) ([]*Instance, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var named, keyed []*Instance
	prefix := len(q) >= minKeyPrefix && hexDigits.MatchString(q)
	for _, in := range t.inst {
		if in.answersTo(q) {
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

// answersTo reports whether q is one of the instance's names: its config
// name, one its clients' entries give it, the name of what it runs, or its
// label.
func (in *Instance) answersTo(q string) bool {
	s := in.spec
	return q == s.Name || q == s.Label() || q == s.ServerName() || (!s.IsRemote() && q == RunName(s.Command, s.Args)) || slices.Contains(in.Entries(), q)
}

func matches(list []*Instance) []Match {
	out := make([]Match, 0, len(list))
	differs := differences(list)
	for i, in := range list {
		in.mu.Lock()
		st := in.stateLocked()
		in.mu.Unlock()
		out = append(out, Match{Name: in.spec.ServerName(), Key: in.key, Scope: in.scope, State: st, Differs: differs[i]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Key < out[j].Key
	})
	return out
}

// differences words, for each instance of list, what tells it apart from
// the others of its name (ServerName): only what is not the same for all
// of them among where it runs (the directory or connection), the command
// line (redacted), the names of the variables its entry sets, whether
// their values differ (never the values), its sharing and its clients'
// shape (route.Described). An instance alone of its name gets "".
func differences(list []*Instance) []string {
	type facets struct{ where, command, env, values, sharing, shape string }
	of := make([]facets, len(list))
	byName := map[string][]int{}
	for i, in := range list {
		s := in.spec
		f := facets{where: "in " + in.scope, command: strings.Join(append([]string{baseName(s.Command)}, RedactArgs(s.Args)...), " "),
			sharing: "sharing " + string(s.Sharing), shape: "for " + in.describedShape()}
		if s.Sharing == Global {
			f.where = "for every directory"
		} else if s.Sharing == PerClient {
			f.where = "for " + in.scope
		}
		if names := s.EnvNames(); len(names) > 0 {
			f.env = "variables " + strings.Join(names, ",")
		} else {
			f.env = "no variables"
		}
		env := slices.Clone(s.Env)
		slices.Sort(env)
		f.values = strings.Join(env, "\x00") // compared, never shown
		of[i] = f
		byName[s.ServerName()] = append(byName[s.ServerName()], i)
	}
	out := make([]string, len(list))
	for _, group := range byName {
		if len(group) < 2 {
			continue
		}
		varies := func(get func(facets) string) bool {
			for _, i := range group[1:] {
				if get(of[i]) != get(of[group[0]]) {
					return true
				}
			}
			return false
		}
		whereV, cmdV, envV, sharingV, shapeV := varies(func(f facets) string { return f.where }), varies(func(f facets) string { return f.command }),
			varies(func(f facets) string { return f.env }), varies(func(f facets) string { return f.sharing }), varies(func(f facets) string { return f.shape })
		for _, i := range group {
			f := of[i]
			var parts []string
			if whereV {
				parts = append(parts, f.where)
			}
			if cmdV {
				parts = append(parts, f.command)
			}
			if envV {
				parts = append(parts, f.env)
			}
			// Values that differ where the names are the same: said, not shown.
			for _, j := range group {
				if j != i && of[j].env == f.env && of[j].values != f.values {
					parts = append(parts, f.env+" with values of its own")
					break
				}
			}
			if sharingV {
				parts = append(parts, f.sharing)
			}
			if shapeV {
				parts = append(parts, f.shape)
			}
			out[i] = strings.Join(parts, "; ")
		}
	}
	return out
}

// describedShape words the instance's clients' shape (route.Described);
// a 2026-07-28 upstream serves every shape.
func (in *Instance) describedShape() string {
	in.mu.Lock()
	modern := in.modern
	in.mu.Unlock()
	if modern {
		return "every client (a 2026-07-28 server: each request says its client's own)"
	}
	if in.shape == "" {
		return "no client yet"
	}
	return route.Described(json.RawMessage(in.shape))
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
