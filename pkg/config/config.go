// Package config holds hearthd's settings: a TOML config file, read at start
// and on SIGHUP, overridden by the daemon's own environment. Every key maps
// onto one environment variable (package keys lists them), so the rest of
// the daemon reads settings by variable name through Settings.Getenv, as it
// would read the environment. docs/reference.md's Configuration section documents
// the keys; docs/decisions/0014-config-file.md says why.
package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pelletier/go-toml/v2"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
	"github.com/hearth-mcp/hearth/pkg/endpoint"
)

// maxFile bounds the config file read: a settings file is a few hundred bytes.
const maxFile = 1 << 20

// Sources of a value, as Sources reports them.
const (
	SourceEnv     = "env"
	SourceDefault = "default"
	// A value from the file has the source "file <path>".
)

// Path is the config file: $HEARTH_CONFIG if set (named is then true),
// else ~/.config/hearth/config.toml (endpoint.ConfigPlace: no XDG variable
// chooses it, so every client's daemon reads the same file). An empty path
// with no error: there is no home to look in.
func Path(getenv func(string) string) (path string, named bool, err error) {
	p, named, err := place(getenv)
	return p.Path, named, err
}

func place(getenv func(string) string) (endpoint.Place, bool, error) {
	p, named, err := endpoint.ConfigPlace(endpoint.Getenv(getenv))
	if err != nil && !named {
		return endpoint.Place{}, false, nil
	}
	return p, named, err
}

func homeDir(getenv func(string) string) string {
	h, _ := endpoint.UserHome(endpoint.Getenv(getenv))
	return h
}

// Error is a config file that cannot be used: the path and every problem,
// each naming its key (or the line, for a syntax error). It never holds a
// secret's value.
type Error struct {
	Path     string
	Problems []string
}

func (e *Error) Error() string {
	return "config file " + e.Path + ": " + strings.Join(e.Problems, "; ")
}

// value is one setting as the daemon sees it.
type value struct {
	v      string // as the variable would hold it
	source string // SourceEnv, SourceDefault or "file <path>"
	// pending is what a restart would apply, when a reload read a change to
	// a setting that only a restart applies.
	pending *value
}

// Settings is one reading of the config file and the environment. It is
// immutable; Reload returns a new one.
type Settings struct {
	path   string // the config file ("" when there is no home to look in)
	why    string // why it is that file (endpoint.Place.Why)
	named  bool   // HEARTH_CONFIG named it
	read   bool   // it existed and was read
	getenv func(string) string
	vals   map[string]value // by variable
	// servers are the [servers.NAME] tables (servers.go).
	servers map[string]Server
}

// Load reads the config file and the setting variables of getenv (the
// daemon's own environment: os.Getenv). A missing file at the default
// location means no file settings; a missing file that HEARTH_CONFIG names,
// an unreadable one, bad TOML, an unknown key, a wrong type or a value out
// of range is an *Error (or a plain error naming the path).
func Load(getenv func(string) string) (*Settings, error) {
	where, named, err := place(getenv)
	if err != nil {
		return nil, err
	}
	path := where.Path
	s := &Settings{path: path, why: where.Why, named: named, getenv: getenv, vals: map[string]value{}}
	file := map[string]string{}
	if path != "" {
		raw, err := readFile(path, named)
		if err != nil {
			return nil, err
		}
		if raw != nil {
			s.read = true
			if file, s.servers, err = parse(path, raw, getenv); err != nil {
				return nil, err
			}
		}
	}
	for _, sp := range specs {
		switch {
		case getenv(sp.Var) != "":
			s.vals[sp.Var] = value{v: getenv(sp.Var), source: SourceEnv}
		case hasKey(file, sp.Key):
			s.vals[sp.Var] = value{v: file[sp.Key], source: "file " + path}
		default:
			s.vals[sp.Var] = value{v: sp.def, source: SourceDefault}
		}
	}
	return s, nil
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }

// readFile reads the config file: nil and no error when it is missing from
// the default location.
func readFile(path string, named bool) ([]byte, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !named:
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("config file %s (named by %s) does not exist", path, keys.ConfigVar)
	case err != nil:
		return nil, fmt.Errorf("config file %s: %v", path, unwrapPath(err))
	case fi.IsDir():
		return nil, fmt.Errorf("config file %s is a directory", path)
	}
	// What the file says, hearth does (it names commands to run): one that
	// another user owns or may change is refused, as the HTTP token file
	// is, by the same check.
	if err := endpoint.OwnFile(path, false); err != nil {
		return nil, fmt.Errorf("config file refused: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file %s: %v", path, unwrapPath(err))
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("config file %s: %v", path, unwrapPath(err))
	}
	if len(raw) > maxFile {
		return nil, fmt.Errorf("config file %s is larger than %d bytes", path, maxFile)
	}
	return raw, nil
}

// unwrapPath drops a *PathError's own copy of the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parse decodes the file into each key's value in the form its variable
// would hold, checking every key, type and bound.
func parse(path string, raw []byte, getenv func(string) string) (map[string]string, map[string]Server, error) {
	var doc map[string]any
	if err := toml.Unmarshal(raw, &doc); err != nil {
		return nil, nil, &Error{Path: path, Problems: []string{syntaxProblem(raw, err)}}
	}
	var servers map[string]Server
	names := make([]string, 0, len(doc))
	for k := range doc {
		names = append(names, k)
	}
	sort.Strings(names)
	out := map[string]string{}
	var problems []string
	for _, k := range names {
		if k == "servers" {
			var probs []string
			servers, probs = parseServers(doc[k], getenv)
			problems = append(problems, probs...)
			continue
		}
		sp, ok := specByKey(k)
		if !ok {
			problems = append(problems, unknownKey(k))
			continue
		}
		v, err := render(sp, doc[k], path, getenv)
		if err != nil {
			problems = append(problems, k+": "+err.Error())
			continue
		}
		out[k] = v
	}
	if problems != nil {
		return nil, nil, &Error{Path: path, Problems: problems}
	}
	return out, servers, nil
}

// syntaxProblem describes a TOML syntax error by line and column. The
// parser's message may quote a character of the offending line, so for a
// line that holds a secret it is withheld.
func syntaxProblem(raw []byte, err error) string {
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return "not valid TOML"
	}
	row, col := de.Position()
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	if lines := strings.Split(string(raw), "\n"); row >= 1 && row <= len(lines) {
		// The parser names no key (an integer too large, say): the line's,
		// under its table, is named for it.
		if key := keyOfLine(lines, row-1); key != "" {
			msg = key + ": " + msg
		}
		line := strings.ToLower(lines[row-1])
		for _, sp := range specs {
			if (sp.kind == kindSecret || sp.kind == kindDSN) && (strings.Contains(line, sp.Key) || strings.Contains(line, strings.ToLower(sp.Var))) {
				msg = "invalid TOML (the line holds " + sp.Key + ", so the parser's detail is not shown)"
			}
		}
	}
	return fmt.Sprintf("line %d, column %d: %s", row, col, msg)
}

// keyOfLine is the key a "key = value" line at lines[i] sets, under the
// table a header above it opens ("servers.a.prestart"); "" when the line
// sets none.
func keyOfLine(lines []string, i int) string {
	key, _, ok := strings.Cut(lines[i], "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.HasPrefix(key, "[") || strings.HasPrefix(key, "#") || strings.ContainsAny(key, " \t\"'") {
		return ""
	}
	for j := i - 1; j >= 0; j-- {
		h := strings.TrimSpace(lines[j])
		if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
			return strings.Trim(h, "[] ") + "." + key
		}
	}
	return key
}

// unknownKey names a key that is not a setting, with a guess when one is close.
func unknownKey(k string) string {
	msg := fmt.Sprintf("unknown key %q", k)
	if guess := closest(k); guess != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", guess)
	}
	return msg
}

// closest is the setting k most likely meant: the key of the variable k
// spells, or a key at most two edits away.
func closest(k string) string {
	for _, sp := range specs {
		if strings.EqualFold(k, sp.Var) {
			return sp.Key
		}
	}
	best, bestD := "", 3
	for _, sp := range specs {
		if d := editDistance(strings.ToLower(strings.ReplaceAll(k, "-", "_")), sp.Key); d < bestD {
			best, bestD = sp.Key, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// tomlType names a decoded TOML value's type for errors.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// render checks one file value and gives it in the form its variable holds.
// Errors echo the value only for settings that are never secret.
func render(sp spec, v any, path string, getenv func(string) string) (string, error) {
	switch sp.kind {
	case kindInt:
		n, ok := v.(int64)
		if !ok {
			return "", fmt.Errorf("want an integer, got %s", tomlType(v))
		}
		s := strconv.FormatInt(n, 10)
		if err := sp.check(s); err != nil {
			return "", fmt.Errorf("%v, got %d", err, n)
		}
		return s, nil
	case kindDuration:
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("want a duration as a string such as %q, got %s", sp.example, tomlType(v))
		}
		if err := sp.check(s); err != nil {
			return "", fmt.Errorf("%v, got %q", err, s)
		}
		return s, nil
	case kindOctal:
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf(`want a string holding an octal permission such as "0600", got %s`, tomlType(v))
		}
		if err := sp.check(s); err != nil {
			return "", fmt.Errorf("%v, got %q", err, s)
		}
		return s, nil
	case kindBool:
		b, ok := v.(bool)
		if !ok {
			return "", fmt.Errorf("want true or false, got %s", tomlType(v))
		}
		return strconv.FormatBool(b), nil
	case kindLevel:
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("want a string (debug, info, warn or error), got %s", tomlType(v))
		}
		if err := sp.check(s); err != nil {
			return "", fmt.Errorf("%v, got %q", err, s)
		}
		return s, nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("want a string, got %s", tomlType(v))
	}
	if sp.kind == kindPath && s != "" {
		s = resolvePath(s, path, getenv)
	}
	// Checked here, where the value is known to be the file's: its error
	// names the key, never the variable it did not come from.
	if err := sp.check(s); err != nil {
		return "", fmt.Errorf("%v, got %q", err, s)
	}
	return s, nil
}

// resolvePath expands a leading "~/" and resolves a relative path against
// the config file's directory.
func resolvePath(p, file string, getenv func(string) string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok || p == "~" {
		if home := homeDir(getenv); home != "" {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(filepath.Dir(file), p)
}

// Getenv reads a setting by its variable: the daemon's own environment if it
// holds a non-empty value, else the file's value, else "". Any other name
// is read from the environment. The daemon hands this to every family as
// tool.Env.Getenv, so the families read the same names as before.
func (s *Settings) Getenv(name string) string {
	if v, ok := s.vals[name]; ok {
		if v.source == SourceDefault {
			return ""
		}
		return v.v
	}
	return s.getenv(name)
}

// File is the config file's path ("" when there is no home to look in) and
// whether it was read (false: it does not exist).
func (s *Settings) File() (path string, read bool) { return s.path, s.read }

// FileWhy says why the config file is that one: HEARTH_CONFIG, or the
// default under the home directory.
func (s *Settings) FileWhy() string { return s.why }

// Setting is one setting as Sources reports it.
type Setting struct {
	Key string `json:"key"`
	Var string `json:"var"`
	// Value is what the daemon uses, with secrets redacted: an API key is
	// "(redacted)" when set, a URL's password "xxxxx". "" when unset.
	Value string `json:"value"`
	// Source is "env", "file <path>" or "default".
	Source string `json:"source"`
	// Restart: a change waits for a restart (it is not applied on SIGHUP).
	Restart bool `json:"restart"`
	// Pending is what a restart would change this setting to, after a
	// reload read a change that only a restart applies.
	Pending *Pending `json:"pending,omitempty"`
}

// Pending is a setting's value after the next restart.
type Pending struct {
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Sources lists every setting in keys.Settings order, secrets redacted.
func (s *Settings) Sources() []Setting {
	out := make([]Setting, 0, len(specs))
	for _, sp := range specs {
		v := s.vals[sp.Var]
		st := Setting{Key: sp.Key, Var: sp.Var, Value: redact(sp, v.v), Source: v.source, Restart: !sp.live}
		if v.pending != nil {
			st.Pending = &Pending{Value: redact(sp, v.pending.v), Source: v.pending.source}
		}
		out = append(out, st)
	}
	return out
}

// redact hides a secret and a URL's password.
func redact(sp spec, v string) string {
	switch {
	case v == "":
		return ""
	case sp.kind == kindSecret:
		return "(redacted)"
	case sp.kind == kindDSN:
		return RedactDSN(v)
	case sp.kind == kindURL && strings.Contains(v, "@"):
		u, err := url.Parse(v)
		if err != nil {
			return "(redacted: not a URL)"
		}
		return u.Redacted()
	}
	return v
}

// dsnPassword finds a key/value DSN's password: the key, then a quoted
// value (with backslash escapes) or a bare one.
var dsnPassword = regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s]*)`)

// RedactDSN hides the password of a PostgreSQL connection string, a
// postgres:// URL (in its user part or a password parameter) or a key/value
// DSN, for daemon_status and logs. A URL that does not parse is withheld
// whole.
func RedactDSN(v string) string {
	if strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://") {
		u, err := url.Parse(v)
		if err != nil {
			return "(redacted: not a URL)"
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.Redacted()
	}
	return dsnPassword.ReplaceAllString(v, "${1}xxxxx")
}

// Change is a setting whose value a reload changed.
type Change struct {
	Key, Var string
	// Restart: the change waits for a restart; until then the previous
	// value keeps serving (Sources shows the new one as pending).
	Restart bool
	// Old and New are the values, redacted as in Sources.
	Old, New string
}

// Reload reads the file and the environment again. On error s keeps
// serving and the error names the path and the key. Otherwise the result
// holds the new values of settings a reload applies, and for every other
// setting s's value, with the new one pending until a restart.
func (s *Settings) Reload() (*Settings, []Change, error) {
	fresh, err := Load(s.getenv)
	if err != nil {
		return nil, nil, err
	}
	var changes []Change
	for _, sp := range specs {
		old, nv := s.vals[sp.Var], fresh.vals[sp.Var]
		target := old
		if old.pending != nil {
			target = *old.pending
		}
		if target.v != nv.v {
			changes = append(changes, Change{Key: sp.Key, Var: sp.Var, Restart: !sp.live, Old: redact(sp, target.v), New: redact(sp, nv.v)})
		}
		if sp.live {
			continue
		}
		kept := value{v: old.v, source: old.source}
		if nv.v != old.v {
			p := nv
			kept.pending = &p
		}
		fresh.vals[sp.Var] = kept
	}
	return fresh, changes, nil
}

// Live is the settings being served: a stable Getenv over the settings the
// last good reload swapped in.
type Live struct{ cur atomic.Pointer[Settings] }

// NewLive serves s.
func NewLive(s *Settings) *Live {
	l := &Live{}
	l.cur.Store(s)
	return l
}

// Settings is the settings being served.
func (l *Live) Settings() *Settings { return l.cur.Load() }

// Store swaps in s.
func (l *Live) Store(s *Settings) { l.cur.Store(s) }

// Getenv is Settings.Getenv of the settings being served.
func (l *Live) Getenv(name string) string { return l.cur.Load().Getenv(name) }
