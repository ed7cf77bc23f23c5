package shim

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hearth-mcp/hearth/pkg/config/keys"
)

// RunRequest is what `hearth run` asks the daemon to host, sent as the
// "run" member of the shim's $/hearth/hello (docs/protocol.md, "Hosted
// servers"): a server of the config file by name, or a command. Env holds
// what the client's entry set for it (decision 0036); the shim never prints
// it.
type RunRequest struct {
	Name    string            `json:"name,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Sharing, when set (--share), overrides the sharing mode: global,
	// directory or client.
	Sharing string `json:"sharing,omitempty"`
}

// RunEnvVar lists, comma-separated, variables the shim passes to a hosted
// server whatever its parent's environment holds.
const RunEnvVar = "HEARTH_RUN_ENV"

// ParseRun reads the arguments after `hearth run`: `[--share MODE] --
// COMMAND ARGS...` or `[--share MODE] NAME`. environ is the shim's
// environment, parent its parent's (the client's) when known.
func ParseRun(args, environ, parent []string, parentKnown bool) (*RunRequest, error) {
	var r RunRequest
	if len(args) > 0 && (args[0] == "--share" || strings.HasPrefix(args[0], "--share=")) {
		mode, rest := strings.TrimPrefix(args[0], "--share="), args[1:]
		if args[0] == "--share" {
			if len(args) < 2 {
				return nil, errors.New("hearth run --share: want global, directory or client")
			}
			mode, rest = args[1], args[2:]
		}
		switch mode {
		case "global", "directory", "client":
			r.Sharing = mode
		default:
			return nil, errors.New("hearth run --share " + mode + ": want global, directory or client")
		}
		args = rest
	}
	switch {
	case len(args) == 0:
		return nil, errors.New("hearth run needs a server: hearth run -- COMMAND ARGS... or hearth run NAME")
	case args[0] == "--":
		if len(args) < 2 || strings.TrimSpace(args[1]) == "" {
			return nil, errors.New("hearth run --: no command after --")
		}
		r.Command, r.Args = args[1], args[2:]
		if !strings.ContainsRune(r.Command, filepath.Separator) {
			// The client's PATH, not the daemon's, chooses the program.
			if p, err := exec.LookPath(r.Command); err == nil {
				r.Command = p
			}
		} else if abs, err := filepath.Abs(r.Command); err == nil {
			r.Command = abs
		}
	case len(args) == 1 && !strings.HasPrefix(args[0], "-"):
		r.Name = args[0]
	default:
		return nil, errors.New("hearth run takes -- COMMAND ARGS... or one NAME (a [servers.NAME] table of the config file), got " + strings.Join(args, " "))
	}
	r.Env = EntryEnv(environ, parent, parentKnown)
	return &r, nil
}

// EntryEnv tells the variables the client's entry set from those the shim
// merely inherited (decision 0036): a variable the shim has and its parent,
// the client, has not, or has with another value, was set for this server.
// Variables named in HEARTH_RUN_ENV are passed whatever the parent holds;
// hearth's own settings and a shell's bookkeeping never are.
func EntryEnv(environ, parent []string, parentKnown bool) map[string]string {
	own := envMap(environ)
	out := map[string]string{}
	if names := own[RunEnvVar]; names != "" {
		for _, n := range strings.Split(names, ",") {
			if v, ok := own[strings.TrimSpace(n)]; ok {
				out[strings.TrimSpace(n)] = v
			}
		}
	}
	if !parentKnown {
		return out
	}
	theirs := envMap(parent)
	for k, v := range own {
		if skipEnv(k) {
			continue
		}
		if pv, ok := theirs[k]; !ok || pv != v {
			out[k] = v
		}
	}
	return out
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
