package adopt

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/jsonc"
	"github.com/hearth-mcp/hearth/pkg/textedit"
)

// Remote entries (Claude Code's `type: http` or `sse`, VS Code's and
// Cursor's `url`) move behind `hearth run --url URL [--header "Name:
// value"]...`: the entry becomes a stdio one that runs the shim, its
// other members kept. A header value that looks like a credential (the
// header is Authorization, or its name says token, key, secret,
// password or auth) is never written into the arguments, which other
// users of the machine can see: with Options.Secrets it moves into the
// store and the argument names it as ${secret:NAME}; without, the entry is
// left alone and the table says to run with --secrets. With Secrets, the
// literal credentials of a stdio entry's env move into the store too, the
// env naming them (the daemon expands the references as it starts the
// server). A value that uses the client's own variables (${input:...},
// ${env:...}) is the client's to expand: such an entry is left alone.

// Secret is a credential a plan moves into the store: Name is what the
// rewritten entry names as ${secret:Name}.
type Secret struct {
	Name, Value string
	Server      string // the entry it came from
	Where       string // "headers.NAME" or "env.NAME"
}

var credentialName = regexp.MustCompile(`(?i)token|key|secret|passw|auth|bearer|credential|(^|_)pat($|_)|cookie`)

// isCredential reports whether a header's or a variable's value should
// not be written in plain text.
func isCredential(name string) bool { return credentialName.MatchString(name) }

// isReference: the value names a stored secret (and nothing else needs
// the client).
func isReference(v string) bool {
	return strings.HasPrefix(v, "${secret:") && strings.HasSuffix(v, "}")
}

// clientVariable: the value holds a variable the client expands.
func clientVariable(v string) bool {
	return strings.Contains(strings.ReplaceAll(v, "${secret:", ""), "${")
}

// secretName makes a store name of an entry's and a member's names.
func secretName(server, member string) string {
	b := []byte(strings.ToLower(server + "-" + member))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	if len(b) > 120 {
		b = b[:120]
	}
	return string(b)
}

type header struct{ name, value string }

// remoteOf reads a remote entry's url and headers.
func remoteOf(s *Server) (url string, headers []header, why string) {
	u := s.entry.Get("url")
	if u == nil || u.Kind != jsonc.String || u.Str == "" {
		return "", nil, "no url"
	}
	if !strings.HasPrefix(u.Str, "https://") && !strings.HasPrefix(u.Str, "http://") {
		return "", nil, "its url is not http(s)"
	}
	if clientVariable(u.Str) {
		return "", nil, "its url uses the client's variables"
	}
	h := s.entry.Get("headers")
	if h != nil && h.Kind != jsonc.Null {
		if h.Kind != jsonc.Object {
			return "", nil, fmt.Sprintf("its headers is %v, not an object", h.Kind)
		}
		for _, m := range h.Visible() {
			if m.Value.Kind != jsonc.String {
				return "", nil, fmt.Sprintf("its header %s is %v, not a string", m.Key, m.Value.Kind)
			}
			if clientVariable(m.Value.Str) {
				return "", nil, "its headers use the client's variables"
			}
			headers = append(headers, header{m.Key, m.Value.Str})
		}
	}
	if s.entry.Get("oauth") != nil {
		return "", nil, "it configures the client's own OAuth"
	}
	return u.Str, headers, ""
}

// planRemote decides a remote entry: moved behind `hearth run --url`, or
// left alone with the reason.
func (f *File) planRemote(s *Server, opt Options, p *Plan) Decision {
	d := Decision{Server: s, Action: KeepRemote}
	url, headers, why := remoteOf(s)
	if why != "" {
		d.Why = why
		return d
	}
	args := []string{"run"}
	if share := opt.share(s.Name); share != "" {
		args = append(args, "--share", share)
	}
	args = append(args, "--name="+s.Name, "--url", url)
	var secrets []Secret
	for _, h := range headers {
		v := h.value
		if isCredential(h.name) && !isReference(v) {
			if !opt.Secrets {
				d.Why = "its header " + h.name + " holds a credential in plain text: hearthd adopt --secrets moves it into the store"
				return d
			}
			name := opt.secretName(secretName(s.Name, h.name), v)
			secrets = append(secrets, Secret{Name: name, Value: v, Server: s.Name, Where: "headers." + h.name})
			v = "${secret:" + name + "}"
		}
		args = append(args, "--header", h.name+": "+v)
	}
	d.Action, d.Share = Move, opt.share(s.Name)
	p.Secrets = append(p.Secrets, secrets...)
	p.Edits = append(p.Edits, f.replaceRemote(s, opt.shim(), args))
	return d
}

// replaceRemote rewrites the entry as a stdio one running the shim: type
// (when it had one) stdio, command, args; url, headers and type go, every
// other member is kept as written.
func (f *File) replaceRemote(s *Server, shim string, args []string) textedit.Edit {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = quote(a)
	}
	sep := " "
	if len(s.entry.Members) > 0 {
		if before := f.Src[s.entry.Start+1 : s.entry.Members[0].KeyStart]; len(before) > 0 && blank(before) {
			sep = string(before)
		}
	}
	var members []string
	if s.entry.Get("type") != nil {
		members = append(members, `"type": "stdio"`)
	}
	members = append(members, `"command": `+quote(shim), `"args": [`+strings.Join(quoted, ", ")+"]")
	for _, m := range s.entry.Members {
		if slices.Contains([]string{"type", "url", "headers"}, m.Key) {
			continue
		}
		members = append(members, string(f.Src[m.KeyStart:m.Value.End]))
	}
	if !strings.Contains(sep, "\n") {
		return textedit.Edit{Start: s.entry.Start, End: s.entry.End, New: "{" + strings.Join(members, ", ") + "}"}
	}
	// The closing brace one level out.
	indent := sep[strings.LastIndexByte(sep, '\n')+1:]
	closing := "\n" + indent[:max(0, len(indent)-len(strings.TrimLeft(indent, "\t"))-1)]
	if !strings.HasPrefix(indent, "\t") {
		closing = "\n" + indent[:max(0, len(indent)-2)]
	}
	return textedit.Edit{Start: s.entry.Start, End: s.entry.End, New: "{" + sep + strings.Join(members, ","+sep) + closing + "}"}
}

// envSecrets moves a stdio entry's literal credentials into the store
// (Options.Secrets): each becomes ${secret:NAME} in the entry's env.
func (f *File) envSecrets(s *Server, opt Options, p *Plan) {
	env := s.entry.Get("env")
	if !opt.Secrets || env == nil || env.Kind != jsonc.Object {
		return
	}
	for _, m := range env.Visible() {
		if m.Value.Kind != jsonc.String || m.Value.Str == "" || !isCredential(m.Key) || strings.Contains(m.Value.Str, "${") {
			continue
		}
		name := opt.secretName(secretName(s.Name, m.Key), m.Value.Str)
		p.Secrets = append(p.Secrets, Secret{Name: name, Value: m.Value.Str, Server: s.Name, Where: "env." + m.Key})
		p.Edits = append(p.Edits, textedit.Edit{Start: m.Value.Start, End: m.Value.End, New: quote("${secret:" + name + "}")})
	}
}
