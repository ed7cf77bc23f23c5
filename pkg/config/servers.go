package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Server is a [servers.NAME] table: a stdio MCP server hearth hosts for
// `hearth run NAME` (docs/hosting.md, "Servers in the config file"). Env values
// may be secrets: they are never logged or shown.
type Server struct {
	Name    string
	Command string
	// URL is a remote server's MCP endpoint (instead of a command);
	// Headers are sent with its every request. Values of env and
	// headers may name stored secrets: ${secret:NAME}.
	URL     string
	Headers map[string]string
	// ClientID, ClientSecret (a stored secret's name) and ClientIssuer are
	// the remote server's pre-registered OAuth client.
	ClientID, ClientSecret, ClientIssuer string
	Args                                 []string
	Env                                  map[string]string
	Cwd                                  string
	Sharing                              string // "" (directory), "global", "directory", "client" or "exclusive"
	// Queue bounds the clients waiting for an exclusive server, or for a
	// capped one's instance (-1: unset, the default; 0: refuse at once).
	Queue int
	// MaxInstances caps the instances of the server running at once (0:
	// no cap).
	MaxInstances int
	IdleTimeout  time.Duration // 0: the default
	InitTimeout  time.Duration // 0: the default
	// AnswerTimeout bounds the wait for a client's answer to the server's
	// sampling, elicitation or roots request (0: the default).
	AnswerTimeout time.Duration
	Restart       string // "" (on-failure), "on-failure" or "never"
	// Prestart starts the server with the daemon's first client of it even
	// when its catalog could answer (docs/decisions/0045-hosted-catalog.md).
	Prestart bool
	// NoCatalog (catalog = false): never answer from the catalog; every
	// client's initialize and lists wait for a started server.
	NoCatalog bool
}

// Servers are the config's [servers.NAME] tables, by name.
func (s *Settings) Servers() map[string]Server {
	out := make(map[string]Server, len(s.servers))
	for k, v := range s.servers {
		out[k] = v
	}
	return out
}

var (
	headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	secretName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
)

// CheckRemoteURL refuses what cannot be a remote server's URL: https, or http to a loopback address; a host; no
// fragment. The error shows no part of the URL (its query may be a key).
func CheckRemoteURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return errors.New("want an absolute https:// URL (http:// only to a loopback address)")
	}
	if h := u.Hostname(); u.Scheme == "http" && h != "localhost" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() {
			return errors.New("http:// only to a loopback address (127.0.0.1, ::1, localhost); use https://")
		}
	}
	if u.Fragment != "" {
		return errors.New("a URL with a #fragment is not a server's endpoint")
	}
	return nil
}

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// parseServers checks the servers table: every problem names its key.
func parseServers(v any, getenv func(string) string) (map[string]Server, []string) {
	tables, ok := v.(map[string]any)
	if !ok {
		return nil, []string{"servers: want tables [servers.NAME], got " + tomlType(v)}
	}
	names := make([]string, 0, len(tables))
	for n := range tables {
		names = append(names, n)
	}
	sort.Strings(names)
	out := map[string]Server{}
	var problems []string
	for _, name := range names {
		key := "servers." + name
		if !serverName.MatchString(name) {
			problems = append(problems, fmt.Sprintf("%s: a server's name is letters, digits, '.', '_' and '-' (at most 64)", key))
			continue
		}
		t, ok := tables[name].(map[string]any)
		if !ok {
			problems = append(problems, key+": want a table, got "+tomlType(tables[name]))
			continue
		}
		sv, probs := parseServer(name, t, getenv)
		for _, p := range probs {
			problems = append(problems, key+"."+p)
		}
		if len(probs) == 0 {
			out[name] = sv
		}
	}
	return out, problems
}

func parseServer(name string, t map[string]any, getenv func(string) string) (Server, []string) {
	sv := Server{Name: name, Queue: -1}
	var problems []string
	str := func(k string) (string, bool) {
		v, ok := t[k]
		if !ok {
			return "", false
		}
		s, ok := v.(string)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: want a string, got %s", k, tomlType(v)))
			return "", false
		}
		return s, true
	}
	dur := func(k string) time.Duration {
		s, ok := str(k)
		if !ok {
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			problems = append(problems, fmt.Sprintf("%s: want a positive duration such as \"5m\", got %q", k, s))
			return 0
		}
		return d
	}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "command":
			sv.Command, _ = str(k)
			if strings.TrimSpace(sv.Command) == "" {
				problems = append(problems, "command: must not be empty")
			}
		case "args":
			list, ok := t[k].([]any)
			if !ok {
				problems = append(problems, "args: want an array of strings, got "+tomlType(t[k]))
				continue
			}
			for i, a := range list {
				s, ok := a.(string)
				if !ok {
					problems = append(problems, fmt.Sprintf("args[%d]: want a string, got %s", i, tomlType(a)))
					continue
				}
				sv.Args = append(sv.Args, s)
			}
		case "env":
			m, ok := t[k].(map[string]any)
			if !ok {
				problems = append(problems, "env: want a table of strings, got "+tomlType(t[k]))
				continue
			}
			sv.Env = map[string]string{}
			for n, v := range m {
				s, ok := v.(string)
				if !ok {
					// The value is not echoed: it may be a secret.
					problems = append(problems, fmt.Sprintf("env.%s: want a string, got %s", n, tomlType(v)))
					continue
				}
				sv.Env[n] = s
			}
		case "url":
			sv.URL, _ = str(k)
			if err := CheckRemoteURL(sv.URL); err != nil {
				problems = append(problems, "url: "+err.Error())
			}
		case "headers":
			m, ok := t[k].(map[string]any)
			if !ok {
				problems = append(problems, "headers: want a table of strings, got "+tomlType(t[k]))
				continue
			}
			sv.Headers = map[string]string{}
			for n, v := range m {
				s, ok := v.(string)
				if !ok {
					problems = append(problems, fmt.Sprintf("headers.%s: want a string, got %s", n, tomlType(v)))
					continue
				}
				if !headerName.MatchString(n) {
					problems = append(problems, fmt.Sprintf("headers.%s: not a header name", n))
					continue
				}
				if strings.ContainsAny(s, "\r\n\x00") {
					problems = append(problems, fmt.Sprintf("headers.%s: its value holds a control character", n))
					continue
				}
				sv.Headers[n] = s
			}
		case "client_id":
			sv.ClientID, _ = str(k)
		case "client_secret":
			s, _ := str(k)
			if !secretName.MatchString(s) {
				problems = append(problems, "client_secret: want the name of a stored secret (hearthd secret set NAME), not the secret itself")
				continue
			}
			sv.ClientSecret = s
		case "client_issuer":
			sv.ClientIssuer, _ = str(k)
		case "cwd":
			s, _ := str(k)
			if strings.HasPrefix(s, "~/") {
				if h := homeDir(getenv); h != "" {
					s = filepath.Join(h, s[2:])
				}
			}
			if s != "" && !filepath.IsAbs(s) {
				problems = append(problems, fmt.Sprintf("cwd: want an absolute path (or ~/...), got %q", s))
				continue
			}
			sv.Cwd = s
		case "sharing":
			s, _ := str(k)
			switch s {
			case "global", "directory", "client", "exclusive":
				sv.Sharing = s
			default:
				problems = append(problems, fmt.Sprintf("sharing: want global, directory, client or exclusive, got %q", s))
			}
		case "queue", "max_instances":
			n, ok := t[k].(int64)
			if !ok || n < 0 || n > 1000 || k == "max_instances" && n == 0 {
				want := "an integer from 0 to 1000"
				if k == "max_instances" {
					want = "an integer from 1 to 1000"
				}
				problems = append(problems, fmt.Sprintf("%s: want %s, got %s", k, want, tomlValueOf(t[k])))
				continue
			}
			if k == "queue" {
				sv.Queue = int(n)
			} else {
				sv.MaxInstances = int(n)
			}
		case "idle_timeout":
			sv.IdleTimeout = dur(k)
		case "init_timeout":
			sv.InitTimeout = dur(k)
		case "answer_timeout":
			sv.AnswerTimeout = dur(k)
		case "restart":
			s, _ := str(k)
			switch s {
			case "on-failure", "never":
				sv.Restart = s
			default:
				problems = append(problems, fmt.Sprintf("restart: want on-failure or never, got %q", s))
			}
		case "prestart", "catalog":
			b, ok := t[k].(bool)
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: want true or false, got %s", k, tomlType(t[k])))
				continue
			}
			if k == "prestart" {
				sv.Prestart = b
			} else {
				sv.NoCatalog = !b
			}
		default:
			problems = append(problems, fmt.Sprintf("%s: unknown key (a server takes command or url, args, env, headers, client_id, client_secret, client_issuer, cwd, sharing, queue, max_instances, idle_timeout, init_timeout, answer_timeout, restart, prestart, catalog)", k))
		}
	}
	_, hasCommand := t["command"]
	_, hasURL := t["url"]
	switch {
	case hasCommand && hasURL:
		problems = append(problems, "url: a server has a command or a url, not both")
	case !hasCommand && !hasURL:
		problems = append(problems, "command: missing (the program to run, or url for a remote server)")
	case hasURL && (len(sv.Args) > 0 || len(sv.Env) > 0 || sv.Cwd != ""):
		problems = append(problems, "url: a remote server takes no args, env or cwd (headers are what it is sent)")
	case !hasURL && (len(sv.Headers) > 0 || sv.ClientID != "" || sv.ClientSecret != "" || sv.ClientIssuer != ""):
		problems = append(problems, "headers: headers and client_* are a remote server's (url)")
	}
	if sv.ClientSecret != "" && sv.ClientID == "" {
		problems = append(problems, "client_secret: only with client_id")
	}
	return sv, problems
}

// tomlValueOf words a value for an error: an integer as it is, anything
// else by its type.
func tomlValueOf(v any) string {
	if n, ok := v.(int64); ok {
		return fmt.Sprint(n)
	}
	return tomlType(v)
}
