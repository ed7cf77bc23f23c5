package adopt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/jsonc"
)

// Kind is what a server entry is, as far as adopt is concerned.
type Kind int

const (
	// Stdio is a server the client starts itself: the one kind adopt moves.
	Stdio Kind = iota + 1
	// Hosted already goes through hearth (`hearth run ...`).
	Hosted
	// Hearth is hearth's own server (the shim, or `hearthd stdio`).
	Hearth
	// Remote is reached over HTTP or SSE; nothing to host.
	Remote
	// Unusable is an entry adopt does not understand (Why says how).
	Unusable
)

// Server is one entry of a config file.
type Server struct {
	Name string
	// Scope is the project directory of a per-project entry in a file that
	// keeps several (~/.claude.json), else "".
	Scope     string
	Kind      Kind
	Transport string // "stdio", "http", "sse", ...
	Why       string // for Unusable
	Command   string
	Args      []string
	entry     *jsonc.Node
}

// File is one config file as read.
type File struct {
	Location
	Src  []byte
	Root *jsonc.Node
	// Err is why the file cannot be changed: it does not parse, or its
	// servers are not where the client keeps them. Such a file is left
	// untouched.
	Err     error
	Servers []*Server
}

// Load reads the file at loc. A file that does not exist is an error
// satisfying errors.Is(err, fs.ErrNotExist); any other problem is kept in
// the File's Err.
func Load(loc Location) (*File, error) {
	src, err := os.ReadFile(loc.Path)
	if os.IsNotExist(err) {
		return nil, err
	}
	f := &File{Location: loc, Src: src}
	if err != nil {
		f.Err = err
		return f, nil
	}
	if jsonc.Blank(src, loc.Syntax) {
		return f, nil // an empty file: no servers, nothing wrong
	}
	if f.Root, err = jsonc.Parse(src, loc.Syntax); err != nil {
		f.Err = fmt.Errorf("it does not parse: %w", err)
		return f, nil
	}
	if f.Root.Kind != jsonc.Object {
		f.Err = fmt.Errorf("its top level is %v, not an object", f.Root.Kind)
		return f, nil
	}
	if f.Err = f.addServers(f.Root, "", loc.Key); f.Err != nil {
		return f, nil
	}
	if projects := f.Root.Get("projects"); loc.Projects && projects != nil && projects.Kind == jsonc.Object {
		for _, m := range projects.Visible() {
			if m.Value.Kind != jsonc.Object {
				continue
			}
			if f.Err = f.addServers(m.Value, m.Key, loc.Key); f.Err != nil {
				return f, nil
			}
		}
	}
	return f, nil
}

func (f *File) addServers(obj *jsonc.Node, scope, key string) error {
	servers := obj.Get(key)
	if servers == nil || servers.Kind == jsonc.Null {
		return nil
	}
	if servers.Kind != jsonc.Object {
		where := fmt.Sprintf("%q", key)
		if scope != "" {
			where += " of the project " + scope
		}
		return fmt.Errorf("its %s is %v, not an object of servers", where, servers.Kind)
	}
	for _, m := range servers.Visible() { // of a repeated name, the client reads the last
		s := classify(m.Key, m.Value)
		s.Scope = scope
		f.Servers = append(f.Servers, s)
	}
	return nil
}

// classify says what an entry is. An entry with a URL, or whose type names
// a network transport, is remote; one with a command is stdio unless that
// command is hearth's.
func classify(name string, e *jsonc.Node) *Server {
	s := &Server{Name: name, entry: e, Kind: Unusable}
	if e.Kind != jsonc.Object {
		s.Why = fmt.Sprintf("the entry is %v, not an object", e.Kind)
		return s
	}
	typ := ""
	if t := e.Get("type"); t != nil && t.Kind == jsonc.String {
		typ = t.Str
	}
	if e.Get("url") != nil || (typ != "" && typ != "stdio") {
		s.Kind, s.Transport = Remote, typ
		if s.Transport == "" {
			s.Transport = "http"
		}
		return s
	}
	s.Transport = "stdio"
	cmd := e.Get("command")
	switch {
	case cmd == nil || cmd.Kind == jsonc.Null:
		s.Why = "no command"
		return s
	case cmd.Kind != jsonc.String:
		s.Why = fmt.Sprintf("its command is %v, not a string", cmd.Kind)
		return s
	case cmd.Str == "":
		s.Why = "its command is empty"
		return s
	}
	s.Command = cmd.Str
	if args := e.Get("args"); args != nil && args.Kind != jsonc.Null {
		if args.Kind != jsonc.Array {
			s.Why = fmt.Sprintf("its args is %v, not a list", args.Kind)
			return s
		}
		for _, a := range args.Elems {
			if a.Kind != jsonc.String {
				s.Why = fmt.Sprintf("its args holds %v, not only strings", a.Kind)
				return s
			}
			s.Args = append(s.Args, a.Str)
		}
	}
	switch program(s.Command) {
	case "hearth":
		if len(s.Args) > 0 && s.Args[0] == "run" {
			s.Kind = Hosted
		} else {
			s.Kind = Hearth
		}
	case "hearthd":
		s.Kind = Hearth
	default:
		s.Kind = Stdio
	}
	return s
}

// program is the name of the program a command runs, without its
// directory or a Windows executable suffix.
func program(command string) string {
	base := filepath.Base(strings.ReplaceAll(command, `\`, "/"))
	return strings.TrimSuffix(strings.TrimSuffix(base, ".exe"), ".EXE")
}

// Count tallies a file's servers for `hearthd status`: all of them, those
// going through hearth (hosted, and hearth's own), the stdio ones adopt
// would move, and the remote ones.
func (f *File) Count() (total, throughHearth, movable, remote int) {
	for _, s := range f.Servers {
		total++
		switch s.Kind {
		case Hosted, Hearth:
			throughHearth++
		case Stdio:
			movable++
		case Remote:
			remote++
		}
	}
	return
}
