package shim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/command"
	"github.com/hearth-mcp/hearth/pkg/config/keys"
	"github.com/hearth-mcp/hearth/pkg/hello"
)

// RunEnvVar lists, comma-separated, the variables the shim passes to a
// hosted server, as `hearth run --env` does.
const RunEnvVar = "HEARTH_RUN_ENV"

// ParseRun reads the arguments after `hearth run`: `[--share MODE] [--env
// NAMES]... [--name NAME]` then `-- COMMAND ARGS...`, `NAME`, or `COMMAND
// ARGS...` (a name and a command at once: the daemon chooses); or `--url
// URL [--header "Name: value"]...`, a remote server (docs/remote.md).
// environ is the shim's environment, parent its parent's (the client's)
// when known.
//
// `--env` takes its names as its next argument or after `=`; an `--env`
// followed by another option or by `--` names none (an empty list, as
// `--env=` does), so `hearth run --env -- npx srv` runs npx with no
// variable of its entry rather than take `--` for the list.
func ParseRun(args, environ, parent []string, parentKnown bool) (*hello.Run, error) {
	var r hello.Run
	var named []string
	explicit := false
	for len(args) > 0 {
		flag, value, hasValue := strings.Cut(args[0], "=")
		if flag != "--share" && flag != "--env" && flag != "--name" && flag != "--url" && flag != "--header" {
			break
		}
		if (flag == "--url" || flag == "--header") && !hasValue {
			// The value is the next argument whatever it starts with.
			if len(args) < 2 || strings.TrimSpace(args[1]) == "" {
				return nil, errors.New("hearth run " + flag + ": want " + map[string]string{"--url": "the remote server's URL (https://...)", "--header": `"Name: value"`}[flag])
			}
			value, hasValue, args = args[1], true, args[1:]
		}
		if !hasValue {
			switch {
			case len(args) >= 2 && !strings.HasPrefix(args[1], "-"):
				value, args = args[1], args[1:]
			case flag == "--env" && len(args) >= 2:
				// --env then an option or --: no names
			case flag == "--share":
				return nil, errors.New("hearth run --share: want global, directory, client or exclusive")
			case flag == "--name":
				return nil, errors.New("hearth run --name: want the name the client's entry gives the server")
			default:
				return nil, errors.New("hearth run --env: want NAME[,NAME...] (or --env= for none)")
			}
		}
		args = args[1:]
		switch flag {
		case "--share":
			switch value {
			case "global", "directory", "client", "exclusive":
				r.Sharing = value
			default:
				return nil, errors.New("hearth run --share " + value + ": want global, directory, client or exclusive")
			}
		case "--env":
			explicit = true
			named = append(named, splitNames(value)...)
		case "--name":
			if strings.TrimSpace(value) == "" {
				return nil, errors.New("hearth run --name: want the name the client's entry gives the server")
			}
			r.Entry = value
		case "--url":
			if err := CheckURL(value); err != nil {
				return nil, err
			}
			r.URL = value
		case "--header":
			if err := CheckHeader(value); err != nil {
				return nil, err
			}
			r.Headers = append(r.Headers, value)
		}
	}
	if r.URL == "" && len(r.Headers) > 0 {
		return nil, errors.New("hearth run --header: only with --url (a remote server)")
	}
	if r.URL != "" {
		if len(args) > 0 {
			return nil, errors.New("hearth run --url takes no command; got " + strings.Join(args, " "))
		}
		return &r, nil // a remote server has no environment
	}
	switch {
	case len(args) == 0:
		return nil, errors.New("hearth run needs a server: hearth run COMMAND ARGS..., hearth run -- COMMAND ARGS... or hearth run NAME")
	case args[0] == "--":
		if len(args) < 2 || strings.TrimSpace(args[1]) == "" {
			return nil, errors.New("hearth run --: no command after --")
		}
		r.Command, r.Args = command.Absolute(args[1]), args[2:]
	case !strings.HasPrefix(args[0], "-") && strings.TrimSpace(args[0]) != "":
		// NAME, or COMMAND ARGS... without the -- that some clients (the
		// MCP Inspector) take for their own: the daemon, which reads the
		// config file, decides. A configured name with no arguments is the
		// server of that name; anything else is the command (docs/protocol.md,
		// "Hosted servers").
		r.Name = args[0]
		r.Command, r.Args = command.Absolute(args[0]), args[1:]
	default:
		return nil, errors.New("hearth run takes [--share MODE] [--env NAMES] [--name NAME] then NAME (a [servers.NAME] table of the config file), COMMAND ARGS..., or -- COMMAND ARGS...; or --url URL [--header \"Name: value\"]...; got " + strings.Join(args, " "))
	}
	if v, ok := envMap(environ)[RunEnvVar]; ok {
		explicit = true
		named = append(named, splitNames(v)...)
	}
	r.Env, r.ClientEnv = EntryEnv(environ, parent, parentKnown, explicit, named)
	return &r, nil
}

// CheckURL is the shim's look at a remote server's URL (the shim links
// no networking: the daemon checks it in full): it must begin with
// https:// or http:// and name a host, and hold no #fragment.
func CheckURL(raw string) error {
	rest, ok := strings.CutPrefix(raw, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(raw, "http://")
	}
	if !ok || rest == "" || strings.HasPrefix(rest, "/") {
		return errors.New("hearth run --url: want an absolute https:// URL (http:// only to 127.0.0.1, ::1 or localhost)")
	}
	if strings.ContainsAny(raw, "# \t\r\n") {
		return errors.New("hearth run --url: a server's endpoint holds no #fragment, space or control character")
	}
	return nil
}

// CheckHeader refuses a header that is not "Name: value" with a token for
// its name and no control characters in its value (the value is never
// shown: it may be a key).
func CheckHeader(h string) error {
	name, value, ok := strings.Cut(h, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return errors.New(`hearth run --header: want "Name: value"`)
	}
	for _, c := range name {
		if c > 0x7e || c <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", c) {
			return fmt.Errorf("hearth run --header: %q is not a header name", name)
		}
	}
	for _, c := range value {
		if c < ' ' && c != '\t' || c == 0x7f {
			return fmt.Errorf("hearth run --header %s: its value holds a control character", name)
		}
	}
	switch strings.ToLower(name) {
	case "host", "content-length", "content-type", "accept", "mcp-session-id", "mcp-protocol-version", "transfer-encoding", "connection":
		return fmt.Errorf("hearth run --header %s: hearth sets that header itself", name)
	}
	return nil
}

// splitNames reads a comma-separated list of variable names.
func splitNames(list string) []string {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// EntryEnv tells the variables the client's entry set from those the shim
// merely inherited, and from those the client adds to every server
// (decision 0036, revised).
//
//   - explicit (the entry ran `hearth run --env NAMES` or set
//     HEARTH_RUN_ENV): entry holds exactly the named variables the shim has,
//     whatever the parent holds. The key is then exact.
//   - else, with the parent's environment known: a variable the shim has and
//     the parent has not, or has with another value, was set for this server.
//   - else: none.
//
// A variable a known client adds to every server (ClientVarsOf: its
// namespaces when the environment holds its marks, and the names observed)
// is never the entry's unless named: it goes to client, with every other
// such variable the shim has. hearth's own settings and a shell's
// bookkeeping are neither.
func EntryEnv(environ, parent []string, parentKnown, explicit bool, named []string) (entry, client map[string]string) {
	own, theirs := envMap(environ), envMap(parent)
	clients := ClientVarsOf(environ)
	entry, client = map[string]string{}, map[string]string{}
	for _, n := range named {
		if v, ok := own[n]; ok && !skipEnv(n) {
			entry[n] = v
		}
	}
	for k, v := range own {
		if skipEnv(k) {
			continue
		}
		if clients.Added(k) {
			if _, ok := entry[k]; !ok {
				client[k] = v
			}
			continue
		}
		if explicit || !parentKnown {
			continue
		}
		if pv, ok := theirs[k]; !ok || pv != v {
			entry[k] = v
		}
	}
	return entry, client
}

func skipEnv(name string) bool {
	switch name {
	case "_", "PWD", "OLDPWD", "SHLVL", // a shell's bookkeeping
		"MCP_SOCKET_PATH", "MCP_READY_FILE", "MCP_SOCKET_MODE", "MCP_ENDPOINT": // where hearth itself listens
		return true
	}
	return strings.HasPrefix(name, "HEARTH_") || keys.IsSettingVar(name)
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}
