package adopt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/jsonc"
	"github.com/hearth-mcp/hearth/pkg/textedit"
)

// Sharing modes of a hosted server (README "Hosting your other MCP
// servers"): one instance per user, per client directory, or per client.
var Modes = []string{"global", "directory", "client"}

// Options select and shape the rewrite.
type Options struct {
	// Shim is the command a moved entry runs; "hearth" (found on the
	// client's PATH) when empty.
	Shim string
	// Only, when not empty, names the servers to move; Except names
	// servers to leave.
	Only, Except []string
	// Share gives a server's sharing mode by its name; the "" key gives
	// the mode of every server not named. No mode leaves hearth's default.
	Share map[string]string
	// Secrets moves the literal credentials of entries' headers and env
	// into the store (remote.go): the plan lists them (Plan.Secrets), for
	// the caller to store before it writes the file.
	Secrets bool
	// SecretName picks the store name of a credential from the name adopt
	// proposes and the value (one the store holds with another value
	// needs another name); nil keeps the proposal.
	SecretName func(proposed, value string) string
}

func (o Options) secretName(proposed, value string) string {
	if o.SecretName == nil {
		return proposed
	}
	return o.SecretName(proposed, value)
}

func (o Options) shim() string {
	if o.Shim == "" {
		return "hearth"
	}
	return o.Shim
}

func (o Options) selected(name string) bool {
	if len(o.Only) > 0 && !slices.Contains(o.Only, name) {
		return false
	}
	return !slices.Contains(o.Except, name)
}

func (o Options) share(name string) string {
	if m, ok := o.Share[name]; ok {
		return m
	}
	return o.Share[""]
}

// Action is what the plan does with one server.
type Action int

const (
	Move        Action = iota + 1 // rewritten to run through hearth
	KeepHosted                    // already through hearth
	KeepHearth                    // hearth's own server
	KeepRemote                    // HTTP or SSE
	KeepUnknown                   // an entry adopt does not understand
	NotSelected                   // left out by Only or Except
)

// Decision is the plan for one server.
type Decision struct {
	*Server
	Action Action
	Share  string // the sharing mode written, for a Move
}

// Describe says what happens to the server, for the summary table.
func (d Decision) Describe() string {
	switch d.Action {
	case Move:
		if d.Kind == Remote {
			return "moves behind hearth run --url"
		}
		if d.Share != "" {
			return "moves behind hearth (sharing: " + d.Share + ")"
		}
		if why := perClientState(d.Server); why != "" {
			return "moves behind hearth; " + why + ": consider --share " + d.Name + "=client"
		}
		return "moves behind hearth"
	case KeepHosted:
		return "already behind hearth"
	case KeepHearth:
		return "hearth's own server"
	case KeepRemote:
		if d.Why != "" {
			return "left alone: " + d.Transport + " server; " + d.Why
		}
		return "left alone: " + d.Transport + " server"
	case KeepUnknown:
		return "left alone: " + d.Why
	case NotSelected:
		return "left alone: not selected"
	}
	return "?"
}

// statefulServers are well-known servers that keep state for one client in
// their process, so that sharing one process would let clients see each
// other's (README "Moving your servers behind hearth"). They are only
// pointed out: the user chooses the sharing.
var statefulServers = []struct{ marker, why string }{
	{"playwright", "it drives a browser"},
	{"puppeteer", "it drives a browser"},
	{"chrome-devtools-mcp", "it drives a browser"},
	{"serena", "its active project belongs to the process"},
}

func perClientState(s *Server) string {
	words := strings.ToLower(s.Command + " " + strings.Join(s.Args, " "))
	for _, k := range statefulServers {
		if strings.Contains(words, k.marker) {
			return k.why
		}
	}
	return ""
}

// Plan is what adopt would change in one file.
type Plan struct {
	File      *File
	Decisions []Decision
	Edits     []textedit.Edit
	New       []byte // the file's new content; equal to File.Src when nothing changes
	// Secrets are the credentials the new content names in the store
	// (Options.Secrets): stored before the file is written.
	Secrets []Secret
}

// Changed reports whether writing the plan would change the file.
func (p *Plan) Changed() bool { return !bytes.Equal(p.New, p.File.Src) }

// Diff is the plan's unified diff, with the file named name.
func (p *Plan) Diff(name string) string {
	d, err := textedit.Unified(name, name+" (behind hearth)", p.File.Src, p.Edits, 3)
	if err != nil { // the plan's own edits never overlap
		panic(err)
	}
	return d
}

// Plan decides, for every server of the file, what happens to it, and
// computes the file's new text. A file whose Err is set gets a plan that
// changes nothing.
func (f *File) Plan(opt Options) (*Plan, error) {
	p := &Plan{File: f, New: f.Src}
	if f.Err != nil {
		return p, nil
	}
	for _, s := range f.Servers {
		d := Decision{Server: s}
		switch {
		case s.Kind == Hosted || s.Kind == Stdio && s.Command == opt.shim() && len(s.Args) > 0 && s.Args[0] == "run":
			// (the second: a shim given by a path not named hearth, written
			// by an earlier run with the same Shim; never wrapped twice)
			d.Action = KeepHosted
		case s.Kind == Hearth:
			d.Action = KeepHearth
		case s.Kind == Unusable:
			d.Action = KeepUnknown
		case !opt.selected(s.Name):
			d.Action = NotSelected
		case s.Kind == Remote:
			d = f.planRemote(s, opt, p)
			if d.Action == Move && d.Share != "" && !slices.Contains(Modes, d.Share) {
				return nil, fmt.Errorf("sharing mode %q of %s: want one of %s", d.Share, s.Name, strings.Join(Modes, ", "))
			}
		default:
			d.Action, d.Share = Move, opt.share(s.Name)
			if d.Share != "" && !slices.Contains(Modes, d.Share) {
				return nil, fmt.Errorf("sharing mode %q of %s: want one of %s", d.Share, s.Name, strings.Join(Modes, ", "))
			}
			p.Edits = append(p.Edits, f.moveEdits(s, opt.shim(), d.Share)...)
			f.envSecrets(s, opt, p)
		}
		p.Decisions = append(p.Decisions, d)
	}
	var err error
	if p.New, err = textedit.Apply(f.Src, p.Edits); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path, err)
	}
	return p, nil
}

// RunArgs are the arguments a moved entry gives the shim before the
// server's own command: `run`, the sharing mode if one is set, the
// entry's name (`--name`, what status and hearthd servers then call it),
// the names of its variables (`--env`, envArgs) and `--`.
func RunArgs(share, name string, env []string) []string {
	args := []string{"run"}
	if share != "" {
		args = append(args, "--share", share)
	}
	if name != "" {
		if strings.HasPrefix(name, "-") {
			args = append(args, "--name="+name)
		} else {
			args = append(args, "--name", name)
		}
	}
	if len(env) == 0 {
		args = append(args, "--env=")
	} else {
		args = append(args, "--env", strings.Join(env, ","))
	}
	return append(args, "--")
}

// envArgs are the names of an entry's variables, for `--env`: the shim
// then passes exactly those, so the instance key holds what the entry
// declares and nothing its client adds per session, whatever the client
// and its version (docs/decisions/0057-client-variables.md). An entry
// without `env` (or with one that is not an object) names none: `--env=`,
// the empty list, which is as exact. A name the list cannot carry (empty,
// or holding a comma, an equals sign or white space) is left out; the
// entry then keeps its other names.
func envArgs(entry *jsonc.Node) []string {
	env := entry.Get("env")
	if env == nil || env.Kind != jsonc.Object {
		return nil
	}
	var names []string
	for _, m := range env.Members {
		if m.Key == "" || strings.ContainsAny(m.Key, ",= \t") || slices.Contains(names, m.Key) {
			continue
		}
		names = append(names, m.Key)
	}
	return names
}

// moveEdits rewrites one stdio entry in place: its command becomes the
// shim, and its args gain `run [--share MODE] --name NAME --env NAMES --
// COMMAND` in front (RunArgs). The old command is copied as written
// (escapes, ${input:...} and all); env, cwd and every other member are
// not touched.
func (f *File) moveEdits(s *Server, shim, share string) []textedit.Edit {
	cmd := s.entry.Get("command")
	run := RunArgs(share, s.Name, envArgs(s.entry))
	prefix := make([]string, 0, len(run)+1)
	for _, a := range run {
		prefix = append(prefix, quote(a))
	}
	prefix = append(prefix, string(f.Src[cmd.Start:cmd.End]))
	edits := []textedit.Edit{{Start: cmd.Start, End: cmd.End, New: quote(shim)}}

	args := s.entry.Get("args")
	switch {
	case args == nil:
		// A new member after "command", laid out like the entry's others.
		sep := f.memberSeparator(s.entry, cmd)
		edits = append(edits, textedit.Edit{Start: cmd.End, End: cmd.End,
			New: "," + sep + `"args": [` + strings.Join(prefix, ", ") + "]"})
	case args.Kind == jsonc.Null:
		edits = append(edits, textedit.Edit{Start: args.Start, End: args.End, New: "[" + strings.Join(prefix, ", ") + "]"})
	case len(args.Elems) == 0:
		edits = append(edits, textedit.Edit{Start: args.Start + 1, End: args.Start + 1, New: strings.Join(prefix, ", ")})
	default:
		// Before the first element, separated as the elements are.
		sep := f.elementSeparator(args)
		edits = append(edits, textedit.Edit{Start: args.Elems[0].Start, End: args.Elems[0].Start,
			New: strings.Join(prefix, ","+sep) + "," + sep})
	}
	return edits
}

// elementSeparator is the white space that follows the comma between an
// array's elements, else what precedes its first element, else a space.
func (f *File) elementSeparator(arr *jsonc.Node) string {
	if len(arr.Elems) > 1 {
		between := f.Src[arr.Elems[0].End:arr.Elems[1].Start]
		if i := bytes.IndexByte(between, ','); i >= 0 && blank(between[:i]) && blank(between[i+1:]) {
			return string(between[i+1:])
		}
	}
	if before := f.Src[arr.Start+1 : arr.Elems[0].Start]; len(before) > 0 && blank(before) {
		return string(before)
	}
	return " "
}

// memberSeparator is the white space between an object's members, as the
// entry lays them out: what follows the comma after the command member,
// else what precedes the entry's first member, else a space.
func (f *File) memberSeparator(obj, cmd *jsonc.Node) string {
	for i, m := range obj.Members {
		if m.Value != cmd || i+1 >= len(obj.Members) {
			continue
		}
		between := f.Src[cmd.End:obj.Members[i+1].KeyStart]
		if j := bytes.IndexByte(between, ','); j >= 0 && blank(between[:j]) && blank(between[j+1:]) {
			return string(between[j+1:])
		}
	}
	if before := f.Src[obj.Start+1 : obj.Members[0].KeyStart]; len(before) > 0 && blank(before) {
		return string(before)
	}
	return " "
}

func blank(b []byte) bool {
	return len(bytes.Trim(b, " \t\r\n")) == 0
}

// quote is s as a JSON string, with <, > and & left as they are.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
